//! Mutation tools: set a value, force a return, pop frames. Each is a
//! mutating JDWP command, refused at the wire in read-only mode.

use schemars::JsonSchema;
use serde::Deserialize;

use super::args::thread_id;
use super::{Call, Ctx, Effect, Reply, Route};
use crate::actors::{Budget, EvalContext, SessionError, SessionHandle, ThreadUse};
use crate::mcp::error::ToolError;
use crate::mcp::render::value;

/// Arguments of debug_set_value.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SetValueParams {
    /// Session id; default: the current session.
    pub session_id: Option<String>,
    /// A local, obj.field, Class.STATIC, xs[i] or m["k"].
    pub target: String,
    /// A literal or an expression.
    pub value: String,
    pub thread_id: Option<String>,
    /// Frame whose locals are in scope; default 0.
    pub frame_index: Option<usize>,
}

/// Arguments of debug_force_return.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ForceReturnParams {
    /// Session id; default: the current session.
    pub session_id: Option<String>,
    /// An expression, coerced to the return type; omit for void.
    pub value: Option<String>,
    pub thread_id: Option<String>,
}

/// Arguments of debug_pop_frame.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PopFrameParams {
    /// Session id; default: the current session.
    pub session_id: Option<String>,
    /// Pop frames 0..=frame_index; default 0.
    pub frame_index: Option<usize>,
    pub thread_id: Option<String>,
}

pub fn routes() -> Vec<Route> {
    vec![
        Route::new(
            "debug_set_value",
            "Set a value",
            "Write a local, a field or an array element in a suspended thread's frame: a literal \
             coerced to the declared type, or an expression. Reports the value replaced. List/Map \
             elements go through set()/put(). Refused read-only.",
            Effect::Changes,
            set_value,
        )
            .with_guide(
                "Write a local, an instance or static field, or an array element of a suspended thread's frame; \
                  value is a literal coerced to the declared type or any expression (objects by reference). \
                  Reports the value it displaced; a type mismatch names both types. List/Map elements call \
                  set()/put() and need a thread suspended by a stop point. Refused in read-only mode.",
            ),
        Route::new(
            "debug_force_return",
            "Force a return",
            "Return now from the top frame's method with value (coerced; omit for void); the rest \
             does not run. Native frames are refused. Refused read-only.",
            Effect::Destructive,
            force_return,
        )
            .with_guide(
                "Make the top frame's method return now with value (coerced to its return type; omit for void). \
                  The rest of the method does not run. Native frames are refused. Refused in read-only mode.",
            ),
        Route::new(
            "debug_pop_frame",
            "Pop frames",
            "Pop frames 0..=frame_index of a suspended thread; on resume the caller calls again. \
             Side effects stay. Native and outermost frames are refused. Refused read-only.",
            Effect::Destructive,
            pop_frame,
        )
            .with_guide(
                "Pop frames 0..=frame_index of a suspended thread; when it resumes, the caller re-executes the \
                  call. Side effects already done are not undone. Native frames and the outermost frame are \
                  refused. Refused in read-only mode.",
            ),
    ]
}

fn expr(tool: &str, field: &str, src: &str) -> Result<crate::expr::Parsed, ToolError> {
    crate::expr::parse_checked(src).map_err(|e| {
        ToolError::new(
            "BAD_EXPRESSION",
            format!("{tool} {field}: {e}\n{}", e.caret(src)),
        )
    })
}

/// The session to write in, refused up front when it is read-only (before
/// any other check), so the refusal names what actually blocks.
/// Where a write is evaluated. A local needs a suspended thread's frame; a
/// field reached from a static or a handle needs none, so only the tools
/// that always work on a frame insist on one.
async fn context(
    handle: &SessionHandle,
    thread: Option<&str>,
    frame: usize,
    tool: &str,
    needs_thread: bool,
) -> Result<EvalContext, ToolError> {
    let thread = thread_id(tool, thread)?;
    let ectx = handle.eval_context(thread, frame).await?;
    if needs_thread && ectx.thread.is_none() {
        return Err(SessionError::NoThreadSuspended {
            purpose: ThreadUse::Write,
        }
        .into());
    }
    Ok(ectx)
}

async fn set_value(ctx: Ctx, call: Call<SetValueParams>) -> Reply {
    let (tool, p) = (call.tool, call.params?);
    let handle = ctx.writable(p.session_id.as_deref(), "setting a value")?;
    let target = expr(tool, "target", &p.target)?;
    let value = expr(tool, "value", &p.value)?;
    let ectx = context(
        &handle,
        p.thread_id.as_deref(),
        p.frame_index.unwrap_or(0),
        tool,
        false,
    )
    .await?;
    let written = handle.set_value(&ectx, &target.expr, &value.expr).await?;
    let quiet = EvalContext {
        invocable: false,
        ..ectx.clone()
    };
    let r = handle.value_reader(&quiet, Budget::default(), None);
    let old = value::line(&r.line(&written.old).await);
    let new = value::line(&r.line(&written.new).await);
    Ok(super::text(format!(
        "Set {} ({}): {} → {}",
        written.target, written.declared, old, new
    )))
}

async fn force_return(ctx: Ctx, call: Call<ForceReturnParams>) -> Reply {
    let (tool, p) = (call.tool, call.params?);
    let handle = ctx.writable(p.session_id.as_deref(), "forcing a return")?;
    let value = match &p.value {
        Some(v) => Some(expr(tool, "value", v)?),
        None => None,
    };
    let ectx = context(&handle, p.thread_id.as_deref(), 0, tool, true).await?;
    let (frame, val) = handle
        .force_return(&ectx, value.as_ref().map(|v| &v.expr))
        .await?;
    let quiet = EvalContext::default();
    let r = handle.value_reader(&quiet, Budget::default(), None);
    let shown = value::line(&r.line(&val).await);
    Ok(super::text(format!(
        "{frame} will return {shown} as soon as the thread resumes; the rest of the method does not run."
    )))
}

async fn pop_frame(ctx: Ctx, call: Call<PopFrameParams>) -> Reply {
    let (tool, p) = (call.tool, call.params?);
    let handle = ctx.writable(p.session_id.as_deref(), "popping frames")?;
    let ectx = context(&handle, p.thread_id.as_deref(), 0, tool, true).await?;
    let Some(thread) = ectx.thread else {
        return Err(SessionError::NoThreadSuspended {
            purpose: ThreadUse::Write,
        }
        .into());
    };
    let popped = handle.pop_frame(thread, p.frame_index.unwrap_or(0)).await?;
    Ok(super::text(format!(
        "Popped {} frame{}: {}.\nWhen the thread resumes, the caller calls again.",
        popped.len(),
        if popped.len() == 1 { "" } else { "s" },
        popped.join(", ")
    )))
}
