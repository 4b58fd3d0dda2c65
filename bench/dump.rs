//! Bench of debug_thread_dump's shape: 300 threads 60 frames deep (plus
//! the JVM's own), a full dump (every thread, every frame, locks) with a
//! suspension of its own, read serially (one thread at a time) and
//! pipelined (the default: 24 threads at once through the 32-request
//! window), in one run against one JVM; then the same dump narrowed by
//! `name_filter` to the two deadlocked lock takers, which still reads the
//! wait-for graph of every other waiting thread (ADR 0008). Reports the
//! milliseconds the VM was held, the whole call, and the packets spent.
//! Run: `cargo bench --bench dump` (needs a JDK).

#[path = "support.rs"]
mod support;

use std::time::Duration;

use jvmscope::actors::{DEFAULT_PIPELINE, DumpSpec};
use jvmscope::model::classes::NameFilter;
use jvmscope::model::dump::Stack;

const RUNS: usize = 9;

struct Figures {
    held: Duration,
    total: Duration,
    packets: u64,
    threads: usize,
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

/// A dump of every thread, `pipeline` threads read at once.
fn full(pipeline: usize) -> DumpSpec {
    DumpSpec {
        suspend: true,
        max_suspend: Duration::from_secs(30),
        pipeline,
        ..DumpSpec::default()
    }
}

async fn measure(port: u16, rows: Vec<(String, DumpSpec)>) -> Vec<(String, Figures)> {
    let (engine, session) = support::attached(port, None).await;
    // Warm the class cache once, as any second dump finds it.
    session
        .thread_dump(full(DEFAULT_PIPELINE), None)
        .await
        .expect("dump");
    let mut out = Vec::new();
    for (label, spec) in rows {
        let (mut held, mut total, mut packets, mut threads) = (vec![], vec![], 0, 0);
        for _ in 0..RUNS {
            let d = session.thread_dump(spec.clone(), None).await.expect("dump");
            let hold = d.hold.expect("it suspended");
            assert!(hold.verified && hold.cut == 0, "resumed and complete");
            held.push(hold.held);
            total.push(d.elapsed);
            packets = d.packets;
            threads = d
                .threads
                .iter()
                .filter(|t| matches!(&t.stack, Stack::Read { depth, .. } if *depth >= 60))
                .count();
        }
        out.push((
            label,
            Figures {
                held: median(held),
                total: median(total),
                packets,
                threads,
            },
        ));
    }
    let _ = session.disconnect().await;
    engine.shutdown().await;
    out
}

fn main() {
    if std::env::args().any(|a| a == "--list") {
        return;
    }
    // The runtime the binary runs the engine on (ADR 0014).
    let rt = jvmscope::actors::runtime::build().expect("runtime");
    let (mut jvm, port) = support::start_fixture("Wedged", "wedged ready", &["0", "300", "60"]);
    let mut rows: Vec<(String, DumpSpec)> = [1, 4, 8, DEFAULT_PIPELINE, 64]
        .into_iter()
        .map(|p| {
            let label = if p == 1 {
                "1 (serial)".into()
            } else {
                p.to_string()
            };
            (label, full(p))
        })
        .collect();
    rows.push((
        format!("{DEFAULT_PIPELINE}, name_filter lock-*"),
        DumpSpec {
            name_filter: NameFilter::parse(Some("lock-*")),
            ..full(DEFAULT_PIPELINE)
        },
    ));
    let rows = rt.block_on(measure(port, rows));
    let _ = jvm.kill();
    let _ = jvm.wait();
    support::report(&format!(
        "Full dump with suspend:true of the Wedged fixture (300 threads x 60 frames + JVM threads), median of {RUNS}, one run"
    ));
    support::report(
        "| threads read at once | VM held | whole call | JDWP packets | 60-frame threads read |",
    );
    support::report("|---|---|---|---|---|");
    for (label, f) in &rows {
        support::report(&format!(
            "| {label} | {:.1} ms | {:.1} ms | {} | {} |",
            f.held.as_secs_f64() * 1e3,
            f.total.as_secs_f64() * 1e3,
            f.packets,
            f.threads
        ));
    }
}
