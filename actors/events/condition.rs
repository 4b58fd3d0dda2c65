//! Conditions and `trace_expr`: the seam to the expression evaluator.
//! A condition is evaluated on the hit thread while only that thread is
//! held; the stop point escalates to a VM suspend only when it holds. The
//! evaluator (`crate::actors::session::eval::evaluate_on_frame`) is being
//! written elsewhere; until it lands, arming refuses conditions and
//! expressions ([`AVAILABLE`] is false), and this answers an error that the
//! hit reports instead of guessing true or false.

use crate::jdwp::{Event, ThreadId};

use super::capture::Ctx;

/// Whether conditions and trace expressions can be evaluated.
pub const AVAILABLE: bool = false;

/// Evaluates `condition` on the top frame of `thread`, suspended by
/// `event` (whose data — the exception, the incoming value — is in scope).
pub async fn evaluate(
    _ctx: &Ctx,
    _thread: ThreadId,
    _event: &Event,
    condition: &str,
) -> Result<bool, String> {
    Err(format!(
        "cannot evaluate {condition:?}: the expression evaluator is not available in this build"
    ))
}
