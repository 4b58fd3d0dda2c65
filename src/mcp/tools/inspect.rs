//! Inspection tools: read a thread's stack with its locals, evaluate an
//! expression, walk a chain link by link.

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;

use super::args::{thread_id, view_budget};
use super::kinds::Kind;
use super::{Call, Ctx, Effect, Reply, Route};
use crate::actors::{
    EvalContext, Failure, FrameLocals, NotInvocable, Outcome, SessionHandle, ShownValue,
    StackQuery, StackView, ValueReader, explain,
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
    pub thread_id: Option<String>,
    /// Frames to show; default 20.
    pub max_frames: Option<usize>,
    /// Locals only for frames of classes with this prefix.
    pub package_filter: Option<String>,
    /// Expand object locals into field trees.
    pub expand_objects: Option<bool>,
    pub max_depth: Option<usize>,
    pub max_children: Option<usize>,
}

/// Arguments of debug_evaluate (both kinds).
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct EvaluateParams {
    /// Session id; default: the current session.
    pub session_id: Option<String>,
    /// e.g. order.items[0].getSku(), m["k"], xs[?qty > 3].
    pub expression: String,
    pub thread_id: Option<String>,
    /// Frame in scope; default 0 (top).
    pub frame_index: Option<usize>,
    /// Render the result as a field tree.
    pub expand_objects: Option<bool>,
    pub max_depth: Option<usize>,
    pub max_children: Option<usize>,
}

pub fn routes() -> Vec<Route> {
    vec![
        Route::new(
            "debug_get_stack",
            "Read a stack",
            "Frames of a suspended thread (#i class.method:line) with each frame's locals; \
             max_frames:1 is the locals view. Each local read is a safepoint; expand_objects \
             invokes nothing.",
            Effect::Read,
            get_stack,
        )
            .with_guide(
                "Frames of a suspended thread, one line each (#i class.method:line), with the locals of each frame \
                  beneath; a declared generic type is shown where it says more than the value. max_frames:1 is the \
                  one-call 'local variables' view. Needs the thread suspended (a stop point hit, debug_thread). \
                  Each local read costs the JVM a safepoint; expand_objects reads fields and invokes nothing.",
            ),
        {
            let tool = "debug_evaluate";
            let kind = |name, chain: bool, guide| {
                Kind::answered(tool, name, Effect::Read, guide, move |ctx, call| {
                    evaluate(ctx, call, chain)
                })
            };
            Route::by_kind_or_first(
                tool,
                "Evaluate an expression",
                "Evaluate a Java-like expression in a frame: locals, this, fields, classes, @0x… \
                 handles, calls, xs[i], m[\"k\"], xs[?qty > 3], operators. Method calls run on a \
                 held thread, else on one parked for them (2 s each). kind chain prints each \
                 link of a.getB().c, naming the first null.",
                Effect::Read,
                vec![
                    kind(
                        "value",
                        false,
                "Evaluate a Java-like expression in a frame: locals, this, bare field names, class names, @0x… \
                  handles; .field and .method(args) chains (overloads chosen on runtime types); xs[i], m[\"k\"], \
                  xs[2..5], xs[?qty > 3], .length; == != < <= > >= && || ! + - * / %; #UTF-8 / #ISO-8859-1 / #raw \
                  for byte[]. HashMap, LinkedHashMap, ConcurrentHashMap and ArrayList subscripts walk fields (no \
                  invoke); method calls and the default toString() run on a thread suspended by a stop point, or, \
                  when none is held, on one parked for the call as debug_invoke parks one (names then resolve \
                  as with no frame: classes, statics, handles) and resumed after (2 s budget each). Parse errors name the column.",
                    ),
                    kind(
                        "chain",
                        true,
                "Walk a chain like a.getB().c.getD() left to right and print every link with its value, naming \
                  the first null one and how many links were never reached. Each method runs exactly once; no \
                  toString() is called. Same grammar and thread rules as debug_evaluate.",
                    ),
                ],
            )
        },
    ]
}

async fn get_stack(ctx: Ctx, call: Call<GetStackParams>) -> Reply {
    let (tool, p) = (call.tool, call.params?);
    let session = ctx.engine.session(p.session_id.as_deref())?;
    let query = StackQuery {
        thread: thread_id(tool, p.thread_id.as_deref())?,
        max_frames: p.max_frames.unwrap_or(20).max(1),
        package_filter: p.package_filter,
        expand: p.expand_objects.unwrap_or(false),
        budget: view_budget(p.max_depth, p.max_children),
    };
    let view = session.stack(&query).await?;
    Ok(super::text(render_stack(&view)))
}

/// The stack as text: a header, then each frame with its locals beneath.
fn render_stack(view: &StackView) -> String {
    let mut out = format!(
        "Thread @{:#x}, {} of {} frames",
        view.thread.0,
        view.frames.len(),
        view.depth
    );
    for f in &view.frames {
        out.push_str(&format!("\n#{} {}", f.frame.index, f.frame.label()));
        out.push_str(&locals_lines(&f.locals, "    "));
    }
    if view.depth > view.frames.len() {
        out.push_str(&format!(
            "\n… {} more frames (raise max_frames)",
            view.depth - view.frames.len()
        ));
    }
    out
}

/// A frame's locals, one `\n{indent}name = value` line each (or why
/// there are none), as debug_get_stack shows them.
pub(super) fn locals_lines(locals: &FrameLocals, indent: &str) -> String {
    match locals {
        FrameLocals::Skipped => String::new(),
        FrameLocals::Unreadable(e) => format!("\n{indent}(locals unreadable: {})", explain(e)),
        FrameLocals::Native => format!("\n{indent}(native method: no locals)"),
        FrameLocals::NoTable => {
            format!("\n{indent}(no local variable table: compiled without -g)")
        }
        FrameLocals::Known(ls) => {
            let mut out = String::new();
            for l in ls {
                let value = match &l.value {
                    ShownValue::Tree(t) => value::tree(t).replace('\n', &format!("\n{indent}")),
                    ShownValue::Line(v) => value::line(v),
                };
                let ty = if l.generic {
                    format!("{} ", l.declared)
                } else {
                    String::new()
                };
                out.push_str(&format!("\n{indent}{ty}{} = {value}", l.name));
            }
            out
        }
    }
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
    let result = session.evaluate(&ectx, &parsed.expr).await;
    let wants_thread = matches!(&result, Err(f) if f.needs_event_thread);
    // A method call with no thread to run on, and no frame in scope: one
    // is parked for it, as debug_invoke parks one (nothing was invoked
    // before the refusal, so evaluating again repeats no call). With a
    // frame in scope (a thread held otherwise), its names would not
    // resolve on the parked thread: the refusal says what to do instead.
    let mut parked_note = String::new();
    if wants_thread
        && thread.is_none()
        && ectx.frame.is_none()
        && session.ensure_writable("invoke").is_ok()
    {
        let on = session
            .on_parked_thread(async |pctx: &EvalContext| {
                let again = session.evaluate(pctx, &parsed.expr).await;
                answer(&session, &p, &parsed, pctx, chain, again, false).await
            })
            .await;
        match on {
            Ok((answered, on)) => {
                return answered.map(|text| {
                    super::text(format!(
                        "{text}\nRan on thread {:?} @{:#x}, parked for the call at its next line of \
                         application code and resumed after (as debug_invoke does)",
                        on.name, on.thread.0
                    ))
                });
            }
            Err(e) => {
                parked_note = format!(
                    "\nNo thread could be parked for the call: {}",
                    crate::mcp::error::ToolError::from(e).message
                )
            }
        }
    }
    let out = answer(
        &session,
        &p,
        &parsed,
        &ectx,
        chain,
        result,
        thread.is_none(),
    )
    .await;
    match out {
        Ok(text) => Ok(super::text(text)),
        Err(mut e) if wants_thread && e.label == "EVAL_FAILED" => {
            e.message.push_str(&parked_note);
            let wait = match released(&ectx) {
                true => "debug_wait_for_event waits for the next hit; ",
                false => "",
            };
            Err(e.next(format!(
                "{wait}debug_invoke calls a method on a thread it parks itself; or arm a \
                 suspending stop point (debug_set_stop) where the code runs, and evaluate on its hit"
            )))
        }
        Err(e) => Err(e),
    }
}

/// The reply text of an evaluation in `ectx`, or its error.
async fn answer(
    session: &SessionHandle,
    p: &EvaluateParams,
    parsed: &crate::expr::Parsed,
    ectx: &EvalContext,
    chain: bool,
    result: Result<Outcome, Failure>,
    implicit: bool,
) -> Result<String, ToolError> {
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
        ectx
    };
    let renderer = session.value_reader(render_ctx, budget, parsed.charset);
    let src = &p.expression;
    if chain {
        return Ok(render_chain(&renderer, src, &result).await);
    }
    match result {
        Ok(o) => {
            let (rendered, display_calls) = if p.expand_objects.unwrap_or(false) {
                (value::tree(&renderer.tree(&o.value).await), 0)
            } else {
                let shown = renderer.line(&o.value).await;
                (value::line(&shown), shown.invocations())
            };
            let mut out = format!("{} = {}", src.trim(), rendered);
            for n in &o.notes {
                out.push_str(&format!("\nNote: {}", value::eval_note(n)));
            }
            if implicit {
                out.push_str(&implicit_thread(session, ectx));
            }
            let invocations = o.invocations + display_calls;
            out.push_str(&format!(
                "\nCost: {} reads in {} round{}, {} invocation{}{}",
                o.reads,
                o.steps.saturating_sub(1),
                if o.steps == 2 { "" } else { "s" },
                invocations,
                if invocations == 1 { "" } else { "s" },
                if display_calls > 0 {
                    " (toString() for display included: application code that may change state)"
                } else {
                    ""
                }
            ));
            Ok(out)
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
            } else if f.timed_out {
                // The JVM did not answer: nothing is known about the program.
                ToolError::new("TIMEOUT", msg).next(crate::mcp::error::TIMEOUT_NEXT)
            } else if f.needs_frame {
                // Locals and fields of `this` resolve only in a frame.
                ToolError::new("EVAL_FAILED", msg).next(match released(ectx) {
                    true => {
                        "debug_wait_for_event waits for the next hit; or pass thread_id of a \
                         suspended thread"
                    }
                    false => "pass thread_id of a suspended thread",
                })
            } else {
                ToolError::new("EVAL_FAILED", msg)
            })
        }
    }
}

/// True when the event the agent read last had held a thread that a
/// resume released, so nothing is held to evaluate in.
fn released(ectx: &EvalContext) -> bool {
    matches!(
        ectx.not_invocable,
        Some(NotInvocable::NothingHeld { released: Some(_) })
    )
}

/// Which thread an evaluation without `thread_id` ran in, when that is
/// not the thread of the event the agent read last (that one was released
/// before it was read, or a later hit holds another thread).
fn implicit_thread(session: &SessionHandle, ectx: &EvalContext) -> String {
    let Some(t) = ectx.thread else {
        return String::new();
    };
    let events = session.events();
    let holding = events.holding(t);
    let read = events.last_read();
    if holding.as_ref().map(|e| e.seq) == read.as_ref().map(|e| e.seq) {
        return String::new();
    }
    let by = match &holding {
        Some(e) => format!(
            "\"{}\" @{:#x}, held by event seq={}",
            e.thread_name, t.0, e.seq
        ),
        None => format!("thread @{:#x}", t.0),
    };
    match read {
        Some(r) => format!(
            "\nIn {by}, not the event read last (seq={} on \"{}\"{}): pass thread_id to choose",
            r.seq,
            r.thread_name,
            if r.suspended == crate::actors::SuspendPolicy::None {
                ", released before it was read"
            } else {
                ""
            }
        ),
        None => format!("\nIn {by}"),
    }
}

/// The source and a caret under byte offset `at`.
/// The chain view: every link with its value, then the first null and
/// why evaluation stopped, so an agent sees where a chain broke.
async fn render_chain(
    renderer: &ValueReader<'_>,
    src: &str,
    result: &Result<Outcome, Failure>,
) -> String {
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
    out
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
