//! How a hit's event is reported: the word for its kind, and what the
//! event itself carries, read (exception type, message, throw and catch
//! sites; field old → new; returned value; monitor object).

use crate::events::ctx::Ctx;
use crate::jdwp::{Event, Value};
use crate::model::shown::Detail;

/// The word an event's kind is reported as.
pub fn kind_label(e: &Event) -> &'static str {
    match e {
        Event::Breakpoint { .. } => "breakpoint",
        Event::Exception { .. } => "exception",
        Event::FieldAccess { .. } => "field-read",
        Event::FieldModification { .. } => "field-write",
        Event::MethodExit { .. } | Event::MethodExitWithReturnValue { .. } => "method-exit",
        Event::MonitorContendedEnter { .. } => "monitor-blocked",
        Event::MonitorContendedEntered { .. } => "monitor-acquired",
        Event::MonitorWait { .. } => "monitor-wait",
        Event::MonitorWaited { .. } => "monitor-waited",
        Event::MethodEntry { .. } => "method-entry",
        Event::SingleStep { .. } => "step",
        _ => "event",
    }
}

/// What an event itself carries, rendered (exception type, message and
/// catch site; field old → new; returned value; monitor object).
pub(super) async fn event_details(
    ctx: &Ctx,
    e: &Event,
    old: Option<Value>,
    len: usize,
) -> Vec<(String, Detail)> {
    let mut out = Vec::new();
    match e {
        Event::Exception {
            exception,
            catch_location,
            ..
        } => {
            let (ty, message) = ctx.exception(*exception, len).await;
            out.push(("exception".into(), ty));
            if let Some(m) = message {
                out.push(("message".into(), m));
            }
            out.push((
                "catch".into(),
                Detail::Text(match catch_location {
                    Some(c) => ctx.label(c).await.to_string(),
                    None => "uncaught".into(),
                }),
            ));
        }
        Event::FieldModification {
            ref_type,
            field,
            object,
            value_to_be,
            ..
        } => {
            out.push((
                "field".into(),
                Detail::Text(ctx.field_name(ref_type.id, *field).await),
            ));
            if object.id.0 != 0 {
                out.push((
                    "object".into(),
                    Detail::Text(format!("@{:#x}", object.id.0)),
                ));
            }
            let new = ctx.show(value_to_be, len).await;
            let old = match old {
                Some(v) => Some(ctx.show(&v, len).await),
                None => None,
            };
            out.push(("change".into(), Detail::Change { old, new }));
        }
        Event::FieldAccess {
            ref_type,
            field,
            object,
            ..
        } => {
            out.push((
                "field".into(),
                Detail::Text(ctx.field_name(ref_type.id, *field).await),
            ));
            if object.id.0 != 0 {
                out.push((
                    "object".into(),
                    Detail::Text(format!("@{:#x}", object.id.0)),
                ));
            }
            if let Some(v) = old {
                out.push(("value".into(), Detail::Value(ctx.show(&v, len).await)));
            }
        }
        Event::MethodExitWithReturnValue { value, .. } => {
            out.push(("returned".into(), Detail::Value(ctx.show(value, len).await)));
        }
        Event::MonitorContendedEnter { object, .. }
        | Event::MonitorContendedEntered { object, .. } => {
            out.push(("monitor".into(), monitor(ctx, object, len).await));
        }
        Event::MonitorWait {
            object, timeout, ..
        } => {
            out.push(("monitor".into(), monitor(ctx, object, len).await));
            out.push(("timeout".into(), Detail::WaitTimeout(*timeout)));
        }
        Event::MonitorWaited {
            object, timed_out, ..
        } => {
            out.push(("monitor".into(), monitor(ctx, object, len).await));
            out.push(("timed out".into(), Detail::Flag(*timed_out)));
        }
        _ => {}
    }
    out
}

/// The monitor object of a monitor event, as read.
async fn monitor(ctx: &Ctx, object: &crate::jdwp::TaggedObjectId, len: usize) -> Detail {
    let shown = ctx
        .show(
            &Value::Object {
                tag: object.tag,
                id: object.id,
            },
            len,
        )
        .await;
    Detail::Value(shown)
}
