//! Command set 13, ArrayReference: an array's length and components, read
//! as an `arrayregion` and written as untagged values.

use super::command::{Command, Decode, Encode};
use super::ids::ObjectId;
use super::value::{Tag, Value};
use super::wire::{DecodeError, IdSizes, Reader, Writer};

command! {
    also SetValues;

    /// ArrayReference.Length (13/1).
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub struct Length {
        pub array: ObjectId,
    }
    => (0x0D, 0x01, "ArrayReference.Length") -> i32;

    /// ArrayReference.GetValues (13/2): `length` components from
    /// `first_index` on.
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub struct GetValues {
        pub array: ObjectId,
        pub first_index: i32,
        pub length: i32,
    }
    => (0x0D, 0x02, "ArrayReference.GetValues") -> ArrayRegion;
}

/// ArrayReference.SetValues (13/3): sets components from `first_index` on.
/// The values go *untagged*, so they must all have the array's component
/// type; decoding this request needs that tag (`decode_request_with_tags`
/// with the one component tag).
#[derive(Debug, Clone, PartialEq)]
pub struct SetValues {
    pub array: ObjectId,
    pub first_index: i32,
    pub values: Vec<Value>,
}

impl Command for SetValues {
    const SET: u8 = 0x0D;
    const ID: u8 = 0x03;
    const NAME: &'static str = "ArrayReference.SetValues";
    type Reply = ();
    fn encode(&self, w: &mut Writer) {
        self.array.encode(w);
        w.i32(self.first_index);
        w.list(&self.values, |w, v| v.write_untagged(w));
    }
}

impl Decode for SetValues {
    fn decode(r: &mut Reader<'_>) -> Result<Self, DecodeError> {
        let array = ObjectId::decode(r)?;
        let first_index = r.i32()?;
        let values = r.list("array values", 1, |r| {
            let tag = r.next_untagged_tag()?;
            Value::read_untagged(r, tag)
        })?;
        Ok(Self {
            array,
            first_index,
            values,
        })
    }
}

/// A JDWP `arrayregion`: the component tag, then the components — untagged
/// for primitive arrays, each with its own tag for object arrays (an
/// `Object[]` may hold strings, arrays, threads...).
///
/// When encoding a primitive region every value must carry `tag`.
#[derive(Debug, Clone, PartialEq)]
pub struct ArrayRegion {
    pub tag: Tag,
    pub values: Vec<Value>,
}

impl Decode for ArrayRegion {
    fn decode(r: &mut Reader<'_>) -> Result<Self, DecodeError> {
        let tag = Tag::decode(r)?;
        if tag == Tag::Void {
            return Err(DecodeError::Unknown {
                what: "arrayregion component tag",
                value: u64::from(tag.byte()),
            });
        }
        let values = if tag.is_object() {
            let min = 1 + usize::from(r.sizes().object);
            r.list("arrayregion objects", min, |r| {
                let element = Tag::decode(r)?;
                if !element.is_object() {
                    return Err(DecodeError::Unknown {
                        what: "object array element tag",
                        value: u64::from(element.byte()),
                    });
                }
                Value::read_untagged(r, element)
            })?
        } else {
            let min = tag.value_len(r.sizes());
            r.list("arrayregion values", min, |r| Value::read_untagged(r, tag))?
        };
        Ok(Self { tag, values })
    }
    fn min_len(_: IdSizes) -> usize {
        1 + 4
    }
}

impl Encode for ArrayRegion {
    fn encode(&self, w: &mut Writer) {
        self.tag.encode(w);
        if self.tag.is_object() {
            w.list(&self.values, |w, v| v.write_tagged(w));
        } else {
            w.list(&self.values, |w, v| v.write_untagged(w));
        }
    }
}

#[cfg(test)]
mod arb {
    use super::*;
    use crate::testing::{Arb, Gen};
    use crate::value::TaggedObjectId;

    /// A component tag and `n` values of it (objects: tagged ids).
    fn component_values(g: &mut Gen<'_>) -> (Tag, Vec<Value>) {
        let mut tag = Tag::arb(g);
        if tag == Tag::Void {
            tag = Tag::Int;
        }
        let n = g.len();
        let values = (0..n)
            .map(|_| {
                if tag.is_object() {
                    let o = TaggedObjectId::arb(g);
                    Value::Object {
                        tag: o.tag,
                        id: o.id,
                    }
                } else {
                    Value::arb_of(tag, g)
                }
            })
            .collect();
        (tag, values)
    }

    impl Arb for ArrayRegion {
        fn arb(g: &mut Gen<'_>) -> Self {
            let (tag, values) = component_values(g);
            ArrayRegion { tag, values }
        }
    }

    impl Arb for SetValues {
        fn arb(g: &mut Gen<'_>) -> Self {
            let array = ObjectId::arb(g);
            let first_index = g.i32();
            let (tag, _) = component_values(g);
            // Untagged: every value has the component tag itself.
            let n = g.len();
            let values = (0..n).map(|_| Value::arb_of(tag, g)).collect();
            SetValues {
                array,
                first_index,
                values,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::command::{decode_reply, decode_request_with_tags, encode_request};
    use crate::testing::{
        FOUR, Gen, command_round_trip_with, entropy, id_sizes, never_panics, noise,
    };
    use proptest::prelude::*;

    #[test]
    fn int_region_is_untagged() {
        #[rustfmt::skip]
        let bytes = [
            b'I', 0, 0, 0, 3, // int[3]
            0, 0, 0, 1,
            0xFF, 0xFF, 0xFF, 0xFF,
            0x7F, 0xFF, 0xFF, 0xFF,
        ];
        let region = decode_reply::<GetValues>(&bytes, FOUR).expect("decodes");
        assert_eq!(
            region,
            ArrayRegion {
                tag: Tag::Int,
                values: vec![Value::Int(1), Value::Int(-1), Value::Int(i32::MAX)],
            }
        );
        assert_eq!(crate::command::encode_reply(&region, FOUR), bytes);
    }

    #[test]
    fn object_region_is_tagged_per_element() {
        #[rustfmt::skip]
        let bytes = [
            b'L', 0, 0, 0, 3, // Object[3]
            b's', 0, 0, 0, 0x10, // a string
            b'[', 0, 0, 0, 0x20, // an array
            b'L', 0, 0, 0, 0x00, // null
        ];
        let region = decode_reply::<GetValues>(&bytes, FOUR).expect("decodes");
        assert_eq!(region.tag, Tag::Object);
        assert_eq!(
            region.values,
            [
                Value::Object {
                    tag: Tag::String,
                    id: ObjectId(0x10)
                },
                Value::Object {
                    tag: Tag::Array,
                    id: ObjectId(0x20)
                },
                Value::Object {
                    tag: Tag::Object,
                    id: ObjectId(0)
                },
            ]
        );
        assert_eq!(crate::command::encode_reply(&region, FOUR), bytes);
    }

    #[test]
    fn bad_regions_are_errors() {
        // A primitive tag inside an object array.
        let bytes = [b'L', 0, 0, 0, 1, b'I', 0, 0, 0, 1];
        assert!(decode_reply::<GetValues>(&bytes, FOUR).is_err());
        // A void array.
        assert!(decode_reply::<GetValues>(&[b'V', 0, 0, 0, 0], FOUR).is_err());
        // More longs announced than bytes remain.
        let bytes = [b'J', 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0, 1];
        assert!(matches!(
            decode_reply::<GetValues>(&bytes, FOUR),
            Err(DecodeError::CountTooLarge { .. })
        ));
    }

    #[test]
    fn set_values_is_untagged() {
        let cmd = SetValues {
            array: ObjectId(1),
            first_index: 2,
            values: vec![Value::Short(3), Value::Short(-1)],
        };
        let bytes = encode_request(&cmd, FOUR);
        assert_eq!(
            bytes,
            [0, 0, 0, 1, 0, 0, 0, 2, 0, 0, 0, 2, 0, 3, 0xFF, 0xFF]
        );
        let back = decode_request_with_tags::<SetValues>(&bytes, FOUR, &[Tag::Short]);
        assert_eq!(back, Ok(cmd));
    }

    command_tests!(Length, GetValues);

    proptest! {
        #[test]
        fn set_values_round_trips(seed in entropy(), sizes in id_sizes()) {
            let mut g = Gen::new(&seed, sizes);
            command_round_trip_with::<SetValues>(&mut g, |c| {
                c.values.iter().map(Value::tag).take(1).collect()
            })?;
        }

        #[test]
        fn set_values_never_panics(noise in noise(), seed in entropy(), sizes in id_sizes()) {
            never_panics::<SetValues>(&noise, &mut Gen::new(&seed, sizes));
        }
    }
}
