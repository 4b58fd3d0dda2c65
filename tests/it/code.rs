//! The code tools against real JVMs through the real binary: the Swap
//! fixture runs while edited copies of it are compiled at test time — a
//! moved line, a body edit that moves no line, an added method — and
//! debug_check_stale tells them apart, debug_reload_class installs the first
//! two (the program's output changes) and is refused the third with the
//! forecast's reason, pop_frame enters a swapped body, javac runs in the
//! loop, and debug_source shows windows with and without roots.

mod edited;
mod forecast;
mod guard;
mod source;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use serde_json::{Value, json};

use crate::support::java::{Jvm, JvmOpts, javac, source_path};
use crate::support::mcp::{Server, ToolReply};

const WAIT: Duration = Duration::from_secs(15);

/// A scratch directory under the system temp dir, removed on drop.
pub struct Scratch(pub PathBuf);

impl Scratch {
    pub fn new(what: &str) -> Scratch {
        static N: AtomicUsize = AtomicUsize::new(0);
        let dir = std::env::temp_dir().join(format!(
            "stale-and-reload-{what}-{}-{}",
            std::process::id(),
            N.fetch_add(1, Ordering::SeqCst)
        ));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("scratch dir");
        Scratch(dir)
    }

    pub fn path(&self, rel: &str) -> PathBuf {
        self.0.join(rel)
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// The fixture's source.
pub fn swap_source() -> String {
    std::fs::read_to_string(source_path("Swap.java")).expect("Swap.java")
}

/// Writes `text` as `<scratch>/<name>/src/Swap.java` and compiles it into
/// `<scratch>/<name>/classes` with `flags`; returns the class dir.
pub fn build(scratch: &Scratch, name: &str, text: &str, flags: &[&str]) -> PathBuf {
    let src = scratch.path(&format!("{name}/src"));
    let out = scratch.path(&format!("{name}/classes"));
    std::fs::create_dir_all(&src).expect("src dir");
    std::fs::create_dir_all(&out).expect("out dir");
    let file = src.join("Swap.java");
    std::fs::write(&file, text).expect("write source");
    let status = Command::new(javac())
        .args(flags)
        .args(["--release", "17", "-d"])
        .arg(&out)
        .arg(&file)
        .status()
        .expect("run javac");
    assert!(status.success(), "javac {name} failed");
    out
}

/// Replaces `from` (which must occur) with `to`.
pub fn edit(text: &str, from: &str, to: &str) -> String {
    assert!(text.contains(from), "{from:?} not in the fixture");
    text.replacen(from, to, 1)
}

/// (a) every line moved down by one, and the label changed.
pub fn moved_line(text: &str) -> String {
    edit(
        &edit(
            text,
            "public class Swap {\n",
            "public class Swap {\n    // moved\n",
        ),
        "\"v1\"",
        "\"v2\"",
    )
}

/// (b) a body edit that moves no line.
pub fn body_edit(text: &str) -> String {
    edit(text, "x * 2", "x * 3")
}

/// (c) a method added after the others.
pub fn added_method(text: &str) -> String {
    let at = text.rfind('}').expect("closing brace");
    format!(
        "{}    static int extra() {{\n        return 1;\n    }}\n}}\n",
        &text[..at]
    )
}

pub fn started_swap(opts: JvmOpts) -> Jvm {
    let jvm = Jvm::start("Swap", opts);
    jvm.wait_for_line("swap v1 14 h", WAIT);
    jvm
}

pub fn attached(jvm: &Jvm, extra: Value) -> Server {
    let server = Server::spawn();
    server.initialize();
    let mut args = json!({"port": jvm.port()});
    if let (Some(a), Some(e)) = (args.as_object_mut(), extra.as_object()) {
        a.extend(e.clone());
    }
    server.call("debug_attach", args).expect_ok();
    server
}

pub fn dir(p: &Path) -> String {
    p.display().to_string()
}

fn stale(server: &Server, root: &Path, bytecode: bool) -> ToolReply {
    server
        .call(
            "debug_check_stale",
            json!({"class_name": "Swap", "class_roots": [dir(root)], "bytecode": bytecode}),
        )
        .expect_ok()
}

#[test]
fn check_stale_tells_the_three_edits_apart_and_reload_installs_the_body_edits() {
    let scratch = Scratch::new("edits");
    let text = swap_source();
    let a = build(&scratch, "a", &moved_line(&text), &["-g"]);
    let b = build(&scratch, "b", &body_edit(&text), &["-g"]);
    let c = build(&scratch, "c", &added_method(&text), &["-g"]);
    let jvm = started_swap(JvmOpts::default());
    let server = attached(&jvm, json!({"class_roots": [dir(&a)]}));

    // A line stop checks its class against the session's build unasked.
    let line = crate::support::java::line_of("Swap.java", "swap-compute");
    let armed = server
        .call(
            "debug_set_stop",
            json!({"kind": "line", "class_pattern": "Swap", "line": line, "trace": true}),
        )
        .expect_ok();
    assert!(
        armed.text.contains("STALE: the JVM's line tables differ"),
        "{}",
        armed.text
    );

    // (a) a moved line shows in the line tables; nothing structural.
    let ra = stale(&server, &a, false);
    assert!(ra.text.contains("Line tables: STALE"), "{}", ra.text);
    assert!(ra.text.contains("compute(I)I running"), "{}", ra.text);
    assert!(
        ra.text.contains("no structural change detected"),
        "{}",
        ra.text
    );
    // (b) a body edit moves no line: only bytecode:true sees it.
    let rb = stale(&server, &b, false);
    assert!(rb.text.contains("no line moved"), "{}", rb.text);
    assert!(rb.text.contains("Bytecode: not compared"), "{}", rb.text);
    let rb = stale(&server, &b, true);
    assert!(rb.text.contains("no line moved"), "{}", rb.text);
    assert!(rb.text.contains("Bytecode: STALE"), "{}", rb.text);
    // Exactly one method's code differs: compute(I)I.
    assert!(
        rb.text
            .contains("\nBytecode: STALE, code differs in 1:\n  compute(I)I"),
        "{}",
        rb.text
    );
    // (c) an added method: the forecast names the restriction and its code.
    let rc = stale(&server, &c, false);
    assert!(
        rc.text
            .contains("ADD_METHOD_NOT_IMPLEMENTED (63): method extra()I added"),
        "{}",
        rc.text
    );
    assert!(rc.text.contains("(63)"), "{}", rc.text);

    // The refusal of (c) carries the forecast's reason; nothing changed.
    let refused = server
        .call(
            "debug_reload_class",
            json!({"class_name": "Swap", "class_roots": [dir(&c)]}),
        )
        .expect_tool_error();
    assert!(
        refused.text.starts_with("[REDEFINE_REFUSED]"),
        "{}",
        refused.text
    );
    assert!(
        refused.text.contains("ADD_METHOD_NOT_IMPLEMENTED (63)"),
        "{}",
        refused.text
    );
    assert!(refused.text.contains("Foreseeable"), "{}", refused.text);
    assert!(
        refused.text.contains("method extra()I added"),
        "{}",
        refused.text
    );

    // (b) and (a) swap in, and the running program's output changes.
    let ok = server
        .call(
            "debug_reload_class",
            json!({"class_name": "Swap", "class_roots": [dir(&b)]}),
        )
        .expect_ok();
    assert!(ok.text.starts_with("Reloaded Swap"), "{}", ok.text);
    assert!(ok.text.contains("re-armed bp_1"), "{}", ok.text);
    let since = jvm.line_count();
    jvm.wait_for_line_since(since, |l| l == "swap v1 21 h", WAIT);
    // The re-armed trace stop fires on the new code.
    let hits = || {
        let r = server.call("debug_list_stop_points", json!({})).expect_ok();
        r.json()["stop_points"][0]["hits"].as_u64().unwrap_or(0)
    };
    let before = hits();
    crate::support::poll_until(WAIT, || (hits() > before).then_some(()));
    let after = stale(&server, &b, false);
    assert!(after.text.contains("no line moved"), "{}", after.text);
    server
        .call(
            "debug_reload_class",
            json!({"class_name": "Swap", "class_roots": [dir(&a)]}),
        )
        .expect_ok();
    let since = jvm.line_count();
    jvm.wait_for_line_since(since, |l| l == "swap v2 14 h", WAIT);

    installed_classes_are_named(&server);
}

/// The session remembers what it installed, and says so.
fn installed_classes_are_named(server: &Server) {
    let sessions = server.call("debug_list_sessions", json!({})).expect_ok();
    assert!(
        sessions.text.contains("Installed by debug_reload_class"),
        "{}",
        sessions.text
    );
    assert!(sessions.text.contains("Swap@0x"), "{}", sessions.text);
    assert!(sessions.text.contains("x2"), "{}", sessions.text);
    let report = server
        .call("debug_export_investigation", json!({}))
        .expect_ok();
    let reloaded = report
        .text
        .split("## Classes reloaded")
        .nth(1)
        .unwrap_or_else(|| panic!("no reloaded section: {}", report.text));
    assert!(
        reloaded.contains("Swap@0x") && reloaded.contains("2 swaps"),
        "{}",
        report.text
    );
    let panic = server.call("debug_panic", json!({})).expect_ok();
    assert!(panic.text.contains("Swap@0x"), "{}", panic.text);
    let gone = server.call("debug_disconnect", json!({})).expect_ok();
    assert!(gone.text.contains("Swap@0x"), "{}", gone.text);
}

#[test]
fn pop_frame_and_continue_run_the_new_body_of_the_method_stopped_in() {
    pop_frame_enters_the_new_body(None);
}

#[test]
fn pop_frame_enters_the_new_body_on_temurin_25() {
    pop_frame_enters_the_new_body(Some(crate::support::java::temurin25_required()));
}

fn pop_frame_enters_the_new_body(java_home: Option<PathBuf>) {
    let scratch = Scratch::new("pop");
    let b = build(&scratch, "b", &body_edit(&swap_source()), &["-g"]);
    let jvm = started_swap(JvmOpts {
        java_home,
        ..JvmOpts::default()
    });
    let server = attached(&jvm, json!({"class_roots": [dir(&b)]}));
    let line = crate::support::java::line_of("Swap.java", "swap-compute");
    let armed = server
        .call(
            "debug_set_stop",
            json!({"kind": "line", "class_pattern": "Swap", "line": line}),
        )
        .expect_ok();
    // The edited build moved no line: the stop checked and stays silent.
    assert!(!armed.text.contains("STALE"), "{}", armed.text);
    assert!(!armed.text.contains("not checked"), "{}", armed.text);
    let bp = armed.json()["outcomes"][0]["id"]
        .as_str()
        .unwrap_or_else(|| panic!("no id in {}", armed.text))
        .to_string();
    server
        .call("debug_wait_for_event", json!({"timeout_ms": 15000}))
        .expect_ok();
    let swapped = server
        .call("debug_reload_class", json!({"class_name": "Swap"}))
        .expect_ok();
    assert!(
        swapped.text.contains("is inside the class at frame #0"),
        "{}",
        swapped.text
    );
    assert!(
        swapped.text.contains(&format!("re-armed {bp}")),
        "{}",
        swapped.text
    );
    assert!(swapped.text.contains("debug_pop_frame"), "{}", swapped.text);
    server
        .call(
            "debug_update_stop_point",
            json!({"kind": "clear", "id": bp}),
        )
        .expect_ok();
    server
        .call("debug_pop_frame", json!({"frame_index": 0}))
        .expect_ok();
    let since = jvm.line_count();
    server.call("debug_continue", json!({})).expect_ok();
    // The popped call re-runs compute: the very next line is the new body's.
    let (_, first) = jvm.wait_for_line_since(since, |l| l.starts_with("swap "), WAIT);
    assert_eq!(first, "swap v1 21 h");
}

#[test]
fn compile_and_reload_shows_javac_errors_then_installs_the_fix() {
    let scratch = Scratch::new("javac");
    let out = scratch.path("classes");
    std::fs::create_dir_all(&out).expect("out");
    let src = scratch.path("Swap.java");
    let jvm = started_swap(JvmOpts::default());
    let server = attached(
        &jvm,
        json!({"class_roots": [dir(&out)], "source_roots": [dir(&scratch.0)]}),
    );
    let reload = || {
        server.call(
            "debug_reload_class",
            json!({"class_name": "Swap", "compile": true, "sources": [dir(&src)]}),
        )
    };
    std::fs::write(&src, edit(&swap_source(), "x * 2", "x * ")).expect("write");
    let broken = reload().expect_tool_error();
    assert!(
        broken.text.starts_with("[COMPILE_FAILED]"),
        "{}",
        broken.text
    );
    assert!(broken.text.contains("error:"), "{}", broken.text);
    assert!(broken.text.contains("Swap.java:"), "{}", broken.text);
    std::fs::write(&src, edit(&swap_source(), "x * 2", "x * 5")).expect("write");
    let fixed = reload().expect_ok();
    assert!(fixed.text.contains("Compiled:"), "{}", fixed.text);
    assert!(fixed.text.contains("--release 17"), "{}", fixed.text);
    let since = jvm.line_count();
    jvm.wait_for_line_since(since, |l| l == "swap v1 35 h", WAIT);
}

#[test]
fn a_read_only_session_refuses_a_reload_before_anything_and_a_dry_run_sends_nothing() {
    let scratch = Scratch::new("ro");
    let b = build(&scratch, "b", &body_edit(&swap_source()), &["-g"]);
    let jvm = started_swap(JvmOpts::default());
    let server = attached(&jvm, json!({"read_only": true, "class_roots": [dir(&b)]}));
    let refused = server
        .call("debug_reload_class", json!({"class_name": "Swap"}))
        .expect_tool_error();
    assert!(refused.text.starts_with("[READ_ONLY]"), "{}", refused.text);
    let dry = server
        .call(
            "debug_reload_class",
            json!({"class_name": "Swap", "dry_run": true}),
        )
        .expect_ok();
    assert!(
        dry.text.starts_with("Dry run: would install"),
        "{}",
        dry.text
    );
    assert!(dry.text.contains("canRedefineClasses true"), "{}", dry.text);
    let since = jvm.line_count();
    jvm.wait_for_line_since(since, |l| l == "swap v1 14 h", WAIT);
    let sessions = server.call("debug_list_sessions", json!({})).expect_ok();
    assert!(!sessions.text.contains("Installed"), "{}", sessions.text);
}

/// What a check costs the JVM, as its reply counts it: the first check of
/// Swap (5 methods) reads the type once (14 packets), a repeat asks only
/// what can change (4), and bytecode:true adds one Method.Bytecodes per
/// method. The fastest of 20 samples is taken, so a liveness probe that
/// lands inside one call does not count. `-- --nocapture` prints the
/// average wall time per call (docs/PERFORMANCE.md).
#[test]
fn check_stale_costs_one_packet_per_method_and_caches_the_rest() {
    let jvm = started_swap(JvmOpts::default());
    let server = attached(&jvm, json!({}));
    let roots = crate::support::java::fixtures();
    let mut least = Vec::new();
    for bytecode in [false, true] {
        let start = std::time::Instant::now();
        let packets: Vec<u64> = (0..20)
            .map(|_| {
                crate::support::text::number_after(
                    &stale(&server, roots, bytecode).text,
                    "\nPackets: ",
                )
                .unwrap_or(0)
            })
            .collect();
        // The figure docs/PERFORMANCE.md quotes.
        #[allow(clippy::print_stderr)]
        {
            eprintln!(
                "check_stale bytecode={bytecode}: packets {packets:?}, {:.2} ms per call",
                start.elapsed().as_secs_f64() * 1000.0 / 20.0
            );
        }
        least.push(packets.iter().skip(1).min().copied().unwrap_or(0));
        if !bytecode {
            assert_eq!(packets[0], 14, "{packets:?}");
        }
    }
    assert_eq!(least, [4, 9], "a repeat reads 4 packets, bytecode adds 5");
}

/// Before the fix, on JDK 17, a generic-typed field read as `strictfp`:
/// HotSpot's internal flag for a field with a generic signature (0x800)
/// leaked into the modifiers JDWP reports, so the very build that runs was
/// STALE with a REFUSED reload forecast.
#[test]
fn a_generic_field_is_no_modifier_change_on_jdk17() {
    let scratch = Scratch::new("generic");
    let text = edit(
        &swap_source(),
        "public class Swap {\n",
        "public class Swap {\n    private final java.util.List<String> names = java.util.List.of();\n",
    );
    let classes = build(&scratch, "g", &text, &["-g"]);
    let home = crate::support::java::default_java_home();
    let release = std::fs::read_to_string(home.join("release")).unwrap_or_default();
    assert!(
        release.contains("JAVA_VERSION=\"17"),
        "this test needs the default JDK to be 17 ({}): {release}",
        home.display()
    );
    let jvm = Jvm::start(
        "Swap",
        JvmOpts {
            java_home: Some(home),
            classpath: Some(classes.clone()),
            ..JvmOpts::default()
        },
    );
    jvm.wait_for_line("swap v1 14 h", WAIT);
    let server = attached(&jvm, json!({}));
    let reply = stale(&server, &classes, true);
    assert!(!reply.text.contains("strictfp"), "{}", reply.text);
    assert!(!reply.text.contains("REFUSED"), "{}", reply.text);
    assert!(!reply.text.contains("STALE"), "{}", reply.text);
}
