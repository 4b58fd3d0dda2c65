//! Conditions and `trace_expr`, evaluated on the hit thread while only that
//! thread is held (a suspending stop point escalates to a VM suspend only
//! when its condition holds), through the session's evaluator
//! (`actors::session::eval`). The event's own data is in scope: the
//! exception of an exception stop as `exception`, the incoming value of a
//! field write as `newValue`, the value a method returns as `returnValue`,
//! the lock of a monitor event as `monitor`. Nothing is invoked on a thread
//! blocked entering a monitor: running code there can wedge it.

use std::time::Duration;

use crate::actors::jvm::eval::{self, EvalContext};
use crate::actors::jvm::inspect::{self, FrameView};
use crate::actors::jvm::show::{Budget, ValueReader};
use crate::expr::eval::Val;
use crate::jdwp::{Event, FrameInfo, ObjectId, ThreadId, Value};
use crate::model::shown::{Detail, Shown};

use super::dispatch::Ctx;

/// Whether conditions and trace expressions can be evaluated.
pub const AVAILABLE: bool = true;

/// Bound on one invocation inside a condition or expression: a hit holds
/// its thread for as long as this runs.
const INVOKE_BUDGET: Duration = Duration::from_millis(500);
/// Bound on the `getMessage()` that computes a helpful NPE text.
const MESSAGE_BUDGET: Duration = Duration::from_millis(250);

/// The names an event adds to the scope, as source text the parser reads.
pub fn bindings(event: &Event) -> Vec<(&'static str, String)> {
    match event {
        Event::Exception { exception, .. } => {
            vec![("exception", format!("@{:#x}", exception.id.0))]
        }
        Event::FieldModification { value_to_be, .. } => vec![("newValue", literal(value_to_be))],
        Event::MethodExitWithReturnValue { value, .. } => vec![("returnValue", literal(value))],
        Event::MonitorContendedEnter { object, .. }
        | Event::MonitorContendedEntered { object, .. }
        | Event::MonitorWait { object, .. }
        | Event::MonitorWaited { object, .. } => vec![("monitor", format!("@{:#x}", object.id.0))],
        _ => Vec::new(),
    }
}

/// A value as a literal (or handle) of the expression language.
fn literal(v: &Value) -> String {
    match v {
        Value::Boolean(b) => b.to_string(),
        Value::Byte(x) => x.to_string(),
        Value::Short(x) => x.to_string(),
        Value::Int(x) => x.to_string(),
        Value::Long(x) => format!("{x}L"),
        Value::Char(c) => match char::from_u32(u32::from(*c)) {
            Some('\'') => "'\\''".into(),
            Some('\\') => "'\\\\'".into(),
            Some(c) if !c.is_control() => format!("'{c}'"),
            _ => u32::from(*c).to_string(),
        },
        Value::Float(x) if x.is_finite() => format!("{x:?}f"),
        Value::Double(x) if x.is_finite() => format!("{x:?}"),
        Value::Object { id, .. } if id.0 == 0 => "null".into(),
        Value::Object { id, .. } => format!("@{:#x}", id.0),
        _ => "null".into(),
    }
}

/// Replaces the bound names in `src` (identifiers outside string and char
/// literals, not after a `.`) by their values.
pub fn bind(src: &str, names: &[(&str, String)]) -> String {
    if names.is_empty() {
        return src.to_string();
    }
    let chars: Vec<char> = src.chars().collect();
    let mut out = String::with_capacity(src.len());
    let mut i = 0;
    let mut prev_sig: Option<char> = None;
    while i < chars.len() {
        let c = chars[i];
        if c == '"' || c == '\'' {
            let quote = c;
            out.push(c);
            i += 1;
            while i < chars.len() {
                out.push(chars[i]);
                if chars[i] == '\\' && i + 1 < chars.len() {
                    out.push(chars[i + 1]);
                    i += 2;
                    continue;
                }
                i += 1;
                if chars[i - 1] == quote {
                    break;
                }
            }
            prev_sig = Some(quote);
            continue;
        }
        if c.is_alphabetic() || c == '_' || c == '$' {
            let start = i;
            while i < chars.len()
                && (chars[i].is_alphanumeric() || chars[i] == '_' || chars[i] == '$')
            {
                i += 1;
            }
            let word: String = chars[start..i].iter().collect();
            match names.iter().find(|(n, _)| *n == word) {
                Some((_, v)) if prev_sig != Some('.') => out.push_str(v),
                _ => out.push_str(&word),
            }
            prev_sig = chars.get(i - 1).copied();
            continue;
        }
        out.push(c);
        if !c.is_whitespace() {
            prev_sig = Some(c);
        }
        i += 1;
    }
    out
}

/// The evaluation context of a hit: the top frame of the thread the event
/// suspended, its `this`, invocation allowed (bounded).
pub async fn hit_context(
    ctx: &Ctx,
    thread: ThreadId,
    top: Option<&FrameInfo>,
) -> Result<EvalContext, String> {
    let top = match top {
        Some(t) => *t,
        None => *ctx
            .frames(thread, 1)
            .await
            .map_err(|e| format!("reading the hit frame failed: {e}"))?
            .first()
            .ok_or("the hit thread has no frame")?,
    };
    let (class, method, lines) = futures::join!(
        ctx.classes.info(top.location.class),
        ctx.classes.method(top.location.class, top.location.method),
        ctx.classes.lines(top.location.class, top.location.method)
    );
    let frame = FrameView {
        index: 0,
        id: top.frame_id,
        location: top.location,
        class: class.map_err(|e| e.to_string())?,
        method: method.map_err(|e| e.to_string())?,
        line: lines
            .ok()
            .and_then(|l| l.line_of(top.location.index as i64)),
    };
    let this = inspect::this_object(&ctx.classes, thread, &frame)
        .await
        .map_err(|e| e.to_string())?;
    Ok(EvalContext {
        thread: Some(thread),
        frame: Some(frame),
        this,
        invocable: true,
        not_invocable_because: String::new(),
        invoke_budget: Some(INVOKE_BUDGET),
    })
}

/// Evaluates `src` (bindings applied) to a value.
async fn value(
    ctx: &Ctx,
    ectx: &EvalContext,
    src: &str,
) -> Result<(Val, Option<crate::expr::Charset>), String> {
    let parsed = crate::expr::parse_checked(src).map_err(|e| format!("{e:?}"))?;
    let before = ectx.thread.map(|t| ctx.classes.invocations_on(t));
    let result = eval::evaluate(&ctx.classes, ectx, &parsed.expr).await;
    // An invocation lets the thread run, which makes the frame ids read
    // before it stale.
    note_invocations(ctx, ectx, before);
    match result {
        Ok(o) => Ok((o.value, parsed.charset)),
        Err(f) => Err(f.error.render(src)),
    }
}

/// Marks the thread invoked (frames read before are stale) when an
/// invocation was sent on it since `before` was counted.
fn note_invocations(ctx: &Ctx, ectx: &EvalContext, before: Option<u64>) {
    if let (Some(thread), Some(before)) = (ectx.thread, before)
        && ctx.classes.invocations_on(thread) != before
    {
        ctx.mark_invoked(thread);
    }
}

/// Evaluates `condition` on the top frame of `thread`, suspended by
/// `event`.
pub async fn evaluate(
    ctx: &Ctx,
    thread: ThreadId,
    event: &Event,
    condition: &str,
) -> Result<bool, String> {
    let ectx = hit_context(ctx, thread, None).await?;
    let src = bind(condition, &bindings(event));
    match value(ctx, &ectx, &src).await? {
        (Val::Bool(b), _) => Ok(b),
        (other, _) => Err(format!(
            "the condition gave a {}, not a boolean",
            other.kind()
        )),
    }
}

/// Evaluates trace expressions on a held hit; each result read for one
/// line, or the error (one failing leaves the others intact).
pub async fn expressions(
    ctx: &Ctx,
    ectx: &EvalContext,
    event: &Event,
    exprs: &[String],
    max_len: usize,
) -> Vec<(String, Detail)> {
    let names = bindings(event);
    let blocked;
    let ectx = if matches!(event, Event::MonitorContendedEnter { .. }) {
        blocked = EvalContext {
            invocable: false,
            not_invocable_because: "the thread is blocked entering a monitor, where running code \
                                    can wedge it"
                .into(),
            ..ectx.clone()
        };
        &blocked
    } else {
        ectx
    };
    let mut out = Vec::with_capacity(exprs.len());
    // Code run by an earlier expression (or by an earlier stop point's, at
    // the same hit) made the frame ids stale: the frame is read again.
    let mut fresh: Option<EvalContext> = None;
    for (i, e) in exprs.iter().enumerate() {
        if let Some(thread) = ectx.thread.filter(|_| ectx.invocable)
            && ctx.take_invoked(thread)
        {
            fresh = hit_context(ctx, thread, None).await.ok();
        }
        let current = fresh.as_ref().unwrap_or(ectx);
        let src = bind(e, &names);
        let shown = match value(ctx, current, &src).await {
            Ok((v, charset)) => {
                let before = current.thread.map(|t| ctx.classes.invocations_on(t));
                let line = ValueReader {
                    classes: &ctx.classes,
                    ctx: current,
                    budget: Budget {
                        max_len,
                        ..Budget::default()
                    },
                    charset,
                }
                .line(&v)
                .await;
                // Rendering may call toString().
                note_invocations(ctx, current, before);
                Detail::Value(line)
            }
            Err(err) => Detail::Failed(err),
        };
        out.push((format!("expr[{i}] {e}"), shown));
    }
    out
}

/// HotSpot's helpful text of a NullPointerException (JEP 358), which only
/// `getMessage()` computes: invoked on the event-suspended `thread` within
/// a short budget, rendered on one line; `None` when it answers null (an
/// NPE the program built itself).
pub async fn helpful_message(
    ctx: &Ctx,
    thread: ThreadId,
    exception: ObjectId,
    max_len: usize,
) -> Result<Option<Shown>, String> {
    let ectx = EvalContext {
        thread: Some(thread),
        invocable: true,
        invoke_budget: Some(MESSAGE_BUDGET),
        ..EvalContext::default()
    };
    let (v, _) = value(ctx, &ectx, &format!("@{:#x}.getMessage()", exception.0)).await?;
    if matches!(v, Val::Null) {
        return Ok(None);
    }
    let text = ValueReader {
        classes: &ctx.classes,
        ctx: &ectx,
        budget: Budget {
            max_len,
            ..Budget::default()
        },
        charset: None,
    }
    .line(&v)
    .await;
    Ok(Some(text))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bindings_replace_names_but_not_members_or_literals() {
        let names = [("newValue", "42".to_string())];
        assert_eq!(bind("newValue > 3", &names), "42 > 3");
        assert_eq!(bind("o.newValue == newValue", &names), "o.newValue == 42");
        assert_eq!(bind("s == \"newValue\"", &names), "s == \"newValue\"");
        assert_eq!(bind("newValueX == 1", &names), "newValueX == 1");
        let names = [("exception", "@0x1f".to_string())];
        assert_eq!(bind("exception.code != 0", &names), "@0x1f.code != 0");
        assert_eq!(
            bind("x == 'a' && exception == null", &names),
            "x == 'a' && @0x1f == null"
        );
    }

    #[test]
    fn exits_bind_their_return_value_and_monitor_events_their_lock() {
        use crate::jdwp::{
            Location, MethodId, ObjectId, ReferenceTypeId, RequestId, Tag, TaggedObjectId, TypeTag,
        };
        let at = Location {
            type_tag: TypeTag::Class,
            class: ReferenceTypeId(1),
            method: MethodId(2),
            index: 0,
        };
        let exit = Event::MethodExitWithReturnValue {
            request_id: RequestId(1),
            thread: ThreadId(2),
            location: at,
            value: Value::Long(7),
        };
        assert_eq!(bindings(&exit), vec![("returnValue", "7L".to_string())]);
        let blocked = Event::MonitorContendedEnter {
            request_id: RequestId(1),
            thread: ThreadId(2),
            object: TaggedObjectId {
                tag: Tag::Object,
                id: ObjectId(0x1f),
            },
            location: at,
        };
        assert_eq!(bindings(&blocked), vec![("monitor", "@0x1f".to_string())]);
    }

    #[test]
    fn literals_parse_back() {
        for v in [
            Value::Int(-3),
            Value::Long(7),
            Value::Boolean(true),
            Value::Char(65),
            Value::Double(1.0),
            Value::Float(2.5),
        ] {
            let src = literal(&v);
            assert!(crate::expr::parse_checked(&src).is_ok(), "{src}");
        }
        assert_eq!(literal(&Value::Double(1.0)), "1.0");
        assert_eq!(literal(&Value::Char(39)), "'\\''");
    }
}
