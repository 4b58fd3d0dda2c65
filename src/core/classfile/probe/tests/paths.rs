//! Field paths a probe reads for its trace expressions: what reads as a
//! path (and the column of what does not), which fields the helper may
//! read, the columns a plan adds for them (the head passed unrecorded,
//! a private field of the class read at the site), and refusals that
//! name the expression and the column.

use super::*;
use crate::classfile::probe::paths::{head, readable, shape};

fn bytes_of(entry: &str) -> &'static [u8] {
    CORPUS
        .iter()
        .find(|(n, _)| *n == entry)
        .map(|(_, b)| *b)
        .expect("a corpus entry")
}

fn spec(method: (&str, &str), site: Site, paths: Vec<FieldPath>) -> ProbeSpec {
    ProbeSpec {
        helper: "ProbedH".into(),
        method: Some(MethodRef {
            name: method.0.into(),
            descriptor: method.1.into(),
        }),
        site,
        locals: Some(Vec::new()),
        only_condition: false,
        condition: None,
        min_duration_ns: 0,
        ring_capacity: 16,
        callers: 0,
        stats: false,
        callees: false,
        paths,
    }
}

/// A field of `class` (internal name) as the JVM would describe it, in
/// the probed class's loader.
fn field(class: &str, declaring: &str, descriptor: &str, modifiers: u16) -> StepRead {
    StepRead::Field(FieldAt {
        class: class.into(),
        declaring: declaring.into(),
        descriptor: descriptor.into(),
        modifiers,
        class_public: false,
        class_in_loader: true,
        declaring_in_loader: true,
    })
}

fn path(index: usize, source: &str, base: PathBase, steps: Vec<(&str, StepRead)>) -> FieldPath {
    let shaped = shape(index, source).expect("a path");
    let mut columns: Vec<usize> = shaped.steps.iter().map(|s| s.1).collect();
    // A bare head is the first step.
    if let (PathBase::This, Some((_, c))) = (&base, &shaped.head) {
        columns.insert(0, *c);
    }
    FieldPath {
        index,
        source: source.into(),
        base,
        steps: steps
            .into_iter()
            .zip(columns)
            .map(|((name, read), column)| PathStep {
                name: name.into(),
                column,
                null_at: crate::expr::Span::new(column.saturating_sub(2), column + name.len()),
                read,
            })
            .collect(),
    }
}

fn names(h: &Helper) -> Vec<&str> {
    h.layout.columns.iter().map(|c| c.name.as_str()).collect()
}

#[test]
fn a_path_is_its_head_and_names_and_anything_else_is_refused_at_its_column() {
    let p = shape(0, "li.item.category").expect("a path");
    assert_eq!(p.head, Some(("li".to_string(), 1)));
    let steps: Vec<(&str, usize)> = p.steps.iter().map(|s| (s.0.as_str(), s.1)).collect();
    assert_eq!(steps, [("item", 4), ("category", 9)]);
    // A null before `.category` is reported at its dot, as the wire does.
    assert_eq!(p.steps[1].2.column("li.item.category"), 8);
    let this = shape(1, "this.cfg.mode").expect("a path");
    assert_eq!(this.head, None);
    assert_eq!(this.steps.len(), 2);
    assert_eq!(shape(0, "qty").expect("a local").steps.len(), 0);
    for (source, column, why) in [
        ("o.kind.name()", 8, "method call"),
        ("xs[0].y", 1, "indexing"),
        ("qty * 2", 1, "arithmetic"),
        ("o.kind == null", 1, "comparisons"),
        ("@0x1f.x", 1, "not compiled"),
        ("o.kind#UTF-8", 7, "charset"),
    ] {
        match shape(2, source) {
            Err(Refusal::TraceExpr {
                index: 2,
                expr,
                column: c,
                why: w,
            }) => {
                assert_eq!((expr.as_str(), c), (source, column), "{w}");
                assert!(w.contains(why), "{source}: {w}");
            }
            other => panic!("{source}: {other:?}"),
        }
    }
}

#[test]
fn the_helper_reads_public_fields_and_its_own_runtime_package_s_never_a_private_one() {
    let f = |class: &str, declaring: &str, modifiers: u16, public: bool, in_loader: bool| FieldAt {
        class: class.into(),
        declaring: declaring.into(),
        descriptor: "I".into(),
        modifiers,
        class_public: public,
        class_in_loader: in_loader,
        declaring_in_loader: in_loader,
    };
    let pkg = "com/shop";
    assert!(
        readable(
            &f("com/shop/Order", "com/shop/Order", 0, false, true),
            "qty",
            pkg
        )
        .is_ok()
    );
    assert!(
        readable(
            &f("com/shop/Order", "com/shop/Base", 0x4, false, true),
            "id",
            pkg
        )
        .is_ok()
    );
    assert!(
        readable(
            &f("java/awt/Point", "java/awt/Point", 0x1, true, false),
            "x",
            pkg
        )
        .is_ok()
    );
    let private = readable(
        &f("com/shop/Order", "com/shop/Order", 0x2, false, true),
        "secret",
        pkg,
    );
    assert!(private.is_err_and(|w| w.contains("com.shop.Order.secret is private")));
    // Same package name, another loader: another runtime package.
    let other_loader = readable(
        &f("com/shop/Order", "com/shop/Order", 0, true, false),
        "qty",
        pkg,
    );
    assert!(other_loader.is_err_and(|w| w.contains("package-private in com.shop")));
    let hidden_class = readable(
        &f("com/other/Box", "com/other/Box", 0x1, false, true),
        "n",
        pkg,
    );
    assert!(hidden_class.is_err_and(|w| w.contains("com.other.Box is not public")));
    // A superclass's field is checked against its declaring class.
    let sup = f("com/shop/Order", "com/base/Entity", 0x4, true, true);
    assert!(readable(&sup, "id", pkg).is_err_and(|w| w.contains("protected in com.base")));
}

#[test]
fn a_path_s_head_is_a_local_a_bound_value_or_else_a_field_of_the_class() {
    let bytes = bytes_of("release17/Probed");
    let sum = spec(("sum", "([Ljava/lang/String;)I"), Site::Entry, Vec::new());
    assert_eq!(
        head(bytes, &sum, "xs"),
        Ok(Some("[Ljava/lang/String;".into()))
    );
    assert_eq!(head(bytes, &sum, "LOG"), Ok(None));
    let arrays = spec(("arrays", "(I)[Ljava/lang/Object;"), Site::Exit, Vec::new());
    assert_eq!(
        head(bytes, &arrays, "returnValue"),
        Ok(Some("[Ljava/lang/Object;".into()))
    );
    assert_eq!(head(bytes, &arrays, "this"), Ok(Some("LProbed;".into())));
}

#[test]
fn paths_add_their_value_columns_last_and_pass_their_heads_unrecorded() {
    let bytes = bytes_of("release17/Probed");
    // `this.name` the helper reads; `this.total` is private, so the site
    // reads it; `xs.length` from an argument that is not recorded.
    let add = spec(
        ("add", "(JD)J"),
        Site::Exit,
        vec![
            path(
                0,
                "this.name",
                PathBase::This,
                vec![("name", field("Probed", "Probed", "Ljava/lang/String;", 0))],
            ),
            path(
                1,
                "this.total",
                PathBase::This,
                vec![("total", field("Probed", "Probed", "J", 0x2))],
            ),
        ],
    );
    let h = helper_class(bytes, &add).expect("a helper");
    assert_eq!(
        names(&h),
        [
            "returnValue",
            "exception",
            "expr[0] this.name",
            "expr[0]?",
            "expr[1] this.total",
            "expr[1]?"
        ]
    );
    assert_eq!(h.layout.columns[4].kind, Kind::Long);
    instrument(bytes, &[add]).expect("instrumented");
    let xs = Named("xs", "[Ljava/lang/String;");
    let sum = spec(
        ("sum", "([Ljava/lang/String;)I"),
        Site::Entry,
        vec![
            path(
                0,
                "xs.length",
                xs.base(),
                vec![("length", StepRead::Length)],
            ),
            path(1, "xs", xs.base(), Vec::new()),
        ],
    );
    let h = helper_class(bytes, &sum).expect("a helper");
    assert_eq!(names(&h), ["expr[0] xs.length", "expr[0]?", "expr[1] xs"]);
    instrument(bytes, &[sum]).expect("instrumented");
    // A static of the class by its bare name, in a static method.
    let loop_line = spec(
        ("loop", "(I)I"),
        Site::Line { line: 52 },
        vec![path(
            0,
            "LOG",
            PathBase::This,
            vec![("LOG", field("Probed", "Probed", "Ljava/util/List;", 0x18))],
        )],
    );
    let h = helper_class(bytes, &loop_line).expect("a helper");
    assert_eq!(names(&h), ["expr[0] LOG", "expr[0]?"]);
}

/// A named head of a path.
struct Named(&'static str, &'static str);

impl Named {
    fn base(&self) -> PathBase {
        PathBase::Named {
            name: self.0.into(),
            descriptor: self.1.into(),
        }
    }
}

#[test]
fn what_the_helper_may_not_read_is_refused_naming_the_expression_and_the_column() {
    let bytes = bytes_of("release17/Probed");
    let refusal = |site: Site, method: (&str, &str), p: FieldPath| {
        instrument(bytes, &[spec(method, site, vec![p])]).expect_err("refused")
    };
    let xs = Named("xs", "[Ljava/lang/String;");
    // A private field of another class.
    let r = refusal(
        Site::Entry,
        ("sum", "([Ljava/lang/String;)I"),
        path(
            0,
            "xs.hash",
            xs.base(),
            vec![(
                "hash",
                field("java/lang/String", "java/lang/String", "I", 0x2),
            )],
        ),
    );
    assert!(
        matches!(&r, Refusal::TraceExpr { index: 0, column: 4, why, .. } if why.contains("java.lang.String.hash is private")),
        "{r}"
    );
    assert!(
        r.to_string()
            .starts_with("trace_expr[0] xs.hash column 4: "),
        "{r}"
    );
    // `this` in a static method.
    let r = refusal(
        Site::Entry,
        ("loop", "(I)I"),
        path(
            0,
            "this.name",
            PathBase::This,
            vec![("name", field("Probed", "Probed", "Ljava/lang/String;", 0))],
        ),
    );
    assert!(
        matches!(&r, Refusal::TraceExpr { why, .. } if why.contains("static method")),
        "{r}"
    );
    // A step the JVM could not resolve says why.
    let r = refusal(
        Site::Entry,
        ("sum", "([Ljava/lang/String;)I"),
        path(
            0,
            "xs.size",
            xs.base(),
            vec![(
                "size",
                StepRead::Unresolved(Unresolved::NotAnObject {
                    descriptor: "[Ljava/lang/String;".into(),
                }),
            )],
        ),
    );
    assert!(
        matches!(&r, Refusal::TraceExpr { why, .. } if why.contains("xs is a java.lang.String[]")),
        "{r}"
    );
    // A head that is not in scope.
    let r = refusal(
        Site::Entry,
        ("sum", "([Ljava/lang/String;)I"),
        path(0, "nosuch", Named("nosuch", "I").base(), Vec::new()),
    );
    assert!(
        matches!(&r, Refusal::TraceExpr { why, .. } if why.contains("not in scope")),
        "{r}"
    );
}

#[test]
fn a_write_probe_reads_paths_from_the_written_value_and_from_this_only_where_it_has_one() {
    let bytes = bytes_of("release17/Probed");
    let write = |paths| ProbeSpec {
        method: None,
        site: Site::FieldWrite {
            owner: "Probed".into(),
            name: "name".into(),
            descriptor: "Ljava/lang/String;".into(),
            writers: Vec::new(),
        },
        ..spec(("", ""), Site::Entry, paths)
    };
    let new = Named("newValue", "Ljava/lang/String;");
    let h = helper_class(
        bytes,
        &write(vec![path(0, "newValue", new.base(), Vec::new())]),
    )
    .expect("a helper");
    assert!(names(&h).contains(&"expr[0] newValue"), "{:?}", names(&h));
    // `name` is written in a constructor: no site has a `this` to read.
    let tiny = field("Probed", "Probed", "B", 0);
    let r = instrument(
        bytes,
        &[write(vec![path(
            0,
            "this.tiny",
            PathBase::This,
            vec![("tiny", tiny)],
        )])],
    )
    .expect_err("refused");
    assert!(
        matches!(&r, Refusal::TraceExpr { why, .. } if why.contains("a write probe has this only")),
        "{r}"
    );
}
