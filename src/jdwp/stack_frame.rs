//! Command set 16, StackFrame: local variables, `this`, and popping frames.

use super::ids::{FrameId, ThreadId};
use super::value::{Tag, TaggedObjectId, Value};

command! {
    /// StackFrame.GetValues (16/1): locals by slot; each slot's signature
    /// byte says how to read it (objects may come back with a more exact
    /// tag).
    #[derive(Debug, Clone, PartialEq, Eq)]
    pub struct GetValues {
        pub thread: ThreadId,
        pub frame: FrameId,
        pub slots: Vec<SlotRequest>,
    }
    => (0x10, 0x01, "StackFrame.GetValues") -> Vec<Value>;

    /// StackFrame.SetValues (16/2): values here are tagged.
    #[derive(Debug, Clone, PartialEq)]
    pub struct SetValues {
        pub thread: ThreadId,
        pub frame: FrameId,
        pub slot_values: Vec<SlotValue>,
    }
    => (0x10, 0x02, "StackFrame.SetValues") -> ();

    /// StackFrame.ThisObject (16/3): null in static and native methods.
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub struct ThisObject {
        pub thread: ThreadId,
        pub frame: FrameId,
    }
    => (0x10, 0x03, "StackFrame.ThisObject") -> TaggedObjectId;

    /// StackFrame.PopFrames (16/4): pops this frame and every frame above
    /// it.
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub struct PopFrames {
        pub thread: ThreadId,
        pub frame: FrameId,
    }
    => (0x10, 0x04, "StackFrame.PopFrames") -> ();
}

wire_struct! {
    /// One local to read: its slot (from `Method.VariableTable`) and the
    /// tag of its declared type (`sigbyte`).
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub struct SlotRequest {
        pub slot: i32,
        pub sig_byte: Tag,
    }
}

wire_struct! {
    /// One local to set.
    #[derive(Debug, Clone, Copy, PartialEq)]
    pub struct SlotValue {
        pub slot: i32,
        pub value: Value,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::command::encode_request;
    use crate::testing::FOUR;

    #[test]
    fn get_values_layout() {
        let cmd = GetValues {
            thread: ThreadId(1),
            frame: FrameId(2),
            slots: vec![SlotRequest {
                slot: 3,
                sig_byte: Tag::Object,
            }],
        };
        let bytes = encode_request(&cmd, FOUR);
        assert_eq!(bytes[8..], [0, 0, 0, 1, 0, 0, 0, 3, b'L']);
    }

    command_tests!(GetValues, SetValues, ThisObject, PopFrames);
}
