//! Static checks on a parsed expression: mistakes the grammar allows but no
//! JVM state could make meaningful, caught before anything is evaluated.
//!
//! Each rule looks only at literals and at the shape of the tree, so it can
//! never reject an expression that might succeed against a live frame:
//!
//! 1. **Members of a primitive or `null` literal.** `1.foo()`, `true.x`,
//!    `null.size()`, `'a'[0]`: a Java primitive has no fields, methods or
//!    elements and `null` has nothing. (`1.5` lexes as a double, so the
//!    grammar really does produce `Call{Literal(1), foo}` for `1.foo()`.)
//!    String literals are objects and may be targets: `"a,b".split(",")`.
//! 2. **Boolean positions holding a non-boolean literal.** The operand of
//!    `!`, either side of `&&`/`||`, and a `[?…]` predicate must be boolean;
//!    `!5`, `x && 1`, `xs[?"a"]` never are (`null` is not: unboxing it throws).
//! 3. **`-` on a non-numeric literal.** `-true`, `-"s"`, `-null`. Chars are
//!    numeric in Java, so `-'a'` passes.
//! 4. **Ordering a string, boolean or `null` literal.** `< <= > >=` are
//!    numeric in Java; `name < "m"` is the usual slip for `compareTo`.
//!    Char literals pass deliberately (`c >= 'a'` is ordinary Java), which
//!    is narrower than "no char literals" so as not to refuse valid code.
//! 5. **Slice bounds that are literals must be non-negative int literals,
//!    and `from <= to` when both are.** `xs[1.5..]`, `xs[-1..]` (there are no
//!    negative indices in Java) and `xs[5..2]` can only fail.
//! 6. **A `#charset` after an expression that cannot be a byte[]/char[].**
//!    It only changes how an array renders; after a literal, a comparison,
//!    a `!`/`-` or arithmetic it is a misunderstanding.
//!
//! Errors reuse [`ParseError`] so callers report both kinds the same way.

use super::ast::{BinaryOp, Expr, ExprKind, Literal, Parsed, Span, UnaryOp};
use super::lexer::quote;
use super::parser::ParseError;

/// Runs every rule; returns the mistake that starts earliest in the source.
pub fn check(p: &Parsed) -> Result<(), ParseError> {
    match check_all(p)
        .into_iter()
        .min_by_key(|e| (e.span.start, e.span.end))
    {
        Some(e) => Err(e),
        None => Ok(()),
    }
}

/// Every mistake the rules find, in no particular order.
///
/// Walks the tree with an explicit stack, so even a hand-built tree of any
/// depth cannot overflow the call stack here.
pub fn check_all(p: &Parsed) -> Vec<ParseError> {
    let mut found = Findings {
        src: p.source.as_str(),
        errors: Vec::new(),
    };
    found.charset(p);
    let mut stack = vec![&p.expr];
    while let Some(e) = stack.pop() {
        e.kind.for_each_child(|c| stack.push(c));
        found.node(&e.kind);
    }
    found.errors
}

/// The mistakes found so far, and the source they point into.
struct Findings<'s> {
    src: &'s str,
    errors: Vec<ParseError>,
}

impl Findings<'_> {
    fn add(&mut self, span: Span, expected: String, found: String) {
        self.errors
            .push(ParseError::new(self.src, span, expected, found));
    }

    /// Rule 6: a `#charset` after something that cannot be an array.
    fn charset(&mut self, p: &Parsed) {
        if let Some(cs) = p.charset
            && let Some(what) = not_an_array(&p.expr)
        {
            let span = match self.src.rfind('#') {
                Some(i) => Span::new(i, self.src.trim_end().len().max(i)),
                None => Span::new(p.expr.span.end, p.expr.span.end),
            };
            self.add(
                span,
                format!("a byte[] or char[] expression before `#{cs}`"),
                what.to_string(),
            );
        }
    }

    /// Rules 1 to 5 on one node. Each rule looks only at the node's direct
    /// children, so every mistake is found exactly once.
    fn node(&mut self, kind: &ExprKind) {
        match kind {
            ExprKind::Field { target, name } => {
                self.member_of(target, || format!("an object before `.{name}`"));
            }
            ExprKind::Call {
                target: Some(target),
                name,
                ..
            } => self.member_of(target, || format!("an object to call `{name}()` on")),
            ExprKind::Index { target, .. } => {
                self.member_of(target, || "an array, List or Map before `[`".into());
            }
            ExprKind::Slice { target, from, to } => {
                self.member_of(target, || "an array or List before `[`".into());
                self.slice_bounds(from.as_deref(), to.as_deref());
            }
            ExprKind::Filter { target, predicate } => {
                self.member_of(target, || "an array or collection before `[?`".into());
                self.boolean(predicate, || "a boolean predicate in `[?…]`".into());
            }
            ExprKind::Unary { op, operand } => self.unary(*op, operand),
            ExprKind::Binary { op, lhs, rhs } => self.binary(*op, lhs, rhs),
            ExprKind::Literal(_)
            | ExprKind::Path(_)
            | ExprKind::This
            | ExprKind::Handle(_)
            | ExprKind::FrameLocal { .. }
            | ExprKind::PinnedClass { .. }
            | ExprKind::New { .. }
            | ExprKind::Call { target: None, .. } => {}
        }
    }

    /// Rule 1: `target` must be able to have members.
    fn member_of(&mut self, target: &Expr, expected: impl FnOnce() -> String) {
        if let Some(found) = primitive(target) {
            self.add(target.span, expected(), found);
        }
    }

    /// Rule 2: `e` sits where a boolean is needed.
    fn boolean(&mut self, e: &Expr, expected: impl FnOnce() -> String) {
        if let Some(found) = non_boolean(e) {
            self.add(e.span, expected(), found);
        }
    }

    /// Rule 5: literal slice bounds are non-negative ints, in order.
    fn slice_bounds(&mut self, from: Option<&Expr>, to: Option<&Expr>) {
        let mut ints = [None, None];
        for (slot, bound) in ints.iter_mut().zip([from, to]) {
            let Some(b) = bound else { continue };
            let ExprKind::Literal(l) = &b.kind else {
                continue;
            };
            match l {
                Literal::Int(v) if *v >= 0 => *slot = Some((*v, b.span)),
                Literal::Int(_) => self.add(
                    b.span,
                    "a slice bound of 0 or more (Java has no negative indices)".into(),
                    describe(l),
                ),
                _ => self.add(b.span, "an int slice bound".into(), describe(l)),
            }
        }
        if let [Some((lo, lo_span)), Some((hi, _))] = ints
            && lo > hi
        {
            self.add(
                lo_span,
                format!("a lower bound no greater than the upper bound {hi}"),
                quote(&lo.to_string()),
            );
        }
    }

    /// Rules 2 and 3: the operand of `!` is boolean, that of `-` numeric.
    fn unary(&mut self, op: UnaryOp, operand: &Expr) {
        match op {
            UnaryOp::Not => self.boolean(operand, || "a boolean operand for `!`".into()),
            UnaryOp::Neg => {
                if let ExprKind::Literal(
                    l @ (Literal::Bool(_) | Literal::String(_) | Literal::Null),
                ) = &operand.kind
                {
                    self.add(
                        operand.span,
                        "a numeric operand for `-`".into(),
                        describe(l),
                    );
                }
            }
        }
    }

    /// Rules 2 and 4: the sides of `&&`/`||` are boolean, those of an
    /// ordering are not strings, booleans or `null`.
    fn binary(&mut self, op: BinaryOp, lhs: &Expr, rhs: &Expr) {
        for side in [lhs, rhs] {
            if op.is_logical() {
                self.boolean(side, || format!("a boolean operand for `{op}`"));
            }
            if op.is_ordering()
                && let ExprKind::Literal(
                    l @ (Literal::String(_) | Literal::Bool(_) | Literal::Null),
                ) = &side.kind
            {
                self.add(
                    side.span,
                    format!("a number or char on each side of `{op}`"),
                    describe(l),
                );
            }
        }
    }
}

/// "the int literal `5`".
fn describe(l: &Literal) -> String {
    format!("the {} literal {}", l.type_name(), quote(&l.to_string()))
}

/// If `e` is a literal that cannot have members (anything but a String).
fn primitive(e: &Expr) -> Option<String> {
    match &e.kind {
        ExprKind::Literal(Literal::String(_)) => None,
        ExprKind::Literal(l) => Some(describe(l)),
        _ => None,
    }
}

/// If `e` is a literal that is not a boolean.
fn non_boolean(e: &Expr) -> Option<String> {
    match &e.kind {
        ExprKind::Literal(Literal::Bool(_)) => None,
        ExprKind::Literal(l) => Some(describe(l)),
        _ => None,
    }
}

/// If `e` can only be a primitive or a String, what it is (for rule 6).
fn not_an_array(e: &Expr) -> Option<&'static str> {
    Some(match &e.kind {
        ExprKind::Literal(_) => "a literal",
        ExprKind::Unary {
            op: UnaryOp::Not, ..
        } => "a `!` expression",
        ExprKind::Unary {
            op: UnaryOp::Neg, ..
        } => "a negation",
        ExprKind::Binary { op, .. } if op.is_logical() => "a boolean expression",
        ExprKind::Binary {
            op: BinaryOp::Eq | BinaryOp::Ne,
            ..
        } => "a comparison",
        ExprKind::Binary { op, .. } if op.is_ordering() => "a comparison",
        ExprKind::Binary { .. } => "an arithmetic expression",
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::expr::parse;

    /// `expect` is `Ok(())` or `Err((column, expected-substring))`.
    fn check_case(src: &str, expect: Result<(), (usize, &str)>) {
        let parsed = parse(src).unwrap_or_else(|e| panic!("{src:?} must parse: {e}"));
        match (check(&parsed), expect) {
            (Ok(()), Ok(())) => {}
            (Err(e), Err((col, want))) => {
                assert_eq!(e.column, col, "{src:?}: {e}");
                assert!(e.expected.contains(want), "{src:?}: {e}");
            }
            (got, want) => panic!("{src:?}: got {got:?}, wanted {want:?}"),
        }
    }

    #[test]
    fn accepts_ordinary_expressions() {
        for src in [
            "order.items[0].getSku()",
            "m[\"k\"]",
            "xs[2..5]",
            "xs[..3]",
            "xs[0..0]",
            "xs[?qty > 3]",
            "count >= 10 && !done",
            "bytes#UTF-8",
            "@0x1f.name",
            "com.acme.Cache@0x7a.INSTANCE.size()",
            "\"a,b\".split(\",\")",
            "c >= 'a' && c <= 'z'",
            "-'a'",
            "!true || false",
            "xs[?true]",
            "m[-1]",
            "f(1)#raw",
            "xs[i..j]",
            "s == null",
            "-5 < x",
        ] {
            check_case(src, Ok(()));
        }
    }

    #[test]
    fn rule_1_members_of_primitives() {
        check_case("1.foo()", Err((1, "an object to call `foo()`")));
        check_case("true.x", Err((1, "an object before `.x`")));
        check_case("null.size()", Err((1, "an object")));
        check_case("x + 'a'[0]", Err((5, "an array, List or Map")));
        check_case("1.5[1..2]", Err((1, "an array or List")));
        check_case("(-5).abs()", Err((1, "an object")));
        check_case("2L[?x]", Err((1, "an array or collection")));
    }

    #[test]
    fn rule_2_boolean_positions() {
        check_case("!5", Err((2, "a boolean operand for `!`")));
        check_case("!null", Err((2, "boolean")));
        check_case("a && 1", Err((6, "a boolean operand for `&&`")));
        check_case("\"x\" || a", Err((1, "a boolean operand for `||`")));
        check_case("xs[?1]", Err((5, "a boolean predicate")));
    }

    #[test]
    fn rule_3_negating_non_numbers() {
        check_case("-true", Err((2, "a numeric operand")));
        check_case("-\"s\"", Err((2, "a numeric operand")));
        check_case("-null", Err((2, "a numeric operand")));
    }

    #[test]
    fn rule_4_ordering_non_numbers() {
        check_case(
            "name < \"m\"",
            Err((8, "a number or char on each side of `<`")),
        );
        check_case("null >= x", Err((1, "`>=`")));
        check_case("x > true", Err((5, "`>`")));
        check_case("x <= 'q'", Ok(()));
    }

    #[test]
    fn rule_5_slice_bounds() {
        check_case("xs[5..2]", Err((4, "no greater than the upper bound 2")));
        check_case("xs[-1..]", Err((4, "0 or more")));
        check_case("xs[..1.5]", Err((6, "an int slice bound")));
        check_case("xs[\"a\"..]", Err((4, "an int slice bound")));
        check_case("xs[0L..1]", Err((4, "an int slice bound")));
        check_case("xs[3..3]", Ok(()));
    }

    #[test]
    fn rule_6_charset_targets() {
        check_case(
            "a == b#raw",
            Err((7, "a byte[] or char[] expression before `#raw`")),
        );
        check_case("\"x\"#utf8", Err((4, "before `#UTF-8`")));
        check_case("!a #latin1", Err((4, "before `#ISO-8859-1`")));
        check_case("n + 1#raw", Err((6, "byte[]")));
        check_case("p.body #UTF-8", Ok(()));
        check_case("xs[0..4]#raw", Ok(()));
    }

    #[test]
    fn reports_the_earliest_mistake() {
        check_case("!5 && xs[3..1]", Err((2, "`!`")));
        check_case("xs[3..1] && !5", Err((4, "upper bound")));
    }

    #[test]
    fn a_hand_built_deep_tree_does_not_overflow() {
        use crate::expr::{NodeId, Span};
        let mut e = Expr {
            id: NodeId(0),
            span: Span::default(),
            kind: ExprKind::Literal(Literal::Bool(true)),
        };
        for i in 1..100_000u32 {
            e = Expr {
                id: NodeId(i),
                span: Span::default(),
                kind: ExprKind::Unary {
                    op: UnaryOp::Not,
                    operand: Box::new(e),
                },
            };
        }
        let p = Parsed {
            expr: e,
            charset: None,
            source: String::new(),
            node_count: 100_000,
        };
        assert!(check(&p).is_ok());
        // Dropping a tree this deep recurses; take it apart iteratively.
        let mut cur = Some(p.expr);
        while let Some(node) = cur.take() {
            if let ExprKind::Unary { operand, .. } = node.kind {
                cur = Some(*operand);
            }
        }
    }
}
