//! debug_source against the running Swap fixture: a window with roots
//! (checked and silent), without roots, for an inner class, by file and
//! line, from a missing root, against a stale build, and for a class
//! compiled with -g:none; plus two class-loader copies pinned by loader.

use serde_json::json;

use super::{Scratch, attached, build, dir, moved_line, started_swap, swap_source};
use std::path::Path;

use crate::support::java::{Jvm, JvmOpts, data_dir, fixtures, line_of};
use crate::support::mcp::Server;

#[test]
fn source_windows_with_and_without_roots_inner_classes_and_stale_builds() {
    let scratch = Scratch::new("source");
    let a = build(&scratch, "a", &moved_line(&swap_source()), &["-g"]);
    let jvm = started_swap(JvmOpts::default());
    let server = attached(&jvm, json!({}));
    let compute = line_of("Swap.java", "swap-compute");
    let roots = json!([dir(&data_dir())]);

    // With both roots and the build that runs: the window, and silence.
    let shown = server
        .call(
            "debug_source",
            json!({"class_name": "Swap", "line": compute, "context": 2,
                   "source_roots": roots, "class_roots": [dir(fixtures())]}),
        )
        .expect_ok();
    assert!(shown.text.contains("Swap (loader @0x"), "{}", shown.text);
    assert!(
        shown.text.contains("compiled from Swap.java"),
        "{}",
        shown.text
    );
    assert!(
        shown.text.contains(&format!(">{compute}  ")),
        "{}",
        shown.text
    );
    assert!(shown.text.contains("return x * 2;"), "{}", shown.text);
    assert!(
        shown
            .text
            .contains(&format!("lines {}-{} of", compute - 2, compute + 2)),
        "{}",
        shown.text
    );
    for noisy in ["STALE", "not checked", "MISMATCH", "cannot tell"] {
        assert!(!shown.text.contains(noisy), "{noisy}: {}", shown.text);
    }

    // Without roots: the JVM half still answers; nothing is checked.
    let bare = server
        .call(
            "debug_source",
            json!({"class_name": "Swap", "line": compute, "source_roots": []}),
        )
        .expect_ok();
    assert!(
        bare.text.contains("compiled from Swap.java"),
        "{}",
        bare.text
    );
    assert!(
        bare.text.contains("No source root configured"),
        "{}",
        bare.text
    );
    assert!(
        bare.text.contains("Bytecode: not checked (no class root"),
        "{}",
        bare.text
    );

    // An inner class resolves to the file that encloses it.
    let tag = line_of("Swap.java", "swap-tag");
    let inner = server
        .call(
            "debug_source",
            json!({"class_name": "Swap$Helper", "line": tag, "context": 0, "source_roots": roots}),
        )
        .expect_ok();
    assert!(inner.text.contains("Swap$Helper (loader"), "{}", inner.text);
    assert!(inner.text.contains("return \"h\";"), "{}", inner.text);

    // By file and line, as agents think.
    let by_file = server
        .call(
            "debug_source",
            json!({"file": format!("Swap.java:{compute}"), "context": 0, "source_roots": roots}),
        )
        .expect_ok();
    assert!(by_file.text.contains("return x * 2;"), "{}", by_file.text);
    assert!(by_file.text.contains("Swap (loader"), "{}", by_file.text);

    // The source roots given once stick to the session: asked again with
    // none, the window is found where it was.
    let again = server
        .call(
            "debug_source",
            json!({"class_name": "Swap", "line": compute, "context": 0}),
        )
        .expect_ok();
    assert!(again.text.contains("return x * 2;"), "{}", again.text);
    assert!(
        !again.text.contains("No source root configured"),
        "{}",
        again.text
    );

    missing_roots_stale_builds_and_unchecked_stops(&server, &scratch, &a);
}

fn missing_roots_stale_builds_and_unchecked_stops(server: &Server, scratch: &Scratch, a: &Path) {
    let compute = line_of("Swap.java", "swap-compute");
    let roots = json!([dir(&data_dir())]);
    // A source too short for the build is proof; a newer one only a hint.
    let short = scratch.path("short");
    std::fs::create_dir_all(&short).expect("short dir");
    let head: Vec<&str> = swap_source().lines().take(8).map(|_| "//").collect();
    std::fs::write(short.join("Swap.java"), head.join("\n")).expect("write");
    let mismatch = server
        .call(
            "debug_source",
            json!({"class_name": "Swap", "line": 3, "source_roots": [dir(&short)],
                   "class_roots": [dir(fixtures())]}),
        )
        .expect_ok();
    assert!(
        mismatch.text.contains("SOURCE MISMATCH"),
        "{}",
        mismatch.text
    );
    assert!(
        mismatch.text.contains("this file has 8 lines"),
        "{}",
        mismatch.text
    );
    assert!(
        mismatch.text.contains("Hint: the .java is newer"),
        "{}",
        mismatch.text
    );
    // A line past the end of the file is said, not shown as an empty window.
    let past = server
        .call(
            "debug_source",
            json!({"class_name": "Swap", "line": 9999, "source_roots": roots}),
        )
        .expect_ok();
    assert!(
        past.text.contains("Line 9999 is past the end"),
        "{}",
        past.text
    );
    // A root that does not hold the file names where it looked.
    let missing = scratch.path("no-such-root");
    let lost = server
        .call(
            "debug_source",
            json!({"class_name": "Swap", "line": compute, "source_roots": [dir(&missing)]}),
        )
        .expect_ok();
    assert!(
        lost.text.contains("Not found under the source roots"),
        "{}",
        lost.text
    );
    assert!(
        lost.text.contains(&dir(&missing.join("Swap.java"))),
        "{}",
        lost.text
    );

    // A class root holding another build: the window is flagged.
    let stale = server
        .call(
            "debug_source",
            json!({"class_name": "Swap", "line": compute, "source_roots": roots, "class_roots": [dir(a)]}),
        )
        .expect_ok();
    assert!(
        stale.text.contains("STALE: the JVM runs other bytecode"),
        "{}",
        stale.text
    );
    assert!(stale.text.contains("compute"), "{}", stale.text);

    // A line stop without a class root is checked against the source
    // roots the session kept from the calls above: that source compiles to
    // the running bytecode, so nothing is flagged and nothing is unchecked.
    let armed = server
        .call(
            "debug_set_stop",
            json!({"kind": "line", "class_pattern": "Swap", "line": compute, "trace": true}),
        )
        .expect_ok();
    assert!(!armed.text.contains("Build: not checked"), "{}", armed.text);
    assert!(!armed.text.contains("STALE"), "{}", armed.text);
}

#[test]
fn a_class_compiled_without_debug_information() {
    let scratch = Scratch::new("gnone");
    let none = build(&scratch, "none", &swap_source(), &["-g:none"]);
    let jvm = Jvm::start(
        "Swap",
        JvmOpts {
            classpath: Some(none.clone()),
            ..JvmOpts::default()
        },
    );
    jvm.wait_for_line("swap v1 14 h", super::WAIT);
    let server = attached(&jvm, json!({}));
    let src = server
        .call(
            "debug_source",
            json!({"class_name": "Swap", "line": 11, "source_roots": []}),
        )
        .expect_ok();
    assert!(src.text.contains("no SourceFile attribute"), "{}", src.text);
    let guessed = server
        .call(
            "debug_source",
            json!({"class_name": "Swap", "line": 11, "source_roots": [dir(&data_dir())]}),
        )
        .expect_ok();
    assert!(
        guessed.text.contains("guessed from the class name"),
        "{}",
        guessed.text
    );
    let lines = server
        .call(
            "debug_check_stale",
            json!({"class_name": "Swap", "class_roots": [dir(&none)]}),
        )
        .expect_ok();
    assert!(lines.text.contains("CANNOT TELL"), "{}", lines.text);
    let code = server
        .call(
            "debug_check_stale",
            json!({"class_name": "Swap", "class_roots": [dir(&none)], "bytecode": true}),
        )
        .expect_ok();
    assert!(code.text.contains("Bytecode: identical"), "{}", code.text);
}

#[test]
fn several_class_loader_copies_are_named_and_pinned_by_loader() {
    let jvm = Jvm::start("TwoLoaders", JvmOpts::default());
    jvm.wait_for_line("two loaders ready", super::WAIT);
    let server = attached(&jvm, json!({"class_roots": [dir(fixtures())]}));
    let first = server
        .call("debug_check_stale", json!({"class_name": "Plugin"}))
        .expect_ok();
    assert!(first.text.contains("2 copies are loaded"), "{}", first.text);
    let other = first
        .text
        .split("Others: ")
        .nth(1)
        .and_then(|r| r.split_whitespace().next())
        .unwrap_or_else(|| panic!("no other copy named: {}", first.text))
        .trim_end_matches(',')
        .to_string();
    assert!(other.starts_with("Plugin@0x"), "{other}");
    let pinned = server
        .call("debug_check_stale", json!({"class_name": other}))
        .expect_ok();
    let loader = other.trim_start_matches("Plugin@");
    assert!(
        pinned.text.contains(&format!("(loader @{loader})")),
        "{}",
        pinned.text
    );
    assert!(
        pinned.text.contains("no structural change detected"),
        "{}",
        pinned.text
    );
    let nowhere = server
        .call("debug_check_stale", json!({"class_name": "Plugin@0x1"}))
        .expect_tool_error();
    assert!(
        nowhere.text.starts_with("[NO_SUCH_COPY]"),
        "{}",
        nowhere.text
    );
}
