//! A line read from a source that was edited but not built: the line stop
//! says the running code differs from what that file compiles to, and
//! debug_check_stale source:true compiles it to a scratch directory and
//! shows where, in one call. The file as it runs gives no such note.

use serde_json::json;

use super::{Scratch, attached, dir, started_swap, swap_source};
use crate::support::java::JvmOpts;

#[test]
fn a_line_stop_from_an_edited_source_says_the_running_code_differs() {
    let scratch = Scratch::new("edited");
    let text = swap_source();
    // Two comment lines above the loop's `try`: in the edited file the
    // sleep is on the line where the running code has its `return`.
    let edited = text.replacen(
        "                try {\n",
        "                // edited\n                // twice\n                try {\n",
        1,
    );
    assert_ne!(edited, text, "the fixture still has its loop");
    let src = scratch.path("edited/src");
    std::fs::create_dir_all(&src).expect("src dir");
    let file = src.join("Swap.java");
    std::fs::write(&file, &edited).expect("write the edited source");
    let jvm = started_swap(JvmOpts::default());
    let server = attached(&jvm, json!({"source_roots": [dir(&src)]}));
    let line_in = |t: &str| {
        t.lines()
            .position(|l| l.contains("Thread.sleep(20)"))
            .expect("marker")
            + 1
    };

    // The agent reads the edited file and stops at its line: the arm
    // reply says the running code is not what the file compiles to.
    let armed = server
        .call(
            "debug_set_stop",
            json!({"kind": "line", "class_pattern": "Swap", "line": line_in(&edited), "trace": true}),
        )
        .expect_ok();
    let want = format!(
        "STALE: the JVM's line tables differ from {} compiled now in ",
        file.display()
    );
    assert!(armed.text.contains(&want), "{}", armed.text);
    assert!(armed.text.contains("lambda$main"), "{}", armed.text);
    assert!(
        armed
            .text
            .contains("debug_check_stale source:true has the detail"),
        "{}",
        armed.text
    );

    // One call compiles the source and compares it with the running class.
    let check = server
        .call(
            "debug_check_stale",
            json!({"class_name": "Swap", "source": true}),
        )
        .expect_ok();
    assert!(
        check
            .text
            .contains(&format!("vs {} compiled now", file.display())),
        "{}",
        check.text
    );
    assert!(check.text.contains("Line tables: STALE"), "{}", check.text);
    assert!(check.text.contains("lambda$main"), "{}", check.text);
    // Nothing was left in the class root or beside the source.
    let beside: Vec<_> = std::fs::read_dir(&src)
        .expect("src")
        .flatten()
        .map(|e| e.file_name())
        .collect();
    assert_eq!(beside, ["Swap.java"], "{beside:?}");

    // The file as it runs: the same kind of stop gives no such note.
    std::fs::write(&file, &text).expect("write the running source");
    let clean = server
        .call(
            "debug_set_stop",
            json!({"kind": "line", "class_pattern": "Swap", "line": line_in(&text), "trace": true}),
        )
        .expect_ok();
    assert!(!clean.text.contains("STALE"), "{}", clean.text);

    // A source and a build at once is an argument error naming both.
    let both = server.call(
        "debug_check_stale",
        json!({"class_name": "Swap", "source": true, "class_roots": [dir(&src)]}),
    );
    assert!(
        both.is_error && both.text.starts_with("[BAD_ARGUMENT]"),
        "{}",
        both.text
    );
}
