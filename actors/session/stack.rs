//! The stack view: a suspended thread's frames, each with its locals read
//! and valued for display, answered in one call. The thread's count, its
//! frames and its depth go out in one burst; then the locals of every
//! frame shown, together; then every value's rendering reads, together.

use futures::future::join_all;

use crate::door::context::{Depth, FrameWindow};
use crate::error::{JdwpError, SessionError, ThreadUse};
use crate::jdwp::ThreadId;
use crate::jvm::eval::{EvalContext, to_val};
use crate::jvm::inspect::{FrameView, Locals, declared_type};
use crate::jvm::show::Budget;
use crate::model::shown::{Shown, Tree};
use crate::session::SessionHandle;

/// What a stack read asks for.
#[derive(Debug, Clone)]
pub struct StackQuery {
    /// The thread; `None` for the newest one a stop point suspended.
    pub thread: Option<ThreadId>,
    /// Frames to read from the top.
    pub max_frames: usize,
    /// Locals only for frames whose class starts with this.
    pub package_filter: Option<String>,
    /// Each object local as a field tree rather than one line.
    pub expand: bool,
    /// How much of each value is read.
    pub budget: Budget,
}

/// A suspended thread's stack, as read.
#[derive(Debug, Clone)]
pub struct StackView {
    pub thread: ThreadId,
    /// The whole stack's depth (at least the frames read).
    pub depth: usize,
    pub frames: Vec<StackFrame>,
}

/// One frame and its locals.
#[derive(Debug, Clone)]
pub struct StackFrame {
    pub frame: FrameView,
    pub locals: FrameLocals,
}

/// The locals of one frame, or why there are none to show.
#[derive(Debug, Clone)]
pub enum FrameLocals {
    /// Left out by the package filter.
    Skipped,
    /// The read failed.
    Unreadable(JdwpError),
    /// A native method has none.
    Native,
    /// The class was compiled without a local variable table.
    NoTable,
    Known(Vec<ShownLocal>),
}

/// One local, valued.
#[derive(Debug, Clone)]
pub struct ShownLocal {
    pub name: String,
    /// The declared type as Java source.
    pub declared: String,
    /// The declaration has a generic signature, which says more than the
    /// value's own type.
    pub generic: bool,
    pub value: ShownValue,
}

/// A value as one line, or as a field tree.
#[derive(Debug, Clone)]
pub enum ShownValue {
    Line(Shown),
    Tree(Tree),
}

/// Reads the stack `q` asks for; `NoThreadSuspended` when no thread is
/// named and no stop point holds one.
pub async fn stack(session: &SessionHandle, q: &StackQuery) -> Result<StackView, SessionError> {
    let window = FrameWindow {
        start: 0,
        count: q.max_frames.max(1),
        depth: Depth::Read,
    };
    let Some(held) = session.held_frames(q.thread, window).await? else {
        return Err(SessionError::NoThreadSuspended {
            purpose: ThreadUse::Read,
        });
    };
    let thread = held.thread;
    let depth = held
        .depth
        .and_then(|d| usize::try_from(d).ok())
        .unwrap_or(held.frames.len())
        .max(held.frames.len());
    let wanted = |f: &FrameView| {
        q.package_filter
            .as_deref()
            .is_none_or(|prefix| f.class.name.starts_with(prefix))
    };
    let read = join_all(held.frames.iter().map(|f| async move {
        if wanted(f) {
            Some(session.locals(thread, f).await)
        } else {
            None
        }
    }))
    .await;
    // Render every local of every frame at once: the string and type
    // reads behind the renderings go out as one pipelined burst.
    let plain = EvalContext::default();
    let reader = session.value_reader(&plain, q.budget, None);
    let reader = &reader;
    let valued = join_all(read.iter().map(|l| async move {
        let Some(Ok(Locals::Known(ls))) = l else {
            return Vec::new();
        };
        join_all(ls.iter().map(|l| async move {
            let val = to_val(&l.value);
            if q.expand {
                ShownValue::Tree(reader.tree(&val).await)
            } else {
                ShownValue::Line(reader.line(&val).await)
            }
        }))
        .await
    }))
    .await;
    let frames = held
        .frames
        .into_iter()
        .zip(read)
        .zip(valued)
        .map(|((frame, read), values)| {
            let locals = match read {
                None => FrameLocals::Skipped,
                Some(Err(e)) => FrameLocals::Unreadable(e),
                Some(Ok(Locals::Absent))
                    if frame.method.as_ref().is_some_and(|m| m.is_native()) =>
                {
                    FrameLocals::Native
                }
                Some(Ok(Locals::Absent)) => FrameLocals::NoTable,
                Some(Ok(Locals::Known(ls))) => FrameLocals::Known(
                    ls.into_iter()
                        .zip(values)
                        .map(|(l, value)| ShownLocal {
                            declared: declared_type(&l.signature, &l.generic),
                            generic: !l.generic.is_empty(),
                            name: l.name,
                            value,
                        })
                        .collect(),
                ),
            };
            StackFrame { frame, locals }
        })
        .collect();
    Ok(StackView {
        thread,
        depth,
        frames,
    })
}
