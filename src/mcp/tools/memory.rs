//! Where the memory and the CPU go: debug_heap kind histogram (top classes by
//! live instances, growth per second), debug_heap kind holders (the referrer
//! chain from a root to an object) and debug_hot_threads (a local JVM's
//! threads ranked by CPU, each with its stack). All read only; the two
//! heap walkers take a pause budget and say what they cost.

use std::time::Duration;

use schemars::JsonSchema;
use serde::Deserialize;

use super::kinds::Kind;
use super::{Call, Ctx, Effect, Reply, Route};
use crate::actors::{
    Channel, ChannelChoice, DumpRun, HistogramSpec, HistogramView, HolderTarget, HoldersSpec,
    HoldersView, HotSpec, HotView, Via, Walk, WhyJdwp,
};
use crate::mcp::error::ToolError;
use crate::model::cpu::{JvmThread, Owner};
use crate::model::dump::Stack;
use crate::model::histogram::RankBy;
use crate::model::holders::{JvmRoot, Root, StopReason, chain_line, path_line};

/// Arguments of debug_heap kind histogram.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct HistogramParams {
    pub session_id: Option<String>,
    /// Class name prefix.
    pub package: Option<String>,
    pub top: Option<usize>,
    /// Sample twice this far apart.
    pub interval_ms: Option<u64>,
    /// auto, jdwp or attach.
    pub channel: Option<String>,
    pub max_pause_ms: Option<u64>,
}

/// Arguments of debug_heap kind holders.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct HoldersParams {
    pub session_id: Option<String>,
    pub object: Option<String>,
    pub class_name: Option<String>,
    pub max_referrers: Option<usize>,
    pub max_pause_ms: Option<u64>,
}

/// Arguments of debug_hot_threads.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct HotParams {
    pub session_id: Option<String>,
    pub interval_ms: Option<u64>,
    pub top: Option<usize>,
}

pub fn routes() -> Vec<Route> {
    vec![
        {
            let tool = "debug_heap";
            let kind = |name, route: Route| Kind::new(name, route);
            Route::by_kind(
                tool,
                "Read the heap",
                "Walk the heap; each walk stops the world, and the reply says for how long. kind \
                 histogram: live instances per class and their growth per second since the last \
                 call or over interval_ms. kind holders: the chain from a static field, a Thread \
                 or a class loader down to an object. kind instances: counts of named classes, \
                 with @0x… handles.",
                Effect::Read,
                vec![
                    kind(
                        "histogram",
                        Route::new(tool, "", "", Effect::Read, histogram).with_guide(
                            "Live instances per loaded class, JDK types included, ranked by growth once an earlier \
             histogram is known (else by instances), filtered by package prefix. Growth is per class \
             and per second, measured against this session's previous histogram of the same channel \
             and a scope that contains this one, or against a first sample taken interval_ms earlier \
             in the same call. Channels: a JVM on this machine is counted through HotSpot's attach \
             socket (the command jmap -histo sends: a full GC, then HotSpot's own count, with bytes); \
             any other over JDWP InstanceCounts across every loaded class (one heap walk, counts \
             only). channel forces one; auto falls back to JDWP and says why. Both stop the world: \
             the reply gives the safepoint time the JVM counted (local JVMs) or the request time. \
             max_pause_ms bounds the call: the second sample is skipped when the first used over \
             half. Exact type only: a leak of map entries shows as HashMap$Node, byte[] and the \
             key and value classes; debug_heap kind holders {class_name} then names what holds them. \
             Defaults: top 15, max_pause_ms 2000.",
                        ),
                    ),
                    kind(
                        "holders",
                        Route::new(tool, "", "", Effect::Read, holders).with_guide(
                            "class_name on a JVM on this machine: one heap dump through HotSpot's attach socket \
             (GC.heap_dump -all, no GC first, into a unique file in the JVM's java.io.tmpdir), read \
             here and removed however the call ends; one stop of the world whatever the chain's \
             length, its pause in the reply. The walk goes forward from the roots to the \
             nearest instance: static fields first, then threads, their stacks and JNI. Otherwise \
             (an @0x… handle, a remote JVM, one this session holds suspended, a failed dump; the \
             reply says which) it walks back over JDWP ObjectReference.ReferringObjects, breadth \
             first, max_referrers per object (default 8) and 12 links deep, until a referrer is a \
             class (Leak.CACHE), a Thread or a class loader; each ReferringObjects stops the world \
             for a full heap walk and max_pause_ms (default 3000) ends the walk, which then shows \
             how far it got. \"no heap referrer\": a stack frame or JNI holds it. Each link is named \
             by its field or array index; JDK collections fold into one step (HashMap{value}), and \
             a dump's chain is also given hop by hop.",
                        ),
                    ),
                    kind(
                        "instances",
                        Route::new(tool, "", "", Effect::Read, super::members::list_instances)
                            .with_guide(
                                "Live instance counts of several classes in one heap walk, and up to max_instances @0x… handles each \
                  (debug_evaluate takes them). Exact type only: subclasses and implementations are not counted, so \
                  name them too. Suspends nothing, yet the JVM stops the world for each heap walk: the reply says \
                  how long.",
                            ),
                    ),
                ],
            )
            // Every kind walks the heap.
            .runs_long_when(|_| true)
        },
        Route::new(
            "debug_hot_threads",
            "Hot threads",
            "Which threads burn CPU, doing what (local JVMs only): CPU per thread over \
             interval_ms, and each busy Java thread's most frequent stack, sampled while it \
             burns by suspending that thread alone. GC, JIT and VM threads are named.",
            Effect::Read,
            hot,
        )
        .with_guide(
            "Reads /proc/<pid>/task/*/stat every 100 ms over interval_ms (default 1000), so it works only \
             for a JVM on this machine; a remote JVM is refused with LOCAL_JVMS_ONLY. HotSpot names \
             each Java thread's native thread after it, cut to 15 bytes: a cut name shared by \
             several Java threads is shown as one of them, all named. The thread running main and \
             the launcher's thread are both `java` natively. JVM threads (GC Thread#0, G1 *, C2 \
             CompilerThread, VM Thread) are named by role and have no Java stack. In each tick, \
             each Java thread that used 15 % of a core in it has its stack sampled \
             (ThreadReference.Suspend, Frames, Resume queued back to back), so a thread that burns \
             in bursts shows where it burns; the reply gives its most frequent stack, the frames \
             most often on top, and the longest hold. A thread busy in no tick shows its stack at \
             the end. Nothing else is suspended. For a whole-JVM profile, debug_profile. \
             Defaults: interval_ms 1000, top 5; 12 frames per stack.",
        ),
    ]
}

/// A heap walk the client cancelled: what was sent runs to its end in the
/// JVM (a walk cannot be stopped halfway), nothing else is started.
pub(super) fn walk_cancelled() -> ToolError {
    ToolError::new(
        "CANCELLED",
        "cancelled; a heap walk already sent runs to its end in the JVM, no further walk is started",
    )
}

fn ms(d: Duration) -> String {
    format!("{:.1} ms", d.as_secs_f64() * 1000.0)
}

fn channel_choice(tool: &str, raw: Option<&str>) -> Result<ChannelChoice, ToolError> {
    match raw.unwrap_or("auto") {
        "auto" => Ok(ChannelChoice::Auto),
        "jdwp" => Ok(ChannelChoice::Only(Channel::Jdwp)),
        "attach" => Ok(ChannelChoice::Only(Channel::Attach)),
        other => Err(ToolError::bad_argument(
            tool,
            format!("channel {other:?} is not auto, jdwp or attach"),
        )),
    }
}

async fn histogram(ctx: Ctx, call: Call<HistogramParams>) -> Reply {
    let (tool, p) = (call.tool, call.params?);
    let channel = channel_choice(tool, p.channel.as_deref())?;
    let handle = ctx.live(p.session_id.as_deref())?;
    let package = p.package.unwrap_or_default();
    let spec = HistogramSpec {
        channel,
        package: package.clone(),
        interval: p.interval_ms.map(Duration::from_millis),
        max_pause: Duration::from_millis(p.max_pause_ms.unwrap_or(2000)),
    };
    let view = tokio::select! {
        v = handle.class_histogram(spec) => v?,
        _ = super::cancelled() => return Err(walk_cancelled()),
    };
    Ok(super::text(histogram_text(
        &view,
        &package,
        RankBy::Growth,
        p.top.unwrap_or(15),
    )))
}

/// The walks' cost in one clause.
fn walks_text(walks: &[Walk]) -> String {
    let parts: Vec<String> = walks
        .iter()
        .map(|w| match w.safepoint {
            Some(s) => format!("{} at safepoints ({} request)", ms(s), ms(w.wall)),
            None => format!("≤ {} (request time)", ms(w.wall)),
        })
        .collect();
    format!(
        "{} heap walk{}, world stopped {}",
        walks.len(),
        if walks.len() == 1 { "" } else { "s" },
        parts.join(" + ")
    )
}

fn histogram_text(view: &HistogramView, package: &str, sort: RankBy, top: usize) -> String {
    let r = view
        .now
        .rank(view.earlier.as_ref(), package, sort, top.max(1));
    let how = match view.channel {
        Channel::Attach => "attach socket (inspectheap -live: a full GC, then HotSpot's count)",
        Channel::Jdwp => "JDWP InstanceCounts over every loaded class",
    };
    let mut out = format!("Class histogram via {how}; {}.", walks_text(&view.walks));
    if let Some(e) = &view.attach_refused {
        out.push_str(&format!("\nAttach socket not used: {e}."));
    }
    match (r.over, view.sampled_twice) {
        (Some(over), true) => out.push_str(&format!(
            "\nGrowth over {over:.2} s (two samples in this call)."
        )),
        (Some(over), false) => out.push_str(&format!(
            "\nGrowth over {over:.2} s since this session's previous histogram."
        )),
        (None, _) => out.push_str(
            "\nNo earlier histogram of this scope: call again (or pass interval_ms) for growth.",
        ),
    }
    if view.second_skipped {
        out.push_str("\nSecond sample skipped: the first walk used over half of max_pause_ms.");
    }
    out.push_str("\n  instances        bytes    growth     per s  class");
    for row in &r.top {
        let bytes = row
            .row
            .bytes
            .map(|b| b.to_string())
            .unwrap_or_else(|| "-".into());
        let growth = row
            .growth
            .map(|g| format!("{g:+}"))
            .unwrap_or_else(|| "-".into());
        let per = row
            .per_sec
            .map(|g| format!("{g:+.1}"))
            .unwrap_or_else(|| "-".into());
        out.push_str(&format!(
            "\n  {:>9} {:>12} {:>9} {:>9}  {}",
            row.row.instances, bytes, growth, per, row.row.class
        ));
    }
    let bytes = r
        .total_bytes
        .map(|b| format!(", {:.1} MB", b as f64 / 1_048_576.0))
        .unwrap_or_default();
    out.push_str(&format!(
        "\n{} classes{}: {} instances{bytes}.",
        r.matched,
        if package.is_empty() {
            String::new()
        } else {
            format!(" in {package}")
        },
        r.total_instances
    ));
    if r.matched > r.top.len() {
        out.push_str(&format!(
            " {} more: raise top or narrow with package.",
            r.matched - r.top.len()
        ));
    }
    out.push_str(
        "\nNext: debug_heap kind holders {class_name} shows what keeps one instance alive.",
    );
    out
}

async fn holders(ctx: Ctx, call: Call<HoldersParams>) -> Reply {
    let (tool, p) = (call.tool, call.params?);
    let target = match (p.object.as_deref(), p.class_name) {
        (Some(raw), None) => {
            HolderTarget::Object(super::args::object_id(raw).ok_or_else(|| {
                ToolError::bad_argument(tool, format!("object {raw:?} is not an @0x… handle"))
            })?)
        }
        (None, Some(class)) => HolderTarget::Class(class),
        _ => {
            return Err(ToolError::bad_argument(
                tool,
                "give exactly one of object or class_name",
            ));
        }
    };
    let handle = ctx.live(p.session_id.as_deref())?;
    let spec_pause = Duration::from_millis(p.max_pause_ms.unwrap_or(3000));
    let spec = HoldersSpec {
        target,
        max_depth: 12,
        fan_out: p.max_referrers.unwrap_or(8).max(1),
        max_pause: Duration::from_millis(p.max_pause_ms.unwrap_or(3000)),
    };
    let view = tokio::select! {
        v = handle.find_holders(spec) => v?,
        _ = super::cancelled() => return Err(walk_cancelled()),
    };
    Ok(super::text(holders_text(&view, spec_pause)))
}

fn root_words(root: &Root) -> String {
    match root {
        Root::Static { class, field } => format!("{class}.{field}"),
        Root::Thread { name, .. } => format!("Thread \"{name}\""),
        Root::Loader { class, object } => format!("class loader {class}@{object:#x}"),
        Root::Stack { thread } => format!("a local of thread \"{thread}\""),
        Root::Jvm(JvmRoot::JniGlobal) => "a JNI global reference".into(),
        Root::Jvm(JvmRoot::Monitor) => "a monitor in use".into(),
        Root::Jvm(JvmRoot::Other) => "a root of the JVM's own".into(),
        Root::NoHeapReferrer => "no heap referrer: held from a stack frame or JNI".into(),
        Root::Stopped(StopReason::Budget) => "(walk stopped: max_pause_ms spent)".into(),
        Root::Stopped(StopReason::Depth) => "(walk stopped 12 links deep)".into(),
        Root::Stopped(StopReason::Exhausted) => "(no root among the referrers read)".into(),
    }
}

/// What a dump cost, and that it is gone.
fn dump_text(run: &DumpRun, visited: usize, max_pause: Duration) -> String {
    let mut figures: Vec<String> = Vec::new();
    if let Some(s) = run.safepoint {
        figures.push(format!("{} at safepoints", ms(s)));
    }
    if let Some(r) = run.jvm_reported {
        figures.push(format!("the JVM reports {}", ms(r)));
    }
    figures.push(format!("{} request", ms(run.wall)));
    let pause = format!("{} ({})", ms(run.pause()), figures.join(", "));
    let mut out = format!(
        "\nPath taken: one heap dump through the attach socket (a JVM on this machine; \
         GC.heap_dump -all, {:.1} MB), world stopped {pause}; \
         read here in {}, {visited} objects reached; ",
        run.bytes as f64 / 1_048_576.0,
        ms(run.read_took),
    );
    if run.removed {
        out.push_str("the dump file is removed.");
    } else {
        out.push_str(&format!(
            "the dump file {} could not be removed.",
            run.file.display()
        ));
    }
    if run.pause() > max_pause {
        out.push_str(&format!(
            "\nThat pause is over max_pause_ms ({}).",
            ms(max_pause)
        ));
    }
    out
}

/// What the JDWP walk cost, and why it went over JDWP.
fn jdwp_cost_text(v: &HoldersView) -> String {
    let pause = match v.safepoint {
        Some(s) => format!("{} at safepoints ({} of requests)", ms(s), ms(v.wall)),
        None => format!("≤ {} (request time)", ms(v.wall)),
    };
    let why = match &v.via {
        Via::Jdwp(WhyJdwp::Local(e)) => format!("no heap dump: {e}"),
        _ => "an @0x… handle is JDWP's own, which a heap dump cannot find (class_name can)".into(),
    };
    format!(
        "\n{} heap walk{}, world stopped {pause}; {} objects looked at.\nPath taken: JDWP \
         ReferringObjects, one heap walk per hop; {why}.",
        v.walks,
        if v.walks == 1 { "" } else { "s" },
        v.visited
    )
}

fn holders_text(v: &HoldersView, max_pause: Duration) -> String {
    let mut out = String::new();
    let dump = match &v.via {
        Via::Dump(run) => Some(run),
        Via::Jdwp(_) => None,
    };
    if let Some(n) = v.instances {
        let of = match dump {
            Some(_) => format!("one of {n} instances in the heap dump"),
            None => format!(
                "one of {n}{} live instances",
                if n >= 64 { "+" } else { "" }
            ),
        };
        let at = match dump {
            Some(_) => String::new(),
            None => format!(" @{:#x}", v.target),
        };
        out.push_str(&format!("{}{at} ({of}):\n", v.target_class));
    }
    let handle = dump.is_none().then_some(v.target);
    let root = match (&v.chain.root, dump) {
        (Root::Stopped(_), Some(_)) => {
            "(no root reaches an instance: all are garbage not yet collected)".into()
        }
        (r, _) => root_words(r),
    };
    out.push_str(&chain_line(&root, &v.chain, &v.target_class, handle));
    match dump {
        Some(run) => {
            let root = match &v.chain.root {
                Root::Static { .. } => format!("static {root}"),
                _ => root,
            };
            out.push_str(&format!(
                "\nHop by hop: {}",
                path_line(&root, &v.chain, &v.target_class)
            ));
            out.push_str(&dump_text(run, v.visited, max_pause));
        }
        None => out.push_str(&jdwp_cost_text(v)),
    }
    match &v.chain.root {
        Root::Stopped(_) if dump.is_some() => {}
        Root::Stopped(StopReason::Budget) => {
            out.push_str("\nNext: raise max_pause_ms, or start from the last object shown.")
        }
        Root::Stopped(_) => {
            out.push_str("\nNext: raise max_referrers, or start from the last object shown.")
        }
        _ => {}
    }
    out
}

async fn hot(ctx: Ctx, call: Call<HotParams>) -> Reply {
    let p = call.params?;
    let handle = ctx.live(p.session_id.as_deref())?;
    let spec = HotSpec {
        interval: Duration::from_millis(p.interval_ms.unwrap_or(1000).clamp(50, 60_000)),
        top: p.top.unwrap_or(5).max(1),
        max_frames: 12,
    };
    let view = handle.hot_threads(spec).await?;
    Ok(super::text(hot_text(&view)))
}

fn owner_words(o: &Owner) -> String {
    match o {
        Owner::Java(n) => format!("\"{n}\""),
        Owner::OneOf(names) => format!(
            "one of {} (names cut to 15 bytes)",
            names
                .iter()
                .map(|n| format!("\"{n}\""))
                .collect::<Vec<_>>()
                .join(", ")
        ),
        Owner::Main => "\"main\"".into(),
        Owner::Launcher => "the launcher's first thread (not Java)".into(),
        Owner::Jvm(JvmThread::Gc) => "JVM: garbage collector".into(),
        Owner::Jvm(JvmThread::Compiler) => "JVM: JIT compiler".into(),
        Owner::Jvm(JvmThread::Vm) => "JVM: VM thread (safepoints, VM operations)".into(),
        Owner::Jvm(JvmThread::Other) => "JVM: service thread".into(),
        Owner::Unknown => "no Java thread of this name (native, or renamed)".into(),
    }
}

fn hot_text(v: &HotView) -> String {
    let mut out = format!(
        "JVM pid {}: {:.1}% of a core over {:.2} s in {} native threads; busiest first:",
        v.pid,
        v.total_pct,
        v.interval.as_secs_f64(),
        v.threads
    );
    for (i, row) in v.rows.iter().enumerate() {
        out.push_str(&format!(
            "\n{}. {:.1}% {} [{}, tid {}]",
            i + 1,
            row.hot.cpu_pct,
            owner_words(&row.hot.owner),
            row.hot.comm,
            row.hot.tid
        ));
        if let Some(j) = &row.java {
            if j.samples > 0 {
                out.push_str(&format!(
                    " @{:#x}: {} stack samples while it was busy (held {} at most each); in {} of them:",
                    j.thread,
                    j.samples,
                    ms(j.held),
                    j.seen
                ));
            } else {
                out.push_str(&format!(
                    " @{:#x}, not busy in any {} ms tick, its stack at the end (held {}):",
                    j.thread,
                    v.tick.as_millis(),
                    ms(j.held)
                ));
            }
            match &j.stack {
                Stack::Read { frames, depth } => {
                    for f in frames {
                        out.push_str(&format!("\n     {f}"));
                    }
                    if *depth > frames.len() {
                        out.push_str(&format!("\n     … {} more frames", depth - frames.len()));
                    }
                    if j.tops.len() > 1 {
                        let tops: Vec<String> = j
                            .tops
                            .iter()
                            .take(5)
                            .map(|(f, n)| format!("{f} ({n})"))
                            .collect();
                        out.push_str(&format!("\n     on top most often: {}", tops.join(", ")));
                    }
                }
                Stack::Failed(e) => out.push_str(&format!("\n     (unread: {e})")),
                _ => out.push_str("\n     (unread)"),
            }
        }
    }
    out
}
