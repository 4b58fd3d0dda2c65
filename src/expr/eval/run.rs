//! Running an evaluation to the end against a synchronous answerer, for
//! tests, benches and callers whose reads are local.

use super::{Answer, EvalError, Evaluation, Link, Need, Step, Val};
use crate::expr::ast::Expr;

/// Runs an evaluation to the end against a synchronous answerer: for
/// tests, benches and callers whose reads are local.
pub fn run_with(
    root: &Expr,
    mut answer: impl FnMut(&Need) -> Answer,
) -> (Result<Val, EvalError>, Vec<Link>, usize) {
    let mut ev = Evaluation::new(root);
    let mut steps = 0;
    loop {
        steps += 1;
        match ev.step() {
            Step::Done(r) => return (r, ev.links().to_vec(), steps),
            Step::Needs(needs) => {
                for (k, n) in needs {
                    let a = answer(&n);
                    ev.answer(k, a);
                }
            }
        }
    }
}
