//! The Agent Skill shipped in `skills/jvmscope/SKILL.md`: its frontmatter
//! follows the Agent Skills format (a lowercase-hyphen `name` equal to its
//! folder, a `description` of at most 1,024 characters), and every tool it
//! names is one the server lists.

use std::collections::BTreeSet;

use crate::support::golden::repo_path;

fn skill() -> String {
    let path = repo_path("skills/jvmscope/SKILL.md");
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The frontmatter's `key: value` lines, and the body after it.
fn split(text: &str) -> (Vec<(String, String)>, String) {
    let rest = text
        .strip_prefix("---\n")
        .unwrap_or_else(|| panic!("SKILL.md starts with a --- frontmatter line"));
    let (front, body) = rest
        .split_once("\n---\n")
        .unwrap_or_else(|| panic!("the frontmatter ends with a --- line"));
    let fields = front
        .lines()
        .map(|l| {
            let (k, v) = l
                .split_once(": ")
                .unwrap_or_else(|| panic!("a frontmatter line is `key: value`: {l:?}"));
            (k.trim().to_string(), v.trim().to_string())
        })
        .collect();
    (fields, body.to_string())
}

#[test]
fn the_skill_has_valid_frontmatter_and_names_only_tools_that_exist() {
    let (fields, body) = split(&skill());
    let get = |key: &str| {
        fields
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.clone())
            .unwrap_or_else(|| panic!("frontmatter has {key}"))
    };
    let name = get("name");
    assert_eq!(name, "jvmscope", "name matches the folder");
    assert!(
        !name.is_empty()
            && name.len() <= 64
            && name
                .chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-'),
        "{name}"
    );
    let description = get("description");
    assert!(
        (1..=1024).contains(&description.chars().count()),
        "{description}"
    );
    let tools: BTreeSet<String> = jvmscope::mcp::tools::catalogue()
        .iter()
        .map(|t| t.name.to_string())
        .collect();
    let mut named = BTreeSet::new();
    let mut rest = body.as_str();
    while let Some(at) = rest.find("debug_") {
        let word: String = rest[at..]
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect();
        rest = &rest[at + word.len()..];
        named.insert(word);
    }
    let unknown: Vec<&String> = named.difference(&tools).collect();
    assert!(
        unknown.is_empty(),
        "the skill names tools that do not exist: {unknown:?}"
    );
    assert!(
        named.len() >= 15,
        "the skill walks through the tools: {named:?}"
    );
}
