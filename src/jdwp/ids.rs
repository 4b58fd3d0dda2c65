//! Id newtypes. Their width on the wire comes from `IdSizes`; in memory
//! they are all u64 so one JVM's 4-byte ids and another's 8-byte ids share
//! one representation.

use super::command::{Decode, Encode};
use super::wire::{DecodeError, IdSizes, Reader, Writer};

macro_rules! id {
    ($(#[$doc:meta] $name:ident => $width:ident, $read:ident, $write:ident;)*) => {$(
        #[$doc]
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
        pub struct $name(pub u64);

        impl $name {
            /// The null id (0).
            pub const NULL: $name = $name(0);

            /// True for the null id.
            pub fn is_null(self) -> bool {
                self.0 == 0
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                write!(f, "{:#x}", self.0)
            }
        }

        impl Decode for $name {
            fn decode(r: &mut Reader<'_>) -> Result<Self, DecodeError> {
                Ok($name(r.$read()?))
            }
            fn min_len(sizes: IdSizes) -> usize {
                usize::from(sizes.$width)
            }
        }

        impl Encode for $name {
            fn encode(&self, w: &mut Writer) {
                w.$write(self.0);
            }
        }

        #[cfg(test)]
        impl crate::testing::Arb for $name {
            fn arb(g: &mut crate::testing::Gen) -> Self {
                let width = g.sizes().$width;
                $name(g.id(width))
            }
        }
    )*};
}

id! {
    /// An object (including strings, class loaders, class objects, arrays).
    ObjectId => object, object_id, object_id;
    /// A thread object.
    ThreadId => object, object_id, object_id;
    /// A thread group object.
    ThreadGroupId => object, object_id, object_id;
    /// A module object (JDWP `moduleID`, object width).
    ModuleId => object, object_id, object_id;
    /// A class, interface or array type.
    ReferenceTypeId => reference_type, reference_type_id, reference_type_id;
    /// A method within its declaring type.
    MethodId => method, method_id, method_id;
    /// A field within its declaring type.
    FieldId => field, field_id, field_id;
    /// A stack frame; valid only while its thread stays suspended.
    FrameId => frame, frame_id, frame_id;
}

/// The id the JVM gives an event request.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct RequestId(pub i32);

impl std::fmt::Display for RequestId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.0)
    }
}

impl Decode for RequestId {
    fn decode(r: &mut Reader<'_>) -> Result<Self, DecodeError> {
        Ok(RequestId(r.i32()?))
    }
    fn min_len(_: IdSizes) -> usize {
        4
    }
}

impl Encode for RequestId {
    fn encode(&self, w: &mut Writer) {
        w.i32(self.0);
    }
}

#[cfg(test)]
impl crate::testing::Arb for RequestId {
    fn arb(g: &mut crate::testing::Gen) -> Self {
        RequestId(g.i32())
    }
}

impl From<ThreadId> for ObjectId {
    fn from(t: ThreadId) -> Self {
        ObjectId(t.0)
    }
}

impl From<ThreadGroupId> for ObjectId {
    fn from(t: ThreadGroupId) -> Self {
        ObjectId(t.0)
    }
}

impl From<ModuleId> for ObjectId {
    fn from(m: ModuleId) -> Self {
        ObjectId(m.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{Gen, entropy, id_sizes, round_trip};
    use proptest::prelude::*;

    #[test]
    fn ids_use_their_own_width() {
        let sizes = IdSizes {
            field: 2,
            method: 3,
            object: 4,
            reference_type: 5,
            frame: 6,
        };
        let mut w = Writer::new(sizes);
        FieldId(1).encode(&mut w);
        MethodId(1).encode(&mut w);
        ThreadId(1).encode(&mut w);
        ReferenceTypeId(1).encode(&mut w);
        FrameId(1).encode(&mut w);
        assert_eq!(w.into_bytes().len(), 2 + 3 + 4 + 5 + 6);
        assert_eq!(FrameId::min_len(sizes), 6);
    }

    proptest! {
        #[test]
        fn ids_round_trip(seed in entropy(), sizes in id_sizes()) {
            let mut g = Gen::new(&seed, sizes);
            round_trip::<ObjectId>(&mut g)?;
            round_trip::<ThreadId>(&mut g)?;
            round_trip::<ThreadGroupId>(&mut g)?;
            round_trip::<ModuleId>(&mut g)?;
            round_trip::<ReferenceTypeId>(&mut g)?;
            round_trip::<MethodId>(&mut g)?;
            round_trip::<FieldId>(&mut g)?;
            round_trip::<FrameId>(&mut g)?;
            round_trip::<RequestId>(&mut g)?;
        }
    }
}
