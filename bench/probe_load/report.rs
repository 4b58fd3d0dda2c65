//! The probe bench's report: a markdown table of each stop point against
//! the unprobed program, then the counters' check, arming latency and the
//! recovery after a SIGKILL.

use std::time::Duration;

use super::kill::Kill;
use super::values::Checked;
use super::{Arming, FIXTURE, Fixture, Phase, Probe, Settings, Tally};

#[allow(clippy::print_stderr)]
pub fn say(line: &str) {
    eprintln!("{line}");
}

/// The load average, as `uptime` shows it.
pub fn load() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .ok()
        .map(|l| l.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_default()
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v.get(v.len() / 2).copied().unwrap_or(0.0)
}

fn ms(d: Duration) -> String {
    format!("{:.1} ms", d.as_secs_f64() * 1e3)
}

#[allow(clippy::too_many_arguments)]
pub fn render(
    s: &Settings,
    fixture: &Fixture,
    hot: u32,
    l0: &str,
    alone: &Phase,
    bases: &[Phase],
    runs: &[Vec<(Probe, Phase)>],
    armings: &[Arming],
    tallies: &[Tally],
    checks: &[(Probe, Checked)],
    kill: Option<&Kill>,
) -> String {
    let mut out = format!(
        "probe_load, shape {} ({}): {} worker threads on {FIXTURE}:{hot} (work {}), {}, {} \
         rounds, {:.1} s per measurement after {} ms to settle; {} cores; load average {l0} at \
         start, {} at the end\n\n",
        s.shape.name,
        if s.shape.median_ticks {
            "median of 100 ms ticks"
        } else {
            "calls over time"
        },
        s.threads,
        s.work,
        fixture.version,
        s.rounds,
        s.measure.as_secs_f64(),
        s.settle.as_millis(),
        std::thread::available_parallelism().map_or(0, |n| n.get()),
        load(),
    );
    let base_rates: Vec<f64> = bases.iter().map(|b| b.rate).collect();
    out.push_str(&format!(
        "unprobed: {:.0} calls/s median (range {:.0}–{:.0}) with jvmscope attached, the JVM on \
         {:.2} cores; {:.0} calls/s before it attached\n\n",
        median(base_rates.clone()),
        base_rates.iter().copied().fold(f64::MAX, f64::min),
        base_rates.iter().copied().fold(0.0, f64::max),
        median(bases.iter().map(|b| b.jvm_cpu).collect()),
        alone.rate,
    ));
    out.push_str(
        "| stop point | engine | calls/s | vs unprobed | range | per JVM CPU s, vs unprobed | \
         snapshots/s | probe ns/call (sampled) | jvmscope CPU | JVM CPU | target | met |\n\
         |---|---|---:|---:|---:|---:|---:|---:|---:|---:|---|---|\n",
    );
    table(&mut out, &s.probes, bases, runs);
    for (probe, c) in checks {
        out.push_str(&format!(
            "\n{}: of {} snapshots read, {} recorded a value naming a call of their thread, in \
             order{}",
            probe.name(),
            c.read,
            c.right,
            if c.wrong == 0 {
                String::new()
            } else {
                format!("; **{} did not**", c.wrong)
            }
        ));
    }
    if !checks.is_empty() {
        out.push('\n');
    }
    notes(&mut out, bases, runs, tallies, armings, kill);
    out
}

/// One row per stop point: its throughput against the unprobed phases
/// measured just before and after it.
fn table(out: &mut String, probes: &[Probe], bases: &[Phase], runs: &[Vec<(Probe, Phase)>]) {
    for (k, probe) in probes.iter().enumerate() {
        // Phase k of round r sits between bases[r*n + k] and the next.
        let per: Vec<(f64, f64, &Phase)> = runs
            .iter()
            .enumerate()
            .filter_map(|(r, phases)| {
                let (_, p) = phases.get(k)?;
                let i = r * probes.len() + k;
                let (b0, b1) = (bases.get(i)?, bases.get(i + 1)?);
                let around = (b0.rate + b1.rate) / 2.0;
                // Calls per second of the JVM's own CPU: what is left when
                // another process takes a core from it meanwhile.
                let per_cpu = |p: &Phase| p.rate / p.jvm_cpu.max(1e-3);
                let around_cpu = (per_cpu(b0) + per_cpu(b1)) / 2.0;
                Some((p.rate / around, per_cpu(p) / around_cpu, p))
            })
            .collect();
        let ratios: Vec<f64> = per.iter().map(|(r, _, _)| *r).collect();
        let per_cpu = median(per.iter().map(|(_, c, _)| *c).collect());
        let ratio = median(ratios.clone());
        let lo = ratios.iter().copied().fold(f64::MAX, f64::min);
        let hi = ratios.iter().copied().fold(0.0, f64::max);
        let m = |f: &dyn Fn(&Phase) -> f64| median(per.iter().map(|(_, _, p)| f(p)).collect());
        let snapshots = m(&|p| p.snapshots);
        let sampled: Vec<f64> = per
            .iter()
            .filter_map(|(_, _, p)| p.ns_per_call.map(|n| n as f64))
            .collect();
        let ns = median(sampled.clone());
        let met = match probe.floor() {
            Some(_) if *probe == Probe::NeverTrue && ns > 10.0 => "**no**",
            Some(f) if ratio >= f => "yes",
            Some(_) => "**no**",
            None if *probe == Probe::Capture && snapshots >= 150_000.0 => "yes",
            None if *probe == Probe::Capture => "**no**",
            None => "–",
        };
        out.push_str(&format!(
            "| {} | {} | {:.0} | **{:.1}%** | {:.1}–{:.1}% | {:.1}% | {:.0} | {} | {:.0}% | {:.2} | {} \
             | {met} |\n",
            probe.name(),
            match probe {
                Probe::WireExit | Probe::WireField | Probe::ProfileJdwp => "wire",
                Probe::ProfileJfr => "JFR",
                _ => "probe",
            },
            m(&|p| p.rate),
            ratio * 100.0,
            lo * 100.0,
            hi * 100.0,
            per_cpu * 100.0,
            snapshots,
            if sampled.is_empty() {
                "-".into()
            } else {
                format!("{ns:.0}")
            },
            m(&|p| p.ours_cpu) * 100.0,
            m(&|p| p.jvm_cpu),
            probe.target(),
        ));
    }
}

/// Steal, the counters' check, arming latency and the SIGKILL recovery.
fn notes(
    out: &mut String,
    bases: &[Phase],
    runs: &[Vec<(Probe, Phase)>],
    tallies: &[Tally],
    armings: &[Arming],
    kill: Option<&Kill>,
) {
    let steal = bases
        .iter()
        .chain(runs.iter().flatten().map(|(_, p)| p))
        .map(|p| p.steal)
        .fold(0.0, f64::max);
    out.push_str(&format!(
        "\nsteal: at most {:.0}% in a measurement\n",
        steal * 100.0
    ));
    if !tallies.is_empty() {
        out.push_str("\ncounters with the workers parked (calls = captured + dropped?):\n");
    }
    for t in tallies {
        out.push_str(&format!(
            "  {}: {} calls, {} captured + {} dropped = {} {}\n",
            t.probe.name(),
            t.calls,
            t.captured,
            t.drops,
            t.captured + t.drops,
            if t.captured + t.drops == t.calls {
                "(adds up)"
            } else {
                "(**does not add up**)"
            }
        ));
    }
    let firsts: Vec<f64> = armings
        .iter()
        .filter_map(|a| a.first.map(|f| f.as_secs_f64()))
        .collect();
    if armings.is_empty() {
        return;
    }
    out.push_str(&format!(
        "\narming the capture probe: the call {}, first snapshot {} after it began (median of {}; \
         worst {}; target ≤ 200 ms), redefinition pause {}\n",
        ms(Duration::from_secs_f64(median(
            armings.iter().map(|a| a.call.as_secs_f64()).collect()
        ))),
        ms(Duration::from_secs_f64(median(firsts.clone()))),
        firsts.len(),
        ms(Duration::from_secs_f64(
            firsts.iter().copied().fold(0.0, f64::max)
        )),
        ms(Duration::from_secs_f64(median(
            armings.iter().map(|a| a.pause.as_secs_f64()).collect()
        ))),
    ));
    let Some(kill) = kill else {
        return;
    };
    out.push_str(&format!(
        "\nSIGKILL of a jvmscope holding the capture probe: no debugger {:.0} calls/s, probe held \
         {:.0} calls/s ({:.1}%); back at ≥ 95% {} after the kill (target ≤ 3 s)\n  after the kill, \
         250 ms steps: {}\n  next attach restored: {}; then {:.0} calls/s ({:.1}%)\n",
        kill.detached,
        kill.held,
        100.0 * kill.held / kill.detached,
        kill.back.map(ms).unwrap_or_else(|| "not within 5 s".into()),
        kill.steps
            .iter()
            .map(|r| format!("{:.0}%", r * 100.0))
            .collect::<Vec<_>>()
            .join(" "),
        if kill.restored.is_empty() {
            "nothing".to_string()
        } else {
            kill.restored.join(", ")
        },
        kill.after,
        100.0 * kill.after / kill.detached,
    ));
}
