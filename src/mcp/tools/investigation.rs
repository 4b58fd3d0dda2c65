//! Keeping an investigation: debug_export_investigation writes one
//! Markdown report of a session (not redacted, and it says so first);
//! debug_arm_stop_points replays an exported stop-point set on any
//! session, each entry through debug_set_stop, so every refusal, clamp and
//! deferral of that tool applies, and reports each outcome.

use std::time::Instant;

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

use super::data::{Armed, Outcome};
use super::events::{event_text, trace_text};
use super::stop_points::{export_set, listing_text};
use super::{Call, Ctx, Effect, Reply, Route};
use crate::mcp::error::ToolError;

/// The tool an exported set names.
const ARMING_TOOL: &str = "debug_set_stop";
/// The kinds of `debug_set_stop`, which sets exported before it named as
/// tools of their own (`debug_set_<kind>_stop`).
const KINDS: &[&str] = &["line", "exception", "field", "method_exit", "monitor"];

/// The `debug_set_stop` arguments of an exported entry, or `None` when it
/// names another tool. An entry of an older set (`debug_set_line_stop`,
/// with `class_name` for a field and `kinds` for a monitor) is read as its
/// kind.
fn arming_args(
    tool: &str,
    mut args: serde_json::Map<String, Value>,
) -> Option<serde_json::Map<String, Value>> {
    if tool == ARMING_TOOL {
        return Some(args);
    }
    let kind = tool.strip_prefix("debug_set_")?.strip_suffix("_stop")?;
    let kind = KINDS.iter().find(|k| **k == kind)?;
    for (old, new) in [("class_name", "class_pattern"), ("kinds", "events")] {
        if let Some(v) = args.remove(old) {
            args.insert(new.into(), v);
        }
    }
    args.insert("kind".into(), json!(kind));
    Some(args)
}
/// Snapshots a report carries by default.
const DEFAULT_SNAPSHOTS: usize = 200;

/// Arguments of debug_export_investigation.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ExportParams {
    /// Session id; default: the current session.
    pub session_id: Option<String>,
    /// Newest trace snapshots included; default 200.
    pub max_snapshots: Option<usize>,
}

/// Arguments of debug_arm_stop_points.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ArmSetParams {
    /// Session id; default: the current session.
    pub session_id: Option<String>,
    /// The export:true set: its JSON array, or the reply text.
    pub set: Value,
}

pub fn routes() -> Vec<Route> {
    vec![
        Route::new(
            "debug_export_investigation",
            "Export the investigation",
            "One Markdown report of a session: JVM, stop points with hits and cost, the re-armable \
             set, snapshots, pending events, held threads. Not redacted: snapshots hold what the \
             program held.",
            Effect::Read,
            export,
        )
            .with_guide(
                "One Markdown report of a session: the JVM, stop points with hits and capture cost, the \
                  re-armable stop-point set, trace snapshots, pending events, threads held, notes. Not \
                  redacted: snapshots hold whatever the program held (payloads, tokens, credentials). Clears \
                  nothing.",
            ),
        Route::new(
            "debug_arm_stop_points",
            "Re-arm a stop-point set",
            "Arm a set from debug_list_stop_points export:true, each entry through debug_set_stop \
             (its refusals and deferrals apply); disabled or spent entries are skipped.",
            Effect::Changes,
            arm,
        )
            .with_guide(
                "Arms a set from debug_list_stop_points export:true on this session: each entry through its \
                  debug_set_stop, so its refusals and deferrals apply. Disabled or \
                  spent entries are skipped. Leads with N armed, N deferred, N refused, N skipped, then each \
                  entry's outcome. Lines are not checked against this build.",
            )
        .with_output::<super::data::Armed>(),
    ]
}

async fn export(ctx: Ctx, call: Call<ExportParams>) -> Reply {
    let p = call.params?;
    let handle = ctx.engine.session(p.session_id.as_deref())?;
    let now = Instant::now();
    let mut md = format!("# Investigation of session {}\n\n", handle.id().0);
    md.push_str(
        "**This report is NOT redacted.** Trace snapshots and events hold whatever the program's \
         variables held: request and response payloads, bearer tokens, passwords in strings or byte[], \
         customer records. Review it before attaching it anywhere.\n\n",
    );
    md.push_str("## JVM\n\n");
    md.push_str(&format!("- address: {}\n", handle.address()));
    if let Some(vm) = handle.vm() {
        md.push_str(&format!("- VM: {vm:?}\n"));
    }
    md.push_str(&format!("- state: {:?}\n", handle.state().await));
    md.push_str(&format!("- read-only: {}\n", handle.read_only()));
    if let Some(cmd) = handle.launched_command_line() {
        md.push_str(&format!("- launched: `{cmd}`\n"));
    }
    md.push_str(&format!(
        "- session age: {} s, {} JDWP packets sent\n",
        handle.created().elapsed().as_secs(),
        handle.packets_sent()
    ));
    let listing = handle.stop_points().list().await;
    let ring = handle.events().ring();
    md.push_str("\n## Stop points\n\n");
    md.push_str(&fenced("text", &listing_text(&listing, &ring)));
    md.push_str("\nTo arm them again (debug_arm_stop_points takes this block):\n\n");
    md.push_str(&export_set(&listing));
    md.push_str("\n\n## Trace snapshots\n\n");
    let limit = p.max_snapshots.unwrap_or(DEFAULT_SNAPSHOTS).max(1);
    let (shown, total) = handle.events().traces(|_| true, limit);
    md.push_str(&format!(
        "{} of {total} held (ring {}/{}; {} evicted before this report and not recoverable).\n\n",
        shown.len(),
        ring.held,
        ring.capacity,
        ring.evicted
    ));
    let snapshots: Vec<String> = shown.iter().map(|t| trace_text(t, now)).collect();
    if !snapshots.is_empty() {
        md.push_str(&fenced("text", &snapshots.join("\n")));
    }
    md.push_str("\n## Events\n\n");
    let (last, pending, _) = handle.events().last();
    let events: Vec<String> = handle
        .events()
        .oldest(50)
        .iter()
        .map(|e| event_text(e, now))
        .collect();
    md.push_str(&format!("{pending} not yet read by the agent.\n\n"));
    if let Some(e) = last {
        md.push_str(&format!("Last: {}\n\n", event_text(&e, now)));
    }
    if !events.is_empty() {
        md.push_str(&fenced("text", &events.join("\n")));
    }
    md.push_str("\n## Threads held\n\n");
    let held = handle.held_threads().await;
    let event_threads = handle.event_threads().await;
    let names = handle
        .thread_names(&event_threads)
        .await
        .into_iter()
        .map(Option::unwrap_or_default);
    for (t, name) in event_threads.iter().zip(names) {
        md.push_str(&format!("- @{:#x} {name:?}: suspended by an event\n", t.0));
    }
    for h in &held {
        md.push_str(&format!(
            "- @{:#x}: held by the agent ({} suspend(s), {} s)\n",
            h.thread.0,
            h.count,
            h.since.elapsed().as_secs()
        ));
    }
    let invoking = handle.invoking();
    for i in &invoking {
        md.push_str(&format!("- {}\n", crate::mcp::render::invoking(i)));
    }
    if held.is_empty() && event_threads.is_empty() && invoking.is_empty() {
        md.push_str("None: every thread runs.\n");
    }
    md.push_str("\n## Classes reloaded\n\n");
    let installed = handle.installed_classes();
    if installed.is_empty() {
        md.push_str("None: this session installed no class.\n");
    }
    for i in &installed {
        md.push_str(&format!(
            "- {}@{:#x} from {} ({}), still in the JVM until it is redeployed\n",
            i.name,
            i.loader,
            i.from.display(),
            crate::mcp::render::plural(i.times as usize, "swap")
        ));
    }
    md.push_str("\n## Notes\n\n");
    for n in handle.recent_events() {
        md.push_str(&format!("- {}\n", crate::mcp::render::recent_event(&n)));
    }
    Ok(super::text(md))
}

fn fenced(lang: &str, body: &str) -> String {
    format!("```{lang}\n{body}\n```\n")
}

/// The entries of a set: a JSON array, or text holding one in a ```json block.
fn entries(tool: &str, set: &Value) -> Result<Vec<Value>, ToolError> {
    let bad = |why: String| ToolError::bad_argument(tool, why);
    let parsed = match set {
        Value::Array(a) => return Ok(a.clone()),
        Value::Object(o) if o.get("export").is_some_and(Value::is_array) => {
            return Ok(o["export"].as_array().cloned().unwrap_or_default());
        }
        Value::String(s) => {
            let body = match s.find("```json") {
                Some(at) => {
                    let rest = &s[at + "```json".len()..];
                    rest.split("```").next().unwrap_or(rest)
                }
                None => s.as_str(),
            };
            serde_json::from_str::<Value>(body.trim())
                .map_err(|e| bad(format!("set is not JSON: {e}")))?
        }
        _ => {
            return Err(bad(
                "set must be the exported array or the text holding it".into()
            ));
        }
    };
    match parsed {
        Value::Array(a) => Ok(a),
        _ => Err(bad("set must be a JSON array of {tool, args}".into())),
    }
}

async fn arm(ctx: Ctx, call: Call<ArmSetParams>) -> Reply {
    let p = call.params?;
    let handle = ctx.writable(p.session_id.as_deref(), "arm a stop-point set")?;
    let list = entries(call.tool, &p.set)?;
    let (mut armed, mut deferred, mut refused, mut skipped) = (0, 0, 0, 0);
    let mut lines = Vec::new();
    let mut outcomes = Vec::new();
    for (i, e) in list.iter().enumerate() {
        let from = e["from"].as_str().unwrap_or("?").to_string();
        let entry = format!("#{i} ({from})");
        let tool = e["tool"].as_str().unwrap_or("");
        let args = e["args"].as_object().cloned().unwrap_or_default();
        let Some(mut args) = arming_args(tool, args) else {
            refused += 1;
            lines.push(format!(
                "{entry}: REFUSED: {tool:?} is not an arming tool (a set names only {ARMING_TOOL})"
            ));
            outcomes.push(Outcome {
                entry: entry.clone(),
                state: "refused".into(),
                error: Some(format!("{tool:?} is not an arming tool")),
                ..Outcome::default()
            });
            continue;
        };
        if let Some(state) = e["state"].as_str() {
            skipped += 1;
            lines.push(format!(
                "{entry}: SKIPPED: it was {state} when exported; arm it by hand from its args if wanted"
            ));
            outcomes.push(Outcome {
                entry: entry.clone(),
                state: "skipped".into(),
                ..Outcome::default()
            });
            continue;
        }
        args.insert("session_id".into(), json!(handle.id().0));
        let r = super::call(&ctx, ARMING_TOOL, Some(args)).await;
        let text = r
            .content
            .iter()
            .filter_map(|c| c.as_text().map(|t| t.text.clone()))
            .collect::<Vec<_>>()
            .join("\n");
        // The arming tool's own outcome, under this entry's name.
        let mut outcome = r
            .structured_content
            .clone()
            .and_then(|d| serde_json::from_value::<Armed>(d).ok())
            .and_then(|a| a.outcomes.into_iter().next())
            .unwrap_or_default();
        outcome.entry = entry.clone();
        if r.is_error == Some(true) {
            refused += 1;
            outcome.state = "refused".into();
            outcome.error = Some(text.clone());
        } else if outcome.state == "deferred" {
            deferred += 1;
        } else {
            armed += 1;
        }
        lines.push(format!("{entry} {tool}: {}", text.replace('\n', "\n  ")));
        outcomes.push(outcome);
    }
    let mut text =
        format!("{armed} armed, {deferred} deferred, {refused} refused, {skipped} skipped");
    if armed + deferred > 0 {
        text.push_str(
            "\nLines were not checked against this build: a redeployed class may have moved them.",
        );
    }
    for l in lines {
        text.push_str(&format!("\n{l}"));
    }
    let mut reply = super::data(text, &Armed { outcomes });
    if armed + deferred == 0 && !list.is_empty() && skipped < list.len() {
        reply.is_error = Some(true);
    }
    Ok(reply)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_set_is_read_from_its_array_its_data_or_the_reply_text() {
        let entries = |set: &Value| entries("debug_arm_stop_points", set);
        let calls = json!([{"tool": "debug_set_stop", "args": {"kind": "line", "class_pattern": "A", "line": 3}}]);
        assert_eq!(entries(&calls).ok(), calls.as_array().cloned());
        assert_eq!(
            entries(&json!({"export": calls})).ok(),
            calls.as_array().cloned()
        );
        let text =
            format!("Stop-point set: 1 call.\n```json\n{calls:#}\n```\nLines are as armed here.");
        assert_eq!(entries(&json!(text)).ok(), calls.as_array().cloned());
        for bad in [json!("not json"), json!(7), json!("{\"a\": 1}")] {
            let e = entries(&bad).err().map(|e| e.text()).unwrap_or_default();
            assert!(e.contains("debug_arm_stop_points"), "{bad}: {e}");
        }
    }

    #[test]
    fn an_older_set_is_read_as_the_kinds_of_debug_set_stop() {
        let args = |v: Value| v.as_object().cloned().unwrap_or_default();
        // Built, so the names of tools that no longer exist are not in a message.
        let old = |kind: &str| format!("debug_set_{kind}_stop");
        let field = arming_args(
            &old("field"),
            args(json!({"class_name": "A", "field_name": "f"})),
        );
        assert_eq!(
            field.map(Value::Object),
            Some(json!({"kind": "field", "class_pattern": "A", "field_name": "f"}))
        );
        let monitor = arming_args(&old("monitor"), args(json!({"kinds": ["all"]})));
        assert_eq!(
            monitor.map(Value::Object),
            Some(json!({"kind": "monitor", "events": ["all"]}))
        );
        assert!(arming_args("debug_set_value", args(json!({}))).is_none());
        assert!(arming_args(&old("bogus"), args(json!({}))).is_none());
    }
}
