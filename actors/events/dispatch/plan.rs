//! The held path's decisions, made from data alone: what a capture reads
//! while the thread is held, how the hold ends, which locals each trace
//! keeps, and what a report says stayed suspended.

use crate::jdwp::SuspendPolicy;
use crate::model::shown::HitNote;
use crate::model::stop_point::{LocalsChoice, TraceSpec};

/// What one capture reads while the thread is held, for all its traces.
#[derive(Debug, PartialEq, Eq)]
pub(super) struct Reads {
    /// The most callers any trace shows (the hit frame comes on top).
    pub callers: usize,
    /// The locals any trace shows.
    pub wanted: LocalsChoice,
    /// Whether frames are read at all.
    pub need_frames: bool,
}

impl Reads {
    /// What the traces together need.
    pub fn of<'a>(traces: impl IntoIterator<Item = &'a TraceSpec> + Clone) -> Self {
        let callers = traces
            .clone()
            .into_iter()
            .map(|t| t.frames)
            .max()
            .unwrap_or(0) as usize;
        let choices: Vec<&LocalsChoice> = traces.into_iter().map(|t| &t.locals).collect();
        let wanted = union(&choices);
        let need_frames = callers > 0 || wanted != LocalsChoice::None;
        Self {
            callers,
            wanted,
            need_frames,
        }
    }

    /// Whether `n` frames asked for early serve this capture: code run on
    /// the hit thread since (`invoked`) makes their frame ids stale, and
    /// the request must reach past the deepest caller shown.
    pub fn early_serves(&self, n: usize, invoked: bool) -> bool {
        self.need_frames && n > self.callers && !invoked
    }
}

/// What the union of several members' locals choices reads.
pub(super) fn union(choices: &[&LocalsChoice]) -> LocalsChoice {
    if choices.iter().any(|c| **c == LocalsChoice::All) {
        return LocalsChoice::All;
    }
    let mut names: Vec<String> = choices
        .iter()
        .filter_map(|c| match c {
            LocalsChoice::Only(n) => Some(n.clone()),
            _ => None,
        })
        .flatten()
        .collect();
    names.sort();
    names.dedup();
    if names.is_empty() {
        LocalsChoice::None
    } else {
        LocalsChoice::Only(names)
    }
}

/// How a held composite's hold ends once its reads are queued.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Hold {
    /// A suspending stop point matched on the hit thread alone: the VM is
    /// suspended for the agent and the hit thread released.
    Escalate,
    /// Left held: someone else's request shares the composite, or the VM
    /// is held for a report.
    Keep,
    /// Released as the composite's policy suspended it.
    Release,
}

impl Hold {
    /// The ending for a composite: `reported` says whether any hit is
    /// reported to the agent, `ours_only` that no foreign request shares it.
    pub fn after(policy: SuspendPolicy, ours_only: bool, reported: bool) -> Self {
        if policy == SuspendPolicy::EventThread && reported {
            Self::Escalate
        } else if !ours_only || (policy == SuspendPolicy::All && reported) {
            Self::Keep
        } else {
            Self::Release
        }
    }

    pub fn escalates(self) -> bool {
        self == Self::Escalate
    }
}

/// Whether a trace showing `choice` keeps the local `name`.
pub(super) fn keeps_local(choice: &LocalsChoice, name: &str) -> bool {
    match choice {
        LocalsChoice::All => true,
        LocalsChoice::None => false,
        LocalsChoice::Only(names) => names.iter().any(|n| n == name),
    }
}

/// Whether a trace showing `choice` keeps the captured local `name` (a
/// `val$name` field of `this`): asked for by either spelling.
pub(super) fn keeps_captured(choice: &LocalsChoice, name: &str) -> bool {
    match choice {
        LocalsChoice::All => true,
        LocalsChoice::None => false,
        LocalsChoice::Only(names) => names
            .iter()
            .any(|w| w == name || w.strip_prefix("val$") == Some(name)),
    }
}

/// What a report says stayed suspended, and why, given how its hold ended
/// (`release_error`: what failed while ending it; `stacked`: the VM was
/// held for the agent already).
pub(super) fn report_suspension(
    policy: SuspendPolicy,
    hold: Hold,
    release_error: Option<&str>,
    stacked: bool,
) -> (SuspendPolicy, Option<HitNote>) {
    if stacked && release_error.is_none() {
        return (SuspendPolicy::All, Some(HitNote::Stacked));
    }
    match (release_error, hold.escalates()) {
        (Some(e), true) => (
            SuspendPolicy::None,
            Some(HitNote::EscalationFailed(e.to_string())),
        ),
        (None, true) => (SuspendPolicy::All, Some(HitNote::Escalated)),
        _ => (policy, None),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(frames: u32, locals: LocalsChoice) -> TraceSpec {
        TraceSpec {
            frames,
            locals,
            ..TraceSpec::default()
        }
    }

    #[test]
    fn locals_choices_union() {
        let all = LocalsChoice::All;
        let none = LocalsChoice::None;
        let a = LocalsChoice::Only(vec!["a".into()]);
        let b = LocalsChoice::Only(vec!["b".into(), "a".into()]);
        assert_eq!(union(&[&none, &none]), LocalsChoice::None);
        assert_eq!(union(&[&a, &all]), LocalsChoice::All);
        assert_eq!(
            union(&[&a, &b, &none]),
            LocalsChoice::Only(vec!["a".into(), "b".into()])
        );
        assert_eq!(union(&[]), LocalsChoice::None);
    }

    #[test]
    fn reads_cover_every_trace() {
        let traces = [
            spec(2, LocalsChoice::None),
            spec(0, LocalsChoice::Only(vec!["x".into()])),
        ];
        let reads = Reads::of(&traces);
        assert_eq!(
            reads,
            Reads {
                callers: 2,
                wanted: LocalsChoice::Only(vec!["x".into()]),
                need_frames: true,
            }
        );
        let bare = Reads::of(&[spec(0, LocalsChoice::None)]);
        assert!(!bare.need_frames);
        assert!(!Reads::of(&[] as &[TraceSpec]).need_frames);
    }

    #[test]
    fn early_frames_serve_only_a_deep_enough_untouched_request() {
        let reads = Reads::of(&[spec(2, LocalsChoice::None)]);
        assert!(reads.early_serves(3, false));
        assert!(!reads.early_serves(2, false));
        assert!(!reads.early_serves(3, true));
        assert!(!Reads::of(&[] as &[TraceSpec]).early_serves(3, false));
    }

    #[test]
    fn holds_end_by_policy_and_reports() {
        use SuspendPolicy::{All, EventThread};
        assert_eq!(Hold::after(EventThread, true, true), Hold::Escalate);
        assert_eq!(Hold::after(EventThread, false, true), Hold::Escalate);
        assert_eq!(Hold::after(EventThread, true, false), Hold::Release);
        assert_eq!(Hold::after(EventThread, false, false), Hold::Keep);
        assert_eq!(Hold::after(All, true, true), Hold::Keep);
        assert_eq!(Hold::after(All, true, false), Hold::Release);
        assert_eq!(Hold::after(All, false, false), Hold::Keep);
    }

    #[test]
    fn captured_locals_answer_to_either_spelling() {
        let only = LocalsChoice::Only(vec!["val$a".into(), "b".into()]);
        assert!(keeps_captured(&only, "a"));
        assert!(keeps_captured(&only, "b"));
        assert!(!keeps_captured(&only, "c"));
        assert!(!keeps_local(&only, "a"));
        assert!(keeps_local(&only, "b"));
        assert!(keeps_local(&LocalsChoice::All, "z"));
        assert!(!keeps_captured(&LocalsChoice::None, "a"));
    }

    #[test]
    fn reports_say_what_stayed_suspended() {
        use SuspendPolicy::{All, EventThread};
        let (s, note) = report_suspension(EventThread, Hold::Escalate, Some("gone"), false);
        assert_eq!(s, SuspendPolicy::None);
        assert_eq!(note, Some(HitNote::EscalationFailed("gone".into())));
        let (s, note) = report_suspension(EventThread, Hold::Escalate, None, false);
        assert_eq!(s, All);
        assert!(note.is_some());
        assert_eq!(report_suspension(All, Hold::Keep, None, false), (All, None));
        assert_eq!(
            report_suspension(All, Hold::Keep, Some("x"), false),
            (All, None)
        );
        assert_eq!(
            report_suspension(All, Hold::Release, None, false),
            (All, None)
        );
        assert_eq!(
            report_suspension(EventThread, Hold::Escalate, None, true),
            (All, Some(HitNote::Stacked))
        );
    }
}
