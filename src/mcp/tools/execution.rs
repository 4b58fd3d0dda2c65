//! Execution tools: see the threads, resume the JVM.

use rmcp::model::{JsonObject, Tool};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;

use super::session::SessionParams;
use super::{Ctx, Effect, Reply, parse, text_and_data, tool};
use crate::actors::session::threads;
use crate::mcp::error::ToolError;

/// Arguments of debug_list_threads.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ListThreadsParams {
    /// Session id; default: the current session.
    pub session_id: Option<String>,
    /// Only threads whose name contains this text.
    pub name_contains: Option<String>,
}

pub fn tools() -> Vec<Tool> {
    vec![
        tool::<ListThreadsParams>(
            "debug_list_threads",
            "List threads",
            "Every live thread: id (@0x…), name, status, suspend count. Reads only; suspends nothing.",
            Effect::Read,
        ),
        tool::<SessionParams>(
            "debug_continue",
            "Resume the JVM",
            "Resume every thread, repeating until no suspend count is left, then verify by reading each \
             thread's count back. Says when a new event re-suspended the JVM right away.",
            Effect::Changes,
        ),
    ]
}

pub async fn call(ctx: &Ctx, name: &str, args: Option<JsonObject>) -> Option<Reply> {
    Some(match name {
        "debug_list_threads" => list_threads(ctx, parse(name, args)).await,
        "debug_continue" => resume(ctx, parse(name, args)).await,
        _ => return None,
    })
}

async fn list_threads(ctx: &Ctx, p: Result<ListThreadsParams, ToolError>) -> Reply {
    let p = p?;
    let handle = ctx.engine.session(p.session_id.as_deref())?;
    handle.check_alive()?;
    let all = threads::list(handle.connection())
        .await
        .map_err(|e| handle.map_err(e))?;
    let shown: Vec<_> = all
        .iter()
        .filter(|t| {
            p.name_contains
                .as_deref()
                .is_none_or(|needle| t.name.contains(needle))
        })
        .collect();
    let mut out = format!("{} threads", shown.len());
    if shown.len() != all.len() {
        out.push_str(&format!(" (of {})", all.len()));
    }
    for t in &shown {
        out.push_str(&format!(
            "\n@{:#x} {:?} {}{}",
            t.id.0,
            t.name,
            t.status,
            if t.suspend_count > 0 {
                format!(" suspended x{}", t.suspend_count)
            } else {
                String::new()
            }
        ));
    }
    let data: Vec<_> = shown
        .iter()
        .map(|t| {
            json!({
                "id": format!("@{:#x}", t.id.0),
                "name": t.name,
                "status": t.status,
                "suspend_count": t.suspend_count,
            })
        })
        .collect();
    Ok(text_and_data(out, json!({ "threads": data })))
}

async fn resume(ctx: &Ctx, p: Result<SessionParams, ToolError>) -> Reply {
    let p = p?;
    let handle = ctx.engine.session(p.session_id.as_deref())?;
    handle.check_alive()?;
    let report = handle.resume_all().await.map_err(|e| handle.map_err(e))?;
    let mut out = format!(
        "Resumed session {} ({} resume{} sent).",
        handle.id(),
        report.resumes,
        if report.resumes == 1 { "" } else { "s" }
    );
    if report.still_held == 0 {
        out.push_str(&format!("\nVerified: all {} threads run.", report.total));
    } else if report.resuspended_by_event {
        out.push_str(&format!(
            "\nA new event suspended {} threads again right after the resume (a stop point was hit); debug_list_threads shows them.",
            report.still_held
        ));
    } else {
        out.push_str(&format!(
            "\nWARNING: {} of {} threads are still suspended after {} resumes.",
            report.still_held, report.total, report.resumes
        ));
    }
    Ok(text_and_data(
        out,
        json!({
            "resumes": report.resumes,
            "threads_total": report.total,
            "still_suspended": report.still_held,
            "resuspended_by_event": report.resuspended_by_event,
        }),
    ))
}
