//! One suspension per agent stop. Two threads can pass a suspending stop
//! point at the same moment: each composite (or each escalation of a
//! condition checked on its thread) suspends the whole VM, so every
//! thread ends at suspend count 2, and an invocation on either thread
//! then never runs (JDWP resumes an invoking thread only once). While the
//! VM is already held for the agent, the second suspension is undone at
//! once, and its hit is reported as stacked on the first. Decisions are
//! taken one at a time, with the counts read under the same lock.

use std::time::Instant;

use futures::future::join_all;

use crate::events::ctx::Ctx;
use crate::jdwp::ThreadId;
use crate::jdwp::thread_reference::{Resume as ThreadResume, SuspendCount};
use crate::jdwp::virtual_machine::{AllThreads, Resume, Suspend};

/// How a hold ended: what failed, and whether the hit found the VM held
/// for the agent already.
#[derive(Debug, Default)]
pub(super) struct Ended {
    pub error: Option<String>,
    pub stacked: bool,
    /// A resume of the whole VM began after the hit arrived, and the hit
    /// holds nothing any more.
    pub released: bool,
}

impl Ended {
    fn failed(e: impl ToString) -> Self {
        Self {
            error: Some(e.to_string()),
            ..Self::default()
        }
    }
}

/// Every live thread's suspend count.
async fn counts(ctx: &Ctx) -> Option<Vec<(ThreadId, i32)>> {
    let threads = ctx.conn.send(&AllThreads).await.ok()?;
    let counts = join_all(
        threads
            .iter()
            .map(|&thread| ctx.conn.send(&SuspendCount { thread })),
    )
    .await;
    Some(
        threads
            .into_iter()
            .zip(counts)
            .filter_map(|(t, c)| c.ok().map(|n| (t, n)))
            .collect(),
    )
}

/// A condition passed on the hit thread, which its event alone holds:
/// suspend the VM for the agent and hand the thread's hold over to it.
/// When every other thread is already held and the session knows of a
/// suspension for the agent, the VM is not suspended again.
pub(super) async fn escalate(ctx: &Ctx, thread: ThreadId, received: Instant) -> Ended {
    let _one_at_a_time = ctx.agent_stops.lock().await;
    let resumed = || ctx.session.bus.resumed_since(received);
    let mut already = false;
    if !resumed() {
        let others_held = counts(ctx).await.is_some_and(|c| {
            let others: Vec<i32> = c
                .into_iter()
                .filter(|(t, _)| *t != thread)
                .map(|(_, n)| n)
                .collect();
            !others.is_empty() && others.iter().all(|n| *n >= 1)
        });
        already = others_held && ctx.session.session.view().await.maybe_suspended;
    }
    let conn = &ctx.conn;
    // The agent resumed the VM while this hit was being checked: it asked
    // for the program to run, so the late hit must not stop it again.
    // Decided last, with nothing awaited between this look and the
    // suspension below: a resume marks the bus before it sends anything,
    // and the JVM runs one connection's commands in the order they were
    // queued, so a resume not seen here reaches the JVM after our
    // suspension and releases it.
    if resumed() {
        return match conn.send(&ThreadResume { thread }).await {
            Ok(()) => Ended {
                released: true,
                ..Ended::default()
            },
            Err(e) => Ended::failed(e),
        };
    }
    if already {
        return match conn.send(&ThreadResume { thread }).await {
            Ok(()) => Ended {
                stacked: true,
                ..Ended::default()
            },
            Err(e) => Ended::failed(e),
        };
    }
    let (s, r) = futures::join!(conn.send(&Suspend), conn.send(&ThreadResume { thread }));
    match s.and(r) {
        Ok(()) => Ended::default(),
        Err(e) => Ended::failed(e),
    }
}

/// A composite that suspended the whole VM is kept for the agent. When
/// every thread is held twice over, an earlier composite already holds the
/// VM: this one's suspension is undone.
pub(super) async fn keep_all(ctx: &Ctx, thread: ThreadId, received: Instant) -> Ended {
    let _one_at_a_time = ctx.agent_stops.lock().await;
    let counts = counts(ctx).await;
    if ctx.session.bus.resumed_since(received) {
        // Resumed after the hit arrived: released unless the JVM applied
        // this composite's suspension after that resume.
        let held = counts.iter().flatten().any(|(t, n)| *t == thread && *n > 0);
        return Ended {
            released: !held,
            ..Ended::default()
        };
    }
    match counts {
        Some(c) if !c.is_empty() && c.iter().all(|(_, n)| *n >= 2) => {
            match ctx.conn.send(&Resume).await {
                Ok(()) => Ended {
                    stacked: true,
                    ..Ended::default()
                },
                Err(e) => Ended::failed(e),
            }
        }
        _ => Ended::default(),
    }
}
