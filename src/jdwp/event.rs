//! Command set 64, Event: the `Composite` command the JVM sends with one or
//! more events, and `Event` with every event kind's data.

use super::command::{Decode, Encode, decode_all};
use super::constants::{ClassStatus, EventKind, SuspendPolicy};
use super::ids::{FieldId, RequestId, ThreadId};
use super::value::{Location, TaggedObjectId, TaggedTypeId, Value};
use super::wire::{DecodeError, IdSizes, Reader, Writer};

wire_struct! {
    /// Event.Composite (64/100), sent by the JVM as a command packet (no
    /// reply expected): events that happened together, and which threads
    /// the JVM suspended for them.
    #[derive(Debug, Clone, PartialEq)]
    pub struct Composite {
        pub suspend_policy: SuspendPolicy,
        pub events: Vec<Event>,
    }
}

impl Composite {
    /// The command set of a composite packet.
    pub const SET: u8 = 0x40;
    /// The command number of a composite packet.
    pub const ID: u8 = 0x64;
    /// The name used for spans and errors.
    pub const NAME: &'static str = "Event.Composite";

    /// Decodes a composite packet's data, refusing trailing bytes.
    pub fn decode_data(data: &[u8], sizes: IdSizes) -> Result<Self, DecodeError> {
        decode_all(data, sizes, Self::NAME)
    }

    /// Encodes the packet data (what a fake JVM sends).
    pub fn encode_data(&self, sizes: IdSizes) -> Vec<u8> {
        super::command::encode_reply(self, sizes)
    }
}

/// What can still be read of a composite the decoder refused, so whatever
/// it suspended can be released: the suspend policy (its first byte) and
/// the thread of its first event when that event's kind starts with one.
/// A suspending composite's events all happened in one thread, so that
/// thread is the one an `EventThread` policy suspended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Salvage {
    /// `None` when the first byte is missing or not a policy.
    pub suspend_policy: Option<SuspendPolicy>,
    /// `None` when no event's thread could be read.
    pub thread: Option<ThreadId>,
}

impl Composite {
    /// Reads what it can of a composite's data, never failing.
    pub fn salvage(data: &[u8], sizes: IdSizes) -> Salvage {
        let mut r = Reader::new(data, sizes);
        let suspend_policy = SuspendPolicy::decode(&mut r).ok();
        let thread = first_thread(&mut r);
        Salvage {
            suspend_policy,
            thread,
        }
    }
}

/// The thread of a composite's first event, read after the policy byte.
fn first_thread(r: &mut Reader<'_>) -> Option<ThreadId> {
    if r.i32().ok()? < 1 {
        return None;
    }
    let kind = EventKind::decode(r).ok()?;
    RequestId::decode(r).ok()?;
    match kind {
        EventKind::UserDefined
        | EventKind::ClassUnload
        | EventKind::VmDeath
        | EventKind::VmDisconnected => None,
        _ => ThreadId::decode(r).ok(),
    }
}

/// Defines `Event`: one variant per event kind (named as in `EventKind`),
/// each starting with the request id, then its fields in wire order.
macro_rules! events {
    ($($(#[$vm:meta])* $variant:ident {
        $($(#[$fm:meta])* $f:ident : $t:ty),* $(,)?
    }),+ $(,)?) => {
        /// One event of a composite. Every event carries the id of the
        /// request that asked for it (0 for the JVM's own `VmStart` and
        /// `VmDeath`).
        #[derive(Debug, Clone, PartialEq)]
        pub enum Event {
            $($(#[$vm])* $variant {
                request_id: RequestId,
                $($(#[$fm])* $f: $t,)*
            },)+
        }

        impl Event {
            /// Every event kind that has a layout, in specification order
            /// (all but `VmDisconnected`).
            pub const KINDS: &'static [EventKind] = &[$(EventKind::$variant,)+];

            /// This event's kind.
            pub fn kind(&self) -> EventKind {
                match self {
                    $(Event::$variant { .. } => EventKind::$variant,)+
                }
            }

            /// The id of the request that caused this event.
            pub fn request_id(&self) -> RequestId {
                match self {
                    $(Event::$variant { request_id, .. } => *request_id,)+
                }
            }

            #[cfg(test)]
            pub(crate) fn arb_of_kind(
                kind: EventKind,
                g: &mut crate::testing::Gen<'_>,
            ) -> Option<Event> {
                use crate::testing::Arb;
                match kind {
                    $(EventKind::$variant => Some(Event::$variant {
                        request_id: RequestId::arb(g),
                        $($f: Arb::arb(g),)*
                    }),)+
                    EventKind::VmDisconnected => None,
                }
            }
        }

        impl Encode for Event {
            fn encode(&self, w: &mut Writer) {
                match self {
                    $(Event::$variant { request_id, $($f,)* } => {
                        EventKind::$variant.encode(w);
                        request_id.encode(w);
                        $(Encode::encode($f, w);)*
                    })+
                }
            }
        }

        impl Decode for Event {
            fn decode(r: &mut Reader<'_>) -> Result<Self, DecodeError> {
                let kind = EventKind::decode(r)?;
                match kind {
                    $(EventKind::$variant => Ok(Event::$variant {
                        request_id: RequestId::decode(r)?,
                        $($f: Decode::decode(r)?,)*
                    }),)+
                    EventKind::VmDisconnected => Err(DecodeError::Unknown {
                        what: "event kind in a composite",
                        value: u64::from(kind.raw()),
                    }),
                }
            }
            fn min_len(_: IdSizes) -> usize {
                1 + 4
            }
        }
    };
}

events! {
    /// A step completed.
    SingleStep { thread: ThreadId, location: Location },
    /// A breakpoint was hit (before its instruction runs).
    Breakpoint { thread: ThreadId, location: Location },
    /// A frame was popped. JDWP defines no layout and HotSpot never sends
    /// it; this one follows `SingleStep`.
    FramePop { thread: ThreadId, location: Location },
    /// An exception was thrown at `location`.
    Exception {
        thread: ThreadId,
        location: Location,
        exception: TaggedObjectId,
        /// Where it will be caught; `None` (a zero location on the wire)
        /// when uncaught.
        catch_location: Option<Location>,
    },
    /// Reserved; carries only the request id.
    UserDefined {},
    /// A thread started (before it runs any code).
    ThreadStart { thread: ThreadId },
    /// A thread ended.
    ThreadDeath { thread: ThreadId },
    /// A type was prepared (its static fields exist; no code ran yet).
    ClassPrepare {
        thread: ThreadId,
        ref_type: TaggedTypeId,
        signature: String,
        status: ClassStatus,
    },
    /// A type was unloaded.
    ClassUnload { signature: String },
    /// A type was loaded. JDWP defines no layout; HotSpot's agent would
    /// write it like `ClassPrepare`, so that is the layout used.
    ClassLoad {
        thread: ThreadId,
        ref_type: TaggedTypeId,
        signature: String,
        status: ClassStatus,
    },
    /// A watched field is about to be read.
    FieldAccess {
        thread: ThreadId,
        location: Location,
        /// The field's declaring type.
        ref_type: TaggedTypeId,
        field: FieldId,
        /// Null for a static field.
        object: TaggedObjectId,
    },
    /// A watched field is about to be written.
    FieldModification {
        thread: ThreadId,
        location: Location,
        ref_type: TaggedTypeId,
        field: FieldId,
        object: TaggedObjectId,
        value_to_be: Value,
    },
    /// An exception was caught. JDWP defines no layout and HotSpot never
    /// sends it; this one follows `Exception` without a catch location.
    ExceptionCatch {
        thread: ThreadId,
        location: Location,
        exception: TaggedObjectId,
    },
    /// A method was entered (before its first instruction).
    MethodEntry { thread: ThreadId, location: Location },
    /// A method is returning (at its return instruction).
    MethodExit { thread: ThreadId, location: Location },
    /// A method is returning this value.
    MethodExitWithReturnValue {
        thread: ThreadId,
        location: Location,
        value: Value,
    },
    /// A thread is about to block on a monitor held by another thread.
    MonitorContendedEnter {
        thread: ThreadId,
        object: TaggedObjectId,
        location: Location,
    },
    /// A thread entered a monitor after waiting for it.
    MonitorContendedEntered {
        thread: ThreadId,
        object: TaggedObjectId,
        location: Location,
    },
    /// A thread is about to `Object.wait`.
    MonitorWait {
        thread: ThreadId,
        object: TaggedObjectId,
        location: Location,
        /// Milliseconds; 0 waits forever.
        timeout: i64,
    },
    /// A thread finished `Object.wait`.
    MonitorWaited {
        thread: ThreadId,
        object: TaggedObjectId,
        location: Location,
        timed_out: bool,
    },
    /// The JVM started; `thread` is its initial thread.
    VmStart { thread: ThreadId },
    /// The JVM is exiting.
    VmDeath {},
}

impl Event {
    /// The thread the event happened in, for the kinds that have one.
    pub fn thread(&self) -> Option<ThreadId> {
        match self {
            Event::SingleStep { thread, .. }
            | Event::Breakpoint { thread, .. }
            | Event::FramePop { thread, .. }
            | Event::Exception { thread, .. }
            | Event::ThreadStart { thread, .. }
            | Event::ThreadDeath { thread, .. }
            | Event::ClassPrepare { thread, .. }
            | Event::ClassLoad { thread, .. }
            | Event::FieldAccess { thread, .. }
            | Event::FieldModification { thread, .. }
            | Event::ExceptionCatch { thread, .. }
            | Event::MethodEntry { thread, .. }
            | Event::MethodExit { thread, .. }
            | Event::MethodExitWithReturnValue { thread, .. }
            | Event::MonitorContendedEnter { thread, .. }
            | Event::MonitorContendedEntered { thread, .. }
            | Event::MonitorWait { thread, .. }
            | Event::MonitorWaited { thread, .. }
            | Event::VmStart { thread, .. } => Some(*thread),
            Event::UserDefined { .. } | Event::ClassUnload { .. } | Event::VmDeath { .. } => None,
        }
    }

    /// Where the event happened, for the kinds that have a location.
    pub fn location(&self) -> Option<Location> {
        match self {
            Event::SingleStep { location, .. }
            | Event::Breakpoint { location, .. }
            | Event::FramePop { location, .. }
            | Event::Exception { location, .. }
            | Event::FieldAccess { location, .. }
            | Event::FieldModification { location, .. }
            | Event::ExceptionCatch { location, .. }
            | Event::MethodEntry { location, .. }
            | Event::MethodExit { location, .. }
            | Event::MethodExitWithReturnValue { location, .. }
            | Event::MonitorContendedEnter { location, .. }
            | Event::MonitorContendedEntered { location, .. }
            | Event::MonitorWait { location, .. }
            | Event::MonitorWaited { location, .. } => Some(*location),
            Event::UserDefined { .. }
            | Event::ThreadStart { .. }
            | Event::ThreadDeath { .. }
            | Event::ClassPrepare { .. }
            | Event::ClassUnload { .. }
            | Event::ClassLoad { .. }
            | Event::VmStart { .. }
            | Event::VmDeath { .. } => None,
        }
    }
}

#[cfg(test)]
impl crate::testing::Arb for Event {
    fn arb(g: &mut crate::testing::Gen<'_>) -> Self {
        let kind = g.pick(Event::KINDS);
        Event::arb_of_kind(kind, g).unwrap_or(Event::VmDeath {
            request_id: RequestId(0),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ids::{MethodId, ObjectId, ReferenceTypeId};
    use crate::packet::{CommandPacket, DEFAULT_MAX_PACKET, FrameDecoder, Packet};
    use crate::testing::{Arb, FOUR, Gen, entropy, id_sizes, noise};
    use crate::value::{Tag, TypeTag};
    use proptest::prelude::*;

    #[test]
    fn uncaught_exception_has_no_catch_location() {
        #[rustfmt::skip]
        let bytes = [
            2, // SUSPEND_ALL
            0, 0, 0, 1, // one event
            4, // EXCEPTION
            0, 0, 0, 9, // request id
            0, 0, 0, 1, // thread
            1, 0, 0, 0, 0x10, 0, 0, 0, 0x20, 0, 0, 0, 0, 0, 0, 0, 3, // thrown at
            b'L', 0, 0, 0, 0x30, // the exception
            1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, // zero location
        ];
        let composite = Composite::decode_data(&bytes, FOUR).expect("decodes");
        let expected = Composite {
            suspend_policy: SuspendPolicy::All,
            events: vec![Event::Exception {
                request_id: RequestId(9),
                thread: ThreadId(1),
                location: Location {
                    type_tag: TypeTag::Class,
                    class: ReferenceTypeId(0x10),
                    method: MethodId(0x20),
                    index: 3,
                },
                exception: TaggedObjectId {
                    tag: Tag::Object,
                    id: ObjectId(0x30),
                },
                catch_location: None,
            }],
        };
        assert_eq!(composite, expected);
        assert_eq!(composite.encode_data(FOUR), bytes);
        let event = &composite.events[0];
        assert_eq!(event.kind(), EventKind::Exception);
        assert_eq!(event.thread(), Some(ThreadId(1)));
        assert_eq!(event.request_id(), RequestId(9));
    }

    #[test]
    fn vm_start_and_death() {
        let bytes = [0, 0, 0, 0, 2, 90, 0, 0, 0, 0, 0, 0, 0, 1, 99, 0, 0, 0, 0];
        let composite = Composite::decode_data(&bytes, FOUR).expect("decodes");
        assert_eq!(composite.suspend_policy, SuspendPolicy::None);
        assert_eq!(
            composite.events,
            [
                Event::VmStart {
                    request_id: RequestId(0),
                    thread: ThreadId(1)
                },
                Event::VmDeath {
                    request_id: RequestId(0)
                },
            ]
        );
    }

    #[test]
    fn a_refused_composite_still_gives_its_policy_and_thread() {
        let check = |data: &[u8], policy: Option<SuspendPolicy>, thread: Option<u32>| {
            let expect = Salvage {
                suspend_policy: policy,
                thread: thread.map(|t| ThreadId(u64::from(t))),
            };
            assert!(Composite::decode_data(data, FOUR).is_err(), "{data:?}");
            assert_eq!(Composite::salvage(data, FOUR), expect, "{data:?}");
        };
        let (all, one) = (Some(SuspendPolicy::All), Some(SuspendPolicy::EventThread));
        // A breakpoint cut inside its location.
        check(&[2, 0, 0, 0, 1, 2, 0, 0, 0, 7, 0, 0, 0, 9, 1], all, Some(9));
        check(&[1, 0, 0, 0, 1, 2, 0, 0, 0, 7, 0, 0, 0, 9], one, Some(9));
        // Cut inside the thread id, an unknown kind, a kind without a thread.
        check(&[1, 0, 0, 0, 1, 2, 0, 0, 0, 7, 0, 0], one, None);
        check(&[1, 0, 0, 0, 1, 11, 0, 0, 0, 7, 0, 0, 0, 9], one, None);
        check(&[2, 0, 0, 0, 1, 9, 0, 0, 0, 7, 0, 0], all, None);
        // No events, no count, no policy.
        check(&[2, 0, 0, 0, 0, 5], all, None);
        check(&[0, 0, 0], Some(SuspendPolicy::None), None);
        check(&[7, 0, 0, 0, 1, 2, 0, 0, 0, 7, 0, 0, 0, 9], None, Some(9));
        check(&[], None, None);
    }

    #[test]
    fn vm_disconnected_and_unknown_kinds_are_refused() {
        assert!(Composite::decode_data(&[0, 0, 0, 0, 1, 100, 0, 0, 0, 0], FOUR).is_err());
        assert!(Composite::decode_data(&[0, 0, 0, 0, 1, 11, 0, 0, 0, 0], FOUR).is_err());
    }

    #[test]
    fn every_kind_but_disconnected_has_a_layout() {
        let mut g = Gen::new(&[], FOUR);
        for &kind in EventKind::VARIANTS {
            let event = Event::arb_of_kind(kind, &mut g);
            assert_eq!(event.is_some(), kind != EventKind::VmDisconnected);
            if let Some(event) = event {
                assert_eq!(event.kind(), kind);
            }
        }
        assert_eq!(Event::KINDS.len(), EventKind::VARIANTS.len() - 1);
    }

    proptest! {
        #[test]
        fn composites_of_every_kind_round_trip(seed in entropy(), sizes in id_sizes()) {
            let mut g = Gen::new(&seed, sizes);
            for &kind in Event::KINDS {
                let first = Event::arb_of_kind(kind, &mut g).expect("has a layout");
                let mut events = vec![first];
                events.extend(Vec::<Event>::arb(&mut g));
                let composite = Composite {
                    suspend_policy: SuspendPolicy::arb(&mut g),
                    events,
                };
                let bytes = composite.encode_data(sizes);
                prop_assert_eq!(Composite::decode_data(&bytes, sizes), Ok(composite));
            }
        }

        #[test]
        fn composite_packets_survive_framing(seed in entropy(), sizes in id_sizes(), id: u32) {
            let mut g = Gen::new(&seed, sizes);
            let composite = Composite::arb(&mut g);
            let packet = Packet::Command(CommandPacket {
                id,
                command_set: Composite::SET,
                command: Composite::ID,
                data: composite.encode_data(sizes),
            });
            let mut d = FrameDecoder::new(DEFAULT_MAX_PACKET);
            d.push(&packet.encode());
            let Ok(Some(Packet::Command(c))) = d.next_packet() else {
                return Err(TestCaseError::fail("no command packet"));
            };
            prop_assert_eq!(Composite::decode_data(&c.data, sizes), Ok(composite));
        }

        #[test]
        fn arbitrary_bytes_never_panic(noise in noise(), seed in entropy(), sizes in id_sizes()) {
            let _ = Composite::decode_data(&noise, sizes);
            let mut g = Gen::new(&seed, sizes);
            let mut valid = Composite::arb(&mut g).encode_data(sizes);
            for end in 0..valid.len() {
                let _ = Composite::decode_data(&valid[..end], sizes);
            }
            if !valid.is_empty() {
                let at = usize::from(g.byte()) % valid.len();
                valid[at] ^= g.byte() | 1;
                let _ = Composite::decode_data(&valid, sizes);
            }
        }
    }
}
