//! Running one tool across a group: the call goes to every member
//! concurrently (the group's id replaced by the member's), and the answers
//! merge into one reply in which each member is labelled with its
//! host:port (and pid where known). A member that refuses, times out or is
//! gone is named with its reason; the others' answers still come back.
//! This is the only place that knows how a group call runs, and which
//! tools do ([`of`]); every other tool refuses a group, naming its members.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use rmcp::model::{CallToolResult, ContentBlock, JsonObject};
use tracing::Instrument;

use super::{Ctx, Reply, Route};
use crate::actors::{Group, GroupMember};
use crate::mcp::error::ToolError;

/// How long one member may take before the group answers without it.
const MEMBER_LIMIT: Duration = Duration::from_secs(600);

/// What a tool does when it runs across a group.
#[derive(Clone, Copy)]
pub struct FanOut {
    /// Rewrites the arguments each member receives (a group-only word
    /// taken out).
    pub args: fn(&mut JsonObject),
    /// Runs once every member has answered.
    pub then: fn(&Ctx, &Group),
    /// Whether a call across the group runs long enough to be an MCP task
    /// (for a client that declared the extension), its progress counting
    /// the members that answered: each member's JVM does real work
    /// (redefinitions, dumps, samples, restores). Reads of what each
    /// session already holds stay plain calls.
    pub long: bool,
}

impl Default for FanOut {
    fn default() -> Self {
        Self {
            args: |_| {},
            then: |_, _| {},
            long: true,
        }
    }
}

/// The tools that run across a group, and how.
pub fn of(tool: &str) -> Option<FanOut> {
    let plain = FanOut::default();
    match tool {
        "debug_set_stop"
        | "debug_update_stop_point"
        | "debug_panic"
        | "debug_thread_dump"
        | "debug_heap"
        | "debug_hot_threads"
        | "debug_profile" => Some(plain),
        "debug_list_stop_points" => Some(FanOut {
            long: false,
            ..plain
        }),
        "debug_get_traces" => Some(FanOut {
            args: traces_args,
            long: false,
            ..plain
        }),
        "debug_disconnect" => Some(FanOut {
            then: forget,
            ..plain
        }),
        _ => None,
    }
}

/// The label a member carries in every reply: `s2 127.0.0.1:5005 pid 41`.
pub fn label(m: &GroupMember) -> String {
    let mut out = format!("{} {}", m.session.id(), m.session.address());
    if let Some(pid) = m.pid {
        out.push_str(&format!(" pid {pid}"));
    }
    out
}

/// One member's answer.
struct Answer {
    label: String,
    session: String,
    outcome: Result<CallToolResult, ToolError>,
}

/// Runs `route` on every member of `group` and merges the answers.
pub async fn run(
    ctx: &Ctx,
    tool: &str,
    route: &Route,
    fan: FanOut,
    group: Group,
    args: Option<JsonObject>,
) -> Reply {
    let total = group.members.len();
    // Field names as in telemetry::semconv (GROUP_ID, GROUP_MEMBERS,
    // SESSION_ID, SERVER_ADDRESS, SERVER_PORT): one trace per group call,
    // a child span per member.
    let span = tracing::info_span!(
        "group.fan_out",
        "otel.name" = %format_args!("group {tool}"),
        jvmscope.group = %group.id,
        jvmscope.group.members = total as i64,
    );
    let done = Arc::new(AtomicUsize::new(0));
    let progress = super::progress();
    let calls = group.members.iter().map(|m| {
        let mut member_args = args.clone().unwrap_or_default();
        (fan.args)(&mut member_args);
        member_args.insert(
            "session_id".into(),
            serde_json::Value::from(m.session.id().0.clone()),
        );
        let label = label(m);
        let member_span = tracing::info_span!(
            parent: &span,
            "group.member",
            "otel.name" = %format_args!("member {label}"),
            jvmscope.session = %m.session.id(),
            server.address = m.session.host(),
            server.port = i64::from(m.session.port()),
        );
        let call = (route.call)(ctx.clone(), Some(member_args));
        let (done, progress) = (done.clone(), progress.clone());
        let session = m.session.id().0.clone();
        async move {
            let outcome = match tokio::time::timeout(MEMBER_LIMIT, call).await {
                Ok(reply) => reply,
                Err(_) => Err(ToolError::new(
                    "TIMEOUT",
                    format!("no answer within {} s", MEMBER_LIMIT.as_secs()),
                )),
            };
            let n = done.fetch_add(1, Ordering::SeqCst) + 1;
            if let Some(p) = &progress {
                p.report(
                    n as f64,
                    Some(total as f64),
                    format!("{n} of {total} members answered"),
                );
            }
            Answer {
                label,
                session,
                outcome,
            }
        }
        .instrument(member_span)
    });
    let answers = futures::future::join_all(calls).instrument(span).await;
    (fan.then)(ctx, &group);
    Ok(merge(&group, tool, answers))
}

/// One reply from the members' answers: a header counting who answered,
/// then each member's text under its label; structured content merges
/// each list field across members, every item labelled `member`, with
/// `group_members` saying how each member fared.
fn merge(group: &Group, tool: &str, answers: Vec<Answer>) -> CallToolResult {
    let failed = answers
        .iter()
        .filter(|a| !matches!(&a.outcome, Ok(r) if r.is_error != Some(true)))
        .count();
    let mut text = format!(
        "Group {} ({tool}): {} of {} members answered",
        group.id,
        answers.len() - failed,
        answers.len()
    );
    if failed > 0 {
        text.push_str(&format!(", {failed} did not (named below)"));
    }
    let mut merged = serde_json::Map::new();
    let mut fared = Vec::new();
    let mut structured = false;
    for a in answers {
        let (ok, body, data) = match a.outcome {
            Ok(r) => (
                r.is_error != Some(true),
                texts(&r.content),
                r.structured_content,
            ),
            Err(e) => (false, e.in_tool(tool).text(), None),
        };
        text.push_str(&format!(
            "\n=== {}{} ===\n{}",
            a.label,
            if ok { "" } else { ": FAILED" },
            body
        ));
        if let Some(serde_json::Value::Object(data)) = data {
            structured = true;
            for (key, value) in data {
                if let serde_json::Value::Array(items) = value {
                    let list = merged
                        .entry(key)
                        .or_insert_with(|| serde_json::Value::Array(Vec::new()));
                    if let serde_json::Value::Array(list) = list {
                        list.extend(items.into_iter().map(|mut item| {
                            if let serde_json::Value::Object(o) = &mut item {
                                o.insert("member".into(), a.label.clone().into());
                            }
                            item
                        }));
                    }
                }
            }
        }
        fared.push(serde_json::json!({
            "member": a.label,
            "session_id": a.session,
            "ok": ok,
            "error": if ok { serde_json::Value::Null } else { body.lines().next().unwrap_or_default().into() },
        }));
    }
    let mut result = if failed == fared.len() {
        CallToolResult::error(vec![ContentBlock::text(text)])
    } else {
        super::text(text)
    };
    if structured {
        merged.insert("group_members".into(), serde_json::Value::Array(fared));
        result.structured_content = Some(serde_json::Value::Object(merged));
    }
    result
}

/// The text blocks of a reply, one after another.
pub fn texts(content: &[ContentBlock]) -> String {
    content
        .iter()
        .filter_map(|c| c.as_text().map(|t| t.text.as_str()))
        .collect::<Vec<_>>()
        .join("\n")
}

/// `group_by: ["member"]` on a group: the fan-out already splits by
/// member, so members count by what else was asked (their location when
/// nothing else was).
pub fn traces_args(args: &mut JsonObject) {
    let Some(serde_json::Value::Array(keys)) = args.get_mut("group_by") else {
        return;
    };
    let had = keys.len();
    keys.retain(|k| k.as_str() != Some("member"));
    if keys.is_empty() && had > 0 {
        keys.push("location".into());
    }
}

/// After a group disconnect: the group is gone (its members were each
/// disconnected).
pub fn forget(ctx: &Ctx, group: &Group) {
    ctx.engine.end_group(&group.id);
}
