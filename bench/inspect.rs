//! End-to-end bench of reading a live JVM: `debug_get_stack` of a thread
//! 20 frames deep with locals, and a 5-link `debug_evaluate`, through the
//! real tool layer against a real JVM. Median latency and JDWP packets per
//! call, with reads pipelined (window 32) and serial (window 1), in one
//! run. Run: `cargo bench --bench inspect` (needs a JDK).

#[path = "support.rs"]
mod support;

use std::time::{Duration, Instant};

use jvmscope::mcp::JvmScope;
use serde_json::json;
use support::text;

const CALLS: usize = 60;

async fn measure(port: u16, window: usize) -> Vec<(String, Duration, f64)> {
    let (engine, session) = support::attached(port, Some(window)).await;
    let server = JvmScope::new(engine.clone());
    let threads = text(
        &server
            .call("debug_list_threads", json!({"name_contains": "deep"}))
            .await,
    );
    let id = threads
        .lines()
        .find(|l| l.contains("\"deep\""))
        .and_then(|l| l.split_whitespace().next())
        .expect("deep thread")
        .to_string();
    server
        .call("debug_thread", json!({"kind": "suspend", "thread_id": id}))
        .await;
    // Frame 1 is `descend(0, …)` (frame 0 is Thread.sleep).
    let cases = [
        (
            "debug_get_stack, 20 frames with locals",
            "debug_get_stack",
            json!({"thread_id": id, "max_frames": 20}),
        ),
        (
            "debug_evaluate, 5-link chain",
            "debug_evaluate",
            json!({"thread_id": id, "frame_index": 1, "expression": "order.customer.address.city.name"}),
        ),
    ];
    let mut out = Vec::new();
    for (label, tool, args) in cases {
        let r = server.call(tool, args.clone()).await;
        assert!(r.is_error != Some(true), "{tool}: {}", text(&r));
        let mut times = Vec::with_capacity(CALLS);
        let packets_before = session.packets_sent();
        for _ in 0..CALLS {
            let t = Instant::now();
            let r = server.call(tool, args.clone()).await;
            times.push(t.elapsed());
            assert!(r.is_error != Some(true));
        }
        let packets = (session.packets_sent() - packets_before) as f64 / CALLS as f64;
        times.sort();
        out.push((label.to_string(), times[CALLS / 2], packets));
    }
    server
        .call("debug_thread", json!({"kind": "resume", "thread_id": id}))
        .await;
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
    // A JDWP agent listening on port 0 picks a new port after a debugger
    // leaves, so each configuration gets a fresh JVM of the same fixture.
    let run = |window: usize| {
        let (mut jvm, port) = support::start_fixture("Deep", "deep ready", &[]);
        let out = rt.block_on(measure(port, window));
        let _ = jvm.kill();
        let _ = jvm.wait();
        out
    };
    let pipelined = run(32);
    let serial = run(1);
    support::report(&format!(
        "Median of {CALLS} calls each, same fixture, one run"
    ));
    support::report(
        "| call | pipelined (window 32) | serial (window 1) | speed-up | JDWP packets per call |",
    );
    support::report("|---|---|---|---|---|");
    for ((label, p, packets), (_, s, _)) in pipelined.iter().zip(&serial) {
        support::report(&format!(
            "| {label} | {:.2} ms | {:.2} ms | {:.2}x | {packets:.0} |",
            p.as_secs_f64() * 1e3,
            s.as_secs_f64() * 1e3,
            s.as_secs_f64() / p.as_secs_f64()
        ));
    }
}
