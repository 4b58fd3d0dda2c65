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

criterion_group!(benches, parsing);
criterion_main!(benches);
