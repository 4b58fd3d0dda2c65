//! Micro benches of the expression front end: parsing (and checking) the
//! shapes agents type most — a property chain and a filter predicate.
//! Run: `cargo bench --bench expr_parse`.

use criterion::{Criterion, criterion_group, criterion_main};
use jvmscope::expr::{check, parse};
use std::hint::black_box;

fn parsing(c: &mut Criterion) {
    let mut g = c.benchmark_group("expr_parse");
    for (name, src) in [
        ("5-link chain", "order.customer.getAddress().lines[0].city"),
        ("filter predicate", "items[?qty > 3 && sku != \"x\"].length"),
    ] {
        g.bench_function(name, |b| {
            b.iter(|| {
                let parsed = parse(black_box(src));
                assert!(parsed.is_ok());
                parsed
            })
        });
        g.bench_function(format!("{name} + check"), |b| {
            b.iter(|| {
                let parsed = parse(black_box(src)).map(|p| check(&p).is_ok());
                assert_eq!(parsed, Ok(true));
            })
        });
    }
    g.finish();
}

/// Parse + evaluate of a 5-link chain against a canned read source: the
/// evaluator's own cost, without any JVM.
fn evaluating(c: &mut Criterion) {
    use jvmscope::expr::eval::{Answer, Need, Val, run_with};
    use jvmscope::jdwp::Tag;
    let src = "order.customer.getAddress().lines[0].city";
    let answer = |n: &Need| -> Answer {
        let obj = |id| Val::Object {
            id,
            tag: Tag::Object,
        };
        match n {
            Need::Name { .. } => Answer::Value(obj(1)),
            Need::Field {
                target: Val::Object { id, .. },
                ..
            } => Answer::Value(obj(id + 1)),
            Need::Invoke { .. } => Answer::Value(obj(10)),
            Need::Index { .. } => Answer::Value(obj(20)),
            _ => Answer::Missing("no".into()),
        }
    };
    c.bench_function("parse + evaluate a 5-link chain (canned reads)", |b| {
        b.iter(|| {
            let p = parse(black_box(src)).expect("parses");
            let (r, links, _) = run_with(&p.expr, answer);
            assert!(r.is_ok());
            black_box(links.len())
        })
    });
}

criterion_group!(benches, parsing, evaluating);
criterion_main!(benches);
