//! Stepping one thread: over, into or out, with class filters. One step
//! request is live per session at a time; an earlier one is cleared first
//! (a pending step re-fires as soon as threads run). The request carries a
//! Count of 1, so the JVM deletes it after it fires, and it is cleared
//! again afterwards in case it never did.

use std::time::Duration;

use crate::door::Jvm;
use crate::error::{JdwpError, SessionError, ThreadUse};
use crate::jdwp::event_request::{Clear, Set};
use crate::jdwp::thread_reference::{Resume, SuspendCount};
use crate::jdwp::{Event, EventKind, Modifier, StepDepth, StepSize, SuspendPolicy, ThreadId};
use crate::jvm::inspect::{self, FrameView};

/// Packages stepping skips unless told otherwise: the JDK and the usual
/// container and persistence layers.
pub const DEFAULT_EXCLUDES: &[&str] = &[
    "java.*",
    "javax.*",
    "jakarta.*",
    "sun.*",
    "com.sun.*",
    "jdk.*",
    "org.jboss.*",
    "io.undertow.*",
    "org.wildfly.*",
    "org.hibernate.*",
];

/// Which way to step.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StepKind {
    Over,
    Into,
    Out,
}

impl StepKind {
    /// `over`, `into` or `out`.
    pub fn word(self) -> &'static str {
        match self {
            StepKind::Over => "over",
            StepKind::Into => "into",
            StepKind::Out => "out",
        }
    }
}

/// Which classes the step may stop in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StepFilter {
    /// Skip classes matching these patterns.
    Exclude(Vec<String>),
    /// Stop only in classes matching these patterns.
    Only(Vec<String>),
}

/// Where a step landed.
#[derive(Debug, Clone)]
pub struct Landing {
    pub thread: ThreadId,
    pub frame: Option<FrameView>,
}

/// Steps `thread` and waits (up to `timeout`) for it to land.
pub async fn step(
    session: &Jvm,
    thread: ThreadId,
    kind: StepKind,
    filter: &StepFilter,
    timeout: Duration,
) -> Result<Landing, SessionError> {
    let conn = session.connection();
    let gone = |e: JdwpError| session.map_err(e);
    let count = conn.send(&SuspendCount { thread }).await.map_err(gone)?;
    if count == 0 {
        return Err(SessionError::ThreadRunning {
            thread,
            purpose: ThreadUse::Step,
        });
    }
    let ledger = session.ledger();
    if let Some(old) = ledger.replace_step(None).await {
        let _ = conn
            .send(&Clear {
                event_kind: EventKind::SingleStep,
                request_id: old,
            })
            .await;
    }
    let depth = match kind {
        StepKind::Over => StepDepth::Over,
        StepKind::Into => StepDepth::Into,
        StepKind::Out => StepDepth::Out,
    };
    let mut modifiers = vec![Modifier::Step {
        thread,
        size: StepSize::Line,
        depth,
    }];
    match filter {
        StepFilter::Exclude(patterns) => {
            modifiers.extend(patterns.iter().map(|p| Modifier::ClassExclude {
                class_pattern: p.clone(),
            }))
        }
        StepFilter::Only(patterns) => {
            modifiers.extend(patterns.iter().map(|p| Modifier::ClassMatch {
                class_pattern: p.clone(),
            }))
        }
    }
    let mut events = session.subscribe();
    let request = conn
        .send(&Set {
            event_kind: EventKind::SingleStep,
            suspend_policy: SuspendPolicy::EventThread,
            modifiers,
        })
        .await
        .map_err(gone)?;
    ledger.replace_step(Some(request)).await;
    // Let the thread run: take off every suspension it has. It is no
    // longer event-suspended from here; forget that first, since the
    // landing may be recorded before the last resume's reply arrives.
    ledger.forget_event_threads(Some(thread));
    for _ in 0..count {
        conn.send(&Resume { thread }).await.map_err(gone)?;
    }
    let landed = tokio::time::timeout(timeout, async {
        loop {
            match events.recv().await {
                Ok(c) => {
                    if c.events.iter().any(|e| {
                        matches!(e, Event::SingleStep { request_id, .. } if *request_id == request)
                    }) {
                        return true;
                    }
                }
                Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => {}
                Err(tokio::sync::broadcast::error::RecvError::Closed) => return false,
            }
        }
    })
    .await;
    let _ = conn
        .send(&Clear {
            event_kind: EventKind::SingleStep,
            request_id: request,
        })
        .await;
    ledger.replace_step(None).await;
    match landed {
        Ok(true) => {
            let frame = inspect::frames(session.classes(), thread, 0, Some(1))
                .await
                .map_err(gone)?
                .into_iter()
                .next();
            Ok(Landing { thread, frame })
        }
        Ok(false) => Err(session
            .check_alive()
            .err()
            .unwrap_or(SessionError::StepInterrupted)),
        Err(_) => Err(SessionError::StepTimeout {
            thread,
            ms: timeout.as_millis(),
        }),
    }
}
