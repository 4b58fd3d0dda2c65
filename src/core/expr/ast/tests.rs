//! Tests of the tree: canonical printing round-trips through the parser,
//! children and spans, and walking the tallest tree.

use super::*;
use crate::expr::parse;
use proptest::prelude::*;

/// The tree with every span zeroed and every id 0, for comparing shapes.
fn strip(e: &Expr) -> Expr {
    let ident = |i: &Ident| Ident {
        name: i.name.clone(),
        span: Span::default(),
    };
    let bx = |e: &Expr| Box::new(strip(e));
    let kind = match &e.kind {
        ExprKind::Literal(l) => ExprKind::Literal(l.clone()),
        ExprKind::Path(p) => ExprKind::Path(p.iter().map(ident).collect()),
        ExprKind::This => ExprKind::This,
        ExprKind::Handle(h) => ExprKind::Handle(*h),
        ExprKind::FrameLocal { depth, name } => ExprKind::FrameLocal {
            depth: *depth,
            name: ident(name),
        },
        ExprKind::PinnedClass { path, loader } => ExprKind::PinnedClass {
            path: path.iter().map(ident).collect(),
            loader: *loader,
        },
        ExprKind::Field { target, name } => ExprKind::Field {
            target: bx(target),
            name: ident(name),
        },
        ExprKind::Call { target, name, args } => ExprKind::Call {
            target: target.as_deref().map(bx),
            name: ident(name),
            args: args.iter().map(strip).collect(),
        },
        ExprKind::New { class, args } => ExprKind::New {
            class: class.iter().map(ident).collect(),
            args: args.iter().map(strip).collect(),
        },
        ExprKind::Index { target, index } => ExprKind::Index {
            target: bx(target),
            index: bx(index),
        },
        ExprKind::Slice { target, from, to } => ExprKind::Slice {
            target: bx(target),
            from: from.as_deref().map(bx),
            to: to.as_deref().map(bx),
        },
        ExprKind::Filter { target, predicate } => ExprKind::Filter {
            target: bx(target),
            predicate: bx(predicate),
        },
        ExprKind::Unary { op, operand } => ExprKind::Unary {
            op: *op,
            operand: bx(operand),
        },
        ExprKind::Binary { op, lhs, rhs } => ExprKind::Binary {
            op: *op,
            lhs: bx(lhs),
            rhs: bx(rhs),
        },
    };
    node(kind)
}

fn node(kind: ExprKind) -> Expr {
    Expr {
        id: NodeId(0),
        span: Span::default(),
        kind,
    }
}

/// Parses `src` and prints it back canonically.
fn check(src: &str, expect: &str) {
    let p = parse(src).unwrap_or_else(|e| panic!("{src:?}: {e}"));
    assert_eq!(p.to_string(), expect, "printing {src:?}");
    let again = parse(expect).unwrap_or_else(|e| panic!("{expect:?}: {e}"));
    assert_eq!(strip(&again.expr), strip(&p.expr), "{src:?}");
    assert_eq!(again.charset, p.charset);
}

#[test]
fn canonical_printing() {
    for (src, want) in [
        ("a.b.c", "a.b.c"),
        ("  a . b ( 1 ,2 )", "a.b(1, 2)"),
        ("(a || b) && c", "(a || b) && c"),
        ("a || b && c", "a || b && c"),
        ("((a || b)) || c", "a || b || c"),
        ("a || (b || c)", "a || (b || c)"),
        ("a - (b - c)", "a - (b - c)"),
        ("(a - b) - c", "a - b - c"),
        ("(a + b) * c", "(a + b) * c"),
        ("a * -b", "a * -b"),
        ("a - -5", "a - -5"),
        ("!(a == b)", "!(a == b)"),
        ("-(5)", "-(5)"),
        ("-5", "-5"),
        ("-5.abs()", "-5.abs()"),
        ("(-5).abs()", "(-5).abs()"),
        ("(-x).y", "(-x).y"),
        ("(a).b", "(a).b"),
        ("(a.b).c()", "a.b.c()"),
        ("(a + b).c[0]", "(a + b).c[0]"),
        ("xs[ 2 .. 5 ]", "xs[2..5]"),
        ("xs[..3]", "xs[..3]"),
        ("xs[2..]", "xs[2..]"),
        ("xs[ ? qty>3 ]", "xs[?qty > 3]"),
        ("m[\"k\"]", "m[\"k\"]"),
        ("@0X1F.name", "@0x1f.name"),
        ("a.B@0x7A.c", "a.B@0x7a.c"),
        ("bytes #utf8", "bytes#UTF-8"),
        ("bytes#latin1", "bytes#ISO-8859-1"),
        ("bytes#RAW", "bytes#raw"),
        ("0x1F", "31"),
        ("0xFFFFFFFF", "-1"),
        ("1e3", "1000.0"),
        ("2.50f", "2.5f"),
        ("2d", "2.0"),
        ("7l", "7L"),
        ("'\\u0041'", "'A'"),
        ("'\\''", "'\\''"),
        ("'\"'", "'\"'"),
        ("'\\uD800'", "'\\ud800'"),
        ("'\\0'", "'\\u0000'"),
        ("\"a\\u0001\\tb'\\\"\"", "\"a\\u0001\\tb'\\\"\""),
        ("this.x", "this.x"),
        ("f()", "f()"),
    ] {
        check(src, want);
    }
}

#[test]
fn non_finite_literals_print_as_the_division_that_makes_them() {
    assert_eq!(Literal::Double(f64::NAN).to_string(), "(0.0 / 0.0)");
    assert_eq!(
        Literal::Double(f64::NEG_INFINITY).to_string(),
        "(-1.0 / 0.0)"
    );
    assert_eq!(Literal::Float(f32::INFINITY).to_string(), "(1.0f / 0.0f)");
}

#[test]
fn calls_are_listed_once_in_source_order() {
    let check = |src: &str, want: &[&str]| {
        let parsed = parse(src).expect("parses");
        assert_eq!(parsed.expr.calls(), want, "{src}");
    };
    check("a.b + xs[0].c", &[]);
    check(
        "o.getSku() == \"x\" && isReady()",
        &["getSku()", "isReady()"],
    );
    check("f(g(1), new a.B(f(2)))", &["f()", "g()", "new a.B()"]);
    check("xs[?isOpen()].length", &["isOpen()"]);
}

#[test]
fn children_and_spans() {
    let p = parse("f(a, b[1..2])").unwrap_or_else(|e| panic!("{e}"));
    let kids: Vec<String> = p.expr.children().iter().map(|c| c.to_string()).collect();
    assert_eq!(kids, ["a", "b[1..2]"]);
    assert_eq!(Span::new(3, 4).column("ä.ö"), 3);
    assert_eq!(
        Span::new(2, 4).column("ä.ö"),
        2,
        "mid-character offsets do not panic"
    );
    assert_eq!(Span::new(99, 100).column("ab"), 3);
    assert_eq!(Span::new(99, 100).text("ab"), "");
}

/// The tallest tree the parser accepts can be printed, debug-printed,
/// cloned and compared on a small stack.
#[test]
fn walking_the_tallest_tree_fits_a_512k_stack() {
    use crate::expr::MAX_TREE_HEIGHT;
    for link in [".b()", " + a", "[0]", ".x"] {
        let links = usize::from(MAX_TREE_HEIGHT) - 1;
        let src = format!("(a){}", link.repeat(links));
        let p = parse(&src).unwrap_or_else(|e| panic!("{link:?}: {e}"));
        let worker = std::thread::Builder::new()
            .stack_size(512 * 1024)
            .spawn(move || {
                let printed = p.to_string();
                let debugged = format!("{p:#?}");
                let copy = p.clone();
                (printed.len(), !debugged.is_empty(), copy == p)
            });
        let (len, debugged, equal) = worker
            .unwrap_or_else(|e| panic!("spawn: {e}"))
            .join()
            .unwrap_or_else(|_| panic!("{link:?}: overflowed or panicked"));
        assert!(len > 0 && debugged && equal);
    }
}

fn ident() -> impl Strategy<Value = Ident> {
    "[a-zA-Zé_$][a-zA-Z0-9_$]{0,5}"
        .prop_filter("keyword", |s| {
            !matches!(s.as_str(), "this" | "true" | "false" | "null")
        })
        .prop_map(|name| Ident {
            name,
            span: Span::default(),
        })
}

fn literal() -> impl Strategy<Value = Literal> {
    prop_oneof![
        any::<i32>().prop_map(Literal::Int),
        any::<i64>().prop_map(Literal::Long),
        any::<f32>()
            .prop_filter("finite", |v| v.is_finite())
            .prop_map(Literal::Float),
        any::<f64>()
            .prop_filter("finite", |v| v.is_finite())
            .prop_map(Literal::Double),
        any::<u16>().prop_map(Literal::Char),
        any::<bool>().prop_map(Literal::Bool),
        Just(Literal::Null),
        prop::collection::vec(any::<char>(), 0..8)
            .prop_map(|cs| Literal::String(cs.into_iter().collect())),
    ]
}

fn leaf() -> impl Strategy<Value = Expr> {
    prop_oneof![
        literal().prop_map(|l| node(ExprKind::Literal(l))),
        prop::collection::vec(ident(), 1..4).prop_map(|p| node(ExprKind::Path(p))),
        Just(node(ExprKind::This)),
        any::<u64>().prop_map(|h| node(ExprKind::Handle(h))),
        (prop::collection::vec(ident(), 1..3), any::<u64>())
            .prop_map(|(path, loader)| node(ExprKind::PinnedClass { path, loader })),
    ]
}

fn binary_op() -> impl Strategy<Value = BinaryOp> {
    prop::sample::select(vec![
        BinaryOp::Eq,
        BinaryOp::Ne,
        BinaryOp::Lt,
        BinaryOp::Le,
        BinaryOp::Gt,
        BinaryOp::Ge,
        BinaryOp::And,
        BinaryOp::Or,
        BinaryOp::Add,
        BinaryOp::Sub,
        BinaryOp::Mul,
        BinaryOp::Div,
        BinaryOp::Rem,
    ])
}

fn expr() -> impl Strategy<Value = Expr> {
    leaf().prop_recursive(6, 48, 4, |inner| {
        let bx = |e: Expr| Box::new(e);
        prop_oneof![
            (inner.clone(), ident()).prop_map(move |(t, name)| node(ExprKind::Field {
                target: bx(t),
                name
            })),
            (
                prop::option::of(inner.clone()),
                ident(),
                prop::collection::vec(inner.clone(), 0..3)
            )
                .prop_map(move |(t, name, args)| node(ExprKind::Call {
                    target: t.map(bx),
                    name,
                    args
                })),
            (inner.clone(), inner.clone()).prop_map(move |(t, i)| node(ExprKind::Index {
                target: bx(t),
                index: bx(i)
            })),
            (
                inner.clone(),
                prop::option::of(inner.clone()),
                prop::option::of(inner.clone())
            )
                .prop_map(move |(t, from, to)| node(ExprKind::Slice {
                    target: bx(t),
                    from: from.map(bx),
                    to: to.map(bx)
                })),
            (inner.clone(), inner.clone()).prop_map(move |(t, p)| node(ExprKind::Filter {
                target: bx(t),
                predicate: bx(p)
            })),
            (
                prop::sample::select(vec![UnaryOp::Not, UnaryOp::Neg]),
                inner.clone()
            )
                .prop_map(move |(op, e)| node(ExprKind::Unary { op, operand: bx(e) })),
            (binary_op(), inner.clone(), inner).prop_map(move |(op, l, r)| node(
                ExprKind::Binary {
                    op,
                    lhs: bx(l),
                    rhs: bx(r)
                }
            )),
        ]
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(3000))]

    #[test]
    fn printing_then_parsing_gives_the_same_tree(
        e in expr(),
        charset in prop::option::of(prop::sample::select(vec![
            Charset::Utf8, Charset::Latin1, Charset::Raw,
        ])),
    ) {
        let original = Parsed {
            expr: e,
            charset,
            source: String::new(),
            node_count: 0,
        };
        let printed = original.to_string();
        let parsed = parse(&printed);
        prop_assert!(parsed.is_ok(), "{:?} does not parse: {:?}", printed, parsed);
        if let Ok(p) = parsed {
            prop_assert_eq!(strip(&p.expr), strip(&original.expr), "via {:?}", printed);
            prop_assert_eq!(p.charset, charset);
            prop_assert_eq!(p.to_string(), printed);
        }
    }
}

#[test]
fn bare_names_are_the_one_segment_paths_outside_filters() {
    let p = parse("total > limit && Math.abs(total) < o.max && xs[?qty > 3].size() > n")
        .expect("parses");
    let names: Vec<&str> = p
        .expr
        .bare_names()
        .iter()
        .map(|i| i.name.as_str())
        .collect();
    assert_eq!(names, vec!["total", "limit", "xs", "n"]);
    let p = parse("this.x + f(y)").expect("parses");
    let names: Vec<&str> = p
        .expr
        .bare_names()
        .iter()
        .map(|i| i.name.as_str())
        .collect();
    assert_eq!(names, vec!["y"]);
}

#[test]
fn caller_frame_locals_parse_print_and_are_no_bare_names() {
    let p = parse("frame[1].req.path == x && frame[12].n > 0").expect("parses");
    let names: Vec<&str> = p
        .expr
        .bare_names()
        .iter()
        .map(|i| i.name.as_str())
        .collect();
    assert_eq!(names, vec!["x"]);
    let frames: Vec<(u32, &str)> = p
        .expr
        .frame_names()
        .iter()
        .map(|(d, i)| (*d, i.name.as_str()))
        .collect();
    assert_eq!(frames, vec![(1, "req"), (12, "n")]);
    assert_eq!(
        p.expr.to_string(),
        "frame[1].req.path == x && frame[12].n > 0"
    );
    // A local named `frame` stays reachable, and a call is no frame local.
    let p = parse("(frame)[1].x + frame[0].size()").expect("parses");
    assert!(p.expr.frame_names().is_empty());
    assert_eq!(p.expr.bare_names()[0].name, "frame");
    assert!(parse("frame[99999].x").is_err());
}
