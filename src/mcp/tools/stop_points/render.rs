//! How stop points read in replies: one stable line per stop point (id,
//! what, state, policy, `Hits: N` always), a cost line for traced ones,
//! and the same facts as data for scripts (`tools::data`).

use crate::mcp::tools::data;

use crate::actors::{
    CountMode, FamilyView, Listing, PointView, RingStats, SuspendPolicy, WatchState,
};
use crate::model::overhead::{Overspent, Scope};
use crate::model::stop_point::{ArmNote, LocalsChoice, Mode, StopState};

fn plural(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// What arming (or clearing, or a toggle) wants the agent to know.
pub fn arm_note(n: &ArmNote) -> String {
    match n {
        ArmNote::Deferred { class } => {
            format!("DEFERRED: {class} is not loaded yet; it arms itself when the class loads.")
        }
        ArmNote::NoSimilarClass => "No loaded class has a similar name; check the spelling \
             (nested classes are Outer$Inner)."
            .into(),
        ArmNote::SimilarLoaded { names } => format!(
            "Loaded classes with a similar name: {} (a misspelt name would wait forever).",
            names.join(", ")
        ),
        ArmNote::CopyRefused { class, why } => format!("one copy of {class} refused: {why}"),
        ArmNote::CopyNotArmed { why } => format!("a copy could not be armed: {why}"),
        ArmNote::LateCopyNotArmed { why } => {
            format!("a copy loaded later was not armed: {why}")
        }
        ArmNote::LateCopyRefused { why } => why.clone(),
        ArmNote::NoReturnValues => {
            "this JVM cannot report return values (JDWP < 1.6): exits only".into()
        }
        ArmNote::MemberNotArmed { member, why } => format!("{member}: {why}"),
        ArmNote::FamilyFull => "the family is full, so its class-load watch stays parked".into(),
        ArmNote::AlreadyArmed => "it was already armed".into(),
        ArmNote::AlreadyDisabled => "it was already disabled".into(),
        ArmNote::NoMatchYet { glob, method } => format!(
            "No loaded class matching {glob} has a method {method:?} yet; the family watches \
             for classes that load later."
        ),
        ArmNote::WatchRefused { why } => format!("the class-load watch was refused: {why}"),
        ArmNote::SlotFreed { family } => {
            format!("a slot of {family} freed: it watches for new matching classes again")
        }
        ArmNote::AppliesWhenReArmed => {
            "it is disabled; the new definition applies when it is re-armed".into()
        }
        ArmNote::WasSpent => {
            "it was spent: the JVM had already deleted its request, so nothing was sent".into()
        }
        ArmNote::SuspendsTrace { trace, suspender } => format!(
            "OVERRIDE: {trace} traces this location; a composite carries one suspend policy, so \
             its hits now suspend the whole VM too (until {suspender} is cleared)."
        ),
        ArmNote::SuspendedBy { suspender } => format!(
            "OVERRIDE: {suspender} suspends the VM at this location, so hits of this trace will \
             suspend the VM too, not just snapshot."
        ),
        ArmNote::ProbeArmed {
            pause_us,
            suspends: false,
        } => format!(
            "PROBE: compiled into the class's bytecode (redefinition paused it {:.1} ms); hits \
             are recorded in the JVM and drained without suspending anything (callers are taken for \
             recorded hits only).",
            *pause_us as f64 / 1000.0
        ),
        ArmNote::ProbeArmed {
            pause_us,
            suspends: true,
        } => format!(
            "PROBE: compiled into the class's bytecode (redefinition paused it {:.1} ms); the \
             condition runs in the JVM and only a hit that passes reaches the debugger, which \
             stops it in this method; the method stays compiled.",
            *pause_us as f64 / 1000.0
        ),
        ArmNote::SwitchedByGuard { pause_us } => format!(
            "PROBE: the overhead guard found it too costly over the wire and switched it to a \
             probe compiled into the class (redefinition paused it {:.1} ms)",
            *pause_us as f64 / 1000.0
        ),
        ArmNote::WireChosen { why } => format!("WIRE: no probe: {why}"),
        ArmNote::LeftAlone { class } => format!(
            "LEFT ALONE: {class} changed since the probe went in (its code no longer calls the \
             probe: a reload or another tool), so it keeps what it runs now"
        ),
        ArmNote::RunsInterpreted => "COST: while this is armed over the wire, HotSpot runs every \
             thread interpreted (method-exit and field events), whatever the class"
            .into(),
    }
}

/// Notes as the agent reads them.
pub fn arm_notes(notes: &[ArmNote]) -> Vec<String> {
    notes.iter().map(arm_note).collect()
}

fn state_text(p: &PointView) -> String {
    let mut s = match &p.state {
        StopState::Spent(why) => format!("SPENT: {why}"),
        StopState::Disabled if p.paused.is_some() => "PAUSED (overhead budget)".to_string(),
        StopState::Armed if p.probe.is_some_and(|c| c.lease_off) => {
            "PAUSED (lease lapsed)".to_string()
        }
        other => other.label().to_uppercase(),
    };
    if p.copies > 0 {
        // Only a line stop has bytecode locations; a field watch or an
        // exception request is armed per class.
        if p.locations > 0 {
            s.push_str(&format!(
                ", {}",
                plural(p.locations, "location", "locations")
            ));
        }
        s.push_str(&format!(
            ", {}",
            plural(p.loaders, "classloader", "classloaders")
        ));
        if p.later > 0 {
            s.push_str(&format!(" ({} loaded after arming)", p.later));
        }
    }
    if p.watching {
        s.push_str(", watching for classes loaded later");
    } else if p.spec.target.class_name().is_some() && p.family.is_none() {
        s.push_str(", not watching");
    }
    s
}

fn mode_text(p: &PointView) -> String {
    match &p.spec.mode {
        Mode::Suspend if p.probe.is_some() && p.spec.filters.condition.is_some() => {
            "suspends the VM on a hit that passes (the condition runs in the JVM)".into()
        }
        Mode::Suspend if p.probe.is_some() => "suspends the VM on a hit".into(),
        Mode::Suspend => match p.policy {
            SuspendPolicy::All => "suspends the VM on a hit".into(),
            _ => {
                "suspends the VM on a hit that passes (checked first on the hit thread only)".into()
            }
        },
        Mode::Trace(t) => {
            let mut s = if p.probe.is_some() {
                // A probe records in the JVM: nothing is held, nothing
                // is read at a safepoint.
                let locals = match &t.locals {
                    LocalsChoice::All => "all locals".to_string(),
                    LocalsChoice::None => "no locals".to_string(),
                    LocalsChoice::Only(n) => format!("locals {}", n.join(",")),
                };
                format!(
                    "trace: recorded in the JVM, holding no thread ({} callers, {locals})",
                    t.frames
                )
            } else if p.policy == SuspendPolicy::None {
                "trace without suspending (thread and location only)".to_string()
            } else {
                let locals = match &t.locals {
                    LocalsChoice::All => "all locals, one global safepoint per local".to_string(),
                    LocalsChoice::None => "no locals".to_string(),
                    LocalsChoice::Only(n) => {
                        format!("locals {}, one global safepoint each", n.join(","))
                    }
                };
                format!(
                    "trace: snapshot then resume, holding only the hit thread ({} callers, {locals})",
                    t.frames
                )
            };
            if t.max_hits == 0 {
                s.push_str(", no budget");
            } else {
                s.push_str(&format!(", budget {}", t.max_hits));
            }
            if !p.overridden_by.is_empty() {
                s.push_str(&format!(
                    " — SUSPEND POLICY OVERRIDDEN by {} at the same location: its hits freeze the VM",
                    p.overridden_by.join(",")
                ));
            }
            s
        }
    }
}

fn filters_text(p: &PointView) -> Vec<String> {
    let f = &p.spec.filters;
    let mut out = Vec::new();
    match (p.count_mode, f.hit_count) {
        (Some(CountMode::Jvm(n)), _) => out.push(format!("hit_count {n} (counted by the JVM)")),
        (Some(CountMode::Here(n)), _) => out.push(format!(
            "hit_count {n} (counted here across locations: {} so far)",
            p.counted
        )),
        (None, Some(n)) => out.push(format!("hit_count {n}")),
        _ => {}
    }
    if let Some(t) = f.thread {
        out.push(format!("thread @{t:#x}"));
    }
    match f.instance {
        Some(i) if p.instance_collected => out.push(format!(
            "instance @{i:#x} (garbage collected: it can never match again; clear this stop point)"
        )),
        Some(i) => out.push(format!("instance @{i:#x}")),
        None => {}
    }
    if let Some(c) = &f.condition {
        out.push(format!("condition {c:?}"));
    }
    if f.calls == crate::model::stop_point::Calls::Allowed {
        out.push("calls allowed (cancelled past 500 ms)".into());
    }
    out
}

/// One stop point: a headline and a detail line, plus its capture figures
/// (always in a listing; in other replies once it has been hit).
pub fn describe_point(p: &PointView, listing: bool) -> String {
    let stats =
        matches!(&p.spec.target, crate::model::stop_point::Target::MethodExit(m) if m.stats);
    let mut s = format!(
        "{} {} {} — {}\n  {} · Hits: {}",
        p.id,
        p.kind.label(),
        p.target,
        state_text(p),
        if stats {
            "statistics only: nothing is held or recorded per call".to_string()
        } else {
            mode_text(p)
        },
        p.hits
    );
    let filters = filters_text(p);
    if !filters.is_empty() {
        s.push_str(&format!(" · {}", filters.join(" · ")));
    }
    if matches!(&p.spec.target, crate::model::stop_point::Target::MethodExit(m) if m.method.is_some())
    {
        s.push_str(&format!(" · exits discarded: {}", p.discarded));
        if p.hits == 0 {
            s.push_str(if p.discarded == 0 {
                " (the class returned nothing yet)"
            } else {
                " (the class runs; this method has not returned)"
            });
        }
    }
    if p.below_threshold > 0 {
        s.push_str(&format!(" · below min_duration: {}", p.below_threshold));
    }
    if p.rethrows > 0 {
        s.push_str(&format!(" · rethrows folded: {}", p.rethrows));
    }
    if p.condition_false > 0 || p.condition_errors > 0 {
        s.push_str(&format!(
            " · condition false {} · condition errors {}",
            p.condition_false, p.condition_errors
        ));
    }
    if let Mode::Trace(t) = &p.spec.mode
        && (listing || p.hits > 0)
        && !stats
    {
        // One count: the snapshots since it was last armed are its
        // budget's use; the ones before a re-arm are named apart.
        s.push_str(&format!("\n  snapshots: {}", p.budget_used));
        if t.max_hits > 0 {
            s.push_str(&format!(" (budget {}/{} used)", p.budget_used, t.max_hits));
        }
        let earlier = p.captured.saturating_sub(p.budget_used);
        if earlier > 0 {
            s.push_str(&format!(" · {earlier} more before it was last re-armed"));
        }
        if p.over_budget > 0 {
            s.push_str(&format!(
                " · {} hits over budget were resumed uncaptured",
                p.over_budget
            ));
        }
        if p.shed > 0 {
            s.push_str(&format!(
                " · {} hits counted but not recorded (the debugger lagged behind the event stream)",
                p.shed
            ));
        }
        if p.overridden_hits > 0 {
            s.push_str(&format!(
                " · {} hits arrived with the VM suspended",
                p.overridden_hits
            ));
        }
    }
    if let Some(c) = &p.probe {
        s.push_str(&probe_line(c, p.hits));
    } else if p.spec.trace().is_some() && (listing || p.hits > 0)
        || p.cost.checks > 0
        || p.invoking > 0
    {
        s.push_str(&cost_line(p));
    }
    if let Some(o) = &p.paused {
        s.push_str(&format!("\n  {}", paused_text(o)));
    }
    if p.stopped_by_errors {
        s.push_str(&format!(
            "\n  DISABLED by itself after {} condition errors in a row: it no longer holds any thread. \
             Fix the condition (debug_update_stop_point), then debug_update_stop_point kind toggle re-enables it",
            crate::actors::CONDITION_ERROR_LIMIT
        ));
    }
    if let Some(e) = &p.last_error {
        s.push_str(&format!("\n  last error: {e}"));
    }
    for n in arm_notes(&p.notes) {
        s.push_str(&format!("\n  note: {n}"));
    }
    s
}

/// What a probe costs, as the JVM measured it: nothing is held. Its
/// calls and passes are one reading of the JVM's counters; `hits` also
/// counts what the wire saw before a probe took over.
fn probe_line(c: &crate::actors::ProbeCost, hits: u64) -> String {
    let per_call = match c.ns_per_call {
        // The clock's own read is taken off each sample.
        Some(0) => "under 1 ns per call (sampled)".to_string(),
        Some(ns) => format!("{ns} ns per call (sampled)"),
        None => "no call sampled yet".into(),
    };
    let since = if hits > c.calls {
        " since the probe went in"
    } else {
        ""
    };
    let mut s = format!(
        "\n  engine: probe; cost: {per_call}, {} calls{since}, {} passed, {} dropped (ring full); armed with a {:.1} ms redefinition",
        c.calls,
        c.passes,
        c.drops,
        c.pause_us as f64 / 1000.0
    );
    if c.lapses > 0 {
        s.push_str(&format!("; its lease lapsed {} times", c.lapses));
    }
    if c.lease_off && c.lease_waits {
        s.push_str(
            "; off since: re-armed once this session holds no thread (debug_continue), as re-arming runs code in the JVM",
        );
    } else if c.lease_off {
        s.push_str(
            "; off since: re-arming it failed (the server log says why), retried each drain round",
        );
    }
    if c.drain_failures > 0 {
        s.push_str(&format!(
            "; {} drain rounds failed (the server log says why)",
            c.drain_failures
        ));
    }
    if let Some(l) = &c.latency {
        s.push_str(&stats_line("since arming", &l.since_arming));
        match &l.window {
            Some(w) => s.push_str(&stats_line("last window", w)),
            None => s.push_str("\n  stats last window: not yet a window old"),
        }
        s.push_str(&format!(
            "\n  (calls and throws are exact; about 1 call in {}, drawn at random, is timed, and latencies, max included, come from a log-bucket histogram of those: an estimate)",
            crate::classfile::probe::STATS_SAMPLE
        ));
    }
    s
}

/// One span of a statistics probe's figures.
fn stats_line(what: &str, f: &crate::model::latency::Figures) -> String {
    let t = |ns: Option<u64>| ns.map_or_else(|| "-".to_string(), crate::mcp::render::value::nanos);
    format!(
        "\n  stats {what} ({:.1} s): {} calls, {} throws, {} timed; mean {}, p50 {}, p99 {}, max {}",
        f.span_ms as f64 / 1000.0,
        f.calls,
        f.throws,
        f.timed,
        t(f.mean_ns),
        t(f.p50_ns),
        t(f.p99_ns),
        t(f.max_ns),
    )
}

/// What a stop point's holds cost the application's threads.
fn cost_line(p: &PointView) -> String {
    let c = &p.cost;
    // A paused stop point's one figure is the one that paused it (its
    // own line): lifetime means and rates beside it would imply another.
    if p.paused.is_some() {
        let mut s = String::new();
        if let Some(d) = c.interpreted {
            s.push_str(&format!(
                "\n  cost: HotSpot runs every thread interpreted while this is armed over the wire: \
                 charged {} of one thread's time ({:.1} s so far)",
                pct(crate::model::overhead::INTERPRETED_SHARE),
                d.as_secs_f64()
            ));
        }
        if c.mean_hold.is_some() || s.is_empty() {
            s.push_str(&format!(
                "\n  cost: {} and {} held a thread before the pause",
                crate::mcp::render::plural(p.captured as usize, "snapshot"),
                crate::mcp::render::plural(c.checks as usize, "check")
            ));
        }
        if p.invoking > 0 {
            s.push_str(&format!(
                "; {} inside a call of its own that could not be cancelled: {} of one thread's time",
                crate::mcp::render::plural(p.invoking, "thread"),
                pct(p.invoking as f64)
            ));
        }
        return s;
    }
    // A thread left inside a call of its own is all of that thread's time.
    let taken = p.invoking as f64;
    let invoking = match p.invoking {
        0 => String::new(),
        n => format!(
            " · {} inside a call of its own that could not be cancelled (100% each, counted in the share)",
            crate::mcp::render::plural(n, "thread")
        ),
    };
    let interpreted = match c.interpreted {
        Some(d) => format!(
            "\n  cost: HotSpot runs every thread interpreted while this is armed over the wire: \
             charged {} of one thread's time ({:.1} s so far){}",
            pct(crate::model::overhead::INTERPRETED_SHARE),
            d.as_secs_f64(),
            c.recent_share
                .map(|r| format!(
                    ", {} over the last {}",
                    pct(r),
                    c.recent_window.map(secs).unwrap_or_default()
                ))
                .unwrap_or_default()
        ),
        None => String::new(),
    };
    if !interpreted.is_empty() && c.mean_hold.is_none() {
        return interpreted;
    }
    let Some(mean) = c.mean_hold else {
        return match p.invoking {
            0 => "\n  cost: nothing held yet".into(),
            n => format!(
                "\n  cost: {} of one thread's time: {} inside a call of its own that could not be cancelled",
                pct(taken),
                crate::mcp::render::plural(n, "thread")
            ),
        };
    };
    let ms = |d: std::time::Duration| d.as_secs_f64() * 1e3;
    let mut s = format!("\n  cost: held {:.2} ms per hit", ms(mean));
    match (c.mean_capture, c.mean_check) {
        (Some(a), Some(b)) => s.push_str(&format!(
            " ({:.2} ms per snapshot, {:.2} ms per check × {})",
            ms(a),
            ms(b),
            c.checks
        )),
        (None, Some(_)) => s.push_str(&format!(" ({} checks, no snapshot)", c.checks)),
        _ => {}
    }
    if let Some(p99) = c.p99 {
        s.push_str(&format!(" · p99 ≤{:.2} ms", ms(p99)));
    }
    if let Some(r) = c.rate {
        s.push_str(&format!(" · {r:.0} hits/s"));
    }
    // One share figure, with the wall time it was taken over.
    match (c.recent_share, c.recent_window, c.busy_share) {
        (Some(r), Some(w), _) => s.push_str(&format!(
            " · {} of one thread's time over the last {}",
            pct(r + taken),
            secs(w)
        )),
        (_, _, Some(b)) => s.push_str(&format!(
            " · {} of one thread's time since its first hit",
            pct(b + taken)
        )),
        _ => {}
    }
    s.push_str(&invoking);
    if p.budget_pct == 0 {
        s.push_str(" · no overhead budget");
    } else {
        s.push_str(&format!(" · budget {}%", p.budget_pct));
    }
    s
}

/// A share of one thread's time as a percentage, finer when small.
pub fn pct(share: f64) -> String {
    let v = share * 100.0;
    if v < 1.0 && v > 0.0 {
        format!("{v:.2}%")
    } else {
        format!("{v:.0}%")
    }
}

/// A window's length: `2 s`, `1.4 s`.
fn secs(d: std::time::Duration) -> String {
    let v = d.as_secs_f64();
    if v.fract() < 0.05 {
        format!("{v:.0} s")
    } else {
        format!("{v:.1} s")
    }
}

/// Why the overhead guard paused a stop point, and what the agent can do.
pub fn paused_text(o: &Overspent) -> String {
    format!(
        "PAUSED by the overhead guard: {}. Nothing holds a thread for it now; its definition \
         and counters are kept. debug_update_stop_point kind toggle re-arms it as it is; debug_update_stop_point \
         with a larger max_overhead (0 = no budget) or a cheaper condition re-arms it changed",
        measured(o)
    )
}

/// What a guard's pause that became a probe says.
pub fn switched_text(o: &Overspent, pause_us: u64) -> String {
    format!(
        "SWITCHED TO A PROBE by the overhead guard: {}. A probe compiled into the class \
         (redefinition paused it {:.1} ms) serves it now, with the same id, definition and \
         counters: its condition runs in the JVM, and nothing holds a thread for a hit that fails it",
        measured(o),
        pause_us as f64 / 1000.0
    )
}

fn measured(o: &Overspent) -> String {
    let window = secs(o.window);
    match o.scope {
        Scope::StopPoint => format!(
            "its holds took {} of one thread's time over the last {window} ({} holds; budget {}%)",
            pct(o.share),
            o.holds,
            o.budget_pct
        ),
        Scope::Session => format!(
            "the session's stop points held {} of one thread's time over the last {window} \
             (session budget {}%, JVMSCOPE_SESSION_OVERHEAD_PCT), this one the most: {}",
            pct(o.share),
            o.budget_pct,
            pct(o.own_share)
        ),
    }
}

pub fn point_data(p: &PointView) -> data::Point {
    data::Point {
        id: p.id.clone(),
        kind: p.kind.label().into(),
        target: p.target.clone(),
        state: p.state.label().into(),
        spent_reason: match &p.state {
            StopState::Spent(r) => Some(r.clone()),
            _ => None,
        },
        trace: matches!(p.spec.mode, Mode::Trace(_)),
        policy: format!("{:?}", p.policy).to_uppercase(),
        hits: p.hits,
        captured: p.captured,
        budget_used: p.budget_used,
        over_budget: p.over_budget,
        not_recorded: p.shed,
        exits_discarded: p.discarded,
        below_threshold: p.below_threshold,
        rethrows_folded: p.rethrows,
        instance_collected: p.instance_collected,
        overridden_hits: p.overridden_hits,
        overridden_by: p.overridden_by.clone(),
        condition_errors: p.condition_errors,
        condition_false: p.condition_false,
        locations: p.locations,
        classloaders: p.loaders,
        copies_loaded_later: p.later,
        watching: p.watching,
        family: p.family.clone(),
        mean_capture_ms: p.cost.mean_capture.map(|d| d.as_secs_f64() * 1e3),
        mean_check_ms: p.cost.mean_check.map(|d| d.as_secs_f64() * 1e3),
        checks: p.cost.checks,
        // A paused stop point's one figure is `paused.share`: no mean
        // hold and rate beside it that would imply another.
        mean_hold_ms: p
            .cost
            .mean_hold
            .filter(|_| p.paused.is_none())
            .map(|d| d.as_secs_f64() * 1e3),
        p99_hold_ms: p
            .cost
            .p99
            .filter(|_| p.paused.is_none())
            .map(|d| d.as_secs_f64() * 1e3),
        hits_per_second: p.cost.rate.filter(|_| p.paused.is_none()),
        // A thread left inside a call of its own counts as all its time.
        // A paused stop point's one figure is `paused.share`.
        hold_share: p
            .cost
            .busy_share
            .filter(|_| p.paused.is_none())
            .map(|b| b + p.invoking as f64),
        recent_hold_share: p
            .cost
            .recent_share
            .filter(|_| p.paused.is_none())
            .map(|r| r + p.invoking as f64),
        overhead_budget_pct: p.budget_pct,
        paused: p.paused.map(|o| data::Paused {
            share: o.share,
            own_share: o.own_share,
            budget_pct: o.budget_pct,
            scope: match o.scope {
                Scope::StopPoint => "stop_point",
                Scope::Session => "session",
            }
            .into(),
            window_s: o.window.as_secs_f64(),
        }),
        last_error: p.last_error.clone(),
        probe: p.probe.map(|c| data::ProbeMeter {
            calls: c.calls,
            passes: c.passes,
            drops: c.drops,
            ns_per_call: c.ns_per_call,
            pause_ms: c.pause_us as f64 / 1000.0,
            lease_lapses: c.lapses,
            drain_failures: c.drain_failures,
        }),
        stopped_by_errors: p.stopped_by_errors,
        notes: arm_notes(&p.notes),
    }
}

fn watch_text(w: &WatchState) -> String {
    match w {
        WatchState::Watching => "watching for matching classes loaded later".into(),
        WatchState::Parked => {
            "watch PARKED: the family is full (clear a member to free a slot)".into()
        }
        WatchState::Disabled => "DISABLED".into(),
        WatchState::Failed(e) => format!("watch could not be registered: {e}"),
    }
}

pub fn describe_family(f: &FamilyView) -> String {
    let mut s = format!(
        "{} family {}.{} — {}/{} classes armed, {}",
        f.id,
        f.pattern,
        f.method.as_deref().unwrap_or("?"),
        f.members.len(),
        f.max_classes,
        watch_text(&f.watch)
    );
    if f.left_out > 0 {
        s.push_str(&format!(
            "\n  {} matching classes left out (max_classes reached)",
            f.left_out
        ));
    }
    if f.without_method > 0 {
        s.push_str(&format!(
            "\n  {} matching classes have no such method",
            f.without_method
        ));
    }
    if f.joined_later > 0 {
        s.push_str(&format!("\n  {} joined after arming", f.joined_later));
    }
    for (id, class) in &f.members {
        s.push_str(&format!("\n  {id} {class}"));
    }
    s
}

pub fn family_data(f: &FamilyView) -> data::Family {
    data::Family {
        id: f.id.clone(),
        pattern: f.pattern.clone(),
        method: f.method.clone(),
        members: members(f),
        max_classes: f.max_classes,
        watch: watch_word(&f.watch).into(),
        left_out: f.left_out,
        without_method: f.without_method,
        joined_later: f.joined_later,
    }
}

fn members(f: &FamilyView) -> Vec<data::Member> {
    f.members
        .iter()
        .map(|(id, c)| data::Member {
            id: id.clone(),
            class: c.clone(),
        })
        .collect()
}

fn watch_word(w: &WatchState) -> &'static str {
    match w {
        WatchState::Watching => "watching",
        WatchState::Parked => "parked",
        WatchState::Disabled => "disabled",
        WatchState::Failed(_) => "failed",
    }
}

/// The whole listing.
pub fn listing(l: &Listing, ring: &RingStats) -> (String, data::StopPoints) {
    if l.points.is_empty() && l.families.is_empty() {
        return (
            "No stop points. debug_set_stop arms them.".into(),
            data::StopPoints {
                stop_points: Some(Vec::new()),
                families: Some(Vec::new()),
                ring: None,
                export: None,
            },
        );
    }
    let mut out = format!("{} stop points", l.points.len());
    if !l.families.is_empty() {
        out.push_str(&format!(", {} families", l.families.len()));
    }
    out.push_str(&format!(
        "; trace ring {}/{} snapshots, {} evicted",
        ring.held, ring.capacity, ring.evicted
    ));
    for f in &l.families {
        out.push('\n');
        out.push_str(&describe_family(f));
    }
    for p in &l.points {
        out.push('\n');
        out.push_str(&describe_point(p, true));
    }
    let data = data::StopPoints {
        stop_points: Some(l.points.iter().map(point_data).collect()),
        families: Some(l.families.iter().map(family_data).collect()),
        ring: Some(data::Ring::of(ring)),
        export: None,
    };
    (out, data)
}
