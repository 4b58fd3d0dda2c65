//! Where a tool's expression is evaluated: the named thread (or the newest
//! one an event suspended), one of its frames, `this`, and whether methods
//! may be invoked there.

use super::EvalContext;
use crate::actors::error::JdwpError;
use crate::actors::session::inspect;
use crate::jdwp::{ErrorCode, ThreadId};

/// Builds the context a tool evaluates in: the named thread (or the
/// newest thread an event suspended), frame `frame_index` of it, `this`,
/// and whether methods may be invoked there. Without any suspended thread
/// the context has no frame: handles and statics still evaluate.
pub async fn context(
    session: &crate::actors::SessionHandle,
    thread: Option<ThreadId>,
    frame_index: usize,
) -> Result<EvalContext, crate::actors::SessionError> {
    use crate::actors::error::{SessionError, ThreadUse};
    session.check_alive()?;
    let conn = session.connection();
    let event_threads = session.event_threads().await;
    let thread = match thread {
        Some(t) => {
            match conn
                .send(&crate::jdwp::thread_reference::SuspendCount { thread: t })
                .await
            {
                Ok(n) if n > 0 => Some(t),
                Ok(_) => {
                    return Err(SessionError::ThreadRunning {
                        thread: t,
                        purpose: ThreadUse::Read,
                    });
                }
                Err(e)
                    if matches!(
                        e.code(),
                        Some(ErrorCode::INVALID_OBJECT) | Some(ErrorCode::INVALID_THREAD)
                    ) =>
                {
                    return Err(SessionError::NoSuchThread { thread: t });
                }
                Err(e) => return Err(session.map_err(e)),
            }
        }
        None => {
            let mut found = None;
            for t in event_threads.iter().rev() {
                match conn
                    .send(&crate::jdwp::thread_reference::SuspendCount { thread: *t })
                    .await
                {
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
            found
        }
    };
    let Some(thread) = thread else {
        return Ok(EvalContext {
            not_invocable_because: "no thread is suspended by an event".into(),
            ..EvalContext::default()
        });
    };
    let classes = session.classes();
    let frames = inspect::frames(classes, thread, frame_index, Some(1))
        .await
        .map_err(|e| session.map_err(e))?;
    let Some(frame) = frames.into_iter().next() else {
        let depth = conn
            .send(&crate::jdwp::thread_reference::FrameCount { thread })
            .await
            .unwrap_or(0);
        return Err(SessionError::FrameOutOfRange {
            thread,
            index: frame_index,
            depth,
        });
    };
    let this = inspect::this_object(classes, thread, &frame)
        .await
        .map_err(|e| session.map_err(e))?;
    let invocable = event_threads.contains(&thread);
    Ok(EvalContext {
        thread: Some(thread),
        frame: Some(frame),
        this,
        invocable,
        not_invocable_because: if invocable {
            String::new()
        } else {
            format!(
                "thread @{:#x} was suspended by the agent (a thread suspend or a pause), not by an event",
                thread.0
            )
        },
        invoke_budget: None,
    })
}
