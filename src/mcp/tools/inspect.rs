//! Inspection tools: read a thread's stack with its locals, evaluate an
//! expression, walk a chain link by link.

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;

use super::args::{thread_id, view_budget};
use super::{Call, Ctx, Effect, Reply, Route};
use crate::actors::{
    Depth, EvalContext, Failure, FrameWindow, Locals, Outcome, SessionError, SessionHandle,
    ThreadUse, ValueReader, declared_type, explain, to_val,
};
use crate::expr::eval::Val;
use crate::mcp::error::ToolError;
use crate::mcp::render::value;

/// Arguments of debug_get_stack.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GetStackParams {
    /// Session id; default: the current session.
    pub session_id: Option<String>,
    /// Thread (hex id from debug_list_threads); default: the newest thread a stop point suspended.
    pub thread_id: Option<String>,
    /// Frames to show; default 20.
    pub max_frames: Option<usize>,
    /// Show locals only for frames whose class starts with this prefix.
    pub package_filter: Option<String>,
    /// Expand each object local into a field tree (reads fields, invokes nothing).
    pub expand_objects: Option<bool>,
    /// Field-tree depth when expanding; default 2.
    pub max_depth: Option<usize>,
    /// Fields or elements per object when expanding; default 20.
    pub max_children: Option<usize>,
}

/// Arguments of debug_evaluate and debug_evaluate_chain.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct EvaluateParams {
    /// Session id; default: the current session.
    pub session_id: Option<String>,
    /// The expression, e.g. order.items[0].getSku(), m["k"], xs[?qty > 3], bytes#ISO-8859-1.
    pub expression: String,
    /// Thread (hex id); default: the newest thread a stop point suspended.
    pub thread_id: Option<String>,
    /// Frame whose locals and `this` are in scope; default 0 (top).
    pub frame_index: Option<usize>,
    /// Render the result as a field tree (reads fields, invokes nothing).
    pub expand_objects: Option<bool>,
    /// Field-tree depth; default 2.
    pub max_depth: Option<usize>,
    /// Fields or elements per object; default 20.
    pub max_children: Option<usize>,
}

pub fn routes() -> Vec<Route> {
    vec![
        Route::new(
            "debug_get_stack",
            "Read a thread's stack and locals",
            "Frames of a suspended thread, one line each (#i class.method:line), with the locals of each frame \
             beneath; a declared generic type is shown where it says more than the value. max_frames:1 is the \
             one-call 'local variables' view. Needs the thread suspended (a stop point hit, debug_suspend_thread). \
             Each local read costs the JVM a safepoint; expand_objects reads fields and invokes nothing.",
            Effect::Read,
            get_stack,
        ),
        Route::new(
            "debug_evaluate",
            "Evaluate an expression",
            "Evaluate a Java-like expression in a frame: locals, this, bare field names, class names, @0x… \
             handles; .field and .method(args) chains (overloads chosen on runtime types); xs[i], m[\"k\"], \
             xs[2..5], xs[?qty > 3], .length; == != < <= > >= && || ! + - * / %; #UTF-8 / #ISO-8859-1 / #raw \
             for byte[]. HashMap, LinkedHashMap, ConcurrentHashMap and ArrayList subscripts walk fields (no \
             invoke); method calls and the default toString() need a thread suspended by a stop point (2 s \
             budget each). Parse errors name the column.",
            Effect::Read,
            |ctx, call| evaluate(ctx, call, false),
        ),
        Route::new(
            "debug_evaluate_chain",
            "Find the null link of a chain",
            "Walk a chain like a.getB().c.getD() left to right and print every link with its value, naming \
             the first null one and how many links were never reached. Each method runs exactly once; no \
             toString() is called. Same grammar and thread rules as debug_evaluate.",
            Effect::Read,
            |ctx, call| evaluate(ctx, call, true),
        ),
    ]
}

async fn get_stack(ctx: Ctx, call: Call<GetStackParams>) -> Reply {
    let (tool, p) = (call.tool, call.params?);
    let session = ctx.engine.session(p.session_id.as_deref())?;
    let thread = thread_id(tool, p.thread_id.as_deref())?;
    let max_frames = p.max_frames.unwrap_or(20).max(1);
    // The thread's count, its frames and its depth in one burst.
    let window = FrameWindow {
        start: 0,
        count: max_frames,
        depth: Depth::Read,
    };
    let Some(held) = session.held_frames(thread, window).await? else {
        return Err(SessionError::NoThreadSuspended {
            purpose: ThreadUse::Read,
        }
        .into());
    };
    let (thread, frames) = (held.thread, held.frames);
    let depth = held.depth.unwrap_or(frames.len() as i32);
    let budget = view_budget(p.max_depth, p.max_children);
    let expand = p.expand_objects.unwrap_or(false);
    // Locals of every shown frame, read together.
    let wanted: Vec<bool> = frames
        .iter()
        .map(|f| {
            p.package_filter
                .as_deref()
                .is_none_or(|prefix| f.class.name.starts_with(prefix))
        })
        .collect();
    let session = &session;
    let locals = futures::future::join_all(frames.iter().zip(&wanted).map(|(f, w)| async move {
        if *w {
            Some(session.locals(thread, f).await)
        } else {
            None
        }
    }))
    .await;
    let plain = EvalContext::default();
    let renderer = session.value_reader(&plain, budget, None);
    let mut out = format!(
        "Thread @{:#x}, {} of {} frames",
        thread.0,
        frames.len(),
        depth
    );
    // Render every local of every frame at once: the string and type
    // reads behind the renderings go out as one pipelined burst.
    let renders = futures::future::join_all(locals.iter().map(|l| async {
        match l {
            Some(Ok(Locals::Known(ls))) => {
                futures::future::join_all(ls.iter().map(|l| async {
                    let val = to_val(&l.value);
                    if expand {
                        value::tree(&renderer.tree(&val).await).replace('\n', "\n    ")
                    } else {
                        value::line(&renderer.line(&val).await)
                    }
                }))
                .await
            }
            _ => Vec::new(),
        }
    }))
    .await;
    let mut data_frames = Vec::new();
    for ((f, locals), rendered) in frames.iter().zip(locals).zip(renders) {
        out.push_str(&format!("\n#{} {}", f.index, f.label()));
        let mut data_locals = Vec::new();
        match locals {
            None => {}
            Some(Err(e)) => out.push_str(&format!("\n    (locals unreadable: {})", explain(&e))),
            Some(Ok(Locals::Absent)) if f.method.as_ref().is_some_and(|m| m.is_native()) => {
                out.push_str("\n    (native method: no locals)")
            }
            Some(Ok(Locals::Absent)) => {
                out.push_str("\n    (no local variable table: compiled without -g)")
            }
            Some(Ok(Locals::Known(ls))) => {
                for (l, rendered) in ls.iter().zip(rendered) {
                    let ty = declared_type(&l.signature, &l.generic);
                    let show_type = !l.generic.is_empty();
                    out.push_str(&format!(
                        "\n    {}{} = {}",
                        if show_type {
                            format!("{ty} ")
                        } else {
                            String::new()
                        },
                        l.name,
                        rendered
                    ));
                    data_locals.push(json!({"name": l.name, "type": ty, "value": rendered}));
                }
            }
        }
        data_frames.push(json!({
            "index": f.index,
            "class": f.class.name,
            "method": f.method.as_ref().map(|m| m.name.clone()),
            "line": f.line,
            "locals": data_locals,
        }));
    }
    if (depth as usize) > frames.len() {
        out.push_str(&format!(
            "\n… {} more frames (raise max_frames)",
            depth as usize - frames.len()
        ));
    }
    Ok(super::text(out))
}

async fn evaluate(ctx: Ctx, call: Call<EvaluateParams>, chain: bool) -> Reply {
    let (tool, p) = (call.tool, call.params?);
    let parsed = crate::expr::parse_checked(&p.expression).map_err(|e| {
        ToolError::new("BAD_EXPRESSION", format!("{e}\n{}", e.caret(&p.expression)))
    })?;
    let session: SessionHandle = ctx.engine.session(p.session_id.as_deref())?;
    let thread = thread_id(tool, p.thread_id.as_deref())?;
    let ectx = session
        .eval_context(thread, p.frame_index.unwrap_or(0))
        .await?;
    let budget = view_budget(p.max_depth, p.max_children);
    let quiet = EvalContext {
        invocable: false,
        ..ectx.clone()
    };
    // The chain view and field trees never invoke; the one-line view may
    // call toString() on an event-suspended thread.
    let render_ctx = if chain || p.expand_objects.unwrap_or(false) {
        &quiet
    } else {
        &ectx
    };
    let renderer = session.value_reader(render_ctx, budget, parsed.charset);
    let src = &p.expression;
    let result = session.evaluate(&ectx, &parsed.expr).await;
    if chain {
        return render_chain(&renderer, src, &result).await;
    }
    match result {
        Ok(o) => {
            let rendered = if p.expand_objects.unwrap_or(false) {
                value::tree(&renderer.tree(&o.value).await)
            } else {
                value::line(&renderer.line(&o.value).await)
            };
            let mut out = format!("{} = {}", src.trim(), rendered);
            for n in &o.notes {
                out.push_str(&format!("\nNote: {}", value::eval_note(n)));
            }
            out.push_str(&format!(
                "\nCost: {} reads in {} round{}, {} invocation{}",
                o.reads,
                o.steps.saturating_sub(1),
                if o.steps == 2 { "" } else { "s" },
                o.invocations,
                if o.invocations == 1 { "" } else { "s" }
            ));
            Ok(super::text(out))
        }
        Err(f) => {
            let mut msg = format!(
                "{}\n{}",
                f.error.render(src),
                caret(src, f.error.span.start)
            );
            for n in &f.notes {
                msg.push_str(&format!("\nNote: {}", value::eval_note(n)));
            }
            Err(if f.read_only {
                ToolError::new("READ_ONLY", msg).next(crate::mcp::error::READ_ONLY_NEXT)
            } else if f.needs_event_thread {
                let e = ToolError::new("EVAL_FAILED", msg);
                e.next("arm a suspending stop point (debug_set_line_stop) where the code runs, and evaluate on its hit")
            } else {
                ToolError::new("EVAL_FAILED", msg)
            })
        }
    }
}

/// The source and a caret under byte offset `at`.
/// The chain view: every link with its value, then the first null and
/// why evaluation stopped, so an agent sees where a chain broke.
async fn render_chain(
    renderer: &ValueReader<'_>,
    src: &str,
    result: &Result<Outcome, Failure>,
) -> Reply {
    let (links, failure) = match result {
        Ok(o) => (o.links.clone(), None),
        Err(f) => (f.links.clone(), Some(f.error.clone())),
    };
    let mut out = String::new();
    let mut first_null = None;
    let mut data = Vec::new();
    for (i, link) in links.iter().enumerate() {
        let text = link.span.text(src);
        let rendered = value::line(&renderer.line(&link.value).await);
        out.push_str(&format!("{}. {} = {}\n", i + 1, text, rendered));
        if first_null.is_none() && matches!(link.value, Val::Null) {
            first_null = Some(text.to_string());
        }
        data.push(json!({"link": text, "value": rendered}));
    }
    match (&first_null, &failure) {
        (Some(n), Some(e)) => {
            let remaining = count_links_after(src, n);
            out.push_str(&format!(
                "First null: `{n}`; {remaining} later link{} never evaluated ({})",
                if remaining == 1 { " was" } else { "s were" },
                e.render(src)
            ));
        }
        (Some(n), None) => out.push_str(&format!("First null: `{n}` (the chain's value is null)")),
        (None, Some(e)) => out.push_str(&format!("Stopped: {}", e.render(src))),
        (None, None) => out.push_str("No link is null."),
    }
    let notes = match result {
        Ok(o) => o.notes.clone(),
        Err(f) => f.notes.clone(),
    };
    for n in notes {
        out.push_str(&format!("\nNote: {}", value::eval_note(&n)));
    }
    Ok(super::text(out))
}

fn caret(src: &str, at: usize) -> String {
    let col = src.char_indices().take_while(|(i, _)| *i < at).count();
    format!("  {src}\n  {}^", " ".repeat(col))
}

/// How many `.`/`[` links follow the text `prefix` in `src`.
fn count_links_after(src: &str, prefix: &str) -> usize {
    let rest = src.strip_prefix(prefix).unwrap_or("");
    let mut depth = 0i32;
    let mut n = 0;
    for c in rest.chars() {
        match c {
            '(' | '[' if depth == 0 && c == '[' => {
                n += 1;
                depth += 1;
            }
            '(' | '[' => depth += 1,
            ')' | ']' => depth -= 1,
            '.' if depth == 0 => n += 1,
            _ => {}
        }
    }
    n
}
