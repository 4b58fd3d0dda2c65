//! Thread-level reads a session needs for its own bookkeeping: the census
//! of suspended threads (pipelined: every thread's count asked at once),
//! the thread list, and the after-disconnect check that the JVM runs.

use std::time::Duration;

use futures::future::join_all;

use crate::connection::ConnectionHandle;
use crate::error::JdwpError;
use crate::jdwp::FrameInfo;
use crate::jdwp::ThreadId;
use crate::jdwp::thread_reference::{
    Frames, IsVirtual, Name, Resume, Status, Suspend, SuspendCount,
};
use crate::jdwp::virtual_machine::AllThreads;

/// How many threads are suspended, of how many.
#[derive(Debug, Clone, Copy, Default)]
pub struct Census {
    pub held: usize,
    pub total: usize,
    /// The deepest suspend count seen.
    pub max_depth: i32,
}

/// Counts suspended threads. Threads that died between the two reads are
/// left out.
pub async fn census(conn: &ConnectionHandle) -> Result<Census, JdwpError> {
    Ok(Census::of(&counts(conn).await?))
}

/// Every live thread with its suspend count, the counts asked at once.
/// Threads that died between the two reads are left out.
pub async fn counts(conn: &ConnectionHandle) -> Result<Vec<(ThreadId, i32)>, JdwpError> {
    let threads = conn.send(&AllThreads).await?;
    let counts = threads
        .iter()
        .map(|&thread| conn.send(&SuspendCount { thread }))
        .collect();
    counts_from(&threads, counts).await
}

/// The counts of `threads` from their `SuspendCount` requests, already
/// sent (in the same order): a thread that died is left out, a JVM gone
/// is an error.
pub async fn counts_from<F>(
    threads: &[ThreadId],
    requests: Vec<F>,
) -> Result<Vec<(ThreadId, i32)>, JdwpError>
where
    F: Future<Output = Result<i32, JdwpError>>,
{
    let mut out = Vec::with_capacity(threads.len());
    for (&thread, count) in threads.iter().zip(join_all(requests).await) {
        match count {
            Ok(n) => out.push((thread, n)),
            Err(e) if e.is_gone() => return Err(e),
            Err(_) => {}
        }
    }
    Ok(out)
}

impl Census {
    /// The census of threads' suspend counts.
    pub fn of(counts: &[(ThreadId, i32)]) -> Census {
        let mut c = Census::default();
        for &(_, n) in counts {
            c.total += 1;
            if n > 0 {
                c.held += 1;
                c.max_depth = c.max_depth.max(n);
            }
        }
        c
    }
}

/// One thread as the thread list shows it.
#[derive(Debug, Clone)]
pub struct ThreadInfo {
    pub id: ThreadId,
    pub name: String,
    pub status: String,
    pub suspend_count: i32,
    /// A virtual thread (JDWP 19+; listed only with `includevirtualthreads=y`).
    pub is_virtual: bool,
}

/// Every live thread with its name, status and suspend count, read in one
/// pipelined burst.
pub async fn list(conn: &ConnectionHandle) -> Result<Vec<ThreadInfo>, JdwpError> {
    let threads = conn.send(&AllThreads).await?;
    let reads = threads.iter().map(|&thread| async move {
        let (name, status, count) = futures::join!(
            conn.send(&Name { thread }),
            conn.send(&Status { thread }),
            conn.send(&SuspendCount { thread })
        );
        (thread, name, status, count)
    });
    let mut out = Vec::new();
    for (id, name, status, count) in join_all(reads).await {
        let (Ok(name), Ok(status), Ok(count)) = (name, status, count) else {
            continue;
        };
        out.push(ThreadInfo {
            id,
            name,
            status: format!("{:?}", status.thread_status).to_uppercase(),
            suspend_count: count,
            is_virtual: false,
        });
    }
    out.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(out)
}

/// Marks the virtual threads of a thread list (one pipelined
/// `ThreadReference.IsVirtual` each; a refusal reads as not virtual).
pub async fn mark_virtual(conn: &ConnectionHandle, threads: &mut [ThreadInfo]) {
    let answers = join_all(
        threads
            .iter()
            .map(|t| conn.send(&IsVirtual { thread: t.id })),
    )
    .await;
    for (t, v) in threads.iter_mut().zip(answers) {
        t.is_virtual = v.unwrap_or(false);
    }
}

/// One thread's frames, read while that thread alone is suspended, and
/// how long it was held.
pub async fn held_frames(
    conn: &ConnectionHandle,
    thread: ThreadId,
) -> (Result<Vec<FrameInfo>, JdwpError>, Duration) {
    let started = std::time::Instant::now();
    let suspend = conn.send(&Suspend { thread });
    let frames = conn.send(&Frames {
        thread,
        start_frame: 0,
        length: -1,
    });
    let resume = conn.send(&Resume { thread });
    // Awaited in a task of its own: the resume is answered even when this
    // call is dropped.
    let held = tokio::spawn(async move {
        let suspended = suspend.await;
        let frames = frames.await;
        let _ = resume.await;
        (suspended.and(frames), started.elapsed())
    })
    .await;
    match held {
        Ok(r) => r,
        Err(e) => (
            Err(JdwpError::Disconnected {
                command: "ThreadReference.Frames",
                reason: format!("the read failed: {e}"),
            }),
            started.elapsed(),
        ),
    }
}
