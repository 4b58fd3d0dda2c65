//! The JVM's words are said in one place each: a JNI descriptor is decoded
//! (`Ljava/lang/String;` → `java.lang.String`, `[I` → `int[]`) only by
//! `model::signature`, and a code label (`Class.method:line`) is built only
//! by `model::label`. A second decoder or label builder anywhere else in
//! `src/` or `actors/` fails here; `each_words_rule_catches_a_deliberate_violation`
//! shows both rules failing.

use std::path::{Path, PathBuf};

use super::{files_under, literals, violations};

/// The one home of each word, relative to the root.
const HOMES: [&str; 3] = [
    "src/core/model/signature.rs",
    "src/core/model/signature/",
    "src/core/model/label.rs",
];

fn outside_the_homes() -> Vec<PathBuf> {
    let root = super::root();
    ["src", "actors"]
        .iter()
        .flat_map(|a| files_under(a))
        .filter(|f| {
            let rel = f.strip_prefix(&root).unwrap_or(f);
            !HOMES.iter().any(|h| rel.starts_with(Path::new(h)))
        })
        .collect()
}

/// A JNI descriptor decoded by hand: a primitive letter mapped to its
/// Java name, a class descriptor's `L` stripped, array dimensions
/// written back as `[]`.
fn descriptor_rule(line: &str) -> Option<String> {
    let letter = ["'Z'", "b'Z'", "\"Z\""].iter().any(|l| line.contains(l));
    if letter && line.contains("\"boolean\"") {
        return Some("maps a JNI letter to a Java name (use model::signature)".into());
    }
    for hand in [
        "strip_prefix('L')",
        "trim_start_matches('L')",
        "\"[]\".repeat(",
    ] {
        if line.contains(hand) {
            return Some(format!(
                "decodes a descriptor by hand: `{hand}` (use model::signature)"
            ));
        }
    }
    None
}

/// A code label written by hand: `{class}.{method}:{line}`, or a label
/// given its line part (`…:{line}`, `…:native`, `…:?`).
fn label_rule(line: &str) -> Option<String> {
    literals(line).into_iter().find_map(|lit| {
        let full = lit.contains("}.{") && lit.contains("}:{");
        let tail = lit.contains("}:{line}")
            || lit.contains("}:{l}")
            || lit.contains("}:native")
            || lit.ends_with("}:?");
        (full || tail).then(|| format!("builds a code label `{lit}` (use model::label)"))
    })
}

#[test]
fn jni_descriptors_are_decoded_in_one_place() {
    let hits = violations(&outside_the_homes(), descriptor_rule);
    assert!(hits.is_empty(), "a second decoder:\n{}", hits.join("\n"));
}

#[test]
fn code_labels_are_built_in_one_place() {
    let hits = violations(&outside_the_homes(), label_rule);
    assert!(
        hits.is_empty(),
        "a second label builder:\n{}",
        hits.join("\n")
    );
}

#[test]
fn each_words_rule_catches_a_deliberate_violation() {
    let dir = tempfile::tempdir().expect("tempdir");
    let cases: [(super::Rule, &str, &str); 6] = [
        (
            descriptor_rule,
            "Some(b'Z') => \"boolean\".into(),",
            "b'Z' => Tag::Boolean,",
        ),
        (
            descriptor_rule,
            "let name = base.strip_prefix('L').unwrap_or(base);",
            "let name = java_name(base);",
        ),
        (
            descriptor_rule,
            "format!(\"{name}{}\", \"[]\".repeat(dims))",
            "let elem = ty.strip_suffix(\"[]\");",
        ),
        (
            label_rule,
            "format!(\"{}.{}:{}\", class, method, line)",
            "format!(\"{}.{}\", class, method)",
        ),
        (
            label_rule,
            "format!(\"{qualified}:{line}\")",
            "format!(\"{host}:{port}\")",
        ),
        (
            label_rule,
            "format!(\"{label}:native\")",
            "CodeLabel::new(label, None, LineAt::Native).to_string()",
        ),
    ];
    super::each_caught(dir.path(), &cases);
}
