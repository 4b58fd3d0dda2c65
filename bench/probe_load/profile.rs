//! The probe bench's profile phases (#40): a CPU profile of the whole JVM
//! recorded across the phase's settling and measurement, by the flight
//! recorder or by the JDWP sampler, and what each said it cost.

use std::time::Duration;

use anyhow::{Result, anyhow};
use tokio::task::JoinHandle;

use jvmscope::actors::{ProfileSpec, ProfileView, Sampler, SamplerChoice, SessionHandle};

use super::{Fixture, Phase, Probe, Settings, measure, say};

/// One profile phase of round `round`: records across the settling and
/// the window (and a little after, so the window sees only the
/// recording), then lets the program settle and measures it alone. The
/// phase and the unprobed window after it; the profile's own account
/// goes to `said`.
pub async fn phase(
    fixture: &Fixture,
    session: &SessionHandle,
    s: &Settings,
    sampler: Sampler,
    (probe, round): (Probe, usize),
    said: &mut Vec<String>,
) -> Result<(Phase, Phase)> {
    let whole = s.settle + s.measure + Duration::from_millis(500);
    let recording = start(session, sampler, whole);
    tokio::time::sleep(s.settle).await;
    let p = measure(fixture, None, s.measure).await?;
    let line = summary(&recording.await??);
    say(&format!(
        "round {}: {}: {:.0} calls/s, the JVM on {:.2} cores, jvmscope {:.0}% of a core\n  {line}",
        round + 1,
        probe.name(),
        p.rate,
        p.jvm_cpu,
        p.ours_cpu * 100.0,
    ));
    said.push(format!("- {}, round {}: {line}", probe.name(), round + 1));
    tokio::time::sleep(s.settle).await;
    let base = measure(fixture, None, s.measure).await?;
    Ok((p, base))
}

/// A profile being recorded.
type Recording = JoinHandle<Result<ProfileView>>;

/// Starts profiling the session's JVM with `sampler` for `d`.
fn start(h: &SessionHandle, sampler: Sampler, d: Duration) -> Recording {
    let h = h.clone();
    tokio::spawn(async move {
        h.profile(ProfileSpec {
            duration: d,
            sampler: SamplerChoice::Only(sampler),
        })
        .await
        .map_err(|e| anyhow!("profiling: {e}"))
    })
}

/// What the profile cost and found, one line.
fn summary(v: &ProfileView) -> String {
    let samples = v.profile.total();
    let top = v
        .profile
        .methods()
        .first()
        .map(|m| format!("{} ({} self)", m.method, m.self_samples))
        .unwrap_or_default();
    match (&v.jdwp, &v.jfr) {
        (Some(r), _) => format!(
            "JDWP sampler: {samples} samples in {} rounds of {} ms; each sample held its thread \
             {:.0} µs on average, {:.1} ms at most ({} holds, {} failed); top by self {top}",
            r.rounds,
            r.period.as_millis(),
            r.mean_hold().as_secs_f64() * 1e6,
            r.longest.as_secs_f64() * 1e3,
            r.holds,
            r.failed,
        ),
        (None, Some(j)) => format!(
            "JFR: {samples} execution samples ({} read from the file in {:.0} ms of our CPU), \
             left running: {:?}, file removed: {}; top by self {top}",
            j.samples_read,
            j.read_took.as_secs_f64() * 1e3,
            j.left_running,
            j.file_removed,
        ),
        (None, None) => format!("no sampler ran: {samples} samples"),
    }
}
