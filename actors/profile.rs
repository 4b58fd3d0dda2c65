//! CPU profiles of the whole JVM over a duration: counts of execution
//! samples per thread and stack (`model::profile`). A JVM on this machine
//! is recorded by its own flight recorder through the attach socket
//! (`jfr`, ADR 0019's second channel): HotSpot samples each thread in
//! Java every 10 ms without a safepoint, so the cost is JFR's own (about
//! 1 % of a core). Any other JVM, or one whose attach socket refuses, is
//! sampled over JDWP (`sampler`): each running thread suspended alone for
//! one round trip, 50 times a second, biased toward safepoints. The view
//! says which sampler ran, why the other did not, and what it cost.
//! A dropped call stops what it started: the recording is stopped and
//! discarded, the scratch file removed, every suspended thread resumed.

mod decode;
mod jfr;
mod sampler;

pub use jfr::{JfrRun, SELF_STOP_MARGIN};
pub use sampler::JdwpRun;

use std::time::{Duration, Instant};

use tokio::sync::oneshot;

use crate::door::Jvm;
use crate::error::{LocalError, SessionError};
use crate::model::profile::Profile;

/// How often the JDWP sampler samples (50 a second).
pub const JDWP_PERIOD: Duration = Duration::from_millis(20);
/// How often `settings=profile` has JFR sample a thread running Java.
pub const JFR_PERIOD: Duration = Duration::from_millis(10);

/// Which sampler ran.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sampler {
    /// The JVM's flight recorder (`jdk.ExecutionSample`), local JVMs only.
    Jfr,
    /// Thread stacks read over JDWP.
    Jdwp,
}

/// The sampler asked for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SamplerChoice {
    /// JFR for a local JVM that accepts it, else JDWP.
    Auto,
    Only(Sampler),
}

/// What a profile call asks.
#[derive(Debug, Clone, Copy)]
pub struct ProfileSpec {
    pub duration: Duration,
    pub sampler: SamplerChoice,
}

/// A profile call's answer.
#[derive(Debug, Clone)]
pub struct ProfileView {
    pub profile: Profile,
    pub sampler: Sampler,
    /// The local process, when there is one.
    pub pid: Option<u32>,
    /// Wall time from the first request to the answer.
    pub took: Duration,
    /// Why the flight recorder was not used, when it was wanted.
    pub jfr_refused: Option<LocalError>,
    pub jfr: Option<JfrRun>,
    pub jdwp: Option<JdwpRun>,
    /// The session is read-only (profiling is still allowed: it changes
    /// no code and no value).
    pub read_only: bool,
}

impl Jvm {
    /// Profiles the JVM for `spec.duration` (see the module).
    pub async fn profile(&self, spec: ProfileSpec) -> Result<ProfileView, SessionError> {
        self.check_alive()?;
        let started = Instant::now();
        let local = self.local_pid().await;
        // While this session holds the JVM, its attach listener may be
        // held too (ADR 0019's amendment), and a held JVM runs nothing.
        let held = self.link().session.view().await.suspended_by_us;
        let pid = local.as_ref().ok().copied();
        let mut refused = match (&local, held) {
            (Ok(pid), true) => Some(LocalError::HeldByDebugger { pid: *pid }),
            (Err(SessionError::Local(e)), _) => Some(e.clone()),
            (Err(_), _) => None,
            (Ok(_), false) => None,
        };
        let use_jfr = match spec.sampler {
            SamplerChoice::Only(Sampler::Jfr) => {
                local?;
                if let Some(e) = refused.take() {
                    return Err(e.into());
                }
                true
            }
            SamplerChoice::Only(Sampler::Jdwp) => {
                refused = None;
                false
            }
            SamplerChoice::Auto => refused.is_none() && pid.is_some(),
        };
        let mut view = ProfileView {
            profile: Profile::default(),
            sampler: Sampler::Jdwp,
            pid,
            took: Duration::ZERO,
            jfr_refused: refused,
            jfr: None,
            jdwp: None,
            read_only: self.read_only(),
        };
        if let (true, Some(pid)) = (use_jfr, pid) {
            match record(pid, spec.duration).await {
                Ok((profile, run)) => {
                    view.profile = profile;
                    view.sampler = Sampler::Jfr;
                    view.jfr = Some(run);
                    view.took = started.elapsed();
                    return Ok(view);
                }
                Err(e) if spec.sampler == SamplerChoice::Auto => view.jfr_refused = Some(e),
                Err(e) => return Err(e.into()),
            }
        }
        let (profile, run) = sampler::sample(self, spec.duration, JDWP_PERIOD).await?;
        view.profile = profile;
        view.jdwp = Some(run);
        view.took = started.elapsed();
        Ok(view)
    }
}

/// Runs the recording in a task of its own, so that dropping this call
/// (a cancel) still stops the recording and removes its file: the task
/// sees the stop signal's sender go and cleans up.
async fn record(pid: u32, duration: Duration) -> Result<(Profile, JfrRun), LocalError> {
    let (_keep, stop) = oneshot::channel::<()>();
    let task = tokio::spawn(jfr::record(pid, duration, stop));
    task.await.unwrap_or_else(|e| {
        Err(LocalError::Jfr {
            pid,
            detail: format!("the recording task failed: {e}"),
        })
    })
}
