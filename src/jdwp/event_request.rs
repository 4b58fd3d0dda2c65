//! Command set 15, EventRequest: asking the JVM for events (with every
//! modifier kind) and cancelling requests.

use super::command::{Decode, Encode};
use super::constants::{EventKind, StepDepth, StepSize, SuspendPolicy};
use super::ids::{FieldId, ObjectId, ReferenceTypeId, RequestId, ThreadId};
use super::value::Location;
use super::wire::{DecodeError, IdSizes, Reader, Writer};

command! {
    /// EventRequest.Set (15/1): the JVM sends the events of `event_kind`
    /// that pass every modifier (all must match, applied in order), with
    /// `suspend_policy`; the reply is the new request's id.
    #[derive(Debug, Clone, PartialEq, Eq)]
    pub struct Set {
        pub event_kind: EventKind,
        pub suspend_policy: SuspendPolicy,
        pub modifiers: Vec<Modifier>,
    }
    => (0x0F, 0x01, "EventRequest.Set") -> RequestId;

    /// EventRequest.Clear (15/2): cancels a request; an unknown id is not
    /// an error.
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub struct Clear {
        pub event_kind: EventKind,
        pub request_id: RequestId,
    }
    => (0x0F, 0x02, "EventRequest.Clear") -> ();

    /// EventRequest.ClearAllBreakpoints (15/3).
    pub struct ClearAllBreakpoints;
    => (0x0F, 0x03, "EventRequest.ClearAllBreakpoints") -> ();
}

/// Defines `Modifier`: one variant per `modKind`, its fields in wire order.
macro_rules! modifiers {
    ($($(#[$vm:meta])* $variant:ident = $kind:literal {
        $($(#[$fm:meta])* $f:ident : $t:ty),* $(,)?
    }),+ $(,)?) => {
        /// A filter on an event request (JDWP `modKind` 1 to 13).
        #[derive(Debug, Clone, PartialEq, Eq)]
        pub enum Modifier {
            $($(#[$vm])* $variant { $($(#[$fm])* $f: $t,)* },)+
        }

        impl Modifier {
            /// Every `modKind`, in specification order.
            pub const KINDS: &'static [u8] = &[$($kind,)+];

            /// This modifier's `modKind`.
            pub fn mod_kind(&self) -> u8 {
                match self {
                    $(Modifier::$variant { .. } => $kind,)+
                }
            }

            #[cfg(test)]
            pub(crate) fn arb_of_kind(
                kind: u8,
                g: &mut crate::testing::Gen<'_>,
            ) -> Option<Modifier> {
                match kind {
                    $($kind => Some(Modifier::$variant {
                        $($f: crate::testing::Arb::arb(g),)*
                    }),)+
                    _ => None,
                }
            }
        }

        impl Encode for Modifier {
            fn encode(&self, w: &mut Writer) {
                match self {
                    $(Modifier::$variant { $($f,)* } => {
                        w.u8($kind);
                        $(Encode::encode($f, w);)*
                    })+
                }
            }
        }

        impl Decode for Modifier {
            fn decode(r: &mut Reader<'_>) -> Result<Self, DecodeError> {
                match r.u8()? {
                    $($kind => Ok(Modifier::$variant { $($f: Decode::decode(r)?,)* }),)+
                    other => Err(DecodeError::Unknown {
                        what: "modifier kind",
                        value: u64::from(other),
                    }),
                }
            }
            fn min_len(_: IdSizes) -> usize {
                1
            }
        }
    };
}

modifiers! {
    /// Report only the `count`th occurrence; the request then expires.
    Count = 1 { count: i32 },
    /// Reserved for conditional expressions; no JVM implements it.
    Conditional = 2 { expr_id: i32 },
    /// Only events in this thread.
    ThreadOnly = 3 { thread: ThreadId },
    /// Only events in this type or its subtypes.
    ClassOnly = 4 { class: ReferenceTypeId },
    /// Only classes whose name matches: exact, or with one `*` at the
    /// start or end (`java.*`, `*.Foo`).
    ClassMatch = 5 { class_pattern: String },
    /// Not classes whose name matches the pattern.
    ClassExclude = 6 { class_pattern: String },
    /// Only at this location (breakpoints).
    LocationOnly = 7 { location: Location },
    /// Exceptions of this type or its subtypes (null: all), caught and/or
    /// uncaught.
    ExceptionOnly = 8 {
        exception_or_null: ReferenceTypeId,
        caught: bool,
        uncaught: bool,
    },
    /// Only accesses or modifications of this field.
    FieldOnly = 9 { declaring: ReferenceTypeId, field: FieldId },
    /// Step events: the thread, and how far and how deep to step.
    Step = 10 { thread: ThreadId, size: StepSize, depth: StepDepth },
    /// Only events whose `this` is this object.
    InstanceOnly = 11 { instance: ObjectId },
    /// Only classes whose source name (any stratum) matches the pattern.
    SourceNameMatch = 12 { source_name_pattern: String },
    /// Thread start and death only: no events for virtual threads
    /// (JDWP 21).
    PlatformThreadsOnly = 13 {},
}

#[cfg(test)]
impl crate::testing::Arb for Modifier {
    fn arb(g: &mut crate::testing::Gen<'_>) -> Self {
        let kind = g.pick(Modifier::KINDS);
        Modifier::arb_of_kind(kind, g).unwrap_or(Modifier::PlatformThreadsOnly {})
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::command::{decode_all, decode_request, encode_reply, encode_request};
    use crate::ids::MethodId;
    use crate::testing::{FOUR, Gen, entropy, id_sizes, noise, round_trip};
    use crate::value::TypeTag;
    use proptest::prelude::*;

    #[test]
    fn breakpoint_request_layout() {
        let cmd = Set {
            event_kind: EventKind::Breakpoint,
            suspend_policy: SuspendPolicy::EventThread,
            modifiers: vec![
                Modifier::LocationOnly {
                    location: Location {
                        type_tag: TypeTag::Class,
                        class: ReferenceTypeId(0x10),
                        method: MethodId(0x20),
                        index: 7,
                    },
                },
                Modifier::Count { count: 1 },
            ],
        };
        let bytes = encode_request(&cmd, FOUR);
        #[rustfmt::skip]
        assert_eq!(bytes, [
            2, 1, 0, 0, 0, 2, // BREAKPOINT, EVENT_THREAD, two modifiers
            7, 1, 0, 0, 0, 0x10, 0, 0, 0, 0x20, 0, 0, 0, 0, 0, 0, 0, 7,
            1, 0, 0, 0, 1,
        ]);
        assert_eq!(decode_request::<Set>(&bytes, FOUR), Ok(cmd));
    }

    #[test]
    fn step_and_platform_threads_modifiers() {
        let step = Modifier::Step {
            thread: ThreadId(3),
            size: StepSize::Line,
            depth: StepDepth::Over,
        };
        assert_eq!(
            encode_reply(&step, FOUR),
            [10, 0, 0, 0, 3, 0, 0, 0, 1, 0, 0, 0, 1]
        );
        assert_eq!(encode_reply(&Modifier::PlatformThreadsOnly {}, FOUR), [13]);
        assert!(decode_all::<Modifier>(&[14], FOUR, "modifier").is_err());
    }

    #[test]
    fn every_kind_is_covered() {
        let kinds: Vec<u8> = (1..=13).collect();
        assert_eq!(Modifier::KINDS, kinds);
        let mut g = Gen::new(&[], FOUR);
        for &kind in Modifier::KINDS {
            let m = Modifier::arb_of_kind(kind, &mut g).expect("known kind");
            assert_eq!(m.mod_kind(), kind);
        }
    }

    command_tests!(Set, Clear, ClearAllBreakpoints);

    proptest! {
        #[test]
        fn modifiers_of_every_kind_round_trip(seed in entropy(), sizes in id_sizes()) {
            let mut g = Gen::new(&seed, sizes);
            for &kind in Modifier::KINDS {
                let m = Modifier::arb_of_kind(kind, &mut g).expect("known kind");
                let bytes = encode_reply(&m, sizes);
                prop_assert_eq!(decode_all::<Modifier>(&bytes, sizes, "modifier"), Ok(m));
            }
            round_trip::<Vec<Modifier>>(&mut g)?;
        }

        #[test]
        fn arbitrary_modifiers_never_panic(noise in noise(), sizes in id_sizes()) {
            let _ = decode_all::<Vec<Modifier>>(&noise, sizes, "modifiers");
        }
    }
}
