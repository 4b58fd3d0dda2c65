//! Bench of what the memory tools cost the JVM: the stop-the-world time
//! of one class histogram through each channel (HotSpot's attach socket,
//! which runs a full GC first; JDWP InstanceCounts over every loaded
//! class) against `jmap -histo` and `jmap -histo:live` on the same heap,
//! and of one referrer walk (debug_heap kind holders from a class), on a
//! fixture holding 100 MB and then 1 GB of live objects. The pause is the
//! safepoint time the JVM's own perfdata counted over each operation;
//! wall times are reported beside it. Run: `cargo bench --bench heap`
//! (needs a JDK; JAVA_HOME picks it).

#[path = "support.rs"]
mod support;

use std::process::Command;
use std::time::{Duration, Instant};

use jvmscope::actors::{
    Channel, ChannelChoice, Engine, HistogramSpec, HolderTarget, HoldersSpec, SessionHandle,
};

const RUNS: usize = 5;
/// Heap sizes filled, in MB.
const SIZES: &[u64] = &[100, 1000];

/// Median pause and median wall time of one kind of operation.
struct Row {
    what: &'static str,
    pause: Duration,
    wall: Duration,
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

/// Safepoint seconds so far, from the JVM's perfdata.
async fn safepoints(engine: &Engine, pid: u32) -> f64 {
    engine
        .vitals(pid, None)
        .await
        .map(|(v, _)| v.safepoint_secs)
        .unwrap_or(0.0)
}

/// `jmap <args> <pid>`: (pause from perfdata, wall of the tool).
async fn jmap(engine: &Engine, pid: u32, histo: &str) -> (Duration, Duration) {
    let before = safepoints(engine, pid).await;
    let started = Instant::now();
    let out = Command::new(support::jdk("jmap"))
        .args([histo, &pid.to_string()])
        .output()
        .expect("jmap");
    assert!(out.status.success(), "jmap failed");
    let wall = started.elapsed();
    let after = safepoints(engine, pid).await;
    (Duration::from_secs_f64((after - before).max(0.0)), wall)
}

async fn histogram(session: &SessionHandle, channel: Channel) -> (Duration, Duration) {
    let view = session
        .class_histogram(HistogramSpec {
            channel: ChannelChoice::Only(channel),
            package: String::new(),
            interval: None,
            max_pause: Duration::from_secs(600),
        })
        .await
        .expect("histogram");
    assert_eq!(view.channel, channel);
    let walk = view.walks[0];
    (walk.pause(), walk.wall)
}

async fn holders(session: &SessionHandle) -> (Duration, Duration) {
    let view = session
        .find_holders(HoldersSpec {
            target: HolderTarget::Class("HeapFill$Item".into()),
            max_depth: 12,
            fan_out: 8,
            max_pause: Duration::from_secs(600),
        })
        .await
        .expect("holders");
    (view.safepoint.unwrap_or(view.wall), view.wall)
}

/// Every operation, `RUNS` times each, on one filled JVM.
async fn measure(port: u16) -> Vec<Row> {
    let (engine, session) = support::attached(port, None).await;
    let pid = session.local_pid().await.expect("a local JVM");
    let mut rows = Vec::new();
    for what in [
        "attach socket (inspectheap -live)",
        "JDWP InstanceCounts",
        "jmap -histo:live",
        "jmap -histo",
        "referrer walk (class → static field)",
    ] {
        let (mut pauses, mut walls) = (Vec::new(), Vec::new());
        for _ in 0..RUNS {
            let (pause, wall) = match what {
                "attach socket (inspectheap -live)" => histogram(&session, Channel::Attach).await,
                "JDWP InstanceCounts" => histogram(&session, Channel::Jdwp).await,
                "jmap -histo:live" => jmap(&engine, pid, "-histo:live").await,
                "jmap -histo" => jmap(&engine, pid, "-histo").await,
                _ => holders(&session).await,
            };
            pauses.push(pause);
            walls.push(wall);
        }
        rows.push(Row {
            what,
            pause: median(pauses),
            wall: median(walls),
        });
    }
    let _ = session.disconnect().await;
    engine.shutdown().await;
    rows
}

fn main() {
    if std::env::args().any(|a| a == "--list") {
        return;
    }
    let rt = jvmscope::actors::runtime::build().expect("runtime");
    support::report(&format!(
        "Stop-the-world time per operation (safepoint time from the JVM's perfdata), median of {RUNS}"
    ));
    support::report("| live heap | operation | pause | wall |");
    support::report("|---|---|---|---|");
    for &mb in SIZES {
        let xmx = format!("-Xmx{}m", mb * 3 + 256);
        let (mut jvm, port) = support::start_fixture_with(
            None,
            "HeapFill",
            "heap ready",
            &[&xmx, "-XX:+UseG1GC"],
            &[&mb.to_string()],
            0,
            |_| {},
        );
        for row in rt.block_on(measure(port)) {
            support::report(&format!(
                "| {mb} MB | {} | {:.1} ms | {:.1} ms |",
                row.what,
                row.pause.as_secs_f64() * 1e3,
                row.wall.as_secs_f64() * 1e3
            ));
        }
        let _ = jvm.kill();
        let _ = jvm.wait();
    }
}
