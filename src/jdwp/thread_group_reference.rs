//! Command set 12, ThreadGroupReference: a thread group's name, parent and
//! children.

use super::ids::{ThreadGroupId, ThreadId};

command! {
    /// ThreadGroupReference.Name (12/1).
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub struct Name {
        pub group: ThreadGroupId,
    }
    => (0x0C, 0x01, "ThreadGroupReference.Name") -> String;

    /// ThreadGroupReference.Parent (12/2): null for a top-level group.
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub struct Parent {
        pub group: ThreadGroupId,
    }
    => (0x0C, 0x02, "ThreadGroupReference.Parent") -> ThreadGroupId;

    /// ThreadGroupReference.Children (12/3): live platform threads and
    /// active groups directly in this group.
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub struct Children {
        pub group: ThreadGroupId,
    }
    => (0x0C, 0x03, "ThreadGroupReference.Children") -> ChildrenReply;
}

wire_struct! {
    /// The reply to `Children`.
    #[derive(Debug, Clone, PartialEq, Eq)]
    pub struct ChildrenReply {
        pub child_threads: Vec<ThreadId>,
        pub child_groups: Vec<ThreadGroupId>,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::command::decode_reply;
    use crate::testing::FOUR;

    #[test]
    fn children_decodes() {
        #[rustfmt::skip]
        let bytes = [
            0, 0, 0, 1, 0, 0, 0, 7, // one thread
            0, 0, 0, 0, // no groups
        ];
        let reply = decode_reply::<Children>(&bytes, FOUR).expect("decodes");
        assert_eq!(reply.child_threads, [ThreadId(7)]);
        assert!(reply.child_groups.is_empty());
    }

    command_tests!(Name, Parent, Children);
}
