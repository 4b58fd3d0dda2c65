//! Tidy: the layering the compiler cannot enforce, and the `//!` line every
//! source file starts with.

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

fn forbid(area: &str, words: &[&str]) {
    let mut hits = Vec::new();
    for file in files_under(area) {
        for (n, line) in code_lines(&file) {
            for word in words {
                if line.contains(word) {
                    hits.push(format!("{}:{n}: names `{word}`", file.display()));
                }
            }
        }
    }
    assert!(hits.is_empty(), "layering broken:\n{}", hits.join("\n"));
}

#[test]
fn the_pure_core_does_no_io_and_knows_no_outer_layer() {
    for area in ["src/jdwp", "src/model"] {
        forbid(
            area,
            &[
                "tokio",
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
        );
    }
}

#[test]
fn actors_know_nothing_of_mcp() {
    forbid("actors", &["rmcp", "crate::mcp", "serde_json"]);
}

#[test]
fn every_source_file_starts_with_a_module_doc_line() {
    let mut files = Vec::new();
    for area in ["src", "actors", "tests", "bench"] {
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
