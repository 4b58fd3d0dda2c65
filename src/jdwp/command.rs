//! The typed-command contract: each JDWP command is a struct that knows its
//! command set, its number and the type of its reply; `Encode`/`Decode` for
//! the primitive pieces every command and reply is built from.

use super::wire::{DecodeError, IdSizes, Reader, Writer};

pub use super::names::command_name;

/// Decodes a value from JDWP data.
pub trait Decode: Sized {
    fn decode(r: &mut Reader<'_>) -> Result<Self, DecodeError>;

    /// The fewest bytes one encoded value can take with these id widths.
    /// Lists check their announced count against it before allocating, so
    /// it must never exceed the size of a valid encoding.
    fn min_len(_sizes: IdSizes) -> usize {
        0
    }
}

/// Encodes a value as JDWP data: the inverse of [`Decode`]. Every reply
/// type and the event composite implement it, so tests and fake JDWP
/// servers can produce the bytes a JVM would send.
pub trait Encode {
    fn encode(&self, w: &mut Writer);
}

/// A JDWP command: its numbers, its name for spans and errors, how its
/// request data is written and what its reply decodes into.
///
/// Every command struct also implements [`Decode`], reading its own request
/// data, so a fake JVM can parse what the debugger sent.
pub trait Command {
    /// Command set number.
    const SET: u8;
    /// Command number within the set.
    const ID: u8;
    /// `CommandSet.Command`, as the specification spells it.
    const NAME: &'static str;
    /// The decoded reply.
    type Reply: Decode + Encode;
    /// Writes the request data (not the header).
    fn encode(&self, w: &mut Writer);
}

/// Decodes a whole body as `T`, refusing trailing bytes.
pub fn decode_all<T: Decode>(
    data: &[u8],
    sizes: IdSizes,
    what: &'static str,
) -> Result<T, DecodeError> {
    let mut r = Reader::new(data, sizes);
    let value = T::decode(&mut r)?;
    r.finish(what)?;
    Ok(value)
}

/// Decodes a whole reply body, refusing trailing bytes.
pub fn decode_reply<C: Command>(data: &[u8], sizes: IdSizes) -> Result<C::Reply, DecodeError> {
    decode_all::<C::Reply>(data, sizes, C::NAME)
}

/// Encodes a command's request data.
pub fn encode_request<C: Command>(cmd: &C, sizes: IdSizes) -> Vec<u8> {
    let mut w = Writer::new(sizes);
    cmd.encode(&mut w);
    w.into_bytes()
}

/// Decodes a command's request data (the fake-JVM side), refusing trailing
/// bytes. Requests carrying untagged values (the `SetValues` commands of
/// ClassType, ObjectReference and ArrayReference) need
/// [`decode_request_with_tags`].
pub fn decode_request<C: Command + Decode>(data: &[u8], sizes: IdSizes) -> Result<C, DecodeError> {
    decode_all::<C>(data, sizes, C::NAME)
}

/// Like [`decode_request`], giving the types of the untagged values the
/// request carries, in order (the last one repeats: one component tag is
/// enough for an array).
pub fn decode_request_with_tags<C: Command + Decode>(
    data: &[u8],
    sizes: IdSizes,
    tags: &[super::value::Tag],
) -> Result<C, DecodeError> {
    let mut r = Reader::new(data, sizes).with_untagged_tags(tags);
    let cmd = C::decode(&mut r)?;
    r.finish(C::NAME)?;
    Ok(cmd)
}

/// Encodes a reply body (or an event composite).
pub fn encode_reply<T: Encode + ?Sized>(reply: &T, sizes: IdSizes) -> Vec<u8> {
    let mut w = Writer::new(sizes);
    reply.encode(&mut w);
    w.into_bytes()
}

/// An empty reply.
impl Decode for () {
    fn decode(_: &mut Reader<'_>) -> Result<Self, DecodeError> {
        Ok(())
    }
}

impl Encode for () {
    fn encode(&self, _: &mut Writer) {}
}

/// A JDWP `boolean`: one byte, non-zero is true.
impl Decode for bool {
    fn decode(r: &mut Reader<'_>) -> Result<Self, DecodeError> {
        r.bool()
    }
    fn min_len(_: IdSizes) -> usize {
        1
    }
}

impl Encode for bool {
    fn encode(&self, w: &mut Writer) {
        w.bool(*self);
    }
}

/// A JDWP `byte`.
impl Decode for u8 {
    fn decode(r: &mut Reader<'_>) -> Result<Self, DecodeError> {
        r.u8()
    }
    fn min_len(_: IdSizes) -> usize {
        1
    }
}

impl Encode for u8 {
    fn encode(&self, w: &mut Writer) {
        w.u8(*self);
    }
}

/// A JDWP `int`.
impl Decode for i32 {
    fn decode(r: &mut Reader<'_>) -> Result<Self, DecodeError> {
        r.i32()
    }
    fn min_len(_: IdSizes) -> usize {
        4
    }
}

impl Encode for i32 {
    fn encode(&self, w: &mut Writer) {
        w.i32(*self);
    }
}

/// A JDWP `long`.
impl Decode for i64 {
    fn decode(r: &mut Reader<'_>) -> Result<Self, DecodeError> {
        r.i64()
    }
    fn min_len(_: IdSizes) -> usize {
        8
    }
}

impl Encode for i64 {
    fn encode(&self, w: &mut Writer) {
        w.i64(*self);
    }
}

/// A JDWP `string`: byte length, then modified UTF-8 (read leniently).
impl Decode for String {
    fn decode(r: &mut Reader<'_>) -> Result<Self, DecodeError> {
        r.string()
    }
    fn min_len(_: IdSizes) -> usize {
        4
    }
}

impl Encode for String {
    fn encode(&self, w: &mut Writer) {
        w.string(self);
    }
}

/// A repetition: an `int` count, then the elements. `Vec<u8>` is JDWP's
/// byte array (`bytes`).
impl<T: Decode> Decode for Vec<T> {
    fn decode(r: &mut Reader<'_>) -> Result<Self, DecodeError> {
        let min = T::min_len(r.sizes());
        r.list(std::any::type_name::<T>(), min, T::decode)
    }
    fn min_len(_: IdSizes) -> usize {
        4
    }
}

impl<T: Encode> Encode for Vec<T> {
    fn encode(&self, w: &mut Writer) {
        w.list(self, |w, item| item.encode(w));
    }
}

/// A fixed run of values with no count (e.g. reserved capability flags).
impl<T: Decode + Copy + Default, const N: usize> Decode for [T; N] {
    fn decode(r: &mut Reader<'_>) -> Result<Self, DecodeError> {
        let mut out = [T::default(); N];
        for slot in &mut out {
            *slot = T::decode(r)?;
        }
        Ok(out)
    }
    fn min_len(sizes: IdSizes) -> usize {
        T::min_len(sizes).saturating_mul(N)
    }
}

impl<T: Encode, const N: usize> Encode for [T; N] {
    fn encode(&self, w: &mut Writer) {
        for item in self {
            item.encode(w);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{Gen, entropy, id_sizes, round_trip};
    use proptest::prelude::*;

    #[test]
    fn vec_of_bytes_is_a_counted_byte_array() {
        let bytes = encode_reply(&vec![0xCAu8, 0xFE], IdSizes::HOTSPOT);
        assert_eq!(bytes, [0, 0, 0, 2, 0xCA, 0xFE]);
        let back: Vec<u8> = decode_all(&bytes, IdSizes::HOTSPOT, "bytes").expect("decodes");
        assert_eq!(back, [0xCA, 0xFE]);
    }

    #[test]
    fn trailing_bytes_are_refused() {
        let got = decode_all::<i32>(&[0, 0, 0, 1, 9], IdSizes::HOTSPOT, "int");
        assert_eq!(
            got,
            Err(DecodeError::Trailing {
                what: "int",
                extra: 1
            })
        );
    }

    #[test]
    fn lists_check_counts_against_element_size() {
        // Two strings announced, but only 4 bytes left: each needs at least 4.
        let bytes = [0, 0, 0, 2, 0, 0, 0, 0];
        assert!(matches!(
            decode_all::<Vec<String>>(&bytes, IdSizes::HOTSPOT, "strings"),
            Err(DecodeError::CountTooLarge { .. })
        ));
    }

    proptest! {
        #[test]
        fn primitives_round_trip(seed in entropy(), sizes in id_sizes()) {
            let mut g = Gen::new(&seed, sizes);
            round_trip::<bool>(&mut g)?;
            round_trip::<u8>(&mut g)?;
            round_trip::<i32>(&mut g)?;
            round_trip::<i64>(&mut g)?;
            round_trip::<String>(&mut g)?;
            round_trip::<Vec<String>>(&mut g)?;
            round_trip::<Vec<u8>>(&mut g)?;
            round_trip::<[bool; 11]>(&mut g)?;
        }
    }
}
