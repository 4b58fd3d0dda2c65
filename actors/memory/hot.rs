//! The threads that burn CPU, for a JVM on this machine: every native
//! thread's CPU time read twice from `/proc/<pid>/task/*/stat`, an
//! interval apart, each matched to its Java thread by name
//! (`model::cpu`), and the busiest Java threads' stacks read by
//! suspending that one thread, reading its frames and resuming it, the
//! three requests queued back to back so the hold is one round trip of
//! work. The resume runs in a task of its own, so a dropped call still
//! lets the thread go.

use std::collections::HashSet;
use std::time::{Duration, Instant};

use crate::discovery;
use crate::door::Jvm;
use crate::dumps::{frame_label, method_labels};
use crate::error::{JdwpError, SessionError};
use crate::jdwp::ThreadId;
use crate::jvm::threads;
use crate::model::cpu::{HotThread, Owner, rank};
use crate::model::dump::Stack;

/// `/proc` clock ticks a second (Linux `USER_HZ`, fixed by the ABI).
const USER_HZ: f64 = 100.0;

/// What a hot-threads call asks.
#[derive(Debug, Clone)]
pub struct HotSpec {
    pub interval: Duration,
    pub top: usize,
    pub max_frames: usize,
}

/// One ranked native thread, with its Java thread's stack when it has one.
#[derive(Debug, Clone)]
pub struct HotRow {
    pub hot: HotThread,
    /// The Java thread read, its stack, and how long it was held.
    pub java: Option<(u64, Stack, Duration)>,
}

/// The answer.
#[derive(Debug, Clone)]
pub struct HotView {
    pub pid: u32,
    pub interval: Duration,
    pub rows: Vec<HotRow>,
    /// Native threads seen.
    pub threads: usize,
    /// CPU of the whole process over the interval, percent of one core.
    pub total_pct: f64,
}

impl Jvm {
    /// The threads that burn CPU (see the module).
    pub async fn hot_threads(&self, spec: HotSpec) -> Result<HotView, SessionError> {
        self.check_alive()?;
        let pid = self.local_pid().await?;
        let before = discovery::tasks(pid).await?;
        let started = Instant::now();
        tokio::time::sleep(spec.interval).await;
        let after = discovery::tasks(pid).await?;
        let secs = started.elapsed().as_secs_f64();
        let java = self.threads().await?;
        let names: Vec<String> = java.iter().map(|t| t.name.clone()).collect();
        let ranked = rank(&before, &after, secs, USER_HZ, pid, &names);
        let total_pct = ranked.iter().map(|h| h.cpu_pct).sum();
        let threads = ranked.len();
        let mut rows = Vec::new();
        let mut read: HashSet<u64> = HashSet::new();
        for hot in ranked.into_iter().take(spec.top) {
            let name = match &hot.owner {
                Owner::Java(n) => Some(n.as_str()),
                Owner::Main => Some("main"),
                _ => None,
            };
            let thread =
                name.and_then(|n| java.iter().find(|t| t.name == n && !read.contains(&t.id.0)));
            let java = match thread {
                Some(t) => {
                    read.insert(t.id.0);
                    let (stack, held) = self.held_stack(t.id, spec.max_frames).await;
                    Some((t.id.0, stack, held))
                }
                None => None,
            };
            rows.push(HotRow { hot, java });
        }
        Ok(HotView {
            pid,
            interval: spec.interval,
            rows,
            threads,
            total_pct,
        })
    }

    /// One thread's stack, read while that thread alone is suspended.
    async fn held_stack(&self, thread: ThreadId, max_frames: usize) -> (Stack, Duration) {
        let (frames, held) = threads::held_frames(self.connection(), thread).await;
        let frames = match frames {
            Err(e) => return (stack_error(e), held),
            Ok(frames) => frames,
        };
        let methods = frames
            .iter()
            .take(max_frames)
            .map(|f| (f.location.class, f.location.method))
            .collect();
        let labels = method_labels(self.classes(), methods).await;
        let stack = Stack::Read {
            depth: frames.len(),
            frames: frames
                .iter()
                .take(max_frames)
                .map(|f| frame_label(f, &labels))
                .collect(),
        };
        (stack, held)
    }
}

fn stack_error(e: JdwpError) -> Stack {
    Stack::Failed(e.to_string())
}
