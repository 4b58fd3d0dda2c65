//! Tidy: the layering the compiler cannot enforce, and the `//!` line every
//! source file starts with. The compiler enforces the rest: each floor is a
//! crate (`the_floors_are_crates_that_import_one_way` reads the manifests),
//! and the actors' modules are private, so `src/mcp` can only name what
//! `actors/lib.rs` re-exports. Each rule is a function over one line of code, and
//! `each_rule_catches_a_deliberate_violation` shows every one failing.

mod docs;
mod rooms;
mod words;

use std::path::{Path, PathBuf};

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            if path.file_name().is_some_and(|n| n == "target") {
                continue;
            }
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn files_under(rel: &str) -> Vec<PathBuf> {
    let mut out = Vec::new();
    rust_files(&root().join(rel), &mut out);
    out
}

/// Lines of code, with `//` comments and doc comments removed.
fn code_lines(path: &Path) -> Vec<(usize, String)> {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    text.lines()
        .enumerate()
        .filter(|(_, l)| !l.trim_start().starts_with("//"))
        .map(|(i, l)| (i + 1, l.to_string()))
        .collect()
}

/// A rule: what is wrong with one line of code, if anything.
type Rule = fn(&str) -> Option<String>;

/// Every line of every file in `files` that breaks `rule`.
fn violations(files: &[PathBuf], rule: Rule) -> Vec<String> {
    let mut hits = Vec::new();
    for file in files {
        for (n, line) in code_lines(file) {
            if let Some(why) = rule(&line) {
                hits.push(format!("{}:{n}: {why}", file.display()));
            }
        }
    }
    hits
}

fn check(areas: &[&str], rule: Rule) {
    let files: Vec<PathBuf> = areas.iter().flat_map(|a| files_under(a)).collect();
    let hits = violations(&files, rule);
    assert!(hits.is_empty(), "layering broken:\n{}", hits.join("\n"));
}

fn names_any(line: &str, words: &[&str]) -> Option<String> {
    words
        .iter()
        .find(|w| line.contains(*w))
        .map(|w| format!("names `{w}`"))
}

/// The string literals on a line (escapes kept, good enough for a scan).
fn literals(line: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut rest = line;
    while let Some(open) = rest.find('"') {
        let after = &rest[open + 1..];
        let mut end = None;
        let mut escaped = false;
        for (i, c) in after.char_indices() {
            match c {
                '\\' if !escaped => escaped = true,
                '"' if !escaped => {
                    end = Some(i);
                    break;
                }
                _ => escaped = false,
            }
        }
        let Some(end) = end else {
            out.push(after);
            break;
        };
        out.push(&after[..end]);
        rest = &after[end + 1..];
    }
    out
}

/// The pure core does no I/O, keeps no time, runs nothing async, and
/// knows no outer layer.
fn core_rule(line: &str) -> Option<String> {
    names_any(
        line,
        &[
            "tokio",
            "tracing",
            "ractor",
            "rmcp",
            "serde_json",
            "crate::actors",
            "crate::mcp",
            "std::net",
            "std::fs",
            "Instant::now",
            "SystemTime",
        ],
    )
}

/// The MCP layer reaches the JVM only through the actors' handles: no JDWP
/// command, no send, no test hook.
fn mcp_rule(line: &str) -> Option<String> {
    names_any(
        line,
        &[
            "jdwp::",
            ".send(",
            "actors::testing",
            "raw_connection",
            "class_cache(",
        ],
    )
}

/// A `Result` on the line whose error type is a bare `String`: a refusal
/// in words, where a typed error belongs.
fn string_error(line: &str) -> Option<String> {
    let mut rest = line;
    while let Some(at) = rest.find("Result<") {
        let args = &rest[at + "Result<".len()..];
        // The top-level arguments, up to the `>` that closes `Result<`.
        let (mut depth, mut last, mut close) = (0i32, 0, None);
        let mut prev = ' ';
        for (i, c) in args.char_indices() {
            match c {
                '<' | '(' | '[' => depth += 1,
                '>' if prev == '-' => {}
                '>' | ')' | ']' if depth > 0 => depth -= 1,
                '>' => {
                    close = Some(i);
                    break;
                }
                ',' if depth == 0 => last = i + 1,
                _ => {}
            }
            prev = c;
        }
        let Some(close) = close else { break };
        let error = args[last..close].trim();
        if last > 0 && matches!(error, "String" | "std::string::String") {
            return Some(format!("an error in words (Result<{}>)", &args[..close]));
        }
        rest = &args[close..];
    }
    None
}

/// The actors return typed data: no MCP, no JSON, no `[LABEL]` an agent
/// reads, no tool names, no `Result<_, String>`.
fn actors_rule(line: &str) -> Option<String> {
    if let Some(why) = names_any(line, &["rmcp", "crate::mcp", "serde_json"]) {
        return Some(why);
    }
    if let Some(why) = string_error(line) {
        return Some(why);
    }
    // Notes for the agent are typed data (`ArmNote`, `HitNote`, …) that
    // the MCP layer words; a sentence written here would bypass it.
    let prose = [
        "notes.push(\"",
        "notes.push(format!",
        ".note(\"",
        ".note(format!",
        "note: Some(\"",
        "note: Some(format!",
        "note = Some(\"",
        "note = Some(format!",
        "note_event(format!",
        "note_event(\"",
    ];
    if let Some(p) = prose.iter().find(|p| line.contains(*p)) {
        return Some(format!("a note worded under actors/ ({p}…)"));
    }
    for lit in literals(line) {
        let label = lit
            .strip_prefix('[')
            .and_then(|r| r.split_once(']'))
            .is_some_and(|(l, _)| {
                l.len() > 1 && l.chars().all(|c| c.is_ascii_uppercase() || c == '_')
            });
        if label {
            return Some(format!("an agent-facing label in {lit:?}"));
        }
        if let Some(at) = lit.find("debug_")
            && lit[at + 6..].starts_with(|c: char| c.is_ascii_lowercase())
        {
            return Some(format!("a tool name in {lit:?}"));
        }
    }
    None
}

#[test]
fn the_pure_core_does_no_io_and_knows_no_outer_layer() {
    check(&["src/jdwp", "src/core"], core_rule);
}

/// The workspace's packages and, for each, the packages it depends on
/// (normal dependencies only), read from `cargo metadata`.
fn manifests() -> std::collections::BTreeMap<String, Vec<String>> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let out = std::process::Command::new(cargo)
        .args([
            "metadata",
            "--format-version",
            "1",
            "--no-deps",
            "--offline",
        ])
        .current_dir(root())
        .output()
        .expect("cargo metadata runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let meta: serde_json::Value = serde_json::from_slice(&out.stdout).expect("metadata is JSON");
    let mut packages = std::collections::BTreeMap::new();
    for p in meta["packages"].as_array().into_iter().flatten() {
        let deps = p["dependencies"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|d| d["kind"].is_null())
            .filter_map(|d| d["name"].as_str().map(str::to_string))
            .collect();
        if let Some(name) = p["name"].as_str() {
            packages.insert(name.to_string(), deps);
        }
    }
    packages
}

/// Each floor is a crate, and a crate names only the floors below it:
/// jdwp ← core ← actors ← jvmscope (telemetry beside core, under the
/// actors). The codec stands alone (std and thiserror), which is what
/// lets the fuzz target build it without the server's tree; the core has
/// no runtime, no logging and no JSON; the actors know no MCP.
#[test]
fn the_floors_are_crates_that_import_one_way() {
    let packages = manifests();
    let floors = [
        "jvmscope-jdwp",
        "jvmscope-core",
        "jvmscope-telemetry",
        "jvmscope-actors",
        "jvmscope",
    ];
    for floor in floors {
        assert!(
            packages.contains_key(floor),
            "no crate {floor}: {packages:?}"
        );
    }
    let deps = |p: &str| packages[p].clone();
    assert_eq!(
        deps("jvmscope-jdwp"),
        ["thiserror"],
        "the codec stands alone"
    );
    let forbidden: [(&str, &[&str]); 4] = [
        (
            "jvmscope-core",
            &[
                "jvmscope-telemetry",
                "jvmscope-actors",
                "jvmscope",
                "tokio",
                "tracing",
                "ractor",
                "rmcp",
                "serde_json",
                "futures",
            ],
        ),
        (
            "jvmscope-telemetry",
            &[
                "jvmscope-jdwp",
                "jvmscope-core",
                "jvmscope-actors",
                "jvmscope",
                "ractor",
                "rmcp",
            ],
        ),
        (
            "jvmscope-actors",
            &["jvmscope", "rmcp", "serde_json", "schemars", "serde"],
        ),
        ("jvmscope", &["cafebabe"]),
    ];
    for (floor, names) in forbidden {
        let d = deps(floor);
        let bad: Vec<_> = names.iter().filter(|n| d.iter().any(|x| x == *n)).collect();
        assert!(bad.is_empty(), "{floor} depends on {bad:?}");
    }
    // One class-file crate in every manifest.
    let class_crates: std::collections::BTreeSet<&str> = packages
        .values()
        .flatten()
        .filter(|d| {
            [
                "cafebabe",
                "ristretto_classfile",
                "classfile-parser",
                "noak",
            ]
            .contains(&d.as_str())
        })
        .map(String::as_str)
        .collect();
    assert!(
        class_crates.len() <= 1,
        "class-file crates: {class_crates:?}"
    );
}

/// A module is found where its crate puts it: no `#[path]` reaches into
/// another folder of the house (bench/ and tests/ share helpers beside
/// them, which is no crossing).
#[test]
fn no_path_mount_crosses_a_folder() {
    let mut hits = Vec::new();
    for area in ["src", "actors", "tests", "bench", "xtask"] {
        for file in files_under(area) {
            for (n, line) in code_lines(&file) {
                if line.trim_start().starts_with("#[path") && line.contains("..") {
                    hits.push(format!("{}:{n}: {}", file.display(), line.trim()));
                }
            }
        }
    }
    assert!(
        hits.is_empty(),
        "#[path] mounts across folders:\n{}",
        hits.join("\n")
    );
}

#[test]
fn the_mcp_layer_speaks_no_jdwp() {
    check(&["src/mcp"], mcp_rule);
}

#[test]
fn actors_know_nothing_of_mcp_or_of_the_words_agents_read() {
    check(&["actors"], actors_rule);
}

/// Each rule, shown failing on a deliberate violation (and passing the
/// lines it must not flag).
#[test]
fn each_rule_catches_a_deliberate_violation() {
    let dir = tempfile::tempdir().expect("tempdir");
    let cases: [(Rule, &str, &str); 11] = [
        (core_rule, "use tokio::sync::mpsc;", "let x = ids.len();"),
        (core_rule, "tracing::info!(\"x\");", "let span = e.span;"),
        (
            mcp_rule,
            "use crate::jdwp::ThreadId;",
            "use crate::actors::ThreadId;",
        ),
        (
            mcp_rule,
            "conn.send(&Resume { thread }).await",
            "handle.resume_all().await",
        ),
        (
            actors_rule,
            "return Err(invalid(\"[NOT_WRITABLE] no slot\".into()));",
            "let elem = ty.strip_suffix(\"[]\");",
        ),
        (
            actors_rule,
            "note(\"debug_toggle_stop_point re-enables it\");",
            "debug_assert!(ok);",
        ),
        (
            actors_rule,
            "use serde_json::json;",
            "use serde::Deserialize;",
        ),
        (
            actors_rule,
            "notes.push(format!(\"the class {c} is not loaded\"));",
            "notes.push(ArmNote::Deferred { class: c });",
        ),
        (
            actors_rule,
            "s.note_event(format!(\"{took}; the thread runs\"));",
            "s.note_event(late(LateOutcome::Runs));",
        ),
        (
            actors_rule,
            "fn hit(t: ThreadId) -> Result<Option<Vec<u8>>, String> {",
            "fn text(r: Result<String, JdwpError>) -> Result<Option<String>, JdwpError> {",
        ),
        (
            actors_rule,
            "let f: Box<dyn Fn(u8) -> Result<(), String>> = g;",
            "let f: HashMap<u64, String> = names; let r: Result<Vec<String>, E> = ok;",
        ),
    ];
    each_caught(dir.path(), &cases);
}

/// Writes each case's good line then its bad line to a file of its own and
/// asserts that `rule` flags the bad line (line 3) and only it.
fn each_caught(dir: &Path, cases: &[(Rule, &str, &str)]) {
    for (i, (rule, bad, good)) in cases.iter().enumerate() {
        let file = dir.join(format!("case{i}.rs"));
        std::fs::write(&file, format!("//! case\n{good}\n{bad}\n")).expect("write");
        let hits = violations(std::slice::from_ref(&file), *rule);
        assert_eq!(
            hits.len(),
            1,
            "case {i}: {bad:?} must be caught, {good:?} not: {hits:?}"
        );
        assert!(hits[0].contains(":3:"), "case {i}: {hits:?}");
    }
}

#[test]
fn every_source_file_starts_with_a_module_doc_line() {
    let mut files = Vec::new();
    for area in ["src", "actors", "tests", "bench", "xtask"] {
        files.extend(files_under(area));
    }
    let missing: Vec<_> = files
        .iter()
        .filter(|f| {
            let text = std::fs::read_to_string(f).unwrap_or_default();
            !text.trim_start().starts_with("//!")
        })
        .map(|f| f.display().to_string())
        .collect();
    assert!(
        missing.is_empty(),
        "files without a leading //! line:\n{}",
        missing.join("\n")
    );
}

#[test]
fn nothing_but_the_transport_writes_stdout() {
    let mut hits = Vec::new();
    for area in ["src", "actors"] {
        for file in files_under(area) {
            if file.ends_with("demo.rs") {
                continue; // the demo is a terminal program, not the server
            }
            for (n, line) in code_lines(&file) {
                if line.contains("println!")
                    || line.contains("print!(")
                    || line.contains("stdout()")
                {
                    hits.push(format!("{}:{n}", file.display()));
                }
            }
        }
    }
    assert!(
        hits.is_empty(),
        "stdout belongs to MCP:\n{}",
        hits.join("\n")
    );
}

/// Every `debug_…` tool a reply, hint or description names is a tool the
/// server has: a "Next:" pointing at a tool that does not exist sends an
/// agent nowhere.
#[test]
fn every_tool_a_message_names_exists() {
    let tools: std::collections::BTreeSet<String> = jvmscope::mcp::tools::catalogue()
        .iter()
        .map(|t| t.name.to_string())
        .collect();
    let mut unknown = Vec::new();
    for area in ["src", "actors"] {
        for file in files_under(area) {
            let text = std::fs::read_to_string(&file).unwrap_or_default();
            for (n, line) in text.lines().enumerate() {
                let mut rest = line;
                while let Some(at) = rest.find("debug_") {
                    let name: String = rest[at..]
                        .chars()
                        .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                        .collect();
                    rest = &rest[at + name.len().max(1)..];
                    // A family of names (`debug_set_*`) or Rust's own macros.
                    if name.ends_with('_') || name.starts_with("debug_assert") {
                        continue;
                    }
                    // Inside a string literal only: quotes before it on the line.
                    if !tools.contains(&name) && line[..line.len() - rest.len()].contains('"') {
                        unknown.push(format!("{}:{}: {name}", file.display(), n + 1));
                    }
                }
            }
        }
    }
    assert!(
        unknown.is_empty(),
        "messages name tools that do not exist:\n{}",
        unknown.join("\n")
    );
}

/// The text of a line with string literals, `'{'`/`'}'` and `//` comments
/// taken out, so braces can be counted.
fn braces_only(line: &str) -> String {
    let mut out = String::new();
    let mut in_str = false;
    let mut escaped = false;
    let line = line.replace("'{'", "").replace("'}'", "");
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        if in_str {
            match c {
                '\\' if !escaped => escaped = true,
                '"' if !escaped => in_str = false,
                _ => escaped = false,
            }
            continue;
        }
        match c {
            '"' => in_str = true,
            '/' if chars.peek() == Some(&'/') => break,
            '{' | '}' => out.push(c),
            _ => {}
        }
    }
    out
}

/// Every function in `text` longer than `max` lines, as (name, line, length).
fn long_functions(text: &str, max: usize) -> Vec<(String, usize, usize)> {
    let lines: Vec<&str> = text.lines().collect();
    let mut out = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        let t = line.trim_start();
        let t = t.strip_prefix("pub ").unwrap_or(t);
        let t = t
            .strip_prefix("pub(crate) ")
            .or_else(|| t.strip_prefix("pub(super) "))
            .unwrap_or(t);
        let t = t.strip_prefix("async ").unwrap_or(t);
        let Some(rest) = t.strip_prefix("fn ") else {
            continue;
        };
        let name: String = rest
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect();
        let (mut depth, mut started) = (0i32, false);
        for (j, l) in lines.iter().enumerate().skip(i) {
            for c in braces_only(l).chars() {
                depth += if c == '{' { 1 } else { -1 };
                started = true;
            }
            if !started && l.trim_end().ends_with(';') {
                break;
            }
            if started && depth <= 0 {
                if j - i + 1 > max {
                    out.push((name.clone(), i + 1, j - i + 1));
                }
                break;
            }
        }
    }
    out
}

/// Files stay small and named for their concept; functions read in one
/// screenful or two.
#[test]
fn no_file_is_over_800_lines_and_no_function_over_120() {
    let mut hits = Vec::new();
    for area in ["src", "actors", "tests", "bench", "xtask"] {
        for file in files_under(area) {
            let text = std::fs::read_to_string(&file).unwrap_or_default();
            let n = text.lines().count();
            if n > 800 {
                hits.push(format!("{}: {n} lines", file.display()));
            }
            for (name, at, len) in long_functions(&text, 120) {
                hits.push(format!("{}:{at}: fn {name} is {len} lines", file.display()));
            }
        }
    }
    assert!(hits.is_empty(), "too long:\n{}", hits.join("\n"));
    let long = format!("fn f() {{\n{}}}\n", "    let x = \"}\";\n".repeat(130));
    assert_eq!(
        long_functions(&long, 120).len(),
        1,
        "the scan counts a long function"
    );
}
