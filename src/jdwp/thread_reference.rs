//! Command set 11, ThreadReference: a thread's name, status, suspension,
//! stack frames, monitors, and stopping, interrupting or forcing an early
//! return.

use super::constants::{SuspendStatus, ThreadStatus};
use super::ids::{FrameId, ObjectId, ThreadGroupId, ThreadId};
use super::value::{Location, TaggedObjectId, Value};

command! {
    /// ThreadReference.Name (11/1).
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub struct Name {
        pub thread: ThreadId,
    }
    => (0x0B, 0x01, "ThreadReference.Name") -> String;

    /// ThreadReference.Suspend (11/2): increments the suspend count.
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub struct Suspend {
        pub thread: ThreadId,
    }
    => (0x0B, 0x02, "ThreadReference.Suspend") -> ();

    /// ThreadReference.Resume (11/3): decrements the suspend count; the
    /// thread runs again at zero.
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub struct Resume {
        pub thread: ThreadId,
    }
    => (0x0B, 0x03, "ThreadReference.Resume") -> ();

    /// ThreadReference.Status (11/4): thread status and suspend status.
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub struct Status {
        pub thread: ThreadId,
    }
    => (0x0B, 0x04, "ThreadReference.Status") -> StatusReply;

    /// ThreadReference.ThreadGroup (11/5).
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub struct ThreadGroup {
        pub thread: ThreadId,
    }
    => (0x0B, 0x05, "ThreadReference.ThreadGroup") -> ThreadGroupId;

    /// ThreadReference.Frames (11/6): frames of a suspended thread, current
    /// frame first; `length` -1 ([`Frames::ALL`]) means all from
    /// `start_frame` on.
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub struct Frames {
        pub thread: ThreadId,
        pub start_frame: i32,
        pub length: i32,
    }
    => (0x0B, 0x06, "ThreadReference.Frames") -> Vec<FrameInfo>;

    /// ThreadReference.FrameCount (11/7).
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub struct FrameCount {
        pub thread: ThreadId,
    }
    => (0x0B, 0x07, "ThreadReference.FrameCount") -> i32;

    /// ThreadReference.OwnedMonitors (11/8).
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub struct OwnedMonitors {
        pub thread: ThreadId,
    }
    => (0x0B, 0x08, "ThreadReference.OwnedMonitors") -> Vec<TaggedObjectId>;

    /// ThreadReference.CurrentContendedMonitor (11/9): null when none.
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub struct CurrentContendedMonitor {
        pub thread: ThreadId,
    }
    => (0x0B, 0x09, "ThreadReference.CurrentContendedMonitor") -> TaggedObjectId;

    /// ThreadReference.Stop (11/10): throws `throwable` in the thread.
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub struct Stop {
        pub thread: ThreadId,
        pub throwable: ObjectId,
    }
    => (0x0B, 0x0A, "ThreadReference.Stop") -> ();

    /// ThreadReference.Interrupt (11/11).
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub struct Interrupt {
        pub thread: ThreadId,
    }
    => (0x0B, 0x0B, "ThreadReference.Interrupt") -> ();

    /// ThreadReference.SuspendCount (11/12): how many resumes it takes to
    /// run the thread again.
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub struct SuspendCount {
        pub thread: ThreadId,
    }
    => (0x0B, 0x0C, "ThreadReference.SuspendCount") -> i32;

    /// ThreadReference.OwnedMonitorsStackDepthInfo (11/13).
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub struct OwnedMonitorsStackDepthInfo {
        pub thread: ThreadId,
    }
    => (0x0B, 0x0D, "ThreadReference.OwnedMonitorsStackDepthInfo") -> Vec<MonitorStackDepth>;

    /// ThreadReference.ForceEarlyReturn (11/14): returns `value` from the
    /// current frame of a suspended thread.
    #[derive(Debug, Clone, Copy, PartialEq)]
    pub struct ForceEarlyReturn {
        pub thread: ThreadId,
        pub value: Value,
    }
    => (0x0B, 0x0E, "ThreadReference.ForceEarlyReturn") -> ();

    /// ThreadReference.IsVirtual (11/15, JDWP 19+).
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub struct IsVirtual {
        pub thread: ThreadId,
    }
    => (0x0B, 0x0F, "ThreadReference.IsVirtual") -> bool;
}

impl Frames {
    /// `length` meaning every frame from `start_frame` on.
    pub const ALL: i32 = -1;

    /// Every frame of the thread.
    pub fn all(thread: ThreadId) -> Self {
        Frames {
            thread,
            start_frame: 0,
            length: Frames::ALL,
        }
    }
}

wire_struct! {
    /// The reply to `Status`.
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub struct StatusReply {
        pub thread_status: ThreadStatus,
        pub suspend_status: SuspendStatus,
    }
}

impl StatusReply {
    /// True when the thread is suspended (by the debugger or an event).
    pub fn is_suspended(&self) -> bool {
        self.suspend_status
            .contains(SuspendStatus::SUSPEND_STATUS_SUSPENDED)
    }
}

wire_struct! {
    /// One frame in the reply to `Frames`.
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub struct FrameInfo {
        pub frame_id: FrameId,
        pub location: Location,
    }
}

wire_struct! {
    /// One monitor in the reply to `OwnedMonitorsStackDepthInfo`.
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub struct MonitorStackDepth {
        pub monitor: TaggedObjectId,
        /// The frame that acquired it, or -1 when unknown (e.g. JNI).
        pub stack_depth: i32,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::command::{decode_reply, encode_request};
    use crate::ids::{MethodId, ReferenceTypeId};
    use crate::testing::FOUR;
    use crate::value::TypeTag;
    use crate::wire::{DecodeError, IdSizes};

    #[test]
    fn frames_request_for_all_frames() {
        let bytes = encode_request(&Frames::all(ThreadId(0x0102)), FOUR);
        assert_eq!(bytes, [0, 0, 1, 2, 0, 0, 0, 0, 0xFF, 0xFF, 0xFF, 0xFF]);
    }

    #[test]
    fn frames_reply_decodes() {
        #[rustfmt::skip]
        let bytes = [
            0, 0, 0, 2, // two frames
            // frame 1 (8-byte frame id), in class 0x10 method 0x20 at 5
            0, 0, 0, 0, 0, 0, 0, 1,
            1, 0, 0, 0, 0, 0, 0, 0, 0x10, 0, 0, 0, 0, 0, 0, 0, 0x20,
            0, 0, 0, 0, 0, 0, 0, 5,
            // frame 2, in an interface method at 0
            0, 0, 0, 0, 0, 0, 0, 2,
            2, 0, 0, 0, 0, 0, 0, 0, 0x11, 0, 0, 0, 0, 0, 0, 0, 0x21,
            0, 0, 0, 0, 0, 0, 0, 0,
        ];
        let frames = decode_reply::<Frames>(&bytes, IdSizes::HOTSPOT).expect("decodes");
        assert_eq!(
            frames,
            [
                FrameInfo {
                    frame_id: FrameId(1),
                    location: Location {
                        type_tag: TypeTag::Class,
                        class: ReferenceTypeId(0x10),
                        method: MethodId(0x20),
                        index: 5,
                    },
                },
                FrameInfo {
                    frame_id: FrameId(2),
                    location: Location {
                        type_tag: TypeTag::Interface,
                        class: ReferenceTypeId(0x11),
                        method: MethodId(0x21),
                        index: 0,
                    },
                },
            ]
        );
        // Short data is an error, not a panic.
        let short = decode_reply::<Frames>(&bytes[..bytes.len() - 1], IdSizes::HOTSPOT);
        assert!(matches!(short, Err(DecodeError::CountTooLarge { .. })));
        let mut one = bytes[..4 + 33 + 8].to_vec();
        one[3] = 1;
        let short = decode_reply::<Frames>(&one, IdSizes::HOTSPOT);
        assert!(matches!(short, Err(DecodeError::Trailing { .. })));
        // A count larger than the data could hold is refused up front.
        let mut huge = bytes.to_vec();
        huge[..4].copy_from_slice(&[0x00, 0x10, 0, 0]);
        assert!(matches!(
            decode_reply::<Frames>(&huge, IdSizes::HOTSPOT),
            Err(DecodeError::CountTooLarge { .. })
        ));
    }

    #[test]
    fn status_reply() {
        let bytes = [0, 0, 0, 4, 0, 0, 0, 1];
        let status = decode_reply::<Status>(&bytes, FOUR).expect("decodes");
        assert_eq!(status.thread_status, ThreadStatus::Wait);
        assert!(status.is_suspended());
        let unstarted = [0xFF, 0xFF, 0xFF, 0xFF, 0, 0, 0, 0];
        let status = decode_reply::<Status>(&unstarted, FOUR).expect("decodes");
        assert_eq!(status.thread_status, ThreadStatus::NotStarted);
        assert!(!status.is_suspended());
    }

    command_tests!(
        Name,
        Suspend,
        Resume,
        Status,
        ThreadGroup,
        Frames,
        FrameCount,
        OwnedMonitors,
        CurrentContendedMonitor,
        Stop,
        Interrupt,
        SuspendCount,
        OwnedMonitorsStackDepthInfo,
        ForceEarlyReturn,
        IsVirtual,
    );
}

/// Byte-level checks of the monitor and virtual-thread commands a thread
/// dump uses.
#[cfg(test)]
mod dump_commands {
    use super::*;
    use crate::command::{decode_reply, encode_request};
    use crate::testing::FOUR;
    use crate::value::Tag;
    use crate::wire::Writer;

    #[test]
    fn owned_monitors_with_their_depth_decode() {
        let mut w = Writer::new(FOUR);
        w.i32(2);
        w.u8(b'L');
        w.object_id(0x47);
        w.i32(0);
        w.u8(b'L');
        w.object_id(0x48);
        w.i32(-1);
        let reply =
            decode_reply::<OwnedMonitorsStackDepthInfo>(&w.into_bytes(), FOUR).expect("decodes");
        assert_eq!(reply.len(), 2);
        assert_eq!(
            (reply[0].monitor.tag, reply[0].monitor.id),
            (Tag::Object, ObjectId(0x47))
        );
        assert_eq!((reply[0].stack_depth, reply[1].stack_depth), (0, -1));
        let request = encode_request(
            &OwnedMonitorsStackDepthInfo {
                thread: ThreadId(7),
            },
            FOUR,
        );
        assert_eq!(request, [0, 0, 0, 7]);
    }

    #[test]
    fn contended_monitor_and_is_virtual_decode() {
        let mut w = Writer::new(FOUR);
        w.u8(b'L');
        w.object_id(0);
        let none = decode_reply::<CurrentContendedMonitor>(&w.into_bytes(), FOUR).expect("decodes");
        assert_eq!(none.id, ObjectId(0));
        assert_eq!(decode_reply::<IsVirtual>(&[1], FOUR), Ok(true));
        assert_eq!(decode_reply::<IsVirtual>(&[0], FOUR), Ok(false));
        assert!(decode_reply::<IsVirtual>(&[], FOUR).is_err());
        let mut w = Writer::new(FOUR);
        w.i32(1);
        w.u8(b'L');
        w.object_id(0x10);
        let owned = decode_reply::<OwnedMonitors>(&w.into_bytes(), FOUR).expect("decodes");
        assert_eq!(owned[0].id, ObjectId(0x10));
    }
}
