//! Running an evaluation to the end against a synchronous answerer, for
//! tests, benches and callers whose reads are local.

use super::{Answer, EvalError, Evaluation, Link, Need, Step, Val};
use crate::expr::ast::Expr;
use crate::expr::compiled::{Bound, Compiled};

/// Runs an evaluation to the end against a synchronous answerer: for
/// tests, benches and callers whose reads are local.
pub fn run_with(
    root: &Expr,
    answer: impl FnMut(&Need) -> Answer,
) -> (Result<Val, EvalError>, Vec<Link>, usize) {
    run(Evaluation::new(root), answer)
}

/// [`run_with`] on a compiled expression, with the value an event binds.
pub fn run_compiled(
    c: &Compiled,
    bound: Option<&Bound>,
    answer: impl FnMut(&Need) -> Answer,
) -> (Result<Val, EvalError>, Vec<Link>, usize) {
    run(Evaluation::compiled(c, bound), answer)
}

fn run(
    mut ev: Evaluation<'_>,
    mut answer: impl FnMut(&Need) -> Answer,
) -> (Result<Val, EvalError>, Vec<Link>, usize) {
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
