//! The MCP surface over real stdio pipes: initialize, ping, the golden
//! tools/list and its size budget, a tool call, misspelt arguments, stdout
//! hygiene and shutdown on stdin close, JSON-RPC errors for lines that are
//! not JSON (-32700) and for tools/call params of the wrong shape (-32602).

use std::time::Duration;

use serde_json::{Value, json};

use crate::support::golden;
use crate::support::mcp::Server;

/// The whole tools/list must stay under 40 KB (counted as 40,000 bytes, the
/// stricter reading), no description over 1,500 characters.
const LIST_BUDGET: usize = 40_000;
const DESCRIPTION_BUDGET: usize = 1500;

#[test]
fn initialize_negotiates_and_ping_answers() {
    let server = Server::spawn();
    let init = server.initialize();
    assert_eq!(init["serverInfo"]["name"], "jvmscope");
    assert_eq!(
        init["protocolVersion"], "2025-06-18",
        "echoes a version the client asked for"
    );
    assert!(init["capabilities"]["tools"].is_object());
    assert!(
        init["instructions"]
            .as_str()
            .unwrap_or("")
            .contains("debug_attach")
    );
    let pong = server.request("ping", json!({})).expect("ping answered");
    assert_eq!(pong, json!({}));
    assert!(
        server.stdout_garbage().is_empty(),
        "stdout carries only JSON-RPC"
    );
}

#[test]
fn newest_protocol_is_chosen_for_a_newer_client() {
    let server = Server::spawn();
    let result = server
        .request(
            "initialize",
            json!({
                "protocolVersion": "2099-01-01",
                "capabilities": {},
                "clientInfo": {"name": "future", "version": "0"}
            }),
        )
        .expect("initialize");
    let version = result["protocolVersion"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    assert!(version.as_str() >= "2025-11-25", "negotiated {version}");
}

#[test]
fn tools_list_matches_the_golden_file_and_the_budget() {
    let server = Server::spawn();
    server.initialize();
    let tools = server.tools();
    // One tool per line, each as compact as on the wire: a diff shows which
    // tools changed, and the file's size is what an agent reads.
    let lines: Vec<String> = tools
        .iter()
        .map(|t| serde_json::to_string(t).expect("json"))
        .collect();
    let listing = format!("[\n{}\n]\n", lines.join(",\n"));
    golden::check("tools_list.json", &listing);
    let wire = serde_json::to_string(&tools).expect("json");
    assert!(
        wire.len() < LIST_BUDGET,
        "tools/list is {} bytes",
        wire.len()
    );
    for tool in &tools {
        let name = tool["name"].as_str().expect("name");
        // A run of spaces is a line continuation gone wrong: bytes the model
        // reads for nothing.
        let text = serde_json::to_string(tool).expect("json");
        assert!(
            !text.contains("  ") && !text.contains("\\n\\n"),
            "{name} has a run of whitespace in its definition"
        );
        assert!(name.starts_with("debug_"), "{name}");
        assert!(
            name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_'),
            "{name} must match [a-zA-Z0-9_-]"
        );
        let description = tool["description"].as_str().expect("description");
        assert!(
            description.len() <= DESCRIPTION_BUDGET,
            "{name}: {} chars",
            description.len()
        );
        assert!(
            tool["annotations"]["readOnlyHint"].is_boolean(),
            "{name} annotated"
        );
        assert_eq!(
            tool["inputSchema"]["additionalProperties"],
            json!(false),
            "{name} refuses unknown arguments"
        );
    }
}

#[test]
fn docs_tools_md_is_generated_from_the_catalogue() {
    let generated = jvmscope::mcp::tools::markdown();
    golden::check_file(&golden::repo_path("docs/tools.md"), &generated);
}

#[test]
fn a_tool_call_without_a_session_names_the_next_step() {
    let server = Server::spawn();
    server.initialize();
    let reply = server.call("debug_list_sessions", json!({})).expect_ok();
    assert!(reply.text.starts_with("No sessions."), "{}", reply.text);
    assert_eq!(reply.structured, Some(json!({"sessions": []})));
    let reply = server
        .call("debug_list_threads", json!({}))
        .expect_tool_error();
    assert!(reply.text.starts_with("[NO_SESSION]"), "{}", reply.text);
    assert!(reply.text.contains("debug_attach"), "{}", reply.text);
}

#[test]
fn misspelt_arguments_are_refused_naming_the_accepted_ones() {
    let server = Server::spawn();
    server.initialize();
    let reply = server
        .call("debug_attach", json!({"prot": 5005}))
        .expect_tool_error();
    assert!(
        reply.text.starts_with("[BAD_ARGUMENT] debug_attach:"),
        "{}",
        reply.text
    );
    assert!(reply.text.contains("prot"), "{}", reply.text);
    for accepted in [
        "host",
        "port",
        "timeout_ms",
        "read_only",
        "source_roots",
        "class_roots",
    ] {
        assert!(
            reply.text.contains(accepted),
            "names {accepted}: {}",
            reply.text
        );
    }
    let reply = server
        .call("debug_list_sessions", json!({"verbose": true}))
        .expect_tool_error();
    assert!(reply.text.contains("verbose"), "{}", reply.text);
    let reply = server
        .call("debug_attach", json!({"port": "five"}))
        .expect_tool_error();
    assert!(reply.text.contains("[BAD_ARGUMENT]"), "{}", reply.text);
    let reply = server.call("debug_teleport", json!({})).expect_tool_error();
    assert!(reply.text.starts_with("[UNKNOWN_TOOL]"), "{}", reply.text);
    // A tool that became a kind of another says which.
    let reply = server
        .call("debug_step_over", json!({}))
        .expect_tool_error();
    assert!(
        reply.text.starts_with("[UNKNOWN_TOOL]")
            && reply.text.contains("now debug_step with kind \"over\""),
        "{}",
        reply.text
    );
}

#[test]
fn closing_stdin_shuts_the_server_down() {
    let server = Server::spawn();
    server.initialize();
    server.close_stdin();
    let status = server
        .wait_exit(Duration::from_secs(10))
        .expect("exits after stdin closes");
    assert!(status.success(), "{status:?}\n{}", server.stderr_tail());
}

#[test]
fn a_line_that_is_not_json_is_answered_with_a_parse_error_and_the_server_goes_on() {
    let server = Server::spawn();
    server.initialize();
    for bad in [
        "{not json",
        "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"ping\"",
        "ping",
        "\u{feff}}{",
    ] {
        server.send_raw(bad).expect("write a malformed line");
        let reply = server.wait_response(&Value::Null, Duration::from_secs(10), bad);
        assert_eq!(reply["jsonrpc"], "2.0", "{reply}");
        assert_eq!(reply["id"], Value::Null, "{reply}");
        assert!(
            reply.as_object().is_some_and(|r| r.contains_key("id")),
            "id is present and null: {reply}"
        );
        assert_eq!(reply["error"]["code"], -32700, "{bad}: {reply}");
        assert!(
            reply["error"]["message"]
                .as_str()
                .is_some_and(|m| m.starts_with("Parse error")),
            "{reply}"
        );
        // The next request on the same stream is answered.
        let pong = server.request("ping", json!({})).expect("ping answered");
        assert_eq!(pong, json!({}));
    }
    // A blank line is not a message: nothing answers it, nothing breaks.
    server.send_raw("   ").expect("write");
    let reply = server.call("debug_list_sessions", json!({})).expect_ok();
    assert!(reply.text.starts_with("No sessions."), "{}", reply.text);
    assert!(
        server.stdout_garbage().is_empty(),
        "stdout carries only JSON-RPC: {:?}",
        server.stdout_garbage()
    );
}

/// Lines that are JSON to a lenient eye but that rmcp cannot read: each is
/// answered with a parse error carrying the request's id, and the server
/// goes on.
#[test]
fn invalid_utf8_a_lone_surrogate_and_deep_nesting_are_answered() {
    let server = Server::spawn();
    server.initialize();
    let deep = format!(
        "{{\"jsonrpc\":\"2.0\",\"id\":903,\"method\":\"ping\",\"params\":{{\"x\":{}{}}}}}",
        "[".repeat(129),
        "]".repeat(129)
    );
    let lines: [(&str, Vec<u8>, u64); 3] = [
        (
            "invalid UTF-8",
            b"{\"jsonrpc\":\"2.0\",\"id\":901,\"method\":\"ping\",\"params\":{\"x\":\"\xC3\x28\"}}"
                .to_vec(),
            901,
        ),
        (
            "a lone surrogate",
            br#"{"jsonrpc":"2.0","id":902,"method":"ping","params":{"x":"\udc00"}}"#.to_vec(),
            902,
        ),
        ("nesting past 128", deep.into_bytes(), 903),
    ];
    for (what, line, id) in lines {
        server.send_raw_bytes(&line).expect("write the line");
        let id = json!(id);
        let reply = server.wait_response(&id, Duration::from_secs(10), what);
        assert_eq!(reply["error"]["code"], -32700, "{what}: {reply}");
        let pong = server.request("ping", json!({})).expect("ping answered");
        assert_eq!(pong, json!({}), "{what}");
    }
    assert!(server.is_alive());
    assert!(server.stdout_garbage().is_empty());
}

#[test]
fn tools_call_with_arguments_that_are_not_an_object_is_invalid_params() {
    let server = Server::spawn();
    server.initialize();
    for arguments in [json!("{\"port\": 5005}"), json!([1, 2]), json!(42)] {
        let error = server
            .request(
                "tools/call",
                json!({"name": "debug_attach", "arguments": arguments}),
            )
            .expect_err("refused at the protocol level");
        assert_eq!(error["code"], -32602, "{arguments}: {error}");
        let message = error["message"].as_str().unwrap_or_default();
        assert!(
            message.contains("tools/call") && message.contains("arguments"),
            "{message}"
        );
    }
    let error = server
        .request("tools/call", json!({"arguments": {}}))
        .expect_err("a call without a name");
    assert_eq!(error["code"], -32602, "{error}");
    // An unknown method is still method-not-found, and the server goes on.
    let error = server
        .request("tools/teleport", json!({}))
        .expect_err("no such method");
    assert_eq!(error["code"], -32601, "{error}");
    let reply = server.call("debug_list_sessions", json!({})).expect_ok();
    assert!(reply.text.starts_with("No sessions."), "{}", reply.text);
}
