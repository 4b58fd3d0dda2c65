//! Where a tool's expression is evaluated: the named thread (or the newest
//! one an event suspended), one of its frames, `this`, and whether methods
//! may be invoked there. The thread is picked and its frames read in one
//! burst of requests: the suspend counts first, the frames right behind
//! them on the same connection.

use futures::future::join_all;

use crate::door::Jvm;
use crate::error::{JdwpError, NotInvocable, Released, SessionError, ThreadUse};
use crate::jdwp::thread_reference::{FrameCount, SuspendCount};
use crate::jdwp::{ErrorCode, ThreadId};
use crate::jvm::eval::EvalContext;
use crate::jvm::inspect::{self, FrameView};

/// Which frames of the held thread a tool reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FrameWindow {
    /// Index of the first frame (0 is the top).
    pub start: usize,
    /// How many frames at most.
    pub count: usize,
    pub depth: Depth,
}

/// Whether the stack's depth is read along with the frames.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Depth {
    /// Always: the caller shows it.
    Read,
    /// Only when the window reaches past the end of the stack.
    WhenShort,
}

/// A suspended thread and the frames read from it.
#[derive(Debug, Clone)]
pub struct HeldFrames {
    pub thread: ThreadId,
    pub frames: Vec<FrameView>,
    /// The stack's depth, when it was read.
    pub depth: Option<i32>,
    /// The threads an event suspended, newest last.
    pub event_threads: Vec<ThreadId>,
}

/// Picks the named thread (or the newest thread an event suspended that is
/// still suspended) and reads `window` of its frames. `None` when no thread
/// is named and none an event suspended is held. The suspend counts and
/// the first candidate's frames go out together, so a held thread costs
/// one round trip (two when the stack is shorter than the window).
pub async fn held_frames(
    session: &Jvm,
    thread: Option<ThreadId>,
    window: FrameWindow,
) -> Result<Option<HeldFrames>, SessionError> {
    session.check_alive()?;
    let conn = session.connection();
    let event_threads = session.event_threads().await;
    let candidates: Vec<ThreadId> = match thread {
        Some(t) => vec![t],
        None => {
            // The thread of the event the agent read last comes first
            // while it holds; then the newest event's.
            let mut c: Vec<ThreadId> = event_threads.iter().rev().copied().collect();
            if let Some(read) = session.events().last_read()
                && read.suspended != crate::jdwp::SuspendPolicy::None
                && let Some(i) = c.iter().position(|t| *t == read.thread)
            {
                c[..=i].rotate_right(1);
            }
            c
        }
    };
    let Some(&first) = candidates.first() else {
        return Ok(None);
    };
    let counts: Vec<_> = candidates
        .iter()
        .map(|&thread| conn.send(&SuspendCount { thread }))
        .collect();
    // Sent before any reply is read: the guess that the first candidate is
    // the one held costs nothing when it is right and one wasted (failed)
    // read when it is not.
    let burst = |t: ThreadId| {
        let frames = inspect::frames_request(conn, t, window.start, window.count);
        let depth = (window.depth == Depth::Read).then(|| conn.send(&FrameCount { thread: t }));
        (frames, depth)
    };
    let (mut frames, mut depth) = burst(first);
    let counts = join_all(counts).await;
    let chosen = match thread {
        Some(t) => match counts.into_iter().next() {
            Some(Ok(n)) if n > 0 => t,
            Some(Ok(_)) | None => {
                return Err(SessionError::ThreadRunning {
                    thread: t,
                    purpose: ThreadUse::Read,
                });
            }
            Some(Err(e))
                if matches!(
                    e.code(),
                    Some(ErrorCode::INVALID_OBJECT) | Some(ErrorCode::INVALID_THREAD)
                ) =>
            {
                return Err(SessionError::NoSuchThread { thread: t });
            }
            Some(Err(e)) => return Err(session.map_err(e)),
        },
        None => {
            let mut found = None;
            for (t, count) in candidates.iter().zip(counts) {
                match count {
                    Ok(n) if n > 0 => {
                        found = Some(*t);
                        break;
                    }
                    // A JVM that stopped answering, or went away, is what
                    // blocks: never report it as "no thread suspended".
                    Err(e) if e.is_gone() || matches!(e, JdwpError::Timeout { .. }) => {
                        return Err(session.map_err(e));
                    }
                    _ => {}
                }
            }
            let Some(found) = found else {
                return Ok(None);
            };
            found
        }
    };
    if chosen != first {
        (frames, depth) = burst(chosen);
    }
    let depth = match depth {
        Some(d) => d.await.ok(),
        None => None,
    };
    let (frames, depth) = inspect::frames_from(
        session.classes(),
        chosen,
        window.start,
        window.count,
        frames,
        depth,
    )
    .await
    .map_err(|e| session.map_err(e))?;
    Ok(Some(HeldFrames {
        thread: chosen,
        frames,
        depth,
        event_threads,
    }))
}

/// Why no thread is there to evaluate in: the event the agent read last
/// may already have been released, by a resume before it was read.
fn nothing_held(session: &Jvm) -> NotInvocable {
    NotInvocable::NothingHeld {
        released: session.events().last_read().map(|e| Released {
            seq: e.seq,
            thread_name: e.thread_name,
        }),
    }
}

/// Builds the context a tool evaluates in: the named thread (or the
/// newest thread an event suspended), frame `frame_index` of it, `this`,
/// and whether methods may be invoked there. Without any suspended thread
/// the context has no frame: handles and statics still evaluate.
pub async fn context(
    session: &Jvm,
    thread: Option<ThreadId>,
    frame_index: usize,
) -> Result<EvalContext, SessionError> {
    let window = FrameWindow {
        start: frame_index,
        count: 1,
        depth: Depth::WhenShort,
    };
    let Some(held) = held_frames(session, thread, window).await? else {
        return Ok(EvalContext {
            not_invocable: Some(nothing_held(session)),
            ..EvalContext::default()
        });
    };
    let thread = held.thread;
    let Some(frame) = held.frames.into_iter().next() else {
        let depth = match held.depth {
            Some(d) => d,
            None => session
                .connection()
                .send(&FrameCount { thread })
                .await
                .unwrap_or(0),
        };
        return Err(SessionError::FrameOutOfRange {
            thread,
            index: frame_index,
            depth,
        });
    };
    let this = inspect::this_object(session.classes(), thread, &frame)
        .await
        .map_err(|e| session.map_err(e))?;
    let invocable = held.event_threads.contains(&thread);
    Ok(EvalContext {
        thread: Some(thread),
        frame: Some(frame),
        this,
        invocable,
        not_invocable: (!invocable).then_some(NotInvocable::SuspendedByAgent { thread }),
        invoke_budget: None,
    })
}
