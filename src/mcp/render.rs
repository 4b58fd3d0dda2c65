//! Text an agent reads, built from the plain data the actors return. Each
//! function here turns one kind of report into the compact, stable wording
//! the tools reply with; nothing here talks to a JVM.

pub mod callees;
pub mod value;

use crate::actors::Rescue;
use crate::model::invoking::{Invoking, Uncancelled};
use crate::model::recent::{DroppedHold, LateOutcome, LateReturn, RecentEvent};
use crate::model::stale::{Change, modifier_words};

/// Pluralises `word` for `n`.
pub fn plural(n: usize, word: &str) -> String {
    if n == 1 {
        format!("{n} {word}")
    } else {
        format!("{n} {word}s")
    }
}

/// One of a session's recent events, on one line: an event's kind,
/// request, thread and location with its composite's suspend policy, an
/// undecodable composite, or what a late-returning invocation left behind.
pub fn recent_event(e: &RecentEvent) -> String {
    use std::fmt::Write;
    match e {
        RecentEvent::Event {
            kind,
            request,
            thread,
            at,
            suspend,
        } => {
            let mut s = format!("{kind:?} req={}", request.0);
            if let Some(t) = thread {
                let _ = write!(s, " thread={:#x}", t.0);
            }
            if let Some(l) = at {
                let _ = write!(s, " at={:#x}/{:#x}@{}", l.class.0, l.method.0, l.index);
            }
            let _ = write!(s, " (suspend {suspend:?})");
            s
        }
        RecentEvent::Undecodable {
            error,
            policy,
            released,
        } => {
            let policy = policy.map_or("unreadable".to_string(), |p| format!("{p:?}"));
            dropped_composite(error, &policy, released)
        }
        RecentEvent::Stray {
            kind,
            request,
            thread,
            suspend,
            released,
        } => {
            let mut s = format!("{kind:?} req={}", request.0);
            if let Some(t) = thread {
                let _ = write!(s, " thread={:#x}", t.0);
            }
            let _ = write!(
                s,
                " (suspend {suspend:?}) of a request nobody in this session has \
                 (cleared while its hit was queued): {}",
                hold_released(released)
            );
            s
        }
        RecentEvent::LateReturn(l) => late_return(l),
    }
}

/// A composite the decoder refused, and what became of its hold.
fn dropped_composite(error: &str, policy: &str, released: &DroppedHold) -> String {
    format!(
        "undecodable event composite dropped (suspend {policy}): {error}; {}",
        hold_released(released)
    )
}

/// What became of a dropped event's hold.
fn hold_released(released: &DroppedHold) -> String {
    match released {
        DroppedHold::Nothing => "it held nothing".to_string(),
        DroppedHold::Thread(t) => format!("thread @{:#x} was resumed", t.0),
        DroppedHold::Vm => "the JVM was resumed once".to_string(),
        DroppedHold::LeftToWatchdog => {
            "its thread is unreadable and others are held, so the watchdog will release it"
                .to_string()
        }
        DroppedHold::UnknownPolicy => "any hold is left to the watchdog".to_string(),
        DroppedHold::ResumeFailed(e) => format!("resuming its hold failed: {e}"),
    }
}

/// A method that returned past its budget, and what became of the
/// suspension HotSpot left on its thread.
fn late_return(l: &LateReturn) -> String {
    let took = format!(
        "a method invoked on thread @{:#x} returned after its budget ({} ms after it started)",
        l.thread.0, l.after_ms
    );
    match &l.outcome {
        LateOutcome::AgentHolds => format!("{took}; the thread stays held, as the agent holds it"),
        LateOutcome::LeftToResume => {
            format!("{took}; left to the next resume, which clears every suspension")
        }
        LateOutcome::Resumed => format!("{took}; HotSpot suspended it again, so it was resumed"),
        LateOutcome::ResumeFailed(e) => format!("{took}; resuming it failed: {e}"),
        LateOutcome::Runs => format!("{took}; the thread runs"),
        LateOutcome::Unreadable(e) => format!("{took}; its state could not be read: {e}"),
    }
}

/// A thread still inside a call that could not be cancelled, as every
/// reply names it.
pub fn invoking(i: &Invoking) -> String {
    let by = match &i.by {
        Some(id) => format!(", made by stop point {id}"),
        None => String::new(),
    };
    let why = match &i.why {
        Uncancelled::Swallowed => "it caught the Error thrown into it to cancel the call".into(),
        Uncancelled::Unwoken => {
            "it is blocked where neither an interrupt nor a thread lent to interrupt it reached it"
                .into()
        }
        Uncancelled::HeldInside => {
            "an event suspended it inside the call; debug_continue lets the call go on".into()
        }
        Uncancelled::NoThrowable => "no Error to throw into it could be made".into(),
        Uncancelled::NoMarker(e) => {
            format!("the JVM refused the step that tells when it runs ({e})")
        }
    };
    format!(
        "thread @{:#x} {:?} is still inside {}() ({:.1} s{by}): {why}. It runs none of its own code until the call returns",
        i.thread.0,
        i.name,
        i.method,
        i.for_ms as f64 / 1000.0
    )
}

/// "all N threads run" — or, while calls of ours hold some of them, how
/// many run their own code and which do not. `other` counts threads
/// besides those the agent holds.
pub fn threads_run(total: usize, invoking: &[Invoking], other: bool) -> String {
    let other = if other { " other" } else { "" };
    if invoking.is_empty() {
        return format!("all {total}{other} threads run");
    }
    let names: Vec<String> = invoking
        .iter()
        .map(|i| format!("@{:#x} {:?} in {}()", i.thread.0, i.name, i.method))
        .collect();
    format!(
        "{} of {total}{other} threads run their own code; {} still inside a call that could not be cancelled: {}",
        total.saturating_sub(invoking.len()),
        if invoking.len() == 1 {
            "1 is"
        } else {
            "the rest are"
        },
        names.join(", ")
    )
}

/// One watchdog rescue, as the next reply reports it.
pub fn rescue(r: &Rescue) -> String {
    let verdict = if r.still_held == 0 {
        format!("all {} threads verified running", r.total)
    } else {
        format!("{} of {} threads still suspended", r.still_held, r.total)
    };
    // The requests cleared are counted, never listed: their JDWP ids mean
    // nothing to the agent. The stop points they served are named by our
    // ids, so the agent can re-enable them.
    let detail = if r.disabled.is_empty() {
        String::new()
    } else {
        format!(
            " (stop point{} {} now DISABLED; debug_update_stop_point kind toggle re-enables)",
            if r.disabled.len() == 1 { "" } else { "s" },
            r.disabled.join(", ")
        )
    };
    format!(
        "Watchdog: the JVM had {} of {} threads suspended for {:.1} s (limit {} s, JDWP_WATCHDOG_SECS); \
         resumed it ({}, {verdict}) and disabled the {} that froze it{detail}",
        r.held,
        r.total,
        r.held_for.as_secs_f64(),
        r.limit.as_secs_f64(),
        plural(r.resumes as usize, "resume"),
        plural(r.cleared.len(), "event request"),
    )
}

/// One structural change between a loaded class and its build, as a
/// line: debug_check_stale lists them, and a refused redefinition names
/// the ones it foresaw.
pub fn change_line(c: &Change) -> String {
    let r = c.restriction();
    let what = match c {
        Change::MethodAdded { name, signature } => {
            format!("method {name}{signature} added by the build")
        }
        Change::MethodRemoved { name, signature } => {
            format!("method {name}{signature} missing from the build")
        }
        Change::MethodModifiers {
            name,
            signature,
            running,
            built,
        } => format!(
            "method {name}{signature}: {} → {}",
            modifier_words(*running),
            modifier_words(*built)
        ),
        Change::FieldAdded { name, signature } => format!("field {name} {signature} added"),
        Change::FieldRemoved { name, signature } => format!("field {name} {signature} removed"),
        Change::FieldModifiers {
            name,
            running,
            built,
            ..
        } => format!(
            "field {name}: {} → {}",
            modifier_words(*running),
            modifier_words(*built)
        ),
        Change::ClassModifiers { running, built } => format!(
            "class modifiers: {} → {}",
            modifier_words(*running),
            modifier_words(*built)
        ),
        Change::Superclass { running, built } => format!(
            "superclass: {} → {}",
            running.as_deref().unwrap_or("none"),
            built.as_deref().unwrap_or("none")
        ),
        Change::Interfaces { running, built } => {
            format!(
                "interfaces: [{}] → [{}]",
                running.join(", "),
                built.join(", ")
            )
        }
    };
    format!("{} ({}): {what}", r.name(), r.code())
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    fn rescue_of(cleared: usize, disabled: &[&str]) -> Rescue {
        Rescue {
            held: 3,
            total: 4,
            held_for: Duration::from_secs(31),
            limit: Duration::from_secs(30),
            resumes: 1,
            still_held: 0,
            cleared: vec![Default::default(); cleared],
            disabled: disabled.iter().map(|s| s.to_string()).collect(),
        }
    }

    #[test]
    fn a_rescue_counts_the_requests_it_cleared_and_names_only_our_ids() {
        let text = rescue(&rescue_of(2, &[]));
        assert!(
            text.ends_with("disabled the 2 event requests that froze it"),
            "{text}"
        );
        let text = rescue(&rescue_of(2, &["bp_1", "bp_2"]));
        assert!(
            text.contains("2 event requests that froze it (stop points bp_1, bp_2 now DISABLED"),
            "{text}"
        );
        assert!(!text.contains("JDWP id"), "{text}");
    }
}
