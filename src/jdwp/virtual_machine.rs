//! Command set 1, VirtualMachine: version, id sizes, classes, threads,
//! capabilities, suspension of the whole JVM and disposal of the session.

use super::command::{Decode, Encode};
use super::constants::ClassStatus;
use super::ids::{ModuleId, ObjectId, ReferenceTypeId, ThreadGroupId, ThreadId};
use super::value::TaggedTypeId;
use super::wire::{DecodeError, IdSizes, Reader, Writer};

command! {
    /// VirtualMachine.Version (1/1).
    pub struct Version;
    => (0x01, 0x01, "VirtualMachine.Version") -> VersionReply;

    /// VirtualMachine.ClassesBySignature (1/2): the loaded types with this
    /// JNI signature (one per defining loader).
    #[derive(Debug, Clone, PartialEq, Eq)]
    pub struct ClassesBySignature {
        /// e.g. `Ljava/lang/String;`.
        pub signature: String,
    }
    => (0x01, 0x02, "VirtualMachine.ClassesBySignature") -> Vec<MatchingClass>;

    /// VirtualMachine.AllClasses (1/3).
    pub struct AllClasses;
    => (0x01, 0x03, "VirtualMachine.AllClasses") -> Vec<ClassInfo>;

    /// VirtualMachine.AllThreads (1/4): live platform threads (not virtual
    /// threads).
    pub struct AllThreads;
    => (0x01, 0x04, "VirtualMachine.AllThreads") -> Vec<ThreadId>;

    /// VirtualMachine.TopLevelThreadGroups (1/5).
    pub struct TopLevelThreadGroups;
    => (0x01, 0x05, "VirtualMachine.TopLevelThreadGroups") -> Vec<ThreadGroupId>;

    /// VirtualMachine.Dispose (1/6): clears every event request and resumes
    /// every thread as many times as needed, then ends the connection.
    pub struct Dispose;
    => (0x01, 0x06, "VirtualMachine.Dispose") -> ();

    /// VirtualMachine.IDSizes (1/7).
    pub struct IdSizesCmd;
    => (0x01, 0x07, "VirtualMachine.IDSizes") -> IdSizes;

    /// VirtualMachine.Suspend (1/8): suspends every thread once more.
    pub struct Suspend;
    => (0x01, 0x08, "VirtualMachine.Suspend") -> ();

    /// VirtualMachine.Resume (1/9): decrements every thread's suspend count
    /// by one, including threads held by `ThreadReference.Suspend`.
    pub struct Resume;
    => (0x01, 0x09, "VirtualMachine.Resume") -> ();

    /// VirtualMachine.Exit (1/10).
    #[derive(Debug, Clone, PartialEq, Eq)]
    pub struct Exit {
        pub exit_code: i32,
    }
    => (0x01, 0x0A, "VirtualMachine.Exit") -> ();

    /// VirtualMachine.CreateString (1/11): a new string in the JVM; it may
    /// be collected at once unless `ObjectReference.DisableCollection`.
    #[derive(Debug, Clone, PartialEq, Eq)]
    pub struct CreateString {
        pub utf: String,
    }
    => (0x01, 0x0B, "VirtualMachine.CreateString") -> ObjectId;

    /// VirtualMachine.Capabilities (1/12).
    pub struct Capabilities;
    => (0x01, 0x0C, "VirtualMachine.Capabilities") -> CapabilitiesReply;

    /// VirtualMachine.ClassPaths (1/13).
    pub struct ClassPaths;
    => (0x01, 0x0D, "VirtualMachine.ClassPaths") -> ClassPathsReply;

    /// VirtualMachine.DisposeObjects (1/14): releases ids the debugger no
    /// longer uses.
    #[derive(Debug, Clone, PartialEq, Eq)]
    pub struct DisposeObjects {
        pub requests: Vec<ObjectRefCount>,
    }
    => (0x01, 0x0E, "VirtualMachine.DisposeObjects") -> ();

    /// VirtualMachine.HoldEvents (1/15): the JVM queues events instead of
    /// sending them.
    pub struct HoldEvents;
    => (0x01, 0x0F, "VirtualMachine.HoldEvents") -> ();

    /// VirtualMachine.ReleaseEvents (1/16).
    pub struct ReleaseEvents;
    => (0x01, 0x10, "VirtualMachine.ReleaseEvents") -> ();

    /// VirtualMachine.CapabilitiesNew (1/17).
    pub struct CapabilitiesNew;
    => (0x01, 0x11, "VirtualMachine.CapabilitiesNew") -> CapabilitiesNewReply;

    /// VirtualMachine.RedefineClasses (1/18).
    #[derive(Debug, Clone, PartialEq, Eq)]
    pub struct RedefineClasses {
        pub classes: Vec<ClassDef>,
    }
    => (0x01, 0x12, "VirtualMachine.RedefineClasses") -> ();

    /// VirtualMachine.SetDefaultStratum (1/19); empty restores the default.
    #[derive(Debug, Clone, PartialEq, Eq)]
    pub struct SetDefaultStratum {
        pub stratum_id: String,
    }
    => (0x01, 0x13, "VirtualMachine.SetDefaultStratum") -> ();

    /// VirtualMachine.AllClassesWithGeneric (1/20).
    pub struct AllClassesWithGeneric;
    => (0x01, 0x14, "VirtualMachine.AllClassesWithGeneric") -> Vec<GenericClassInfo>;

    /// VirtualMachine.InstanceCounts (1/21): one count per type, in order.
    #[derive(Debug, Clone, PartialEq, Eq)]
    pub struct InstanceCounts {
        pub ref_types: Vec<ReferenceTypeId>,
    }
    => (0x01, 0x15, "VirtualMachine.InstanceCounts") -> Vec<i64>;

    /// VirtualMachine.AllModules (1/22).
    pub struct AllModules;
    => (0x01, 0x16, "VirtualMachine.AllModules") -> Vec<ModuleId>;
}

wire_struct! {
    /// The reply to `Version`.
    #[derive(Debug, Clone, PartialEq, Eq)]
    pub struct VersionReply {
        /// Free text describing the JVM and JDWP versions.
        pub description: String,
        pub jdwp_major: i32,
        pub jdwp_minor: i32,
        /// `java.version`.
        pub vm_version: String,
        /// `java.vm.name`.
        pub vm_name: String,
    }
}

wire_struct! {
    /// One type in the reply to `ClassesBySignature`.
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub struct MatchingClass {
        pub ref_type: TaggedTypeId,
        pub status: ClassStatus,
    }
}

wire_struct! {
    /// One type in the reply to `AllClasses`.
    #[derive(Debug, Clone, PartialEq, Eq)]
    pub struct ClassInfo {
        pub ref_type: TaggedTypeId,
        pub signature: String,
        pub status: ClassStatus,
    }
}

wire_struct! {
    /// One type in the reply to `AllClassesWithGeneric`.
    #[derive(Debug, Clone, PartialEq, Eq)]
    pub struct GenericClassInfo {
        pub ref_type: TaggedTypeId,
        pub signature: String,
        /// Empty when the type has no generic signature.
        pub generic_signature: String,
        pub status: ClassStatus,
    }
}

wire_struct! {
    /// The reply to `Capabilities`.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
    pub struct CapabilitiesReply {
        pub can_watch_field_modification: bool,
        pub can_watch_field_access: bool,
        pub can_get_bytecodes: bool,
        pub can_get_synthetic_attribute: bool,
        pub can_get_owned_monitor_info: bool,
        pub can_get_current_contended_monitor: bool,
        pub can_get_monitor_info: bool,
    }
}

wire_struct! {
    /// The reply to `ClassPaths`.
    #[derive(Debug, Clone, PartialEq, Eq)]
    pub struct ClassPathsReply {
        /// The directory relative class path entries are resolved against.
        pub base_dir: String,
        pub classpaths: Vec<String>,
        pub bootclasspaths: Vec<String>,
    }
}

wire_struct! {
    /// One entry of `DisposeObjects`: an object id and how many times the
    /// debugger received it.
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub struct ObjectRefCount {
        pub object: ObjectId,
        pub ref_count: i32,
    }
}

wire_struct! {
    /// The reply to `CapabilitiesNew`.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
    pub struct CapabilitiesNewReply {
        pub can_watch_field_modification: bool,
        pub can_watch_field_access: bool,
        pub can_get_bytecodes: bool,
        pub can_get_synthetic_attribute: bool,
        pub can_get_owned_monitor_info: bool,
        pub can_get_current_contended_monitor: bool,
        pub can_get_monitor_info: bool,
        pub can_redefine_classes: bool,
        pub can_add_method: bool,
        pub can_unrestrictedly_redefine_classes: bool,
        pub can_pop_frames: bool,
        pub can_use_instance_filters: bool,
        pub can_get_source_debug_extension: bool,
        pub can_request_vm_death_event: bool,
        pub can_set_default_stratum: bool,
        pub can_get_instance_info: bool,
        pub can_request_monitor_events: bool,
        pub can_get_monitor_frame_info: bool,
        pub can_use_source_name_filters: bool,
        pub can_get_constant_pool: bool,
        pub can_force_early_return: bool,
        /// `reserved22` to `reserved32`.
        pub reserved: [bool; 11],
    }
}

wire_struct! {
    /// One class of `RedefineClasses`: the type and its new class file.
    #[derive(Debug, Clone, PartialEq, Eq)]
    pub struct ClassDef {
        pub ref_type: ReferenceTypeId,
        pub classfile: Vec<u8>,
    }
}

/// The reply to `IDSizes`: five `int` widths, checked to be 1..=8.
impl Decode for IdSizes {
    fn decode(r: &mut Reader<'_>) -> Result<Self, DecodeError> {
        let mut next = |what: &'static str| -> Result<u8, DecodeError> {
            let v = r.i32()?;
            u8::try_from(v).map_err(|_| DecodeError::BadIdSize { what, width: 0 })
        };
        IdSizes {
            field: next("field")?,
            method: next("method")?,
            object: next("object")?,
            reference_type: next("referenceType")?,
            frame: next("frame")?,
        }
        .checked()
    }
    fn min_len(_: IdSizes) -> usize {
        5 * 4
    }
}

impl Encode for IdSizes {
    fn encode(&self, w: &mut Writer) {
        for width in [
            self.field,
            self.method,
            self.object,
            self.reference_type,
            self.frame,
        ] {
            w.i32(i32::from(width));
        }
    }
}

#[cfg(test)]
impl crate::testing::Arb for IdSizes {
    fn arb(g: &mut crate::testing::Gen<'_>) -> Self {
        let mut width = || g.byte() % 8 + 1;
        IdSizes {
            field: width(),
            method: width(),
            object: width(),
            reference_type: width(),
            frame: width(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::command::{decode_reply, encode_reply};
    use crate::testing::FOUR;
    use crate::value::TypeTag;

    #[test]
    fn version_reply_decodes() {
        let mut w = Writer::new(IdSizes::HOTSPOT);
        w.string("Java Debug Wire Protocol");
        w.i32(17);
        w.i32(0);
        w.string("17.0.15");
        w.string("OpenJDK 64-Bit Server VM");
        let reply = decode_reply::<Version>(&w.into_bytes(), IdSizes::HOTSPOT).expect("decodes");
        assert_eq!(reply.vm_version, "17.0.15");
        assert_eq!(reply.jdwp_major, 17);
    }

    #[test]
    fn id_sizes_of_four() {
        let mut w = Writer::new(IdSizes::HOTSPOT);
        for _ in 0..5 {
            w.i32(4);
        }
        let sizes = decode_reply::<IdSizesCmd>(&w.into_bytes(), IdSizes::HOTSPOT).expect("decodes");
        assert_eq!(sizes.object, 4);
    }

    #[test]
    fn id_sizes_out_of_range_are_refused() {
        let bytes = encode_reply(&FOUR, IdSizes::HOTSPOT);
        let mut bad = bytes.clone();
        bad[7] = 9; // method width 9
        assert!(decode_reply::<IdSizesCmd>(&bad, IdSizes::HOTSPOT).is_err());
        bad[4..8].copy_from_slice(&(-1i32).to_be_bytes());
        assert!(decode_reply::<IdSizesCmd>(&bad, IdSizes::HOTSPOT).is_err());
    }

    #[test]
    fn classes_by_signature_with_four_byte_ids() {
        let bytes = [
            0, 0, 0, 1, // one class
            1, // CLASS
            0, 0, 0x12, 0x34, // referenceTypeID
            0, 0, 0, 7, // VERIFIED | PREPARED | INITIALIZED
        ];
        let reply = decode_reply::<ClassesBySignature>(&bytes, FOUR).expect("decodes");
        assert_eq!(
            reply,
            [MatchingClass {
                ref_type: TaggedTypeId {
                    tag: TypeTag::Class,
                    id: ReferenceTypeId(0x1234)
                },
                status: ClassStatus(7),
            }]
        );
        assert!(reply[0].status.contains(ClassStatus::INITIALIZED));
    }

    #[test]
    fn capabilities_new_is_32_booleans() {
        let reply = CapabilitiesNewReply {
            can_force_early_return: true,
            ..CapabilitiesNewReply::default()
        };
        let bytes = encode_reply(&reply, IdSizes::HOTSPOT);
        assert_eq!(bytes.len(), 32);
        assert_eq!(bytes[20], 1);
    }

    command_tests!(
        Version,
        ClassesBySignature,
        AllClasses,
        AllThreads,
        TopLevelThreadGroups,
        Dispose,
        IdSizesCmd,
        Suspend,
        Resume,
        Exit,
        CreateString,
        Capabilities,
        ClassPaths,
        DisposeObjects,
        HoldEvents,
        ReleaseEvents,
        CapabilitiesNew,
        RedefineClasses,
        SetDefaultStratum,
        AllClassesWithGeneric,
        InstanceCounts,
        AllModules,
    );
}

/// The layouts the code tools rely on: RedefineClasses carries each class
/// file as a length-prefixed byte run after its type id, and the three
/// redefinition capabilities sit at positions 7..=10 of CapabilitiesNew.
#[cfg(test)]
mod redefine_tests {
    use super::*;
    use crate::command::{decode_reply, encode_request};
    use crate::testing::FOUR;

    #[test]
    fn redefine_classes_request_layout() {
        let cmd = RedefineClasses {
            classes: vec![ClassDef {
                ref_type: ReferenceTypeId(0x0102_0304),
                classfile: vec![0xCA, 0xFE, 0xBA, 0xBE],
            }],
        };
        let bytes = encode_request(&cmd, FOUR);
        assert_eq!(
            bytes,
            [0, 0, 0, 1, 1, 2, 3, 4, 0, 0, 0, 4, 0xCA, 0xFE, 0xBA, 0xBE]
        );
        let wide = encode_request(&cmd, IdSizes::HOTSPOT);
        assert_eq!(wide.len(), 4 + 8 + 4 + 4);
    }

    #[test]
    fn capabilities_new_names_the_redefinition_flags() {
        let mut bytes = [0u8; 32];
        bytes[7] = 1; // canRedefineClasses
        bytes[10] = 1; // canPopFrames
        let reply = decode_reply::<CapabilitiesNew>(&bytes, FOUR).expect("decodes");
        assert!(reply.can_redefine_classes && reply.can_pop_frames);
        assert!(!reply.can_add_method && !reply.can_unrestrictedly_redefine_classes);
        assert!(decode_reply::<CapabilitiesNew>(&bytes[..31], FOUR).is_err());
    }
}

/// Byte-level check of `InstanceCounts`: several types in one request.
#[cfg(test)]
mod instance_counts {
    use super::*;
    use crate::command::{decode_reply, encode_request};
    use crate::testing::FOUR;

    #[test]
    fn counts_come_back_in_request_order() {
        let cmd = InstanceCounts {
            ref_types: vec![ReferenceTypeId(1), ReferenceTypeId(2)],
        };
        assert_eq!(
            encode_request(&cmd, FOUR),
            [0, 0, 0, 2, 0, 0, 0, 1, 0, 0, 0, 2]
        );
        let mut reply = vec![0, 0, 0, 2];
        reply.extend(3i64.to_be_bytes());
        reply.extend(7i64.to_be_bytes());
        assert_eq!(decode_reply::<InstanceCounts>(&reply, FOUR), Ok(vec![3, 7]));
        assert!(decode_reply::<InstanceCounts>(&reply[..10], FOUR).is_err());
    }
}
