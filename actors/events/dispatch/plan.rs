//! The held path's decisions, made from data alone (sans-IO, like
//! `crate::expr::eval`): a [`CapturePlan`] says what a capture reads while
//! the thread is held and in which order, as one pipelined burst with the
//! end of the hold queued right behind the last read; a [`Snapshot`]
//! records what those reads gave and hands each trace its part. The
//! dispatcher (`held.rs`) only drives them: it sends what the plan lists
//! and fills the snapshot with the replies.

use std::borrow::Cow;
use std::sync::Arc;
use std::time::Duration;

use crate::error::JdwpError;
use crate::events::ctx::Slot;
use crate::events::hit::Details;
use crate::jdwp::stack_frame::SlotRequest;
use crate::jdwp::{
    Event, FieldId, FrameId, FrameInfo, ObjectId, ReferenceTypeId, SuspendPolicy, Value,
};
use crate::model::shown::{HitNote, LocalsGap};
use crate::model::stop_point::{LocalsChoice, TraceSpec};

/// Who else a held composite concerns.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Sharing {
    /// No foreign request shares the composite.
    pub ours_only: bool,
    /// The session's ledger was told the composite suspended its thread
    /// (else nobody but this capture knows it, and its release concerns
    /// nobody).
    pub recorded: bool,
}

/// A watched field's value read while the thread is held: the old value
/// at a write.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct FieldRead {
    pub object: ObjectId,
    pub declaring: ReferenceTypeId,
    pub field: FieldId,
}

impl FieldRead {
    /// The read an event needs, if it names a field.
    pub fn of(e: &Event) -> Option<Self> {
        match e {
            Event::FieldModification {
                ref_type,
                field,
                object,
                ..
            }
            | Event::FieldAccess {
                ref_type,
                field,
                object,
                ..
            } => Some(Self {
                object: object.id,
                declaring: ref_type.id,
                field: *field,
            }),
            _ => None,
        }
    }
}

/// One step of the burst a capture sends while its thread is held, in
/// the order they go out.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Read {
    /// The held frame's values of these slots (`StackFrame.GetValues`).
    Values {
        frame: FrameId,
        slots: Vec<SlotRequest>,
    },
    /// Each member's watched field (`None`: its event names no field),
    /// traces first, then reports.
    OldValues(Vec<Option<FieldRead>>),
    /// The held frame's `this`, to read captured `val$` fields of later.
    This { frame: FrameId },
    /// The trace expressions: evaluated on the held frame after its own
    /// reads are queued (an invocation makes frame ids stale).
    Exprs,
    /// The end of the hold, queued right behind the last read: the JVM
    /// answers one connection's commands in order, so every read above
    /// completes before the thread runs.
    End(Hold),
}

/// A held composite's capture, planned from its members' trace specs and
/// events and the composite's suspend policy.
#[derive(Debug, PartialEq, Eq)]
pub(super) struct CapturePlan<'a> {
    pub reads: Reads<'a>,
    pub hold: Hold,
    olds: Vec<Option<FieldRead>>,
    exprs: bool,
}

impl<'a> CapturePlan<'a> {
    /// `traces`: the trace spec and event of each hit to snapshot;
    /// `reports`: the event of each hit reported to the agent.
    pub fn new(
        traces: &[(&'a TraceSpec, &Event)],
        reports: &[&Event],
        policy: SuspendPolicy,
        ours_only: bool,
    ) -> Self {
        let olds = traces
            .iter()
            .map(|(_, e)| *e)
            .chain(reports.iter().copied())
            .map(FieldRead::of)
            .collect();
        Self {
            reads: Reads::of(traces.iter().map(|(t, _)| *t)),
            hold: Hold::after(policy, ours_only, !reports.is_empty()),
            olds,
            exprs: traces.iter().any(|(t, _)| !t.exprs.is_empty()),
        }
    }

    /// Whether the `val$` fields of the held frame's class are wanted.
    pub fn wants_captured(&self, top: Option<&FrameInfo>) -> bool {
        top.is_some() && *self.reads.wanted != LocalsChoice::None
    }

    /// The burst, once the frames, the held frame's slots and whether it
    /// captured outer locals (`captured`) are known. `End` comes last.
    pub fn burst(&self, top: Option<&FrameInfo>, slots: &[Slot], captured: bool) -> Vec<Read> {
        let mut out = Vec::with_capacity(5);
        if let Some(top) = top
            && !slots.is_empty()
        {
            out.push(Read::Values {
                frame: top.frame_id,
                slots: slots.iter().map(|s| s.request).collect(),
            });
        }
        if self.olds.iter().any(Option::is_some) {
            out.push(Read::OldValues(self.olds.clone()));
        }
        if let Some(top) = top
            && captured
        {
            out.push(Read::This {
                frame: top.frame_id,
            });
        }
        if self.exprs {
            out.push(Read::Exprs);
        }
        out.push(Read::End(self.hold));
        out
    }
}

/// What a capture read while the thread was held, and how ending the hold
/// went: filled by the dispatcher from the replies to its plan's burst.
#[derive(Debug, Default)]
pub(super) struct Snapshot {
    pub frames: Vec<FrameInfo>,
    pub slots: Arc<[Slot]>,
    /// The values of `slots`, in their order.
    pub values: Vec<Value>,
    pub locals_note: Option<LocalsGap>,
    /// The locals an anonymous or local class captured (`val$x` fields).
    pub captured: Vec<(String, FieldId)>,
    /// The held frame's `this`, when captured fields are to be read of it.
    pub this: Option<ObjectId>,
    /// Old field values: one per trace, then one per report.
    pub field_values: Vec<Option<Value>>,
    /// Trace expression results: one per trace, or none when no trace has
    /// expressions.
    pub exprs: Vec<Details>,
    pub release_error: Option<String>,
    /// The VM was held for the agent already: this hit's own suspension
    /// was undone.
    pub stacked: bool,
    /// A resume after the hit arrived released it.
    pub released: bool,
    /// From the composite's arrival to the end of its hold: what every
    /// member that was held costs the application thread.
    pub held_for: Duration,
}

impl Snapshot {
    /// Records the reply to `Read::Values` (`None`: nothing was read).
    pub fn values_read(&mut self, reply: Option<Result<Vec<Value>, JdwpError>>) {
        match reply {
            Some(Ok(v)) => self.values = v,
            Some(Err(e)) => {
                self.values.clear();
                self.locals_note = Some(LocalsGap::Unreadable(e.to_string()));
            }
            None => self.values.clear(),
        }
    }

    /// The held frame's locals a trace showing `choice` keeps, with their
    /// values, in slot order.
    pub fn kept_locals(&self, choice: &LocalsChoice) -> Vec<(&Slot, Value)> {
        self.slots
            .iter()
            .zip(self.values.iter().copied())
            .filter(|(s, _)| keeps_local(choice, &s.name))
            .collect()
    }

    /// The caller frames a trace showing `frames` callers lists, nearest
    /// first.
    pub fn callers(&self, frames: u32) -> impl Iterator<Item = &FrameInfo> {
        self.frames.iter().skip(1).take(frames as usize)
    }
}

/// What one capture reads while the thread is held, for all its traces.
#[derive(Debug, PartialEq, Eq)]
pub(super) struct Reads<'a> {
    /// The most callers any trace shows (the hit frame comes on top).
    pub callers: usize,
    /// The locals any trace shows (borrowed when one trace's choice
    /// covers them all, as on a line with one trace).
    pub wanted: Cow<'a, LocalsChoice>,
    /// Whether frames are read at all.
    pub need_frames: bool,
}

impl<'a> Reads<'a> {
    /// What the traces together need.
    pub fn of(traces: impl IntoIterator<Item = &'a TraceSpec> + Clone) -> Self {
        let callers = traces
            .clone()
            .into_iter()
            .map(|t| t.frames)
            .max()
            .unwrap_or(0) as usize;
        let choices: Vec<&LocalsChoice> = traces.into_iter().map(|t| &t.locals).collect();
        let wanted = union(&choices);
        let need_frames = callers > 0 || *wanted != LocalsChoice::None;
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

/// What the union of several members' locals choices reads: one of them
/// when it covers the others (nothing is copied then), else their merge.
pub(super) fn union<'a>(choices: &[&'a LocalsChoice]) -> Cow<'a, LocalsChoice> {
    if let Some(all) = choices.iter().find(|c| ***c == LocalsChoice::All) {
        return Cow::Borrowed(*all);
    }
    let mut named = choices.iter().filter(|c| ***c != LocalsChoice::None);
    let Some(first) = named.next() else {
        return Cow::Owned(LocalsChoice::None);
    };
    if named.all(|c| c == first) {
        return Cow::Borrowed(*first);
    }
    Cow::Owned(merge(choices))
}

/// The names several `Only` choices list, sorted, each once.
fn merge(choices: &[&LocalsChoice]) -> LocalsChoice {
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
        assert_eq!(*union(&[&none, &none]), LocalsChoice::None);
        assert_eq!(*union(&[&a, &all]), LocalsChoice::All);
        assert!(matches!(union(&[&b, &none, &b]), Cow::Borrowed(c) if c == &b));
        assert_eq!(
            *union(&[&a, &b, &none]),
            LocalsChoice::Only(vec!["a".into(), "b".into()])
        );
        assert_eq!(*union(&[]), LocalsChoice::None);
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
                wanted: Cow::Owned(LocalsChoice::Only(vec!["x".into()])),
                need_frames: true,
            }
        );
        let bare_specs = [spec(0, LocalsChoice::None)];
        let bare = Reads::of(&bare_specs);
        assert!(!bare.need_frames);
        assert!(!Reads::of(&[] as &[TraceSpec]).need_frames);
    }

    #[test]
    fn early_frames_serve_only_a_deep_enough_untouched_request() {
        let specs = [spec(2, LocalsChoice::None)];
        let reads = Reads::of(&specs);
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

    fn frame(id: u64) -> FrameInfo {
        FrameInfo {
            frame_id: FrameId(id),
            location: crate::jdwp::Location {
                type_tag: crate::jdwp::TypeTag::Class,
                class: ReferenceTypeId(1),
                method: crate::jdwp::MethodId(2),
                index: 3,
            },
        }
    }

    fn slot(name: &str, n: i32) -> Slot {
        Slot {
            name: name.into(),
            request: SlotRequest {
                slot: n,
                sig_byte: crate::jdwp::Tag::Int,
            },
        }
    }

    fn breakpoint() -> Event {
        Event::Breakpoint {
            request_id: crate::jdwp::RequestId(1),
            thread: crate::jdwp::ThreadId(9),
            location: frame(0).location,
        }
    }

    #[test]
    fn a_plan_queues_the_reads_in_order_with_the_end_of_the_hold_last() {
        let with_exprs = TraceSpec {
            exprs: vec!["x + 1".into()],
            ..spec(2, LocalsChoice::All)
        };
        let hit = breakpoint();
        let plan = CapturePlan::new(
            &[(&with_exprs, &hit)],
            &[],
            SuspendPolicy::EventThread,
            true,
        );
        assert_eq!(plan.hold, Hold::Release);
        assert_eq!(plan.reads.callers, 2);
        let top = frame(7);
        assert!(plan.wants_captured(Some(&top)));
        let burst = plan.burst(Some(&top), &[slot("x", 1), slot("y", 2)], true);
        assert_eq!(
            burst,
            vec![
                Read::Values {
                    frame: FrameId(7),
                    slots: vec![slot("x", 1).request, slot("y", 2).request],
                },
                Read::This { frame: FrameId(7) },
                Read::Exprs,
                Read::End(Hold::Release),
            ]
        );
        // No frame read (or no slot live): the expressions (they read the
        // frame themselves), then the end of the hold.
        assert_eq!(
            plan.burst(None, &[], false),
            vec![Read::Exprs, Read::End(Hold::Release)]
        );
    }

    #[test]
    fn a_plan_reads_each_watched_field_and_escalates_a_report() {
        let write = Event::FieldModification {
            request_id: crate::jdwp::RequestId(2),
            thread: crate::jdwp::ThreadId(9),
            location: frame(0).location,
            ref_type: crate::jdwp::TaggedTypeId {
                tag: crate::jdwp::TypeTag::Class,
                id: ReferenceTypeId(5),
            },
            field: FieldId(6),
            object: crate::jdwp::TaggedObjectId {
                tag: crate::jdwp::Tag::Object,
                id: ObjectId(8),
            },
            value_to_be: Value::Int(1),
        };
        let hit = breakpoint();
        let bare = spec(0, LocalsChoice::None);
        let plan = CapturePlan::new(
            &[(&bare, &hit)],
            &[&write],
            SuspendPolicy::EventThread,
            true,
        );
        assert_eq!(plan.hold, Hold::Escalate);
        assert!(!plan.reads.need_frames);
        assert!(!plan.wants_captured(None));
        let old = FieldRead {
            object: ObjectId(8),
            declaring: ReferenceTypeId(5),
            field: FieldId(6),
        };
        assert_eq!(
            plan.burst(None, &[], false),
            vec![
                Read::OldValues(vec![None, Some(old)]),
                Read::End(Hold::Escalate)
            ]
        );
    }

    #[test]
    fn a_snapshot_hands_each_trace_its_locals_and_callers() {
        let mut snap = Snapshot {
            frames: vec![frame(1), frame(2), frame(3)],
            slots: vec![slot("a", 0), slot("b", 1)].into(),
            ..Snapshot::default()
        };
        snap.values_read(Some(Ok(vec![Value::Int(4), Value::Int(5)])));
        let only_b = LocalsChoice::Only(vec!["b".into()]);
        let kept: Vec<(&str, Value)> = snap
            .kept_locals(&only_b)
            .into_iter()
            .map(|(s, v)| (&*s.name, v))
            .collect();
        assert_eq!(kept, vec![("b", Value::Int(5))]);
        assert_eq!(snap.kept_locals(&LocalsChoice::All).len(), 2);
        assert!(snap.kept_locals(&LocalsChoice::None).is_empty());
        let callers: Vec<FrameId> = snap.callers(1).map(|f| f.frame_id).collect();
        assert_eq!(callers, vec![FrameId(2)]);
        assert_eq!(snap.callers(9).count(), 2);
        let gone = JdwpError::Disconnected {
            command: "StackFrame.GetValues",
            reason: "gone".into(),
        };
        snap.values_read(Some(Err(gone.clone())));
        assert!(snap.values.is_empty());
        assert_eq!(
            snap.locals_note,
            Some(LocalsGap::Unreadable(gone.to_string()))
        );
    }
}
