//! Where a probe's code meets the class it goes into, on JDK 17 and
//! Temurin 25, over MCP: a class compiled without a LocalVariableTable
//! refuses a probe that names a local, with the reason, at arming, and
//! `auto` takes the wire saying why; a class of a named module gets a
//! probe, as its helper is defined in the class's own package (so in its
//! module, which reads it), and clearing restores the class; a line that
//! runs before a constructor's `this()` returns and a method the probe
//! would take past the JVM's code limit are refused with the reason, and
//! so is a write probe whose chosen writers are in two modules.

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::{Value, json};

use crate::support::java::{Jvm, JvmOpts, javac, temurin25_required};
use crate::support::mcp::Server;
use crate::support::poll_until_msg;

const WAIT: Duration = Duration::from_secs(30);

fn data() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/probe-refusals")
}

/// The line of `// LINE: marker` in `file` (under the fixtures' data).
fn line(file: &str, marker: &str) -> u32 {
    let text = std::fs::read_to_string(data().join(file)).expect("fixture source");
    let tag = format!("// LINE: {marker}");
    let at = text
        .lines()
        .position(|l| l.contains(&tag))
        .unwrap_or_else(|| panic!("no {tag} in {file}"));
    at as u32 + 1
}

fn compile(args: &[&str], out: &Path) {
    std::fs::create_dir_all(out).expect("out dir");
    let status = std::process::Command::new(javac())
        .args(["--release", "17", "-encoding", "UTF-8", "-d"])
        .arg(out)
        .args(args)
        .status()
        .expect("run javac");
    assert!(status.success(), "javac {args:?}");
}

fn server_on(port: u16, roots: &Path) -> Server {
    let server = Server::spawn();
    server.initialize();
    server
        .call(
            "debug_attach",
            json!({"port": port, "class_roots": [roots.display().to_string()]}),
        )
        .expect_ok();
    server
}

fn set_stop(server: &Server, args: Value) -> crate::support::mcp::ToolReply {
    server.call("debug_set_stop", args)
}

fn no_local_table(java_home: Option<PathBuf>) {
    let scratch = crate::code::Scratch::new("probe-nolvt");
    let out = scratch.path("classes");
    let src = data().join("nolvt/NoLocals.java");
    compile(&["-g:lines,source", &src.display().to_string()], &out);
    let jvm = Jvm::start(
        "NoLocals",
        JvmOpts {
            java_home,
            classpath: Some(out.clone()),
            ..JvmOpts::default()
        },
    );
    jvm.wait_for_line("no locals started", WAIT);
    let server = server_on(jvm.port(), &out);
    let at = line("nolvt/NoLocals.java", "nolvt-line");
    let stop = |engine: &str| {
        json!({"kind": "line", "class_pattern": "NoLocals", "line": at, "trace": true,
               "trace_locals": "sum", "trace_max_hits": 2, "engine": engine})
    };
    let refused = set_stop(&server, stop("probe")).expect_tool_error();
    assert!(
        refused.text.contains("no LocalVariableTable") && refused.text.contains("\"sum\""),
        "{}",
        refused.text
    );
    let auto = set_stop(&server, stop("auto")).expect_ok();
    assert!(auto.text.contains("WIRE: no probe"), "{}", auto.text);
    assert!(auto.text.contains("no LocalVariableTable"), "{}", auto.text);
    server.call("debug_disconnect", json!({})).expect_ok();
    assert!(jvm.is_alive());
}

#[test]
fn a_class_without_a_local_variable_table_refuses_a_probe_naming_a_local_jdk17() {
    no_local_table(None);
}

#[test]
fn a_class_without_a_local_variable_table_refuses_a_probe_naming_a_local_temurin25() {
    no_local_table(Some(temurin25_required()));
}

fn named_module(java_home: Option<PathBuf>) {
    let scratch = crate::code::Scratch::new("probe-module");
    let out = scratch.path("mods");
    let sources = data().join("module");
    compile(
        &[
            "-g",
            "--module-source-path",
            &sources.display().to_string(),
            "-m",
            "probemod",
        ],
        &out,
    );
    let empty = scratch.path("empty");
    std::fs::create_dir_all(&empty).expect("empty class path");
    let jvm = Jvm::start(
        "pmod.Worker",
        JvmOpts {
            java_home,
            classpath: Some(empty),
            jvm_args: vec![
                "--module-path".into(),
                out.display().to_string(),
                "--add-modules".into(),
                "probemod".into(),
            ],
            ..JvmOpts::default()
        },
    );
    jvm.wait_for_line("module worker started in probemod", WAIT);
    let roots = out.join("probemod");
    let server = server_on(jvm.port(), &roots);
    let at = line("module/probemod/pmod/Worker.java", "module-line");
    let armed = set_stop(
        &server,
        json!({"kind": "line", "class_pattern": "pmod.Worker", "line": at, "trace": true,
               "trace_locals": "n", "trace_max_hits": 3, "engine": "probe"}),
    )
    .expect_ok();
    let id = armed.json()["outcomes"][0]["id"]
        .as_str()
        .unwrap_or_else(|| panic!("no id in {}", armed.text))
        .to_string();
    let traces = poll_until_msg(WAIT, "3 snapshots from the module's class", || {
        let r = server
            .call(
                "debug_get_traces",
                json!({"bp_id": id, "limit": 10, "compact": false}),
            )
            .expect_ok();
        let t = r.json()["traces"].as_array().cloned().unwrap_or_default();
        (t.len() >= 3).then_some(t)
    });
    for t in &traces {
        let named = t["locals"]
            .as_array()
            .is_some_and(|l| l.iter().any(|v| v["name"] == "n"));
        assert!(named, "{t}");
    }
    server
        .call(
            "debug_update_stop_point",
            json!({"kind": "clear", "id": id}),
        )
        .expect_ok();
    let stale = server
        .call(
            "debug_check_stale",
            json!({"class_name": "pmod.Worker", "class_roots": [roots.display().to_string()], "bytecode": true}),
        )
        .expect_ok();
    assert!(
        stale.text.contains("Bytecode:") && !stale.text.contains("Bytecode: STALE"),
        "{}",
        stale.text
    );
    assert!(jvm.is_alive());
}

#[test]
fn a_class_of_a_named_module_gets_a_probe_whose_helper_its_module_reads_jdk17() {
    named_module(None);
}

#[test]
fn a_class_of_a_named_module_gets_a_probe_whose_helper_its_module_reads_temurin25() {
    named_module(Some(temurin25_required()));
}

/// `Limits.java`: a constructor whose first line runs before its `this()`
/// call returns, and `big`, whose bytecode is 65,532 bytes (4 for its
/// first and last lines, 8 for each of 8,191 statements): a few bytes
/// short of the JVM's 65,535.
fn limits_source() -> String {
    let mut s = String::from(
        "public class Limits {\n    final String label;\n\n    Limits(int n) {\n        this(String.valueOf(n)); // LINE: before-this\n    }\n\n    Limits(String label) {\n        this.label = label;\n    }\n\n    static int big(int n) {\n        int s = n;\n",
    );
    for _ in 0..8191 {
        s.push_str("        s = s * 31 + 7;\n");
    }
    s.push_str(
        "        return s;\n    }\n\n    public static void main(String[] args) throws Exception {\n        new Limits(1);\n        big(1);\n        System.out.println(\"limits started\");\n        while (true) {\n            Thread.sleep(1000);\n        }\n    }\n}\n",
    );
    s
}

/// A line before a constructor's `this()` returns, and a method the probe
/// would take past the JVM's code limit: refused at arming with the reason
/// (and `auto` takes the wire saying it), the class left as it was.
fn limits(java_home: PathBuf) {
    let scratch = crate::code::Scratch::new("probe-limits");
    let src = scratch.path("src");
    std::fs::create_dir_all(&src).expect("a source dir");
    let file = src.join("Limits.java");
    let text = limits_source();
    std::fs::write(&file, &text).expect("write Limits.java");
    let out = scratch.path("classes");
    compile(&["-g", &file.display().to_string()], &out);
    let jvm = Jvm::start(
        "Limits",
        JvmOpts {
            java_home: Some(java_home),
            classpath: Some(out.clone()),
            ..JvmOpts::default()
        },
    );
    jvm.wait_for_line("limits started", WAIT);
    let server = server_on(jvm.port(), &out);
    let before_this = text
        .lines()
        .position(|l| l.contains("// LINE: before-this"))
        .expect("the marker") as u32
        + 1;
    let refused = set_stop(
        &server,
        json!({"kind": "line", "class_pattern": "Limits", "line": before_this, "trace": true,
               "engine": "probe"}),
    )
    .expect_tool_error();
    assert!(refused.text.contains("before super()"), "{}", refused.text);
    let exit = |engine: &str| {
        json!({"kind": "method_exit", "class_pattern": "Limits", "method": "big", "trace": true,
               "trace_max_hits": 1, "engine": engine})
    };
    let refused = set_stop(&server, exit("probe")).expect_tool_error();
    assert!(refused.text.contains("code limits"), "{}", refused.text);
    let auto = set_stop(&server, exit("auto")).expect_ok();
    assert!(
        auto.text.contains("WIRE: no probe") && auto.text.contains("code limits"),
        "{}",
        auto.text
    );
    let stale = server
        .call(
            "debug_check_stale",
            json!({"class_name": "Limits", "class_roots": [out.display().to_string()], "bytecode": true}),
        )
        .expect_ok();
    assert!(
        stale.text.contains("Bytecode:") && !stale.text.contains("Bytecode: STALE"),
        "{}",
        stale.text
    );
    server.call("debug_disconnect", json!({})).expect_ok();
    assert!(jvm.is_alive());
}

crate::support::on_both_jdks! {
    limits: a_line_before_this_and_a_method_at_the_code_limit_are_refused_jdk17,
        a_line_before_this_and_a_method_at_the_code_limit_are_refused_temurin25;
}

/// A write probe whose chosen writers are in two modules (a class of a
/// named module and a class-path class, one loader): whether one may read
/// a helper defined beside the other is not checked, so the probe is
/// refused naming the class, and `auto` takes the wire saying why.
fn modules_apart(java_home: PathBuf) {
    let scratch = crate::code::Scratch::new("probe-modules-apart");
    let mods = scratch.path("mods");
    let module_sources = data().join("module");
    compile(
        &[
            "-g",
            "--module-source-path",
            &module_sources.display().to_string(),
            "-m",
            "probemod",
        ],
        &mods,
    );
    let cp = scratch.path("cp");
    let poker = data().join("modules-apart/Poker.java");
    compile(
        &[
            "-g",
            "--module-path",
            &mods.display().to_string(),
            "--add-modules",
            "probemod",
            &poker.display().to_string(),
        ],
        &cp,
    );
    let jvm = Jvm::start(
        "Poker",
        JvmOpts {
            java_home: Some(java_home),
            classpath: Some(cp.clone()),
            jvm_args: vec![
                "--module-path".into(),
                mods.display().to_string(),
                "--add-modules".into(),
                "probemod".into(),
            ],
            ..JvmOpts::default()
        },
    );
    jvm.wait_for_line("poker started", WAIT);
    let server = server_on(jvm.port(), &mods.join("probemod"));
    let watch = |engine: &str| {
        json!({"kind": "field", "class_pattern": "pmod.Worker", "field_name": "level",
               "writers": ["pmod.Worker", "Poker"], "trace": true, "trace_max_hits": 1,
               "engine": engine})
    };
    let refused = set_stop(&server, watch("probe")).expect_tool_error();
    assert!(
        refused
            .text
            .contains("Poker is in another module than pmod.Worker"),
        "{}",
        refused.text
    );
    let auto = set_stop(&server, watch("auto")).expect_ok();
    assert!(
        auto.text.contains("WIRE: no probe") && auto.text.contains("another module"),
        "{}",
        auto.text
    );
    server.call("debug_disconnect", json!({})).expect_ok();
    assert!(jvm.is_alive());
}

crate::support::on_both_jdks! {
    modules_apart: writers_in_two_modules_are_refused_with_the_reason_jdk17,
        writers_in_two_modules_are_refused_with_the_reason_temurin25;
}
