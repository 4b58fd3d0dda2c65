//! Reading a live JVM: the expression language, debug_evaluate,
//! debug_evaluate kind chain and debug_get_stack against the Evaluate fixture.
//! The tools run in-process through the real tool layer (`JvmScope::call`);
//! an event-suspended thread comes from a one-shot breakpoint armed through
//! the session API.

use jvmscope::actors::EngineConfig;
use jvmscope::mcp::JvmScope;
use std::time::Duration;

use serde_json::json;

use crate::support::java::line_of;
use crate::support::poll_async;
use crate::support::rig::{Rig, call, hit, rig_with};

async fn rig() -> Rig {
    rig_with("Evaluate", "evaluate ready", EngineConfig::default(), false).await
}

/// The `@0x…` id of the fixture's "evaluator" thread.
async fn evaluator_thread(server: &JvmScope) -> String {
    let (_, threads) = call(
        server,
        "debug_list_threads",
        json!({"name_contains": "evaluator"}),
    )
    .await;
    threads
        .lines()
        .find(|l| l.contains("\"evaluator\""))
        .and_then(|l| l.split_whitespace().next())
        .expect("evaluator thread")
        .to_string()
}

async fn eval_ok(server: &JvmScope, expr: &str) -> String {
    let (err, text) = call(server, "debug_evaluate", json!({ "expression": expr })).await;
    assert!(!err, "{expr}: {text}");
    text.lines()
        .next()
        .and_then(|l| l.split_once(" = ").map(|(_, v)| v.to_string()))
        .unwrap_or_default()
}

async fn eval_err(server: &JvmScope, expr: &str) -> String {
    let (err, text) = call(server, "debug_evaluate", json!({ "expression": expr })).await;
    assert!(err, "{expr} should fail: {text}");
    text
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn locals_fields_statics_literals_and_operators() {
    let r = rig().await;
    hit(
        &r.session,
        "Evaluate",
        line_of("Evaluate.java", "eval-here"),
    )
    .await;
    let s = &r.server;
    for (expr, want) in [
        ("big", "1234567890123L"),
        ("ratio", "0.5"),
        ("f", "1.5f"),
        ("ch", "'x'"),
        ("flag", "true"),
        ("b", "7"),
        ("s", "300"),
        ("text", "\"héllo\""),
        ("instanceField", "7"),
        ("this.label", "\"evaluator\""),
        ("STATIC_COUNT", "42"),
        ("Evaluate.GREETING", "\"hello\""),
        // java.lang resolves without its package, as in source.
        ("Integer.MAX_VALUE", "2147483647"),
        ("Math.PI", "3.141592653589793"),
        ("Long.MIN_VALUE < 0", "true"),
        ("boxed", "99 (Integer @"),
        ("nothing", "null"),
        ("'a'", "'a'"),
        ("2.0f", "2f"),
        ("1L + 2", "3L"),
        ("0x1F", "31"),
        ("7 / 2", "3"),
        ("7 % 4", "3"),
        ("1.5 * 2", "3"),
        ("-b", "-7"),
        ("s > b && b >= 7 && !(b < 7) && b <= 7", "true"),
        ("big != 0L || false", "true"),
        ("text == \"héllo\"", "true"),
        ("GREETING == \"hello\"", "true"),
        ("nothing == null", "true"),
        ("this == this", "true"),
        ("boxed > 98", "true"),
        ("boxed == 99", "true"),
        ("instanceField + STATIC_COUNT", "49"),
        ("GREETING + \"!\"", "\"hello!\""),
        ("numbers.length", "8"),
        ("numbers[2]", "4"),
    ] {
        let got = eval_ok(s, expr).await;
        assert!(got.starts_with(want), "{expr}: got {got}, want {want}…");
    }
    r.engine.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn chains_overloads_and_each_method_once() {
    let r = rig().await;
    hit(
        &r.session,
        "Evaluate",
        line_of("Evaluate.java", "eval-here"),
    )
    .await;
    let s = &r.server;
    let before = eval_ok(s, "Evaluate.getBCalls").await;
    let (err, chain) = call(
        s,
        "debug_evaluate",
        json!({"kind": "chain", "expression": "a.getB().c.getD().name"}),
    )
    .await;
    assert!(!err, "{chain}");
    assert!(chain.contains("First null: `a.getB().c.getD()`"), "{chain}");
    assert!(
        chain.contains("1 later link was never evaluated"),
        "{chain}"
    );
    // The caret is under the `.name` the null stopped, not at column 1.
    let col = "a.getB().c.getD()".len() + 1;
    assert!(
        chain.contains(&format!("column {col}: null before `.name`")),
        "{chain}"
    );
    let after_b = eval_ok(s, "Evaluate.getBCalls").await;
    let after_d = eval_ok(s, "Evaluate.getDCalls").await;
    let before: i64 = before.parse().expect("int");
    assert_eq!(
        after_b.parse::<i64>().expect("int"),
        before + 1,
        "getB ran once"
    );
    assert_eq!(after_d, "1", "getD ran once");
    let (err, text) = call(
        s,
        "debug_evaluate",
        json!({"expression": "a.getB().c.getD().name"}),
    )
    .await;
    assert!(err && text.contains(&format!("column {col}:")), "{text}");
    assert_eq!(eval_ok(s, "describe(5)").await, "\"int:5\"");
    assert_eq!(eval_ok(s, "describe(\"x\")").await, "\"string:x\"");
    assert_eq!(eval_ok(s, "describe(5L)").await, "\"long:5\"");
    assert_eq!(eval_ok(s, "twice(21)").await, "42");
    assert_eq!(eval_ok(s, "items[0].getSku()").await, "\"sku-0\"");
    // The one-line view runs toString(), which changes state here: the
    // cost counts it (before the fix it said "0 invocations").
    let calls_before: i64 = eval_ok(s, "Evaluate.toStringCalls")
        .await
        .parse()
        .expect("int");
    let (err, shown) = call(s, "debug_evaluate", json!({"expression": "items[3]"})).await;
    assert!(
        !err && shown.contains("\"sku-3x6\""),
        "toString on an event thread: {shown}"
    );
    assert!(shown.contains(", 1 invocation (toString()"), "{shown}");
    let calls_after: i64 = eval_ok(s, "Evaluate.toStringCalls")
        .await
        .parse()
        .expect("int");
    assert_eq!(calls_after, calls_before + 1, "{shown}");
    let e = eval_err(s, "twice(1, 2)").await;
    assert!(e.contains("no overload"), "{e}");
    r.engine.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn collections_subscripts_slices_filters() {
    let r = rig().await;
    hit(
        &r.session,
        "Evaluate",
        line_of("Evaluate.java", "eval-here"),
    )
    .await;
    let s = &r.server;
    let (_, text) = call(s, "debug_evaluate", json!({"expression": "counts[\"k2\"]"})).await;
    assert!(text.starts_with("counts[\"k2\"] = 20"), "{text}");
    assert!(
        text.contains("java.util.HashMap read by walking its fields"),
        "{text}"
    );
    assert!(eval_ok(s, "ordered[\"o3\"]").await.starts_with('3'));
    assert_eq!(eval_ok(s, "concurrent[\"c1\"].qty").await, "1");
    assert_eq!(eval_ok(s, "items[1].sku").await, "\"sku-1\"");
    assert!(eval_ok(s, "items[1..3]").await.starts_with("[2 elements]"));
    assert!(
        eval_ok(s, "items[?qty > 4]")
            .await
            .starts_with("[2 elements]")
    );
    assert_eq!(eval_ok(s, "items[?qty > 4].length").await, "2");
    assert!(eval_ok(s, "ordered[1..3]").await.starts_with("{2 entries}"));
    assert!(
        eval_ok(s, "counts[?it >= 30]")
            .await
            .starts_with("{2 entries}")
    );
    assert_eq!(eval_ok(s, "numbers[2..5].length").await, "3");
    let (_, text) = call(s, "debug_evaluate", json!({"expression": "sorted[\"t2\"]"})).await;
    assert!(text.contains("102"), "{text}");
    assert!(
        text.contains("called get()"),
        "TreeMap takes the invoke path: {text}"
    );
    r.engine.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn byte_arrays_in_three_charsets() {
    let r = rig().await;
    hit(
        &r.session,
        "Evaluate",
        line_of("Evaluate.java", "eval-here"),
    )
    .await;
    let s = &r.server;
    let utf8 = eval_ok(s, "utf8").await;
    assert!(utf8.contains("UTF-8 \"héllo wörld\""), "{utf8}");
    let latin = eval_ok(s, "latin1#ISO-8859-1").await;
    assert!(latin.contains("ISO-8859-1 \"héllo\""), "{latin}");
    let raw = eval_ok(s, "latin1#raw").await;
    assert!(raw.starts_with("byte[5] [104, -23,"), "{raw}");
    let chars = eval_ok(s, "chars").await;
    assert!(chars.contains("\"abc\""), "{chars}");
    r.engine.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn handles_survive_resume_and_vanish_cleanly() {
    let r = rig().await;
    hit(
        &r.session,
        "Evaluate",
        line_of("Evaluate.java", "eval-here"),
    )
    .await;
    let s = &r.server;
    let (_, text) = call(
        s,
        "debug_evaluate",
        json!({"expression": "items[2]", "expand_objects": true}),
    )
    .await;
    let handle = text
        .split('@')
        .nth(1)
        .and_then(|h| h.split(|c: char| !c.is_ascii_hexdigit() && c != 'x').next())
        .map(|h| format!("@{h}"))
        .expect("a handle in the reply");
    assert!(text.contains("sku = \"sku-2\""), "field tree: {text}");
    let (err, cont) = call(s, "debug_continue", json!({})).await;
    assert!(!err, "{cont}");
    // No thread is suspended now; the handle still reads.
    let sku = eval_ok(s, &format!("{handle}.sku")).await;
    assert_eq!(sku, "\"sku-2\"");
    let gone = eval_err(s, "@0x7ffffff0.sku").await;
    assert!(gone.to_lowercase().contains("vanished"), "{gone}");
    r.engine.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn invoke_needs_an_event_thread_but_structural_reads_do_not() {
    let r = rig().await;
    let s = &r.server;
    let id = evaluator_thread(s).await;
    // Nothing is held: a local has no frame to resolve in, and the reply
    // says why and what to pass.
    let (err, text) = call(s, "debug_evaluate", json!({"expression": "counts"})).await;
    assert!(err, "{text}");
    assert!(
        text.contains(
            "names of locals and fields need a frame (no thread is suspended by an event)"
        ),
        "{text}"
    );
    assert!(
        text.ends_with("\nNext: pass thread_id of a suspended thread"),
        "{text}"
    );
    let (err, text) = call(
        s,
        "debug_thread",
        json!({"kind": "suspend", "thread_id": id}),
    )
    .await;
    assert!(!err, "{text}");
    assert!(text.contains("suspend count now 1"), "{text}");
    // Frame 0 is in Thread.sleep; frame 1 is `work`.
    let frame_of_work = {
        let (_, stack) = call(
            s,
            "debug_get_stack",
            json!({"thread_id": id, "max_frames": 5}),
        )
        .await;
        stack
            .lines()
            .find(|l| l.contains("Evaluate.work:"))
            .and_then(|l| {
                l.trim_start_matches('#')
                    .split_whitespace()
                    .next()
                    .map(String::from)
            })
            .expect("work frame")
            .parse::<usize>()
            .expect("index")
    };
    let (err, text) = call(
        s,
        "debug_evaluate",
        json!({"expression": "twice(2)", "thread_id": id, "frame_index": frame_of_work}),
    )
    .await;
    assert!(err, "{text}");
    assert!(text.contains("suspended by an event"), "{text}");
    assert!(
        text.contains(&format!(
            "thread {id} was suspended by the agent (a thread suspend or a pause), not by an event"
        )),
        "{text}"
    );
    assert!(text.contains("debug_set_stop"), "names the way: {text}");
    let (err, text) = call(
        s,
        "debug_evaluate",
        json!({"expression": "counts[\"k4\"]", "thread_id": id, "frame_index": frame_of_work}),
    )
    .await;
    assert!(!err, "{text}");
    assert!(text.starts_with("counts[\"k4\"] = 40"), "{text}");
    call(
        s,
        "debug_thread",
        json!({"kind": "resume", "thread_id": id}),
    )
    .await;
    r.engine.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_expressions_point_at_the_column() {
    let r = rig().await;
    hit(
        &r.session,
        "Evaluate",
        line_of("Evaluate.java", "eval-here"),
    )
    .await;
    let s = &r.server;
    let e = eval_err(s, "items[0").await;
    assert!(e.starts_with("[BAD_EXPRESSION] column 8"), "{e}");
    let e = eval_err(s, "nosuchname + 1").await;
    assert!(e.contains("column 1") && e.contains("nosuchname"), "{e}");
    let e = eval_err(s, "label.nosuchfield").await;
    assert!(
        e.contains("column 7") && e.contains("no field `nosuchfield`"),
        "{e}"
    );
    r.engine.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn get_stack_shows_frames_and_typed_locals() {
    let r = rig().await;
    let thread = hit(
        &r.session,
        "Evaluate",
        line_of("Evaluate.java", "eval-here"),
    )
    .await;
    let (err, text) = call(
        &r.server,
        "debug_get_stack",
        json!({"thread_id": format!("@{:#x}", thread.0), "max_frames": 1}),
    )
    .await;
    assert!(!err, "{text}");
    let line = line_of("Evaluate.java", "eval-here");
    assert!(text.contains(&format!("#0 Evaluate.work:{line}")), "{text}");
    assert!(text.contains("    round = "), "{text}");
    assert!(text.contains("    big = 1234567890123L"), "{text}");
    assert!(
        text.contains("… 2 more frames") || text.contains("more frames"),
        "{text}"
    );
    r.engine.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_class_loaded_by_two_loaders() {
    let r = rig_with(
        "TwoLoaders",
        "two loaders ready",
        EngineConfig::default(),
        false,
    )
    .await;
    let s = &r.server;
    let (err, text) = call(s, "debug_evaluate", json!({"expression": "Plugin.NAME"})).await;
    assert!(!err, "{text}");
    assert!(
        text.contains("loaded by 2 class loaders"),
        "says which copy answered: {text}"
    );
    let first = if text.starts_with("Plugin.NAME = \"A\"") {
        "A"
    } else {
        "B"
    };
    for (loader, want) in [("loaderA", "A"), ("loaderB", "B")] {
        let (_, handle) = call(
            s,
            "debug_evaluate",
            json!({"expression": format!("TwoLoaders.{loader}")}),
        )
        .await;
        let id = handle
            .split('@')
            .nth(1)
            .and_then(|h| h.split(|c: char| !c.is_ascii_hexdigit() && c != 'x').next())
            .expect("loader handle")
            .to_string();
        let pinned = eval_ok(s, &format!("Plugin@{id}.NAME")).await;
        assert_eq!(pinned, format!("\"{want}\""), "pinned to {loader}");
    }
    assert!(first == "A" || first == "B");
    r.engine.shutdown().await;
}

/// An invocation past its budget that cannot be cancelled returns later,
/// and HotSpot then suspends its thread again — after the trace that
/// invoked it has already released it. That suspension must be undone,
/// or the thread is stuck for good. (On JDK 17 the JDWP agent holds back
/// the interrupt that would cancel a sleep, and this fixture has no other
/// running thread to lend, so the sleep runs its course.)
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_invocation_past_its_budget_never_leaves_its_thread_suspended() {
    let r = rig().await;
    let s = &r.server;
    let (err, text) = call(
        s,
        "debug_set_stop",
        json!({"kind": "line",
            "class_pattern": "Evaluate",
            "line": line_of("Evaluate.java", "eval-here"),
            "trace": true,
            "trace_max_hits": 1,
            "trace_frames": 0,
            "trace_locals": "none",
            "trace_expr": ["sleepy(1500)"],
            "calls": true,
            "engine": "wire",
        }),
    )
    .await;
    assert!(!err, "{text}");
    let snapshot = poll_async(Duration::from_secs(10), "the snapshot", || async {
        let (_, t) = call(s, "debug_get_traces", json!({})).await;
        t.contains("expr[0]").then_some(t)
    })
    .await;
    assert!(
        snapshot
            .contains("Evaluate.sleepy() did not return within 500 ms and could not be cancelled"),
        "{snapshot}"
    );
    assert!(
        snapshot.contains("[INVOKING] session s1: thread @"),
        "{snapshot}"
    );
    let id = evaluator_thread(s).await;
    let id = u64::from_str_radix(id.trim_start_matches("@0x"), 16).expect("hex thread id");
    let thread = jvmscope::jdwp::ThreadId(id);
    // The late return is noticed and its suspension undone.
    let note = poll_async(Duration::from_secs(10), "the late return", || async {
        r.session
            .recent_events()
            .iter()
            .map(jvmscope::mcp::render::recent_event)
            .find(|l| l.contains("returned after its budget"))
    })
    .await;
    assert!(note.contains(&format!("@{id:#x}")), "{note}");
    let count = r
        .session
        .raw_connection()
        .send(&jvmscope::jdwp::thread_reference::SuspendCount { thread })
        .await
        .expect("suspend count");
    assert_eq!(count, 0, "the evaluator runs again: {note}");
    assert!(r.session.invoking().is_empty(), "no longer taken: {note}");
    // No interrupt of the cancel reached its own sleep (which would end
    // the thread): it passes its line again.
    let again = hit(
        &r.session,
        "Evaluate",
        line_of("Evaluate.java", "eval-here"),
    )
    .await;
    assert_eq!(again, thread, "{note}");
    r.engine.shutdown().await;
}

/// An invoking trace expression lets the thread run, which makes the
/// frame ids read before it stale: the expressions after it (of the same
/// stop point or of another at the same location) still read the frame.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn trace_expressions_after_an_invocation_still_read_the_frame() {
    let r = rig().await;
    let s = &r.server;
    let line = line_of("Evaluate.java", "eval-here");
    for exprs in [json!(["twice(2)", "b + 1"]), json!(["twice(3)", "s + 1"])] {
        let (err, text) = call(
            s,
            "debug_set_stop",
            json!({"kind": "line",
                "class_pattern": "Evaluate",
                "line": line,
                "trace": true,
                "trace_max_hits": 1,
                "trace_frames": 0,
                "trace_locals": "none",
                "trace_expr": exprs,
                "calls": true,
                "engine": "wire",
            }),
        )
        .await;
        assert!(!err, "{text}");
    }
    let traces = poll_async(Duration::from_secs(10), "two snapshots", || async {
        let (_, t) = call(s, "debug_get_traces", json!({})).await;
        (t.matches("expr[1]").count() >= 2).then_some(t)
    })
    .await;
    for want in [
        "expr[0] twice(2): 4",
        "expr[1] b + 1: 8",
        "expr[0] twice(3): 6",
        "expr[1] s + 1: 301",
    ] {
        assert!(traces.contains(want), "{want} in\n{traces}");
    }
    r.engine.shutdown().await;
}

/// A long dotted chain that names nothing is refused after a bounded
/// number of class lookups: before, every prefix was tried in all its
/// nested forms, one after another (900 links took over a minute).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_long_chain_that_names_nothing_is_refused_in_bounded_lookups() {
    let r = rig().await;
    let chain = format!("nope{}", ".x".repeat(899));
    let refused = tokio::time::timeout(Duration::from_secs(30), eval_err(&r.server, &chain))
        .await
        .expect("refused within 30 s");
    assert!(refused.starts_with("[EVAL_FAILED]"), "{refused}");
    assert!(
        refused.contains("no loaded class is named by its first 16 parts or fewer (`nope.x.x.…`, 900 parts in all)"),
        "{refused}"
    );
}
