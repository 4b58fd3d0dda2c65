//! The code tools touch files only under the source roots, and only source
//! files: debug_source refuses a path out of a root (`..`, absolute,
//! `/proc`, a link), and a file that is not source; debug_reload_class
//! hands javac only `.java` files under the roots, never an option or an
//! `@argfile`, and runs no javac in a read-only session, dry run or not.

use serde_json::{Value, json};

use super::{Scratch, attached, dir, edit, started_swap, swap_source};
use crate::support::java::JvmOpts;
use crate::support::mcp::Server;

/// A source root holding the fixture's Swap.java, a file that is not
/// source, and a `.java` link to a file outside the root.
fn source_root(scratch: &Scratch) -> std::path::PathBuf {
    let root = scratch.path("src");
    std::fs::create_dir_all(&root).expect("src");
    std::fs::write(root.join("Swap.java"), swap_source()).expect("Swap.java");
    std::fs::write(root.join("app.properties"), "db.password=hunter2\n").expect("props");
    std::os::unix::fs::symlink("/etc/passwd", root.join("Passwd.java")).expect("link");
    root
}

fn assert_refused(server: &Server, tool: &str, args: Value) {
    let r = server.call(tool, args.clone());
    assert!(r.is_error, "{tool} {args} must be refused: {}", r.text);
    for leak in ["root:x:", "hunter2", "PATH="] {
        assert!(
            !r.text.contains(leak),
            "{tool} {args} leaks {leak}: {}",
            r.text
        );
    }
    assert!(
        r.text.starts_with("[NOT_A_SOURCE]") || r.text.starts_with("[READ_ONLY]"),
        "{tool} {args}: {}",
        r.text
    );
}

#[test]
fn debug_source_reads_only_source_files_under_the_source_roots() {
    let scratch = Scratch::new("guard-source");
    let root = source_root(&scratch);
    for read_only in [false, true] {
        // A JVM each: its agent takes one debugger at a time.
        let jvm = started_swap(JvmOpts::default());
        let server = attached(
            &jvm,
            json!({"read_only": read_only, "source_roots": [dir(&root)]}),
        );
        for file in [
            "../../../../../../etc/passwd",
            "/etc/passwd",
            "/proc/self/environ",
            "Passwd.java",
            "app.properties",
        ] {
            assert_refused(
                &server,
                "debug_source",
                json!({"file": file, "whole_file": true}),
            );
        }
        // A root the call names does not widen what is read.
        assert_refused(
            &server,
            "debug_source",
            json!({"file": "etc/passwd", "whole_file": true, "source_roots": ["/"]}),
        );
        let ok = server
            .call("debug_source", json!({"file": "Swap.java:3"}))
            .expect_ok();
        assert!(ok.text.contains("Swap.java lines"), "{}", ok.text);
    }
}

#[test]
fn javac_is_given_only_java_files_under_the_roots_and_never_runs_read_only() {
    let scratch = Scratch::new("guard-javac");
    let root = source_root(&scratch);
    let classes = scratch.path("classes");
    let elsewhere = scratch.path("elsewhere");
    for d in [&classes, &elsewhere] {
        std::fs::create_dir_all(d).expect("dir");
    }
    let outside = scratch.path("Swap.java");
    std::fs::write(&outside, edit(&swap_source(), "x * 2", "x * 5")).expect("outside");
    let argfile = scratch.path("args");
    std::fs::write(
        &argfile,
        format!("-d {}\n{}\n", dir(&elsewhere), dir(&outside)),
    )
    .expect("argfile");
    let jvms = [
        started_swap(JvmOpts::default()),
        started_swap(JvmOpts::default()),
    ];
    let attach = |read_only: bool| {
        attached(
            &jvms[usize::from(read_only)],
            json!({"read_only": read_only, "source_roots": [dir(&root)],
                   "class_roots": [dir(&classes)]}),
        )
    };
    let server = attach(false);
    let injections = [
        json!(["-d", dir(&elsewhere), "Swap.java"]),
        json!([format!("@{}", dir(&argfile))]),
        json!(["-processor", "Evil", "Swap.java"]),
        json!([dir(&outside)]),
        json!(["../Swap.java"]),
        json!(["app.properties"]),
        json!(["Passwd.java"]),
    ];
    for sources in &injections {
        for dry_run in [true, false] {
            assert_refused(
                &server,
                "debug_reload_class",
                json!({"class_name": "Swap", "compile": true, "dry_run": dry_run, "sources": sources}),
            );
        }
    }
    let read_only = attach(true);
    for sources in [
        json!(["Swap.java"]),
        json!(["-d", dir(&elsewhere), "Swap.java"]),
    ] {
        let r = read_only.call(
            "debug_reload_class",
            json!({"class_name": "Swap", "compile": true, "dry_run": true, "sources": sources}),
        );
        assert!(
            r.is_error && r.text.starts_with("[READ_ONLY]"),
            "{}",
            r.text
        );
    }
    let written = |d: &std::path::Path| std::fs::read_dir(d).map_or(0, |e| e.count());
    assert_eq!(written(&elsewhere), 0, "javac wrote outside the class root");
    assert_eq!(written(&classes), 0, "no javac ran");
    // A source under the root, named relative to it, still compiles.
    let dry = server
        .call(
            "debug_reload_class",
            json!({"class_name": "Swap", "compile": true, "dry_run": true, "sources": ["Swap.java"]}),
        )
        .expect_ok();
    assert!(dry.text.contains("Compiled:"), "{}", dry.text);
    assert!(classes.join("Swap.class").is_file());
}
