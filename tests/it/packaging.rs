//! How jvmscope is set up and shipped: `server.json` describes this crate
//! for the MCP registry (the 2025-12-11 schema's required fields, name,
//! version, a stdio package and an HTTP one, documented variables), and the README's two
//! commands are the ones `.ci/run` runs.

use std::path::Path;

use serde_json::Value;

fn read(rel: &str) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(rel);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn server_json() -> Value {
    serde_json::from_str(&read("server.json")).expect("server.json is JSON")
}

fn text<'a>(v: &'a Value, key: &str) -> &'a str {
    v.get(key)
        .and_then(Value::as_str)
        .unwrap_or_else(|| panic!("server.json: `{key}` is missing or not a string in {v}"))
}

#[test]
fn server_json_names_this_crate_and_its_version_with_the_registry_required_fields() {
    let server = server_json();
    let schema = text(&server, "$schema");
    assert!(
        schema.starts_with("https://static.modelcontextprotocol.io/schemas/")
            && schema.ends_with("/server.schema.json"),
        "{schema}"
    );
    // Registry rules: reverse-DNS name with exactly one slash, a description
    // of at most 100 characters, a concrete version.
    let name = text(&server, "name");
    let (namespace, server_name) = name.split_once('/').expect("namespace/name");
    let allowed = |s: &str, extra: &str| {
        !s.is_empty()
            && s.chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '.' || c == '-' || extra.contains(c))
    };
    assert!(
        allowed(namespace, "") && allowed(server_name, "_") && (3..=200).contains(&name.len()),
        "{name}"
    );
    assert_eq!(server_name, env!("CARGO_PKG_NAME"));
    let description = text(&server, "description");
    assert!(
        (1..=100).contains(&description.chars().count()),
        "{description}"
    );
    assert_eq!(text(&server, "version"), env!("CARGO_PKG_VERSION"));

    let packages = server["packages"].as_array().expect("packages");
    let cargo = packages
        .iter()
        .find(|p| text(p, "registryType") == "cargo")
        .expect("a cargo package: `cargo install jvmscope` is how a Rust stdio server ships");
    let mut transports = Vec::new();
    for package in packages {
        text(package, "identifier");
        let transport = &package["transport"];
        match text(transport, "type") {
            "stdio" => {}
            // `jvmscope --http ADDR`: the URL is built from that argument,
            // and every request carries the bearer token (issue 42).
            "streamable-http" => {
                let args = package["packageArguments"].as_array().expect("arguments");
                let http = args
                    .iter()
                    .find(|a| a.get("name").and_then(Value::as_str) == Some("--http"))
                    .unwrap_or_else(|| panic!("an HTTP package passes --http: {package}"));
                let hint = text(http, "valueHint");
                assert_eq!(
                    text(transport, "url"),
                    format!("http://{{{hint}}}/mcp"),
                    "{package}"
                );
                let auth = transport["headers"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .find(|h| text(h, "name") == "Authorization")
                    .unwrap_or_else(|| panic!("the token header: {package}"));
                assert_eq!(text(auth, "value"), "Bearer {JVMSCOPE_AUTH_TOKEN}");
                assert_eq!(auth["isSecret"], Value::Bool(true), "{package}");
            }
            other => panic!("a transport jvmscope does not serve: {other}"),
        }
        transports.push(text(transport, "type"));
    }
    assert_eq!(
        transports,
        ["stdio", "streamable-http"],
        "stdio first, then HTTP"
    );
    assert_eq!(text(cargo, "identifier"), env!("CARGO_PKG_NAME"));
    assert_eq!(text(cargo, "version"), env!("CARGO_PKG_VERSION"));

    // crates.io strips HTML comments, so the registry's ownership check
    // reads a visible `mcp-name:` line in the crate's README.
    let readme = read("README.md");
    assert!(
        readme.contains(&format!("mcp-name: {name}")),
        "README lacks `mcp-name: {name}`"
    );
}

#[test]
fn every_variable_server_json_documents_is_one_the_readme_documents() {
    let server = server_json();
    let readme = read("README.md");
    let formats = ["string", "number", "boolean", "filepath"];
    let mut names = Vec::new();
    for package in server["packages"].as_array().expect("packages") {
        for var in package["environmentVariables"]
            .as_array()
            .into_iter()
            .flatten()
        {
            let name = text(var, "name");
            assert!(!text(var, "description").is_empty(), "{name}");
            if let Some(format) = var.get("format") {
                assert!(
                    formats.contains(&format.as_str().unwrap_or("")),
                    "{name}: {format}"
                );
            }
            assert!(
                readme.contains(&format!("`{name}`")),
                "README does not document {name}"
            );
            names.push(name.to_string());
        }
    }
    assert!(names.contains(&"JDWP_READONLY".to_string()), "{names:?}");
}

/// The fenced block under "## The two commands".
fn readme_commands(readme: &str) -> Vec<String> {
    let section = readme
        .split("## The two commands")
        .nth(1)
        .expect("a `## The two commands` section");
    let block = section.split("```").nth(1).expect("a fenced block");
    block
        .lines()
        .skip(1) // the fence's language tag
        .map(|l| l.split('#').next().unwrap_or("").trim().to_string())
        .filter(|l| !l.is_empty())
        .collect()
}

#[test]
fn the_readme_gives_two_commands_and_ci_runs_both() {
    let commands = readme_commands(&read("README.md"));
    assert_eq!(
        commands,
        [
            "cargo run --release -- demo",
            "cargo xtask setup && cargo test"
        ],
        "the README's two commands changed: update .ci/run and this test together"
    );
    let ci = read(".ci/run");
    let runs = |line: &str| ci.lines().any(|l| l.trim() == line);
    for line in [
        "cargo xtask setup",
        "cargo test --locked",
        "cargo run --locked --release -- demo",
        "cargo xtask check-install",
    ] {
        assert!(runs(line), ".ci/run does not run `{line}`");
    }
}
