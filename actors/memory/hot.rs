//! The threads that burn CPU, for a JVM on this machine: every native
//! thread's CPU time read from `/proc/<pid>/task/*/stat` at the start and
//! the end of the interval, each matched to its Java thread by name
//! (`model::cpu`). During the interval the same reading is taken every
//! tick, and each Java thread that was busy in that tick has its stack
//! sampled: that thread alone is suspended, its frames read and it is
//! resumed, the three requests queued back to back so the hold is one
//! round trip of work. A thread that burns in bursts is thus seen where it
//! burns, not where it waits when the interval ends. The resume runs in a
//! task of its own, so a dropped call still lets the thread go.

use std::collections::{HashMap, HashSet};
use std::time::{Duration, Instant};

use crate::discovery;
use crate::door::Jvm;
use crate::dumps::{frame_label, method_labels};
use crate::error::{JdwpError, SessionError};
use crate::jdwp::ThreadId;
use crate::jvm::threads;
use crate::model::cpu::{HotThread, Owner, TaskStat, rank};
use crate::model::dump::Stack;

/// `/proc` clock ticks a second (Linux `USER_HZ`, fixed by the ABI).
const USER_HZ: f64 = 100.0;
/// The sampling tick: `/proc` counts CPU in 10 ms ticks, so a tenth of a
/// second tells a busy thread (≥ 3 ticks) from an idle one.
const TICK: Duration = Duration::from_millis(100);
/// A thread is busy in a tick when it used this share of a core in it
/// (two of `/proc`'s 10 ms ticks in a 100 ms tick: a thread that burns
/// gets that much even on a loaded machine).
const BUSY_PCT: f64 = 15.0;
/// At most this many samples over one interval, whatever its length.
const MAX_TICKS: u32 = 100;

/// What a hot-threads call asks.
#[derive(Debug, Clone)]
pub struct HotSpec {
    pub interval: Duration,
    pub top: usize,
    pub max_frames: usize,
}

/// A Java thread's stacks over the interval.
#[derive(Debug, Clone)]
pub struct JavaStack {
    pub thread: u64,
    /// The stack seen most often while the thread was busy, or, when it
    /// never was in a tick, the stack read at the end.
    pub stack: Stack,
    /// The longest hold of one read.
    pub held: Duration,
    /// Stacks read while busy, and in how many of them `stack` was seen
    /// (both 0 when `stack` was read at the end).
    pub samples: usize,
    pub seen: usize,
    /// The frames on top of the stack in the samples, most frequent
    /// first, with how many samples each topped.
    pub tops: Vec<(String, usize)>,
}

/// One ranked native thread, with its Java thread's stack when it has one.
#[derive(Debug, Clone)]
pub struct HotRow {
    pub hot: HotThread,
    pub java: Option<JavaStack>,
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
    /// Sampling ticks taken during the interval, `tick` apart.
    pub ticks: u32,
    pub tick: Duration,
}

/// The stacks one thread showed while busy.
#[derive(Default)]
struct Samples {
    stacks: Vec<Vec<String>>,
    depths: Vec<usize>,
    held: Duration,
}

impl Jvm {
    /// The threads that burn CPU (see the module).
    pub async fn hot_threads(&self, spec: HotSpec) -> Result<HotView, SessionError> {
        self.check_alive()?;
        let pid = self.local_pid().await?;
        let before = discovery::tasks(pid).await?;
        let started = Instant::now();
        let deadline = started + spec.interval;
        let java = self.threads().await?;
        let names: Vec<String> = java.iter().map(|t| t.name.clone()).collect();
        let mut sampled: HashMap<u64, Samples> = HashMap::new();
        let (mut last, mut last_at, mut ticks) = (before.clone(), started, 0u32);
        while ticks < MAX_TICKS && Instant::now() + TICK < deadline {
            tokio::time::sleep(TICK).await;
            let now = discovery::tasks(pid).await?;
            let busy = busy_threads(&last, &now, last_at.elapsed(), pid, &names, spec.top);
            (last, last_at) = (now, Instant::now());
            ticks += 1;
            for name in busy {
                let Some(t) = java.iter().find(|t| t.name == name) else {
                    continue;
                };
                let (stack, held) = self.held_stack(t.id, spec.max_frames).await;
                if let Stack::Read { frames, depth } = stack {
                    let s = sampled.entry(t.id.0).or_default();
                    s.stacks.push(frames);
                    s.depths.push(depth);
                    s.held = s.held.max(held);
                }
            }
        }
        tokio::time::sleep_until(deadline.into()).await;
        let after = discovery::tasks(pid).await?;
        let secs = started.elapsed().as_secs_f64();
        // Threads born during the interval are named too.
        let java = self.threads().await.unwrap_or(java);
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
                    Some(match sampled.remove(&t.id.0) {
                        Some(s) => most_frequent(t.id.0, s),
                        None => {
                            let (stack, held) = self.held_stack(t.id, spec.max_frames).await;
                            JavaStack {
                                thread: t.id.0,
                                stack,
                                held,
                                samples: 0,
                                seen: 0,
                                tops: Vec::new(),
                            }
                        }
                    })
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
            ticks,
            tick: TICK,
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

/// The Java threads busy between two readings `took` apart, busiest
/// first, at most `top` of them.
fn busy_threads(
    then: &[TaskStat],
    now: &[TaskStat],
    took: Duration,
    pid: u32,
    names: &[String],
    top: usize,
) -> Vec<String> {
    rank(then, now, took.as_secs_f64(), USER_HZ, pid, names)
        .into_iter()
        .filter(|h| h.cpu_pct >= BUSY_PCT)
        .filter_map(|h| match h.owner {
            Owner::Java(n) => Some(n),
            Owner::Main => Some("main".to_string()),
            _ => None,
        })
        .take(top)
        .collect()
}

/// The stack seen most often, and the frames that topped the samples.
fn most_frequent(thread: u64, s: Samples) -> JavaStack {
    let samples = s.stacks.len();
    let mut stacks: Vec<(usize, usize)> = Vec::new(); // (first index, count)
    for (i, st) in s.stacks.iter().enumerate() {
        match stacks.iter_mut().find(|(j, _)| s.stacks[*j] == *st) {
            Some((_, n)) => *n += 1,
            None => stacks.push((i, 1)),
        }
    }
    let (at, seen) = stacks
        .iter()
        .copied()
        .max_by_key(|(i, n)| (*n, std::cmp::Reverse(*i)))
        .unwrap_or((0, 0));
    let mut tops: Vec<(String, usize)> = Vec::new();
    for top in s.stacks.iter().filter_map(|st| st.first()) {
        match tops.iter_mut().find(|(f, _)| f == top) {
            Some((_, n)) => *n += 1,
            None => tops.push((top.clone(), 1)),
        }
    }
    tops.sort_by_key(|t| std::cmp::Reverse(t.1));
    JavaStack {
        thread,
        stack: Stack::Read {
            frames: s.stacks.get(at).cloned().unwrap_or_default(),
            depth: s.depths.get(at).copied().unwrap_or(0),
        },
        held: s.held,
        samples,
        seen,
        tops,
    }
}

fn stack_error(e: JdwpError) -> Stack {
    Stack::Failed(e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stack(frames: &[&str]) -> Vec<String> {
        frames.iter().map(|f| f.to_string()).collect()
    }

    #[test]
    fn the_most_frequent_stack_wins_and_tops_are_counted() {
        let burn = stack(&["Bursty.crunch:17", "Bursty.lambda$main$0:30"]);
        let wait = stack(&[
            "jdk.internal.misc.Unsafe.park:native",
            "Bursty.lambda$main$0:30",
        ]);
        let s = Samples {
            stacks: vec![wait.clone(), burn.clone(), burn.clone(), wait, burn.clone()],
            depths: vec![9, 2, 2, 9, 2],
            held: Duration::from_micros(300),
        };
        let j = most_frequent(7, s);
        assert_eq!((j.samples, j.seen), (5, 3));
        assert!(matches!(&j.stack, Stack::Read { frames, depth: 2 } if *frames == burn));
        assert_eq!(
            j.tops,
            [
                ("Bursty.crunch:17".to_string(), 3),
                ("jdk.internal.misc.Unsafe.park:native".to_string(), 2)
            ]
        );
    }
}
