//! How a hit's event is reported: the word for its kind, and what the
//! event itself carries rendered (exception type, message, throw and catch
//! sites; field old → new; returned value; monitor object).

use super::super::capture::Ctx;
use crate::jdwp::{Event, Value};

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
) -> Vec<(String, String)> {
    let mut out = Vec::new();
    match e {
        Event::Exception {
            exception,
            catch_location,
            ..
        } => {
            let (ty, message) = ctx.exception(*exception, len).await;
            out.push(("exception".into(), format!("{ty} @{:#x}", exception.id.0)));
            if let Some(m) = message {
                out.push(("message".into(), m));
            }
            out.push((
                "catch".into(),
                match catch_location {
                    Some(c) => ctx.label(c).await.to_string(),
                    None => "uncaught".into(),
                },
            ));
        }
        Event::FieldModification {
            ref_type,
            field,
            object,
            value_to_be,
            ..
        } => {
            out.push(("field".into(), ctx.field_name(ref_type.id, *field).await));
            if object.id.0 != 0 {
                out.push(("object".into(), format!("@{:#x}", object.id.0)));
            }
            let new = ctx.render(value_to_be, len).await;
            let old = match old {
                Some(v) => ctx.render(&v, len).await,
                None => "?".into(),
            };
            out.push(("change".into(), format!("{old} → {new}")));
        }
        Event::FieldAccess {
            ref_type,
            field,
            object,
            ..
        } => {
            out.push(("field".into(), ctx.field_name(ref_type.id, *field).await));
            if object.id.0 != 0 {
                out.push(("object".into(), format!("@{:#x}", object.id.0)));
            }
            if let Some(v) = old {
                out.push(("value".into(), ctx.render(&v, len).await));
            }
        }
        Event::MethodExitWithReturnValue { value, .. } => {
            out.push(("returned".into(), ctx.render(value, len).await));
        }
        Event::MonitorContendedEnter { object, .. }
        | Event::MonitorContendedEntered { object, .. } => {
            out.push(("monitor".into(), monitor(ctx, object, len).await));
        }
        Event::MonitorWait {
            object, timeout, ..
        } => {
            out.push(("monitor".into(), monitor(ctx, object, len).await));
            out.push((
                "timeout".into(),
                format!("{timeout} ms (as passed to wait)"),
            ));
        }
        Event::MonitorWaited {
            object, timed_out, ..
        } => {
            out.push(("monitor".into(), monitor(ctx, object, len).await));
            out.push(("timed out".into(), timed_out.to_string()));
        }
        _ => {}
    }
    out
}

/// The monitor object of a monitor event, rendered.
async fn monitor(ctx: &Ctx, object: &crate::jdwp::TaggedObjectId, len: usize) -> String {
    ctx.render(
        &Value::Object {
            tag: object.tag,
            id: object.id,
        },
        len,
    )
    .await
}
