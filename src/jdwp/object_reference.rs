//! Command set 9, ObjectReference: an object's type, fields, monitor,
//! method calls, garbage-collection pinning and referrers.

use super::class_type::InvokeMethodReply;
use super::constants::InvokeOptions;
use super::ids::{FieldId, MethodId, ObjectId, ReferenceTypeId, ThreadId};
use super::value::{FieldValue, TaggedObjectId, TaggedTypeId, Value};

command! {
    /// ObjectReference.ReferenceType (9/1): the object's runtime type.
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub struct ReferenceType {
        pub object: ObjectId,
    }
    => (0x09, 0x01, "ObjectReference.ReferenceType") -> TaggedTypeId;

    /// ObjectReference.GetValues (9/2): instance (or static) field values,
    /// one per field, in order.
    #[derive(Debug, Clone, PartialEq, Eq)]
    pub struct GetValues {
        pub object: ObjectId,
        pub fields: Vec<FieldId>,
    }
    => (0x09, 0x02, "ObjectReference.GetValues") -> Vec<Value>;

    /// ObjectReference.SetValues (9/3): the values go *untagged*; decoding
    /// this request needs their tags (`decode_request_with_tags`).
    #[derive(Debug, Clone, PartialEq)]
    pub struct SetValues {
        pub object: ObjectId,
        pub values: Vec<FieldValue>,
    }
    => (0x09, 0x03, "ObjectReference.SetValues") -> ();

    /// ObjectReference.MonitorInfo (9/5); there is no command 4.
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub struct MonitorInfo {
        pub object: ObjectId,
    }
    => (0x09, 0x05, "ObjectReference.MonitorInfo") -> MonitorInfoReply;

    /// ObjectReference.InvokeMethod (9/6): calls `method` (declared in
    /// `class`) on the object, in a thread suspended by an event.
    #[derive(Debug, Clone, PartialEq)]
    pub struct InvokeMethod {
        pub object: ObjectId,
        pub thread: ThreadId,
        pub class: ReferenceTypeId,
        pub method: MethodId,
        pub arguments: Vec<Value>,
        pub options: InvokeOptions,
    }
    => (0x09, 0x06, "ObjectReference.InvokeMethod") -> InvokeMethodReply;

    /// ObjectReference.DisableCollection (9/7): pins the object until
    /// `EnableCollection` (counted).
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub struct DisableCollection {
        pub object: ObjectId,
    }
    => (0x09, 0x07, "ObjectReference.DisableCollection") -> ();

    /// ObjectReference.EnableCollection (9/8).
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub struct EnableCollection {
        pub object: ObjectId,
    }
    => (0x09, 0x08, "ObjectReference.EnableCollection") -> ();

    /// ObjectReference.IsCollected (9/9).
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub struct IsCollected {
        pub object: ObjectId,
    }
    => (0x09, 0x09, "ObjectReference.IsCollected") -> bool;

    /// ObjectReference.ReferringObjects (9/10): objects referring to this
    /// one, at most `max_referrers` (0 = all).
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub struct ReferringObjects {
        pub object: ObjectId,
        pub max_referrers: i32,
    }
    => (0x09, 0x0A, "ObjectReference.ReferringObjects") -> Vec<TaggedObjectId>;
}

wire_struct! {
    /// The reply to `MonitorInfo`.
    #[derive(Debug, Clone, PartialEq, Eq)]
    pub struct MonitorInfoReply {
        /// Null when no thread owns the monitor.
        pub owner: ThreadId,
        pub entry_count: i32,
        pub waiters: Vec<ThreadId>,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::command::decode_reply;
    use crate::testing::{
        FOUR, Gen, command_round_trip_with, entropy, id_sizes, never_panics, noise,
    };
    use crate::value::TypeTag;
    use proptest::prelude::*;

    #[test]
    fn reference_type_reply() {
        let reply = decode_reply::<ReferenceType>(&[2, 0, 0, 0, 5], FOUR).expect("decodes");
        assert_eq!(reply.tag, TypeTag::Interface);
        assert_eq!(reply.id, ReferenceTypeId(5));
    }

    command_tests!(
        ReferenceType,
        GetValues,
        MonitorInfo,
        InvokeMethod,
        DisableCollection,
        EnableCollection,
        IsCollected,
        ReferringObjects,
    );

    proptest! {
        #[test]
        fn set_values_round_trips(seed in entropy(), sizes in id_sizes()) {
            let mut g = Gen::new(&seed, sizes);
            command_round_trip_with::<SetValues>(&mut g, |c| {
                c.values.iter().map(|v| v.value.tag()).collect()
            })?;
        }

        #[test]
        fn set_values_never_panics(noise in noise(), seed in entropy(), sizes in id_sizes()) {
            never_panics::<SetValues>(&noise, &mut Gen::new(&seed, sizes));
        }
    }
}

/// Byte-level check of `MonitorInfo`, which names a monitor's owner.
#[cfg(test)]
mod monitor_info {
    use super::*;
    use crate::command::{decode_reply, encode_request};
    use crate::testing::FOUR;
    use crate::wire::Writer;

    #[test]
    fn monitor_info_names_owner_and_waiters() {
        let mut w = Writer::new(FOUR);
        w.object_id(0x8);
        w.i32(1);
        w.i32(2);
        w.object_id(0x9);
        w.object_id(0xa);
        let reply = decode_reply::<MonitorInfo>(&w.into_bytes(), FOUR).expect("decodes");
        assert_eq!(reply.owner, ThreadId(0x8));
        assert_eq!(reply.entry_count, 1);
        assert_eq!(reply.waiters, [ThreadId(0x9), ThreadId(0xa)]);
        assert_eq!(
            encode_request(
                &MonitorInfo {
                    object: ObjectId(0x47)
                },
                FOUR
            ),
            [0, 0, 0, 0x47]
        );
    }
}
