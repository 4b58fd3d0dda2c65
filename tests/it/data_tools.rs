//! The data tools (ADR 0012): exactly these declare an `outputSchema`, and
//! on a real JVM every structured reply they give conforms to the schema
//! they declare; every other tool replies text only.

use std::collections::BTreeMap;
use std::time::Duration;

use serde_json::{Value, json};

use crate::support::java::{Jvm, JvmOpts, line_of};
use crate::support::mcp::{Server, ToolReply};
use crate::support::poll_until_msg;
use crate::support::schema::violations;

const WAIT: Duration = Duration::from_secs(20);

/// The tools whose results a program reads (docs/adr/0012).
const DATA_TOOLS: &[&str] = &[
    "debug_list_sessions",
    "debug_list_jvms",
    "debug_list_stop_points",
    "debug_get_traces",
    "debug_set_stop",
    "debug_arm_stop_points",
];

/// Each tool's declared output schema, by name.
fn schemas(server: &Server) -> BTreeMap<String, Value> {
    server
        .tools()
        .into_iter()
        .filter_map(|t| {
            let name = t["name"].as_str()?.to_string();
            Some((name, t.get("outputSchema")?.clone()))
        })
        .collect()
}

/// Calls a data tool and checks its structured content against its schema.
#[track_caller]
fn checked(
    server: &Server,
    schemas: &BTreeMap<String, Value>,
    tool: &str,
    args: Value,
) -> ToolReply {
    let reply = server.call(tool, args.clone());
    let schema = schemas
        .get(tool)
        .unwrap_or_else(|| panic!("{tool} declares no outputSchema"));
    let data = reply
        .structured
        .clone()
        .unwrap_or_else(|| panic!("{tool} {args}: no structuredContent: {}", reply.text));
    let mut broken = violations(schema, &data);
    broken.extend(missing(schema, schema, &data, "$"));
    assert!(
        broken.is_empty(),
        "{tool} {args}: structuredContent breaks its outputSchema: {broken:#?}\n{data}"
    );
    assert!(!reply.text.is_empty(), "{tool}: the text is the reply");
    reply
}

/// Fields a data tool writes only when they apply (`skip_serializing_if`).
const OPTIONAL: &[&str] = &[
    "stop_points",
    "families",
    "ring",
    "export",
    "error",
    "state",
    "group_by",
    "groups",
    "distinct",
    "left_out",
    "without_keys",
];

/// Declared properties the data does not carry (the schema lists no
/// `required`: every field is always written but these few).
fn missing(root: &Value, schema: &Value, data: &Value, at: &str) -> Vec<String> {
    let schema = match schema.get("$ref").and_then(Value::as_str) {
        Some(r) => r
            .strip_prefix("#/")
            .and_then(|p| p.split('/').try_fold(root, |n, k| n.get(k)))
            .unwrap_or(schema),
        None => schema,
    };
    let mut out = Vec::new();
    if let Some(any) = schema.get("anyOf").and_then(Value::as_array) {
        for s in any.iter().filter(|s| s.get("$ref").is_some()) {
            if !data.is_null() {
                out.extend(missing(root, s, data, at));
            }
        }
    }
    match data {
        Value::Object(obj) => {
            for (k, p) in schema
                .get("properties")
                .and_then(Value::as_object)
                .into_iter()
                .flatten()
            {
                match obj.get(k) {
                    Some(v) => out.extend(missing(root, p, v, &format!("{at}.{k}"))),
                    None if OPTIONAL.contains(&k.as_str()) => {}
                    None => out.push(format!("{at}.{k} is declared but not written")),
                }
            }
        }
        Value::Array(items) => {
            if let Some(item) = schema.get("items") {
                for (i, v) in items.iter().enumerate() {
                    out.extend(missing(root, item, v, &format!("{at}[{i}]")));
                }
            }
        }
        _ => {}
    }
    out
}

#[test]
fn only_the_data_tools_declare_an_output_schema() {
    let server = Server::spawn();
    server.initialize();
    let schemas = schemas(&server);
    let declared: Vec<&str> = schemas.keys().map(String::as_str).collect();
    let mut expected = DATA_TOOLS.to_vec();
    expected.sort_unstable();
    assert_eq!(declared, expected);
    for (name, schema) in &schemas {
        assert_eq!(schema["type"], "object", "{name}: {schema}");
        assert!(schema.get("$schema").is_none(), "{name}: compact");
    }
}

#[test]
fn every_data_tool_reply_conforms_to_its_schema_on_a_real_jvm() {
    let server = Server::spawn();
    server.initialize();
    let s = schemas(&server);
    checked(&server, &s, "debug_list_sessions", json!({}));
    let jvm = Jvm::start("Orders", JvmOpts::default());
    jvm.wait_for_line("orders started", WAIT);
    let jvms = checked(&server, &s, "debug_list_jvms", json!({}));
    assert!(
        jvms.json()["jvms"]
            .as_array()
            .is_some_and(|j| j.iter().any(|j| j["pid"] == jvm.pid())),
        "{}",
        jvms.text
    );
    let port = jvm.port();
    server
        .call("debug_attach", json!({"port": port}))
        .expect_ok();
    // A probe of a port this server holds answers without dialling it (a
    // handshake would move an ephemeral agent to another port).
    checked(
        &server,
        &s,
        "debug_list_jvms",
        json!({"probe": port.to_string()}),
    );
    checked(&server, &s, "debug_list_sessions", json!({}));
    checked(&server, &s, "debug_list_stop_points", json!({}));

    let at = line_of("Orders.java", "place-add");
    let line = checked(
        &server,
        &s,
        "debug_set_stop",
        json!({"kind": "line", "class_pattern": "Orders", "line": at, "trace": true, "trace_max_hits": 30}),
    );
    let id = line.json()["outcomes"][0]["id"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    assert!(
        line.text.contains(&id),
        "the id is in the text: {}",
        line.text
    );
    // A list: a family and a deferred entry in one reply.
    checked(
        &server,
        &s,
        "debug_set_stop",
        json!({"kind": "line", "class_pattern": ["Ord*", "NoSuchClass"], "method": "size", "trace": true, "trace_max_hits": 3}),
    );
    checked(
        &server,
        &s,
        "debug_set_stop",
        json!({"kind": "exception", "class_pattern": "java.lang.IllegalStateException", "trace": true, "trace_max_hits": 3}),
    );
    checked(
        &server,
        &s,
        "debug_set_stop",
        json!({"kind": "field", "class_pattern": "Orders", "field_name": "count", "trace": true, "trace_max_hits": 3}),
    );
    checked(
        &server,
        &s,
        "debug_set_stop",
        json!({"kind": "method_exit", "class_pattern": "Orders", "method": "describe", "trace_max_hits": 3}),
    );
    checked(
        &server,
        &s,
        "debug_set_stop",
        json!({"kind": "monitor", "trace_max_hits": 3, "trace_frames": 1}),
    );
    poll_until_msg(WAIT, "snapshots of the line stop", || {
        let r = checked(&server, &s, "debug_get_traces", json!({"bp_id": id}));
        (r.json()["traces"].as_array().map_or(0, Vec::len) >= 3).then_some(())
    });
    let grouped = checked(
        &server,
        &s,
        "debug_get_traces",
        json!({"bp_id": id, "group_by": ["qty"]}),
    );
    assert!(
        grouped.json()["groups"]
            .as_array()
            .is_some_and(|g| !g.is_empty()),
        "{}",
        grouped.text
    );
    checked(
        &server,
        &s,
        "debug_get_traces",
        json!({"compact": true, "limit": 5}),
    );
    checked(&server, &s, "debug_list_stop_points", json!({}));
    let exported = checked(
        &server,
        &s,
        "debug_list_stop_points",
        json!({"export": true}),
    );
    server.call("debug_panic", json!({})).expect_ok();
    let set = exported.json()["export"].clone();
    let rearmed = checked(&server, &s, "debug_arm_stop_points", json!({"set": set}));
    assert!(rearmed.text.contains(" armed"), "{}", rearmed.text);
    // A text-only tool carries no structured content.
    let threads = server.call("debug_list_threads", json!({})).expect_ok();
    assert!(threads.structured.is_none(), "{}", threads.raw);
    server.call("debug_panic", json!({})).expect_ok();
}
