//! Evaluator tests against a small canned object world.

use super::*;
use crate::expr::parse;

/// A tiny object world: object 1 is `order` with fields `qty` (3),
/// `sku` (string 10 = "A-1"), `next` (null), `items` (array 20 of
/// objects 21, 22 whose `qty` are 1 and 5); `getB()` on 1 returns
/// object 2 whose `c` is null.
fn world(n: &Need) -> Answer {
    let obj = |id| Val::Object {
        id,
        tag: Tag::Object,
    };
    match n {
        Need::Name { name } if name == "order" => Answer::Value(obj(1)),
        Need::Name { name } if name == "count" => Answer::Value(Val::Prim(Prim::Int(7))),
        Need::Name { name } => Answer::Missing(format!("no local `{name}`")),
        Need::Class { name, .. } if name == "java.lang.Integer" => Answer::Value(Val::Class {
            id: 99,
            name: name.clone(),
        }),
        Need::Class { name, .. } => Answer::Missing(format!("no class {name}")),
        Need::Field {
            target: Val::Object { id: 1, .. },
            name,
        } => match name.as_str() {
            "qty" => Answer::Value(Val::Prim(Prim::Int(3))),
            "sku" => Answer::Value(Val::Object {
                id: 10,
                tag: Tag::String,
            }),
            "next" => Answer::Value(Val::Null),
            "items" => Answer::Value(Val::Object {
                id: 20,
                tag: Tag::Array,
            }),
            _ => Answer::Missing(format!("no field {name}")),
        },
        Need::Field {
            target: Val::Object { id: 21, .. },
            name,
        } if name == "qty" => Answer::Value(Val::Prim(Prim::Int(1))),
        Need::Field {
            target: Val::Object { id: 22, .. },
            name,
        } if name == "qty" => Answer::Value(Val::Prim(Prim::Int(5))),
        Need::Field {
            target: Val::Object { id: 2, .. },
            name,
        } if name == "c" => Answer::Value(Val::Null),
        Need::Field {
            target: Val::Class { .. },
            name,
        } if name == "MAX_VALUE" => Answer::Value(Val::Prim(Prim::Int(i32::MAX))),
        Need::Field {
            target: Val::Object { id: 20, .. },
            name,
        } if name == "length" => Answer::Value(Val::Prim(Prim::Int(2))),
        Need::Text {
            target: Val::Object { id: 10, .. },
        } => Answer::Value(Val::Text("A-1".into())),
        Need::Elements {
            target: Val::Object { id: 20, .. },
            ..
        } => Answer::Value(Val::Many(vec![obj(21), obj(22)])),
        Need::Invoke {
            target: Some(Val::Object { id: 1, .. }),
            name,
            ..
        } if name == "getB" => Answer::Value(obj(2)),
        Need::Unbox { .. } => Answer::Missing("not a box".into()),
        Need::FrameLocal { depth: 1, name } if name == "req" => Answer::Value(obj(1)),
        Need::FrameLocal { depth, name } => {
            Answer::Missing(format!("`{name}` is not a local of frame[{depth}]"))
        }
        Need::New { class, args } if class == "a.Box" && args == &[Val::Prim(Prim::Int(7))] => {
            Answer::Value(obj(30))
        }
        other => Answer::Failed(format!("unexpected {other:?}")),
    }
}

fn eval(src: &str) -> Result<Val, String> {
    let p = parse(src).map_err(|e| e.to_string())?;
    let (r, _, _) = run_with(&p.expr, world);
    r.map_err(|e| e.render(src))
}

#[test]
fn reads_names_fields_and_statics() {
    assert_eq!(eval("order.qty"), Ok(Val::Prim(Prim::Int(3))));
    assert_eq!(eval("order.qty + count * 2"), Ok(Val::Prim(Prim::Int(17))));
    assert_eq!(
        eval("java.lang.Integer.MAX_VALUE"),
        Ok(Val::Prim(Prim::Int(i32::MAX)))
    );
    assert_eq!(eval("order.items.length"), Ok(Val::Prim(Prim::Int(2))));
}

#[test]
fn string_content_and_identity() {
    assert_eq!(
        eval("order.sku == \"A-1\""),
        Ok(Val::Prim(Prim::Bool(true)))
    );
    assert_eq!(eval("order.sku != \"B\""), Ok(Val::Prim(Prim::Bool(true))));
    assert_eq!(eval("order.next == null"), Ok(Val::Prim(Prim::Bool(true))));
    assert_eq!(eval("order == order"), Ok(Val::Prim(Prim::Bool(true))));
}

#[test]
fn filters_and_short_circuit() {
    let v = eval("order.items[?qty > 3]").expect("filter");
    assert_eq!(
        v,
        Val::Many(vec![Val::Object {
            id: 22,
            tag: Tag::Object
        }])
    );
    assert_eq!(
        eval("order.next != null && order.next.qty > 0"),
        Ok(Val::Prim(Prim::Bool(false)))
    );
    assert_eq!(
        eval("order.items[?qty > 3].length"),
        Ok(Val::Prim(Prim::Int(1)))
    );
}

#[test]
fn errors_point_at_the_column() {
    let e = eval("order.getB().c.d").expect_err("null link");
    assert!(e.starts_with("column 15:"), "the caret is under `.d`: {e}");
    assert!(e.contains("null before `.d`"), "{e}");
    let e = eval("nosuch + 1").expect_err("unknown");
    assert!(e.contains("no local `nosuch`"), "{e}");
    let e = eval("order.qty && true").expect_err("types");
    assert!(e.contains("booleans"), "{e}");
}

#[test]
fn each_method_runs_once_and_reads_batch() {
    let p = parse("order.getB() == order.getB()").expect("parse");
    let mut calls = 0;
    let (r, _, _) = run_with(&p.expr, |n| {
        if n.invokes() {
            calls += 1;
        }
        world(n)
    });
    assert_eq!(r, Ok(Val::Prim(Prim::Bool(true))));
    assert_eq!(calls, 2, "two call sites, each exactly once");
    // Two independent field reads arrive in one step.
    let p = parse("order.qty + order.items.length").expect("parse");
    let mut ev = Evaluation::new(&p.expr);
    let Step::Needs(first) = ev.step() else {
        panic!("needs")
    };
    assert_eq!(first.len(), 2, "both heads asked together: {first:?}");
}

#[test]
fn chain_links_are_recorded() {
    let p = parse("order.getB().c").expect("parse");
    let (r, links, _) = run_with(&p.expr, world);
    assert_eq!(r, Ok(Val::Null));
    assert_eq!(links.len(), 3, "{links:?}");
    assert_eq!(links[2].value, Val::Null);
}

#[test]
fn new_asks_for_a_construction_with_its_arguments() {
    assert_eq!(
        eval("new a.Box(3 + 4)"),
        Ok(Val::Object {
            id: 30,
            tag: Tag::Object
        })
    );
}

#[test]
fn caller_frame_locals_are_asked_by_depth_and_walked_like_names() {
    assert_eq!(eval("frame[1].req.qty + 1"), Ok(Val::Prim(Prim::Int(4))));
    let err = eval("frame[2].req").expect_err("missing");
    assert!(err.contains("not a local of frame[2]"), "{err}");
}

/// A class lookup that timed out is reported as the timeout, never as
/// "no loaded class is named" (the JVM did not say that).
#[test]
fn a_failed_class_lookup_is_reported_not_read_as_absent() {
    let timing_out = |n: &Need| match n {
        Need::Class { .. } => Answer::Failed("ClassesBySignature got no reply within 800ms".into()),
        other => world(other),
    };
    let src = "java.util.List.EMPTY";
    let p = parse(src).expect("parses");
    let (r, _, _) = run_with(&p.expr, timing_out);
    let text = r.map_err(|e| e.render(src)).expect_err("fails");
    assert!(text.contains("got no reply within 800ms"), "{text}");
    assert!(!text.contains("no loaded class"), "{text}");
}
