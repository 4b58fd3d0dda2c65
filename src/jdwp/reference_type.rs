//! Command set 2, ReferenceType: what a loaded class, interface or array
//! type is — signature, loader, fields, methods, static values, source file,
//! status, instances, class file version and constant pool.

use super::constants::ClassStatus;
use super::ids::{FieldId, MethodId, ModuleId, ObjectId, ReferenceTypeId};
use super::value::{TaggedObjectId, TaggedTypeId, Value};

command! {
    /// ReferenceType.Signature (2/1): the JNI signature, e.g.
    /// `Ljava/lang/String;`.
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub struct Signature {
        pub ref_type: ReferenceTypeId,
    }
    => (0x02, 0x01, "ReferenceType.Signature") -> String;

    /// ReferenceType.ClassLoader (2/2): the defining loader, null for the
    /// bootstrap loader.
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub struct ClassLoader {
        pub ref_type: ReferenceTypeId,
    }
    => (0x02, 0x02, "ReferenceType.ClassLoader") -> ObjectId;

    /// ReferenceType.Modifiers (2/3): the access flags (JVMS `access_flags`).
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub struct Modifiers {
        pub ref_type: ReferenceTypeId,
    }
    => (0x02, 0x03, "ReferenceType.Modifiers") -> i32;

    /// ReferenceType.Fields (2/4): declared fields, without inherited ones.
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub struct Fields {
        pub ref_type: ReferenceTypeId,
    }
    => (0x02, 0x04, "ReferenceType.Fields") -> Vec<FieldInfo>;

    /// ReferenceType.Methods (2/5): declared methods, including
    /// constructors and initialisers, without inherited ones.
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub struct Methods {
        pub ref_type: ReferenceTypeId,
    }
    => (0x02, 0x05, "ReferenceType.Methods") -> Vec<MethodInfo>;

    /// ReferenceType.GetValues (2/6): static field values, one per field,
    /// in order.
    #[derive(Debug, Clone, PartialEq, Eq)]
    pub struct GetValues {
        pub ref_type: ReferenceTypeId,
        pub fields: Vec<FieldId>,
    }
    => (0x02, 0x06, "ReferenceType.GetValues") -> Vec<Value>;

    /// ReferenceType.SourceFile (2/7): the source file name, without a path
    /// (`ABSENT_INFORMATION` when unknown).
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub struct SourceFile {
        pub ref_type: ReferenceTypeId,
    }
    => (0x02, 0x07, "ReferenceType.SourceFile") -> String;

    /// ReferenceType.NestedTypes (2/8).
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub struct NestedTypes {
        pub ref_type: ReferenceTypeId,
    }
    => (0x02, 0x08, "ReferenceType.NestedTypes") -> Vec<TaggedTypeId>;

    /// ReferenceType.Status (2/9).
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub struct Status {
        pub ref_type: ReferenceTypeId,
    }
    => (0x02, 0x09, "ReferenceType.Status") -> ClassStatus;

    /// ReferenceType.Interfaces (2/10): directly implemented interfaces.
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub struct Interfaces {
        pub ref_type: ReferenceTypeId,
    }
    => (0x02, 0x0A, "ReferenceType.Interfaces") -> Vec<ReferenceTypeId>;

    /// ReferenceType.ClassObject (2/11): the `java.lang.Class` instance.
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub struct ClassObject {
        pub ref_type: ReferenceTypeId,
    }
    => (0x02, 0x0B, "ReferenceType.ClassObject") -> ObjectId;

    /// ReferenceType.SourceDebugExtension (2/12): the SMAP (JSR-45) text.
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub struct SourceDebugExtension {
        pub ref_type: ReferenceTypeId,
    }
    => (0x02, 0x0C, "ReferenceType.SourceDebugExtension") -> String;

    /// ReferenceType.SignatureWithGeneric (2/13).
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub struct SignatureWithGeneric {
        pub ref_type: ReferenceTypeId,
    }
    => (0x02, 0x0D, "ReferenceType.SignatureWithGeneric") -> SignatureWithGenericReply;

    /// ReferenceType.FieldsWithGeneric (2/14).
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub struct FieldsWithGeneric {
        pub ref_type: ReferenceTypeId,
    }
    => (0x02, 0x0E, "ReferenceType.FieldsWithGeneric") -> Vec<FieldInfoWithGeneric>;

    /// ReferenceType.MethodsWithGeneric (2/15).
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub struct MethodsWithGeneric {
        pub ref_type: ReferenceTypeId,
    }
    => (0x02, 0x0F, "ReferenceType.MethodsWithGeneric") -> Vec<MethodInfoWithGeneric>;

    /// ReferenceType.Instances (2/16): reachable instances, at most
    /// `max_instances` of them (0 = all).
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub struct Instances {
        pub ref_type: ReferenceTypeId,
        pub max_instances: i32,
    }
    => (0x02, 0x10, "ReferenceType.Instances") -> Vec<TaggedObjectId>;

    /// ReferenceType.ClassFileVersion (2/17).
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub struct ClassFileVersion {
        pub ref_type: ReferenceTypeId,
    }
    => (0x02, 0x11, "ReferenceType.ClassFileVersion") -> ClassFileVersionReply;

    /// ReferenceType.ConstantPool (2/18).
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub struct ConstantPool {
        pub ref_type: ReferenceTypeId,
    }
    => (0x02, 0x12, "ReferenceType.ConstantPool") -> ConstantPoolReply;

    /// ReferenceType.Module (2/19).
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub struct Module {
        pub ref_type: ReferenceTypeId,
    }
    => (0x02, 0x13, "ReferenceType.Module") -> ModuleId;
}

wire_struct! {
    /// One field in the reply to `Fields`.
    #[derive(Debug, Clone, PartialEq, Eq)]
    pub struct FieldInfo {
        pub field_id: FieldId,
        pub name: String,
        /// JNI signature of the field's type.
        pub signature: String,
        /// Access flags; 0xf0000000 marks a synthetic field.
        pub mod_bits: i32,
    }
}

wire_struct! {
    /// One method in the reply to `Methods`.
    #[derive(Debug, Clone, PartialEq, Eq)]
    pub struct MethodInfo {
        pub method_id: MethodId,
        pub name: String,
        /// JNI signature, e.g. `(I)Ljava/lang/String;`.
        pub signature: String,
        /// Access flags; 0xf0000000 marks a synthetic method.
        pub mod_bits: i32,
    }
}

wire_struct! {
    /// The reply to `SignatureWithGeneric`.
    #[derive(Debug, Clone, PartialEq, Eq)]
    pub struct SignatureWithGenericReply {
        pub signature: String,
        /// Empty when there is none.
        pub generic_signature: String,
    }
}

wire_struct! {
    /// One field in the reply to `FieldsWithGeneric`.
    #[derive(Debug, Clone, PartialEq, Eq)]
    pub struct FieldInfoWithGeneric {
        pub field_id: FieldId,
        pub name: String,
        pub signature: String,
        /// Empty when there is none.
        pub generic_signature: String,
        pub mod_bits: i32,
    }
}

wire_struct! {
    /// One method in the reply to `MethodsWithGeneric`.
    #[derive(Debug, Clone, PartialEq, Eq)]
    pub struct MethodInfoWithGeneric {
        pub method_id: MethodId,
        pub name: String,
        pub signature: String,
        /// Empty when there is none.
        pub generic_signature: String,
        pub mod_bits: i32,
    }
}

wire_struct! {
    /// The reply to `ClassFileVersion`.
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub struct ClassFileVersionReply {
        pub major_version: i32,
        pub minor_version: i32,
    }
}

wire_struct! {
    /// The reply to `ConstantPool`: the entry count and the raw
    /// `constant_pool` bytes as in a class file (JVMS 4.4).
    #[derive(Debug, Clone, PartialEq, Eq)]
    pub struct ConstantPoolReply {
        /// `constant_pool_count`: one more than the number of entries.
        pub count: i32,
        pub bytes: Vec<u8>,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::command::{decode_reply, encode_request};
    use crate::testing::FOUR;
    use crate::wire::IdSizes;

    #[test]
    fn methods_reply_decodes() {
        let mut w = crate::wire::Writer::new(FOUR);
        w.i32(1);
        w.method_id(0xBEEF);
        w.string("main");
        w.string("([Ljava/lang/String;)V");
        w.i32(0x9); // public static
        let reply = decode_reply::<Methods>(&w.into_bytes(), FOUR).expect("decodes");
        assert_eq!(
            reply,
            [MethodInfo {
                method_id: MethodId(0xBEEF),
                name: "main".into(),
                signature: "([Ljava/lang/String;)V".into(),
                mod_bits: 9,
            }]
        );
    }

    #[test]
    fn get_values_request_layout() {
        let cmd = GetValues {
            ref_type: ReferenceTypeId(1),
            fields: vec![FieldId(2), FieldId(3)],
        };
        let bytes = encode_request(&cmd, IdSizes::HOTSPOT);
        assert_eq!(bytes.len(), 8 + 4 + 2 * 8);
        assert_eq!(bytes[8..12], [0, 0, 0, 2]);
    }

    command_tests!(
        Signature,
        ClassLoader,
        Modifiers,
        Fields,
        Methods,
        GetValues,
        SourceFile,
        NestedTypes,
        Status,
        Interfaces,
        ClassObject,
        SourceDebugExtension,
        SignatureWithGeneric,
        FieldsWithGeneric,
        MethodsWithGeneric,
        Instances,
        ClassFileVersion,
        ConstantPool,
        Module,
    );
}

/// Byte-level checks of the member and instance commands the class
/// listings use.
#[cfg(test)]
mod member_commands {
    use super::*;
    use crate::command::{decode_reply, encode_request};
    use crate::testing::FOUR;
    use crate::wire::Writer;

    #[test]
    fn methods_with_generic_and_instances_decode() {
        let mut w = Writer::new(FOUR);
        w.i32(1);
        w.method_id(0x20);
        w.string("of");
        w.string("(Ljava/lang/Comparable;I)LBox;");
        w.string("<U::Ljava/lang/Comparable<TU;>;>(TU;I)LBox<TU;>;");
        w.i32(0x9);
        let m = decode_reply::<MethodsWithGeneric>(&w.into_bytes(), FOUR).expect("decodes");
        assert_eq!(m[0].name, "of");
        assert!(m[0].generic_signature.starts_with("<U::"));
        let mut w = Writer::new(FOUR);
        w.i32(1);
        w.field_id(0x30);
        w.string("index");
        w.string("Ljava/util/Map;");
        w.string("");
        w.i32(0x44);
        let f = decode_reply::<FieldsWithGeneric>(&w.into_bytes(), FOUR).expect("decodes");
        assert_eq!(
            (f[0].name.as_str(), f[0].generic_signature.as_str()),
            ("index", "")
        );
        let req = encode_request(
            &Instances {
                ref_type: ReferenceTypeId(5),
                max_instances: 4,
            },
            FOUR,
        );
        assert_eq!(req, [0, 0, 0, 5, 0, 0, 0, 4]);
        assert_eq!(
            decode_reply::<Modifiers>(&[0, 0, 0x06, 0x01], FOUR),
            Ok(0x601)
        );
        let mut w = Writer::new(FOUR);
        w.i32(1);
        w.reference_type_id(0x11);
        let ifaces = decode_reply::<Interfaces>(&w.into_bytes(), FOUR).expect("decodes");
        assert_eq!(ifaces, [ReferenceTypeId(0x11)]);
    }
}

/// The source-file replies the code tools read.
#[cfg(test)]
mod source_tests {
    use super::*;
    use crate::command::decode_reply;
    use crate::testing::FOUR;

    #[test]
    fn source_file_and_debug_extension_are_strings() {
        let bytes = [
            0, 0, 0, 10, b'O', b'r', b'd', b'e', b'r', b'.', b'j', b'a', b'v',
        ];
        assert!(
            decode_reply::<SourceFile>(&bytes, FOUR).is_err(),
            "truncated"
        );
        let mut bytes = bytes.to_vec();
        bytes.push(b'a');
        assert_eq!(
            decode_reply::<SourceFile>(&bytes, FOUR).expect("decodes"),
            "Order.java"
        );
        let smap = b"SMAP\nx.jsp\nJSP\n";
        let mut w = crate::wire::Writer::new(FOUR);
        w.string(std::str::from_utf8(smap).expect("utf8"));
        assert_eq!(
            decode_reply::<SourceDebugExtension>(&w.into_bytes(), FOUR).expect("decodes"),
            "SMAP\nx.jsp\nJSP\n"
        );
    }

    #[test]
    fn class_file_version_is_two_ints() {
        let bytes = [0, 0, 0, 61, 0, 0, 0, 0];
        let v = decode_reply::<ClassFileVersion>(&bytes, FOUR).expect("decodes");
        assert_eq!((v.major_version, v.minor_version), (61, 0));
    }
}
