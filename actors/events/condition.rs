//! Conditions and `trace_expr`, evaluated on the hit thread while only that
//! thread is held (a suspending stop point escalates to a VM suspend only
//! when its condition holds), through the evaluation driver
//! (`actors::jvm::eval`). Each was compiled when its stop point was armed
//! (`actors::stop_points::exprs`): a hit only evaluates, it never parses.
//! The event's own data is in scope as values: the exception of an
//! exception stop as `exception`, the incoming value of a field write as
//! `newValue`, the value a method returns as `returnValue`, the lock of a
//! monitor event as `monitor`. Nothing is invoked on a thread blocked
//! entering a monitor: running code there can wedge it.

use std::sync::LazyLock;
use std::time::Duration;

use crate::error::{ConditionError, ExprError, HitFrameError, NotInvocable};
use crate::expr::eval::Val;
use crate::expr::{Binding, Bound, Charset};
use crate::jdwp::{Event, FrameInfo, ObjectId, Tag, TaggedObjectId, ThreadId, Value};
use crate::jvm::eval::{self, EvalContext, to_val};
use crate::jvm::inspect::{self, FrameView};
use crate::jvm::show::{Budget, ValueReader};
use crate::model::Prim;
use crate::model::shown::{Detail, MessageGap, Shown};
use crate::model::stop_point::Calls;
use crate::stop_points::exprs::Program;

use super::ctx::Ctx;

/// Whether conditions and trace expressions can be evaluated.
pub const AVAILABLE: bool = true;

/// Bound on one invocation inside a condition or expression: a hit holds
/// its thread for as long as this runs.
const INVOKE_BUDGET: Duration = Duration::from_millis(500);
/// Bound on the `getMessage()` that computes a helpful NPE text.
const MESSAGE_BUDGET: Duration = Duration::from_millis(250);
/// The call that computes it, compiled once for every exception.
static GET_MESSAGE: LazyLock<Program> = LazyLock::new(|| Program::new("exception.getMessage()"));

/// The value the event binds, if any: the exception of an exception
/// event, the incoming value of a field write, the value a method returns,
/// the lock of a monitor event.
pub fn bound(event: &Event) -> Option<Bound> {
    let (name, value) = match event {
        Event::Exception { exception, .. } => (Binding::Exception, object(exception)),
        Event::FieldModification { value_to_be, .. } => (Binding::NewValue, event_val(value_to_be)),
        Event::MethodExitWithReturnValue { value, .. } => (Binding::ReturnValue, event_val(value)),
        Event::MonitorContendedEnter { object: o, .. }
        | Event::MonitorContendedEntered { object: o, .. }
        | Event::MonitorWait { object: o, .. }
        | Event::MonitorWaited { object: o, .. } => (Binding::Monitor, object(o)),
        _ => return None,
    };
    Some(Bound { name, value })
}

/// An object an event names, as the evaluator sees it.
fn object(o: &TaggedObjectId) -> Val {
    event_val(&Value::Object {
        tag: o.tag,
        id: o.id,
    })
}

/// A value an event carries, as the evaluator sees it. An object is a
/// plain handle whatever its type (a `String` too), as it was when the
/// bound names were spliced into the source as `@0x…` handles.
fn event_val(v: &Value) -> Val {
    match to_val(v) {
        Val::Object { id, .. } => Val::Object {
            id,
            tag: Tag::Object,
        },
        other => other,
    }
}

/// The evaluation context of a hit: the top frame of the thread the event
/// suspended, its `this`, invocation (bounded) allowed when `calls` is.
pub async fn hit_context(
    ctx: &Ctx,
    thread: ThreadId,
    top: Option<&FrameInfo>,
    calls: Calls,
) -> Result<EvalContext, HitFrameError> {
    let top = match top {
        Some(t) => *t,
        None => *ctx
            .frames(thread, 1)
            .await
            .map_err(HitFrameError::Frames)?
            .first()
            .ok_or(HitFrameError::NoFrame)?,
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
        class: class?,
        method: method?,
        line: lines
            .ok()
            .and_then(|l| l.line_of(top.location.index as i64)),
    };
    let this = inspect::this_object(&ctx.classes, thread, &frame).await?;
    let invocable = calls == Calls::Allowed;
    Ok(EvalContext {
        thread: Some(thread),
        frame: Some(frame),
        this,
        invocable,
        not_invocable: (!invocable).then_some(NotInvocable::CallsRefused),
        invoke_budget: Some(INVOKE_BUDGET),
    })
}

/// `ectx` with invocation refused, for a stop point that allows no calls
/// sharing a hit with one that does.
pub fn refusing_calls(ectx: &EvalContext) -> EvalContext {
    EvalContext {
        invocable: false,
        not_invocable: Some(NotInvocable::CallsRefused),
        ..ectx.clone()
    }
}

/// Evaluates a compiled expression, with the value the event binds in
/// scope.
async fn value(
    ctx: &Ctx,
    ectx: &EvalContext,
    program: &Program,
    bound: Option<&Bound>,
) -> Result<(Val, Option<Charset>), ExprError> {
    let compiled = match program {
        Program::Ready(c) => c,
        Program::Refused { error, .. } => return Err(ExprError::Refused(error.clone())),
    };
    let before = ectx.thread.map(|t| ctx.classes.invocations_on(t));
    let result = eval::evaluate_compiled(&ctx.classes, ectx, compiled, bound).await;
    // An invocation lets the thread run, which makes the frame ids read
    // before it stale.
    note_invocations(ctx, ectx, before);
    match result {
        Ok(o) => Ok((o.value, compiled.charset())),
        Err(f) => Err(ExprError::Eval {
            error: f.error,
            expression: compiled.source().to_string(),
        }),
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

/// Evaluates `condition` (compiled when it was armed) on the top frame of
/// `thread`, suspended by `event`.
pub async fn evaluate(
    ctx: &Ctx,
    thread: ThreadId,
    event: &Event,
    condition: &Program,
    calls: Calls,
) -> Result<bool, ConditionError> {
    let ectx = hit_context(ctx, thread, None, calls)
        .await
        .map_err(ExprError::Frame)?;
    match value(ctx, &ectx, condition, bound(event).as_ref()).await? {
        (Val::Prim(Prim::Bool(b)), _) => Ok(b),
        (other, _) => Err(ConditionError::NotBoolean { kind: other.kind() }),
    }
}

/// Evaluates trace expressions on a held hit; each result read for one
/// line, or the error (one failing leaves the others intact).
pub async fn expressions(
    ctx: &Ctx,
    ectx: &EvalContext,
    event: &Event,
    exprs: &[Program],
    max_len: usize,
) -> Vec<(String, Detail)> {
    let bound = bound(event);
    let blocked;
    let ectx = if matches!(event, Event::MonitorContendedEnter { .. }) {
        blocked = EvalContext {
            invocable: false,
            not_invocable: Some(NotInvocable::BlockedOnMonitor),
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
            fresh = hit_context(ctx, thread, None, Calls::Allowed).await.ok();
        }
        let current = fresh.as_ref().unwrap_or(ectx);
        let shown = match value(ctx, current, e, bound.as_ref()).await {
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
            Err(err) => Detail::Failed(err.to_string()),
        };
        out.push((format!("expr[{i}] {}", e.source()), shown));
    }
    out
}

/// What an exception's report needs its thread held for, done before
/// the thread is released: a NullPointerException whose message is not
/// stored gets HotSpot's helpful text from a bounded `getMessage()` on the
/// event thread (`can_invoke`: the event suspended it). Read-only sessions
/// and hits that hold nothing get a note saying so instead.
pub async fn held_exception(
    ctx: &Ctx,
    event: &Event,
    thread: ThreadId,
    can_invoke: bool,
    max_len: usize,
) {
    let Some(exception) = ctx.npe_without_message(event).await else {
        return;
    };
    let helpful = if ctx.conn.shared().read_only {
        Err(MessageGap::ReadOnly)
    } else if !can_invoke {
        Err(MessageGap::NoHeldThread)
    } else {
        match helpful_message(ctx, thread, exception, max_len).await {
            Ok(Some(text)) => Ok(text),
            // An NPE the program built itself has no helpful text.
            Ok(None) => return,
            Err(e) => Err(MessageGap::Failed(e.to_string())),
        }
    };
    ctx.note_helpful(exception, helpful);
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
) -> Result<Option<Shown>, ExprError> {
    let ectx = EvalContext {
        thread: Some(thread),
        invocable: true,
        invoke_budget: Some(MESSAGE_BUDGET),
        ..EvalContext::default()
    };
    let exception = Bound {
        name: Binding::Exception,
        value: Val::Object {
            id: exception.0,
            tag: Tag::Object,
        },
    };
    let (v, _) = value(ctx, &ectx, &GET_MESSAGE, Some(&exception)).await?;
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
    use std::sync::Arc;

    use super::*;
    use crate::expr::eval::{Answer, Need, run_compiled};
    use crate::expr::parser::count::parses;
    use crate::jdwp::{
        EventKind, FieldId, Location, MethodId, ReferenceTypeId, RequestId, TaggedTypeId, TypeTag,
    };
    use crate::model::stop_point::{
        FieldSpec, Filters, LocalsChoice, Mode, StopKind, StopPointSpec, Target as Tgt, TraceSpec,
    };
    use crate::stop_points::registry::{Held, Point, Registry};
    use crate::stop_points::routes::{Lookup, RequestKey, Route, Target};

    fn at() -> Location {
        Location {
            type_tag: TypeTag::Class,
            class: ReferenceTypeId(1),
            method: MethodId(2),
            index: 0,
        }
    }

    fn handle(tag: Tag, id: u64) -> TaggedObjectId {
        TaggedObjectId {
            tag,
            id: ObjectId(id),
        }
    }

    fn write(value_to_be: Value) -> Event {
        Event::FieldModification {
            request_id: RequestId(5),
            thread: ThreadId(2),
            location: at(),
            ref_type: TaggedTypeId {
                tag: TypeTag::Class,
                id: ReferenceTypeId(1),
            },
            field: FieldId(3),
            object: handle(Tag::Object, 0x10),
            value_to_be,
        }
    }

    /// A traced field watch with a condition, as the registry routes it.
    fn armed(registry: &mut Registry, key: RequestKey) -> Arc<Target> {
        let spec = StopPointSpec {
            engine: crate::model::stop_point::Engine::Wire,
            target: Tgt::Field(FieldSpec {
                class: "Orders".into(),
                field: "count".into(),
                access: false,
                modify: true,
                writers: Vec::new(),
            }),
            mode: Mode::Trace(TraceSpec {
                frames: 0,
                locals: LocalsChoice::None,
                max_hits: 0,
                max_length: 80,
                exprs: vec!["newValue * 2".into(), "o.newValue".into()],
            }),
            filters: Filters {
                condition: Some("newValue % 2 == 0 && newValue > limit".into()),
                ..Filters::default()
            },
        };
        let id = registry.allocate(StopKind::Field);
        registry.insert(Point::new(id.clone(), spec, None));
        registry.add_requests(
            &id.0,
            vec![Held {
                key,
                class: None,
                jvm_count: false,
            }],
        );
        // A re-arm of the same definition keeps what was compiled.
        let same = registry.point(&id.0).expect("armed").spec.clone();
        registry.retarget(&id.0, same, None);
        match registry.routes().lookup(&key) {
            Lookup::Live(Route::Hit { target, .. }) => target.clone(),
            _ => panic!("not routed"),
        }
    }

    /// What the frame answers: `limit` is 10, `o.newValue` is -1.
    fn frame(need: &Need) -> Answer {
        match need {
            Need::Name { name } if name == "limit" => Answer::Value(Val::Prim(Prim::Int(10))),
            Need::Name { name } if name == "o" => Answer::Value(Val::Object {
                id: 0x10,
                tag: Tag::Object,
            }),
            Need::Field { name, .. } if name == "newValue" => {
                Answer::Value(Val::Prim(Prim::Int(-1)))
            }
            other => Answer::Missing(format!("{other:?}")),
        }
    }

    fn ready(p: &Program) -> &crate::expr::Compiled {
        match p {
            Program::Ready(c) => c,
            Program::Refused { error, .. } => panic!("{error}"),
        }
    }

    #[test]
    fn a_condition_is_parsed_when_armed_and_never_on_a_hit() {
        let mut registry = Registry::default();
        let key = RequestKey::new(EventKind::FieldModification, RequestId(5));
        let before = parses();
        let target = armed(&mut registry, key);
        // The condition, its three operands and the two trace expressions,
        // once each.
        let at_arming = parses() - before;
        assert_eq!(at_arming, 6);
        let exprs = &target.exprs;
        let cond = ready(exprs.condition.as_ref().expect("a condition"));
        for hit in 0..100 {
            let event = write(Value::Int(hit));
            let bound = bound(&event);
            let (holds, _, _) = run_compiled(cond, bound.as_ref(), frame);
            assert_eq!(
                holds,
                Ok(Val::Prim(Prim::Bool(hit % 2 == 0 && hit > 10))),
                "hit {hit}"
            );
            let operands = [
                Val::Prim(Prim::Int(hit % 2)),
                Val::Prim(Prim::Int(hit)),
                Val::Prim(Prim::Int(10)),
            ];
            assert_eq!(exprs.operands.len(), operands.len());
            for (operand, want) in exprs.operands.iter().zip(operands) {
                let (got, _, _) = run_compiled(ready(operand), bound.as_ref(), frame);
                assert_eq!(got, Ok(want), "{}", operand.source());
            }
            let shown: Vec<_> = (exprs.trace.iter())
                .map(|e| run_compiled(ready(e), bound.as_ref(), frame).0)
                .collect();
            assert_eq!(
                shown,
                [
                    Ok(Val::Prim(Prim::Int(hit * 2))),
                    Ok(Val::Prim(Prim::Int(-1)))
                ]
            );
        }
        assert_eq!(parses() - before, at_arming, "a hit parsed");
    }

    #[test]
    fn each_event_binds_its_own_value() {
        let named = |e: &Event| bound(e).map(|b| (b.name, b.value));
        assert_eq!(
            named(&write(Value::Long(7))),
            Some((Binding::NewValue, Val::Prim(Prim::Long(7))))
        );
        let exit = Event::MethodExitWithReturnValue {
            request_id: RequestId(1),
            thread: ThreadId(2),
            location: at(),
            value: Value::Object {
                tag: Tag::String,
                id: ObjectId(0x2a),
            },
        };
        // An object is the plain handle `@0x2a` it always was.
        assert_eq!(
            named(&exit),
            Some((
                Binding::ReturnValue,
                Val::Object {
                    id: 0x2a,
                    tag: Tag::Object
                }
            ))
        );
        let blocked = Event::MonitorContendedEnter {
            request_id: RequestId(1),
            thread: ThreadId(2),
            object: handle(Tag::Object, 0x1f),
            location: at(),
        };
        assert_eq!(
            named(&blocked),
            Some((
                Binding::Monitor,
                Val::Object {
                    id: 0x1f,
                    tag: Tag::Object
                }
            ))
        );
        assert_eq!(
            named(&write(Value::Object {
                tag: Tag::Object,
                id: ObjectId(0)
            }))
            .map(|b| b.1),
            Some(Val::Null)
        );
        let step = Event::SingleStep {
            request_id: RequestId(1),
            thread: ThreadId(2),
            location: at(),
        };
        assert_eq!(named(&step), None);
    }

    #[test]
    fn the_helpful_message_call_compiles() {
        let c = ready(&GET_MESSAGE);
        assert_eq!(c.slots().len(), 1);
    }
}
