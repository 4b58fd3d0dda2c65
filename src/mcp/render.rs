//! Text an agent reads, built from the plain data the actors return. Each
//! function here turns one kind of report into the compact, stable wording
//! the tools reply with; nothing here talks to a JVM.

pub mod value;

use crate::actors::Rescue;
use crate::model::stale::{Change, modifier_words};

/// Pluralises `word` for `n`.
pub fn plural(n: usize, word: &str) -> String {
    if n == 1 {
        format!("{n} {word}")
    } else {
        format!("{n} {word}s")
    }
}

/// One watchdog rescue, as the next reply reports it.
pub fn rescue(r: &Rescue) -> String {
    let verdict = if r.still_held == 0 {
        format!("all {} threads verified running", r.total)
    } else {
        format!("{} of {} threads still suspended", r.still_held, r.total)
    };
    let detail = if !r.disabled.is_empty() {
        format!(
            " (stop point{} {} now DISABLED; debug_toggle_stop_point re-enables)",
            if r.disabled.len() == 1 { "" } else { "s" },
            r.disabled.join(", ")
        )
    } else if r.cleared.is_empty() {
        String::new()
    } else {
        let ids: Vec<String> = r.cleared.iter().map(|id| id.0.to_string()).collect();
        format!(" (JDWP ids {})", ids.join(", "))
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
