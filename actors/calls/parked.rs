//! An evaluation that calls a method while no event holds a thread: a
//! thread is parked for it as debug_invoke parks one (`seat.rs`), the
//! evaluation runs there without a frame of its own (names resolve as with
//! no thread: classes, statics and handles, never the parked frame's
//! locals), and the thread is given back after.

use super::seat;
use crate::door::Jvm;
use crate::error::SessionError;
use crate::jdwp::{ObjectId, ThreadId};
use crate::jvm::eval::EvalContext;

/// The thread an evaluation was parked on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParkedOn {
    pub thread: ThreadId,
    pub name: String,
}

impl Jvm {
    /// Runs `run` in a context on a thread parked for it, then gives the
    /// thread back (once a call past its budget returns, if one did not).
    /// Refused read-only, and when no thread can be parked.
    pub async fn on_parked_thread<T>(
        &self,
        run: impl AsyncFnOnce(&EvalContext) -> T,
    ) -> Result<(T, ParkedOn), SessionError> {
        self.ensure_writable("park a thread to invoke a method")?;
        self.check_alive()?;
        let seat = seat::take(self, None).await?;
        let ctx = EvalContext {
            frame: None,
            this: ObjectId(0),
            ..seat.ctx.clone()
        };
        let out = run(&ctx).await;
        let still_running = self.invoking().iter().any(|i| i.thread == seat.thread);
        seat.give_back(self, still_running).await;
        Ok((
            out,
            ParkedOn {
                thread: seat.thread,
                name: seat.name.clone(),
            },
        ))
    }
}
