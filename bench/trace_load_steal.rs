//! Steal time, for bench/trace_load.rs: the share of this VM's CPU the
//! hypervisor took while a phase ran, and the rule that runs a block of
//! phases again when it took too much (the clients are then compared on
//! what they do, not on what the host took).

use std::future::Future;

use anyhow::{Context, Result};

use super::Phase;

/// The machine's CPU ticks so far, as (stolen by the hypervisor, all),
/// from the `cpu` line of /proc/stat.
pub fn cpu_ticks() -> (u64, u64) {
    let stat = std::fs::read_to_string("/proc/stat").unwrap_or_default();
    let f: Vec<u64> = stat
        .lines()
        .next()
        .unwrap_or("")
        .split_whitespace()
        .skip(1)
        .map(|x| x.parse().unwrap_or(0))
        .collect();
    // user nice system idle iowait irq softirq steal (guest time is
    // counted in user already).
    (f.get(7).copied().unwrap_or(0), f.iter().take(8).sum())
}

/// The share of the machine's CPU time the hypervisor took between two
/// readings of [`cpu_ticks`].
pub fn steal_share(from: (u64, u64), to: (u64, u64)) -> f64 {
    let all = to.1.saturating_sub(from.1);
    if all == 0 {
        return 0.0;
    }
    to.0.saturating_sub(from.0) as f64 / all as f64
}

/// How many tries at a block were run again because the hypervisor took
/// too much of the CPU, and the most it took from a block kept.
#[derive(Default, Clone)]
pub struct Aside {
    again: usize,
    kept_over: usize,
    worst_kept: f64,
}

impl Aside {
    pub fn note(&self, max_steal: f64) -> String {
        format!(
            " (steal: at most {:.0}% in a kept phase; {} tries run again for steal over {:.0}%{})",
            self.worst_kept * 100.0,
            self.again,
            max_steal * 100.0,
            if self.kept_over > 0 {
                format!(
                    ", {} kept over it after {STEADY_TRIES} tries",
                    self.kept_over
                )
            } else {
                String::new()
            }
        )
    }
}

/// Rounds to keep, and the most of the CPU the hypervisor may take from
/// a phase of a kept block.
pub struct Steady {
    pub rounds: usize,
    pub max_steal: f64,
}

/// Tries at a block before the least stolen one is kept anyway.
const STEADY_TRIES: usize = 4;

/// Runs a block of phases until no phase of it lost more than `max_steal`
/// of the machine's CPU to the hypervisor (the clients are then compared
/// on what they do, not on what the host took), at most `STEADY_TRIES`
/// times; the least stolen try is kept then, and counted.
#[allow(clippy::print_stderr)]
pub async fn steady<F, Fut>(max_steal: f64, aside: &mut Aside, mut block: F) -> Result<Vec<Phase>>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<Vec<Phase>>>,
{
    let mut least: Option<(f64, Vec<Phase>)> = None;
    for _ in 0..STEADY_TRIES {
        let phases = block().await?;
        let steal = phases.iter().map(|p| p.steal).fold(0.0, f64::max);
        if steal <= max_steal {
            aside.worst_kept = aside.worst_kept.max(steal);
            return Ok(phases);
        }
        eprintln!(
            "  run again: the hypervisor took {:.0}% of the CPU in a phase",
            steal * 100.0
        );
        aside.again += 1;
        if least.as_ref().is_none_or(|(s, _)| steal < *s) {
            least = Some((steal, phases));
        }
    }
    let (steal, phases) = least.context("no try")?;
    aside.again -= 1;
    aside.kept_over += 1;
    aside.worst_kept = aside.worst_kept.max(steal);
    Ok(phases)
}
