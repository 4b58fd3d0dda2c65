//! Tidy for the documentation: every file path the architecture pages name
//! exists, the performance page stays a page of current figures, and no
//! page speaks of the developers' work sessions (a *debug session* is the
//! product's word and stays). Each rule is a function over a text, shown
//! failing on a deliberate violation.

use std::path::{Path, PathBuf};

/// The pages whose paths are checked, relative to the repository root.
const MAPS: [&str; 2] = ["docs/ARCHITECTURE.md", "docs/actors.md"];

/// The most lines docs/PERFORMANCE.md may have.
const PERFORMANCE_MAX_LINES: usize = 400;

/// MCP's method namespaces: `tools/call` or `tasks/cancel` is a method the
/// protocol names, not a file.
const MCP_METHODS: [&str; 5] = [
    "tools/",
    "tasks/",
    "notifications/",
    "resources/",
    "prompts/",
];

/// A token of code text that names a file or a folder: only path
/// characters, not absolute, and either a `/` in it or a `.rs`, `.md` or
/// `.toml` ending. A module path (`a::b`), a URI (`jdwp://…`), a template
/// (`tools/<family>.rs`), a glob, a system path (`/proc/…`) and an MCP
/// method (`tools/call`) are not.
fn is_path(token: &str) -> bool {
    let path_chars = token
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || matches!(c, '/' | '.' | '_' | '-'));
    let mcp_method = !token.contains('.') && MCP_METHODS.iter().any(|m| token.starts_with(m));
    path_chars
        && !mcp_method
        && !token.starts_with('/')
        && token.chars().any(|c| c.is_ascii_alphanumeric())
        && (token.contains('/') || [".rs", ".md", ".toml"].iter().any(|e| token.ends_with(e)))
}

/// The path-like tokens of a Markdown text: each with whether it is a link
/// target (which resolves against the page's folder, as a link does)
/// rather than code (which names a path from the repository root).
fn path_tokens(text: &str) -> Vec<(String, bool)> {
    let mut out = Vec::new();
    for (i, part) in text.split('`').enumerate() {
        if i % 2 == 1 {
            if is_path(part) {
                out.push((part.to_string(), false));
            }
            continue;
        }
        let mut rest = part;
        while let Some(at) = rest.find("](") {
            let after = &rest[at + 2..];
            let Some(end) = after.find(')') else { break };
            let target = after[..end].split('#').next().unwrap_or("");
            if is_path(target) {
                out.push((target.to_string(), true));
            }
            rest = &after[end..];
        }
    }
    out
}

/// Every path the page at `page` (relative to `root`) names that does not
/// exist.
fn missing_paths(root: &Path, page: &str, text: &str) -> Vec<String> {
    let folder = root.join(page).parent().map(Path::to_path_buf);
    let folder = folder.unwrap_or_else(|| root.to_path_buf());
    path_tokens(text)
        .into_iter()
        .filter(|(token, link)| {
            let base = if *link { folder.as_path() } else { root };
            !base.join(token).exists()
        })
        .map(|(token, _)| format!("{page}: `{token}` does not exist"))
        .collect()
}

const ORDINALS: [&str; 12] = [
    "first", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth", "ninth", "tenth",
    "eleventh", "twelfth",
];

/// An ordinal word (`tenth`) or number (`10th`, `2nd`).
fn is_ordinal(word: &str) -> bool {
    let w = word.to_ascii_lowercase();
    if ORDINALS.contains(&w.as_str()) {
        return true;
    }
    let digits = w.chars().take_while(char::is_ascii_digit).count();
    digits > 0 && ["st", "nd", "rd", "th"].contains(&&w[digits..])
}

/// Every place a text numbers a work session ("the tenth session", "11th
/// session"), even across a line break, as `line: words`.
fn work_sessions(text: &str) -> Vec<String> {
    let words: Vec<(usize, &str)> = text
        .lines()
        .enumerate()
        .flat_map(|(n, l)| l.split_whitespace().map(move |w| (n + 1, w)))
        .collect();
    let trim = |w: &str| {
        w.trim_matches(|c: char| !c.is_ascii_alphanumeric())
            .to_string()
    };
    words
        .windows(2)
        .filter(|pair| {
            let (first, second) = (pair[0].1, pair[1].1);
            first.ends_with(|c: char| c.is_ascii_alphanumeric())
                && is_ordinal(&trim(first))
                && trim(second).eq_ignore_ascii_case("session")
        })
        .map(|pair| format!("{}: {} {}", pair[0].0, pair[0].1, pair[1].1))
        .collect()
}

/// Every `.md` file of the repository, build output and git left out.
fn markdown_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        let name = entry.file_name();
        if path.is_dir() {
            if name != "target" && name != ".git" {
                markdown_files(&path, out);
            }
        } else if path.extension().is_some_and(|e| e == "md") {
            out.push(path);
        }
    }
}

/// A page longer than `max` lines, said as a failure.
fn too_long(page: &str, text: &str, max: usize) -> Option<String> {
    let lines = text.lines().count();
    (lines > max).then(|| format!("{page} has {lines} lines, more than {max}"))
}

#[test]
fn every_path_the_architecture_pages_name_exists() {
    let root = super::root();
    let mut missing = Vec::new();
    for page in MAPS {
        let text = std::fs::read_to_string(root.join(page)).expect("the page exists");
        missing.extend(missing_paths(&root, page, &text));
    }
    assert!(missing.is_empty(), "{}", missing.join("\n"));
}

#[test]
fn the_performance_page_holds_todays_figures_only() {
    let page = "docs/PERFORMANCE.md";
    let text = std::fs::read_to_string(super::root().join(page)).expect("the page exists");
    let long = too_long(page, &text, PERFORMANCE_MAX_LINES);
    assert!(long.is_none(), "{long:?}");
}

#[test]
fn no_page_speaks_of_work_sessions() {
    let root = super::root();
    let mut files = Vec::new();
    markdown_files(&root, &mut files);
    assert!(files.len() > 5, "the pages are found: {files:?}");
    let mut hits = Vec::new();
    for file in files {
        let text = std::fs::read_to_string(&file).unwrap_or_default();
        for hit in work_sessions(&text) {
            hits.push(format!("{}:{hit}", file.display()));
        }
    }
    assert!(hits.is_empty(), "{}", hits.join("\n"));
}

/// Each rule, shown failing on a deliberate violation and passing what it
/// must not flag.
#[test]
fn each_docs_rule_catches_a_deliberate_violation() {
    let root = super::root();
    let page = "docs/ARCHITECTURE.md";
    let text = "| `actors/lib.rs` + `src/core/model/` | `actors/connection/wireless.rs` \
                (`tools::PROGRESS`, `tools/<family>.rs`, `jdwp://guide`, `/proc/net/tcp`, \
                `a_test_name`, `tasks/cancel`, `tools/kinds.rs`) |\nSee [the ADRs](adr/0023-the-floors-are-crates.md), \
                [the decision](adr/0099-made-up.md#context) and [a site](https://example.org/x).\n";
    let missing = missing_paths(&root, page, text);
    assert_eq!(
        missing,
        [
            "docs/ARCHITECTURE.md: `actors/connection/wireless.rs` does not exist",
            "docs/ARCHITECTURE.md: `tools/kinds.rs` does not exist",
            "docs/ARCHITECTURE.md: `adr/0099-made-up.md` does not exist",
        ],
        "made-up and room-relative paths and a made-up link are caught, nothing else"
    );

    let text = "Attach a debug session.\nThe **Tenth\nsession** measured it; the 11th session too.\n\
                Each session is first; sessions, first. Session four.\n";
    assert_eq!(
        work_sessions(text),
        ["2: **Tenth session**", "3: 11th session"],
        "numbered work sessions are caught, a debug session is not"
    );

    let short = "line\n".repeat(PERFORMANCE_MAX_LINES);
    let long = "line\n".repeat(PERFORMANCE_MAX_LINES + 1);
    assert!(too_long("p.md", &short, PERFORMANCE_MAX_LINES).is_none());
    assert!(too_long("p.md", &long, PERFORMANCE_MAX_LINES).is_some());
}
