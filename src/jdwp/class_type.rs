//! Command set 3, ClassType: a class's superclass, setting static fields,
//! invoking static methods and creating instances.

use super::constants::InvokeOptions;
use super::ids::{MethodId, ReferenceTypeId, ThreadId};
use super::value::{FieldValue, TaggedObjectId, Value};

command! {
    /// ClassType.Superclass (3/1): null for `java.lang.Object`.
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub struct Superclass {
        pub class: ReferenceTypeId,
    }
    => (0x03, 0x01, "ClassType.Superclass") -> ReferenceTypeId;

    /// ClassType.SetValues (3/2): sets static fields. The values go
    /// *untagged*; decoding this request needs their tags
    /// (`decode_request_with_tags`).
    #[derive(Debug, Clone, PartialEq)]
    pub struct SetValues {
        pub class: ReferenceTypeId,
        pub values: Vec<FieldValue>,
    }
    => (0x03, 0x02, "ClassType.SetValues") -> ();

    /// ClassType.InvokeMethod (3/3): calls a static method in a thread
    /// suspended by an event; other threads resume for the call unless
    /// `INVOKE_SINGLE_THREADED`.
    #[derive(Debug, Clone, PartialEq)]
    pub struct InvokeMethod {
        pub class: ReferenceTypeId,
        pub thread: ThreadId,
        pub method: MethodId,
        pub arguments: Vec<Value>,
        pub options: InvokeOptions,
    }
    => (0x03, 0x03, "ClassType.InvokeMethod") -> InvokeMethodReply;

    /// ClassType.NewInstance (3/4): runs a constructor.
    #[derive(Debug, Clone, PartialEq)]
    pub struct NewInstance {
        pub class: ReferenceTypeId,
        pub thread: ThreadId,
        pub method: MethodId,
        pub arguments: Vec<Value>,
        pub options: InvokeOptions,
    }
    => (0x03, 0x04, "ClassType.NewInstance") -> NewInstanceReply;
}

wire_struct! {
    /// The reply to every `InvokeMethod` (ClassType, InterfaceType,
    /// ObjectReference): the return value, or a null one and the thrown
    /// exception.
    #[derive(Debug, Clone, Copy, PartialEq)]
    pub struct InvokeMethodReply {
        pub return_value: Value,
        /// Null (id 0) when the method returned normally.
        pub exception: TaggedObjectId,
    }
}

wire_struct! {
    /// The reply to `NewInstance`.
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub struct NewInstanceReply {
        /// Null when the constructor threw.
        pub new_object: TaggedObjectId,
        /// Null when the constructor returned normally.
        pub exception: TaggedObjectId,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::command::{decode_reply, decode_request_with_tags, encode_request};
    use crate::ids::{FieldId, ObjectId};
    use crate::testing::{
        FOUR, Gen, command_round_trip_with, entropy, id_sizes, never_panics, noise,
    };
    use crate::value::Tag;
    use proptest::prelude::*;

    #[test]
    fn set_values_writes_untagged_values() {
        let cmd = SetValues {
            class: ReferenceTypeId(1),
            values: vec![
                FieldValue {
                    field: FieldId(2),
                    value: Value::Int(5),
                },
                FieldValue {
                    field: FieldId(3),
                    value: Value::Object {
                        tag: Tag::String,
                        id: ObjectId(9),
                    },
                },
            ],
        };
        let bytes = encode_request(&cmd, FOUR);
        #[rustfmt::skip]
        assert_eq!(bytes, [
            0, 0, 0, 1, // class
            0, 0, 0, 2, // two values
            0, 0, 0, 2, 0, 0, 0, 5, // field 2 = 5
            0, 0, 0, 3, 0, 0, 0, 9, // field 3 = string 9
        ]);
        let back = decode_request_with_tags::<SetValues>(&bytes, FOUR, &[Tag::Int, Tag::String]);
        assert_eq!(back, Ok(cmd));
    }

    #[test]
    fn invoke_reply_with_exception() {
        #[rustfmt::skip]
        let bytes = [
            b'V', // void return value: no bytes follow
            b'L', 0, 0, 0, 0x2A, // the exception
        ];
        let reply = decode_reply::<InvokeMethod>(&bytes, FOUR).expect("decodes");
        assert_eq!(reply.return_value, Value::Void);
        assert_eq!(reply.exception.id, ObjectId(0x2A));
    }

    command_tests!(Superclass, InvokeMethod, NewInstance);

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
