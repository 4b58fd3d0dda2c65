//! A profile sampled over JDWP, for a JVM the flight recorder cannot
//! reach: every `period`, each thread's status is read (nothing
//! suspended), and each thread found running is suspended alone, its
//! frames read and resumed, the three requests queued back to back so
//! the hold is one round trip of work; the resume runs in a task of its
//! own, so a dropped call still lets the thread go. JDWP suspends a
//! thread only at a safepoint, so the running frame is where the thread
//! next polled (a loop's back edge, a call's return), not where it was.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use tokio::time::{Instant, MissedTickBehavior};

use crate::connection::ConnectionHandle;
use crate::door::Jvm;
use crate::error::SessionError;
use crate::jdwp::thread_reference::Status;
use crate::jdwp::{FrameInfo, MethodId, ReferenceTypeId, ThreadId, ThreadStatus};
use crate::jvm::classes::ClassCache;
use crate::jvm::threads;
use crate::model::profile::{MAX_FRAMES, Profile, method_label};

/// How often the thread list (and names) is read again.
const CENSUS_EVERY: Duration = Duration::from_secs(1);

/// What the JDWP sampler did and what it cost.
#[derive(Debug, Clone, Default)]
pub struct JdwpRun {
    /// Sampling rounds (one every period, when the last one was done).
    pub rounds: u64,
    pub period: Duration,
    /// Threads suspended, one per sample taken.
    pub holds: u64,
    /// Their summed and longest holds.
    pub held: Duration,
    pub longest: Duration,
    /// Stack reads that failed (the thread ended, or resumed itself).
    pub failed: u64,
}

impl JdwpRun {
    /// The mean hold of one thread for one sample.
    pub fn mean_hold(&self) -> Duration {
        match u32::try_from(self.holds) {
            Ok(n) if n > 0 => self.held / n,
            _ => Duration::ZERO,
        }
    }
}

/// Samples the running threads of the session's JVM every `period` for
/// `duration`.
pub async fn sample(
    session: &Jvm,
    duration: Duration,
    period: Duration,
) -> Result<(Profile, JdwpRun), SessionError> {
    let conn = session.connection().clone();
    let classes = session.classes().clone();
    let mut names: HashMap<ThreadId, String> = HashMap::new();
    let mut labels: HashMap<(ReferenceTypeId, MethodId), String> = HashMap::new();
    let mut profile = Profile::default();
    let mut run = JdwpRun {
        period,
        ..JdwpRun::default()
    };
    let deadline = Instant::now() + duration;
    let mut census_at: Option<Instant> = None;
    let mut tick = tokio::time::interval(period);
    tick.set_missed_tick_behavior(MissedTickBehavior::Delay);
    loop {
        tick.tick().await;
        let now = Instant::now();
        if now >= deadline {
            break;
        }
        if census_at.is_none_or(|at| now.duration_since(at) >= CENSUS_EVERY) {
            names = threads::list(&conn)
                .await?
                .into_iter()
                .filter(|t| !t.is_virtual)
                .map(|t| (t.id, t.name))
                .collect();
            census_at = Some(now);
        }
        run.rounds += 1;
        let running = running_threads(&conn, names.keys().copied()).await;
        let reads = running.iter().map(|&t| threads::held_frames(&conn, t));
        let read = futures::future::join_all(reads).await;
        for (thread, (frames, held)) in running.into_iter().zip(read) {
            run.holds += 1;
            run.held += held;
            run.longest = run.longest.max(held);
            let Ok(frames) = frames else {
                run.failed += 1;
                continue;
            };
            let truncated = frames.len() > MAX_FRAMES;
            let mut stack = Vec::with_capacity(frames.len().min(MAX_FRAMES));
            for f in frames.iter().take(MAX_FRAMES) {
                stack.push(label(&classes, &mut labels, f).await);
            }
            let name = names.get(&thread).map_or("?", String::as_str);
            profile.add(name, stack, truncated);
        }
    }
    Ok((profile, run))
}

/// The threads whose status is running and that nobody holds suspended.
async fn running_threads(
    conn: &ConnectionHandle,
    all: impl Iterator<Item = ThreadId>,
) -> Vec<ThreadId> {
    let all: Vec<ThreadId> = all.collect();
    let statuses =
        futures::future::join_all(all.iter().map(|&thread| conn.send(&Status { thread }))).await;
    all.into_iter()
        .zip(statuses)
        .filter_map(|(t, s)| match s {
            Ok(s) if s.thread_status == ThreadStatus::Running && !s.is_suspended() => Some(t),
            _ => None,
        })
        .collect()
}

/// `Class.method` of a frame, each method resolved once per profile.
async fn label(
    classes: &Arc<ClassCache>,
    known: &mut HashMap<(ReferenceTypeId, MethodId), String>,
    f: &FrameInfo,
) -> String {
    let key = (f.location.class, f.location.method);
    if let Some(l) = known.get(&key) {
        return l.clone();
    }
    let (info, method) = futures::join!(classes.info(key.0), classes.method(key.0, key.1));
    let class = info.map(|i| i.name.clone()).unwrap_or_else(|_| "?".into());
    let method = match method {
        Ok(Some(m)) => m.name.clone(),
        _ => "?".into(),
    };
    let l = method_label(&class, &method);
    known.insert(key, l.clone());
    l
}
