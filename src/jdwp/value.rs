//! Tagged values, locations and tagged ids: the data most commands carry,
//! with their `Encode`/`Decode` impls.

use super::command::{Decode, Encode};
use super::ids::{FieldId, MethodId, ObjectId, ReferenceTypeId};
use super::wire::{DecodeError, IdSizes, Reader, Writer};

/// A value tag (a JNI signature character, plus JDWP's object subkinds).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Tag {
    Array,
    Byte,
    Char,
    Object,
    Float,
    Double,
    Int,
    Long,
    Short,
    Void,
    Boolean,
    String,
    Thread,
    ThreadGroup,
    ClassLoader,
    ClassObject,
}

impl Tag {
    /// Every tag.
    pub const ALL: &'static [Tag] = &[
        Tag::Array,
        Tag::Byte,
        Tag::Char,
        Tag::Object,
        Tag::Float,
        Tag::Double,
        Tag::Int,
        Tag::Long,
        Tag::Short,
        Tag::Void,
        Tag::Boolean,
        Tag::String,
        Tag::Thread,
        Tag::ThreadGroup,
        Tag::ClassLoader,
        Tag::ClassObject,
    ];

    /// Bytes an untagged value with this tag takes (objects: the object id
    /// width).
    pub fn value_len(self, sizes: IdSizes) -> usize {
        match self {
            Tag::Void => 0,
            Tag::Byte | Tag::Boolean => 1,
            Tag::Char | Tag::Short => 2,
            Tag::Int | Tag::Float => 4,
            Tag::Long | Tag::Double => 8,
            _ => usize::from(sizes.object),
        }
    }

    pub fn from_byte(b: u8) -> Result<Tag, DecodeError> {
        Ok(match b {
            b'[' => Tag::Array,
            b'B' => Tag::Byte,
            b'C' => Tag::Char,
            b'L' => Tag::Object,
            b'F' => Tag::Float,
            b'D' => Tag::Double,
            b'I' => Tag::Int,
            b'J' => Tag::Long,
            b'S' => Tag::Short,
            b'V' => Tag::Void,
            b'Z' => Tag::Boolean,
            b's' => Tag::String,
            b't' => Tag::Thread,
            b'g' => Tag::ThreadGroup,
            b'l' => Tag::ClassLoader,
            b'c' => Tag::ClassObject,
            other => {
                return Err(DecodeError::Unknown {
                    what: "value tag",
                    value: u64::from(other),
                });
            }
        })
    }

    pub fn byte(self) -> u8 {
        match self {
            Tag::Array => b'[',
            Tag::Byte => b'B',
            Tag::Char => b'C',
            Tag::Object => b'L',
            Tag::Float => b'F',
            Tag::Double => b'D',
            Tag::Int => b'I',
            Tag::Long => b'J',
            Tag::Short => b'S',
            Tag::Void => b'V',
            Tag::Boolean => b'Z',
            Tag::String => b's',
            Tag::Thread => b't',
            Tag::ThreadGroup => b'g',
            Tag::ClassLoader => b'l',
            Tag::ClassObject => b'c',
        }
    }

    /// True for every tag whose value is an object id.
    pub fn is_object(self) -> bool {
        matches!(
            self,
            Tag::Array
                | Tag::Object
                | Tag::String
                | Tag::Thread
                | Tag::ThreadGroup
                | Tag::ClassLoader
                | Tag::ClassObject
        )
    }

    /// The tag of a field or variable with this JNI signature.
    pub fn from_signature(sig: &str) -> Tag {
        match sig.as_bytes().first() {
            Some(b'[') => Tag::Array,
            Some(b'B') => Tag::Byte,
            Some(b'C') => Tag::Char,
            Some(b'F') => Tag::Float,
            Some(b'D') => Tag::Double,
            Some(b'I') => Tag::Int,
            Some(b'J') => Tag::Long,
            Some(b'S') => Tag::Short,
            Some(b'V') => Tag::Void,
            Some(b'Z') => Tag::Boolean,
            _ => Tag::Object,
        }
    }
}

/// A value as JDWP carries it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Value {
    Byte(i8),
    Char(u16),
    Float(f32),
    Double(f64),
    Int(i32),
    Long(i64),
    Short(i16),
    Boolean(bool),
    Void,
    /// Any reference; id 0 is null.
    Object {
        tag: Tag,
        id: ObjectId,
    },
}

impl Value {
    pub fn tag(&self) -> Tag {
        match self {
            Value::Byte(_) => Tag::Byte,
            Value::Char(_) => Tag::Char,
            Value::Float(_) => Tag::Float,
            Value::Double(_) => Tag::Double,
            Value::Int(_) => Tag::Int,
            Value::Long(_) => Tag::Long,
            Value::Short(_) => Tag::Short,
            Value::Boolean(_) => Tag::Boolean,
            Value::Void => Tag::Void,
            Value::Object { tag, .. } => *tag,
        }
    }

    /// Reads a tagged value (tag byte, then the untagged value).
    pub fn read_tagged(r: &mut Reader<'_>) -> Result<Value, DecodeError> {
        let tag = Tag::from_byte(r.u8()?)?;
        Value::read_untagged(r, tag)
    }

    /// Reads a value whose tag is already known.
    pub fn read_untagged(r: &mut Reader<'_>, tag: Tag) -> Result<Value, DecodeError> {
        Ok(match tag {
            Tag::Byte => Value::Byte(r.u8()? as i8),
            Tag::Char => Value::Char(r.u16()?),
            Tag::Float => Value::Float(f32::from_bits(r.u32()?)),
            Tag::Double => Value::Double(f64::from_bits(r.i64()? as u64)),
            Tag::Int => Value::Int(r.i32()?),
            Tag::Long => Value::Long(r.i64()?),
            Tag::Short => Value::Short(r.u16()? as i16),
            Tag::Boolean => Value::Boolean(r.bool()?),
            Tag::Void => Value::Void,
            tag => Value::Object {
                tag,
                id: ObjectId(r.object_id()?),
            },
        })
    }

    pub fn write_tagged(&self, w: &mut Writer) {
        w.u8(self.tag().byte());
        self.write_untagged(w);
    }

    pub fn write_untagged(&self, w: &mut Writer) {
        match *self {
            Value::Byte(v) => w.u8(v as u8),
            Value::Char(v) => w.u16(v),
            Value::Float(v) => w.u32(v.to_bits()),
            Value::Double(v) => w.i64(v.to_bits() as i64),
            Value::Int(v) => w.i32(v),
            Value::Long(v) => w.i64(v),
            Value::Short(v) => w.u16(v as u16),
            Value::Boolean(v) => w.bool(v),
            Value::Void => {}
            Value::Object { id, .. } => w.object_id(id.0),
        }
    }
}

/// A type tag: what kind of reference type an id names.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TypeTag {
    Class = 1,
    Interface = 2,
    Array = 3,
}

impl TypeTag {
    /// Every type tag.
    pub const ALL: &'static [TypeTag] = &[TypeTag::Class, TypeTag::Interface, TypeTag::Array];

    pub fn from_byte(b: u8) -> Result<TypeTag, DecodeError> {
        Ok(match b {
            1 => TypeTag::Class,
            2 => TypeTag::Interface,
            3 => TypeTag::Array,
            other => {
                return Err(DecodeError::Unknown {
                    what: "type tag",
                    value: u64::from(other),
                });
            }
        })
    }
}

/// An executable location: a bytecode index within a method.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Location {
    pub type_tag: TypeTag,
    pub class: ReferenceTypeId,
    pub method: MethodId,
    pub index: u64,
}

impl Location {
    pub fn read(r: &mut Reader<'_>) -> Result<Location, DecodeError> {
        Ok(Location {
            type_tag: TypeTag::from_byte(r.u8()?)?,
            class: ReferenceTypeId(r.reference_type_id()?),
            method: MethodId(r.method_id()?),
            index: r.i64()? as u64,
        })
    }

    pub fn write(&self, w: &mut Writer) {
        w.u8(self.type_tag as u8);
        w.reference_type_id(self.class.0);
        w.method_id(self.method.0);
        w.i64(self.index as i64);
    }
}

/// A tagged object id (tag byte then object id).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct TaggedObjectId {
    pub tag: Tag,
    pub id: ObjectId,
}

impl TaggedObjectId {
    pub fn read(r: &mut Reader<'_>) -> Result<Self, DecodeError> {
        let tag = Tag::from_byte(r.u8()?)?;
        Ok(Self {
            tag,
            id: ObjectId(r.object_id()?),
        })
    }

    pub fn write(&self, w: &mut Writer) {
        w.u8(self.tag.byte());
        w.object_id(self.id.0);
    }
}

impl Decode for Tag {
    fn decode(r: &mut Reader<'_>) -> Result<Self, DecodeError> {
        Tag::from_byte(r.u8()?)
    }
    fn min_len(_: IdSizes) -> usize {
        1
    }
}

impl Encode for Tag {
    fn encode(&self, w: &mut Writer) {
        w.u8(self.byte());
    }
}

/// A tagged `value`: tag byte, then the value (nothing for void).
impl Decode for Value {
    fn decode(r: &mut Reader<'_>) -> Result<Self, DecodeError> {
        Value::read_tagged(r)
    }
    fn min_len(_: IdSizes) -> usize {
        1
    }
}

impl Encode for Value {
    fn encode(&self, w: &mut Writer) {
        self.write_tagged(w);
    }
}

impl Decode for TypeTag {
    fn decode(r: &mut Reader<'_>) -> Result<Self, DecodeError> {
        TypeTag::from_byte(r.u8()?)
    }
    fn min_len(_: IdSizes) -> usize {
        1
    }
}

impl Encode for TypeTag {
    fn encode(&self, w: &mut Writer) {
        w.u8(*self as u8);
    }
}

impl Decode for Location {
    fn decode(r: &mut Reader<'_>) -> Result<Self, DecodeError> {
        Location::read(r)
    }
    fn min_len(sizes: IdSizes) -> usize {
        1 + usize::from(sizes.reference_type) + usize::from(sizes.method) + 8
    }
}

impl Encode for Location {
    fn encode(&self, w: &mut Writer) {
        self.write(w);
    }
}

/// A location that may be absent, as in an exception event's catch
/// location: absence is sent as a location whose class id is 0 (HotSpot
/// writes type tag `CLASS` and zeros; a type tag 0 is accepted too).
impl Decode for Option<Location> {
    fn decode(r: &mut Reader<'_>) -> Result<Self, DecodeError> {
        let tag = r.u8()?;
        let class = ReferenceTypeId(r.reference_type_id()?);
        let method = MethodId(r.method_id()?);
        let index = r.i64()? as u64;
        if class.is_null() {
            return Ok(None);
        }
        Ok(Some(Location {
            type_tag: TypeTag::from_byte(tag)?,
            class,
            method,
            index,
        }))
    }
    fn min_len(sizes: IdSizes) -> usize {
        Location::min_len(sizes)
    }
}

impl Encode for Option<Location> {
    fn encode(&self, w: &mut Writer) {
        match self {
            Some(location) => location.write(w),
            None => Location {
                type_tag: TypeTag::Class,
                class: ReferenceTypeId::NULL,
                method: MethodId::NULL,
                index: 0,
            }
            .write(w),
        }
    }
}

impl Decode for TaggedObjectId {
    fn decode(r: &mut Reader<'_>) -> Result<Self, DecodeError> {
        TaggedObjectId::read(r)
    }
    fn min_len(sizes: IdSizes) -> usize {
        1 + usize::from(sizes.object)
    }
}

impl Encode for TaggedObjectId {
    fn encode(&self, w: &mut Writer) {
        self.write(w);
    }
}

wire_struct! {
    /// A reference type with its kind: JDWP's `refTypeTag` byte followed by
    /// a `referenceTypeID`.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
    pub struct TaggedTypeId {
        pub tag: TypeTag,
        pub id: ReferenceTypeId,
    }
}

/// A field and a new value for it, as `ClassType.SetValues` and
/// `ObjectReference.SetValues` send it: the value is *untagged* on the wire,
/// so decoding one needs its tag from `Reader::with_untagged_tags`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FieldValue {
    pub field: FieldId,
    pub value: Value,
}

impl Decode for FieldValue {
    fn decode(r: &mut Reader<'_>) -> Result<Self, DecodeError> {
        let field = FieldId::decode(r)?;
        let tag = r.next_untagged_tag()?;
        Ok(Self {
            field,
            value: Value::read_untagged(r, tag)?,
        })
    }
    fn min_len(sizes: IdSizes) -> usize {
        usize::from(sizes.field) + 1
    }
}

impl Encode for FieldValue {
    fn encode(&self, w: &mut Writer) {
        self.field.encode(w);
        self.value.write_untagged(w);
    }
}

#[cfg(test)]
mod arb {
    use super::*;
    use crate::testing::{Arb, Gen};

    impl Arb for Tag {
        fn arb(g: &mut Gen<'_>) -> Self {
            g.pick(Tag::ALL)
        }
    }

    impl Arb for TypeTag {
        fn arb(g: &mut Gen<'_>) -> Self {
            g.pick(TypeTag::ALL)
        }
    }

    impl Value {
        /// A value with this tag (never NaN, so `==` works).
        pub(crate) fn arb_of(tag: Tag, g: &mut Gen<'_>) -> Value {
            let not_nan = |f: f64| if f.is_nan() { 0.5 } else { f };
            match tag {
                Tag::Byte => Value::Byte(g.byte() as i8),
                Tag::Char => Value::Char(g.u16()),
                Tag::Float => {
                    Value::Float(not_nan(f64::from(f32::from_bits(g.i32() as u32))) as f32)
                }
                Tag::Double => Value::Double(not_nan(f64::from_bits(g.u64()))),
                Tag::Int => Value::Int(g.i32()),
                Tag::Long => Value::Long(g.i64()),
                Tag::Short => Value::Short(g.u16() as i16),
                Tag::Boolean => Value::Boolean(g.bool()),
                Tag::Void => Value::Void,
                tag => Value::Object {
                    tag,
                    id: ObjectId::arb(g),
                },
            }
        }
    }

    impl Arb for Value {
        fn arb(g: &mut Gen<'_>) -> Self {
            let tag = Tag::arb(g);
            Value::arb_of(tag, g)
        }
    }

    impl Arb for Location {
        fn arb(g: &mut Gen<'_>) -> Self {
            Location {
                type_tag: TypeTag::arb(g),
                class: ReferenceTypeId::arb(g),
                method: MethodId::arb(g),
                index: g.u64(),
            }
        }
    }

    impl Arb for Option<Location> {
        fn arb(g: &mut Gen<'_>) -> Self {
            if g.bool() {
                return None;
            }
            let mut location = Location::arb(g);
            if location.class.is_null() {
                location.class = ReferenceTypeId(1);
            }
            Some(location)
        }
    }

    impl Arb for TaggedObjectId {
        fn arb(g: &mut Gen<'_>) -> Self {
            let tags = [
                Tag::Array,
                Tag::Object,
                Tag::String,
                Tag::Thread,
                Tag::ThreadGroup,
                Tag::ClassLoader,
                Tag::ClassObject,
            ];
            TaggedObjectId {
                tag: g.pick(&tags),
                id: ObjectId::arb(g),
            }
        }
    }

    impl Arb for FieldValue {
        fn arb(g: &mut Gen<'_>) -> Self {
            let field = FieldId::arb(g);
            let mut tag = Tag::arb(g);
            if tag == Tag::Void {
                tag = Tag::Int;
            }
            FieldValue {
                field,
                value: Value::arb_of(tag, g),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::command::{decode_all, encode_reply};
    use crate::testing::{Arb, FOUR, Gen, entropy, id_sizes, round_trip};
    use proptest::prelude::*;

    #[test]
    fn zero_location_is_none() {
        // HotSpot's "not caught": tag CLASS, class 0, method 0, index 0.
        let mut bytes = vec![1];
        bytes.extend([0; 4 + 4 + 8]);
        let got = decode_all::<Option<Location>>(&bytes, FOUR, "catch location");
        assert_eq!(got, Ok(None));
        assert_eq!(encode_reply(&None::<Location>, FOUR), bytes);
        // A type tag 0 with a null class is accepted as absent as well.
        bytes[0] = 0;
        assert_eq!(
            decode_all::<Option<Location>>(&bytes, FOUR, "catch location"),
            Ok(None)
        );
    }

    #[test]
    fn untagged_values_need_their_tags() {
        let fv = FieldValue {
            field: FieldId(7),
            value: Value::Long(-2),
        };
        let bytes = encode_reply(&fv, IdSizes::HOTSPOT);
        assert_eq!(bytes.len(), 8 + 8);
        let mut r = Reader::new(&bytes, IdSizes::HOTSPOT);
        assert!(FieldValue::decode(&mut r).is_err());
        let tags = [Tag::Long];
        let mut r = Reader::new(&bytes, IdSizes::HOTSPOT).with_untagged_tags(&tags);
        assert_eq!(FieldValue::decode(&mut r), Ok(fv));
    }

    proptest! {
        #[test]
        fn values_round_trip(seed in entropy(), sizes in id_sizes()) {
            let mut g = Gen::new(&seed, sizes);
            round_trip::<Tag>(&mut g)?;
            round_trip::<TypeTag>(&mut g)?;
            round_trip::<Value>(&mut g)?;
            round_trip::<Vec<Value>>(&mut g)?;
            round_trip::<Location>(&mut g)?;
            round_trip::<Option<Location>>(&mut g)?;
            round_trip::<TaggedObjectId>(&mut g)?;
            round_trip::<TaggedTypeId>(&mut g)?;
        }

        #[test]
        fn untagged_values_round_trip(seed in entropy(), sizes in id_sizes()) {
            let mut g = Gen::new(&seed, sizes);
            let fv = FieldValue::arb(&mut g);
            let bytes = encode_reply(&fv, sizes);
            prop_assert_eq!(bytes.len(), usize::from(sizes.field) + fv.value.tag().value_len(sizes));
            let tags = [fv.value.tag()];
            let mut r = Reader::new(&bytes, sizes).with_untagged_tags(&tags);
            prop_assert_eq!(FieldValue::decode(&mut r), Ok(fv));
            prop_assert_eq!(r.remaining(), 0);
        }
    }
}
