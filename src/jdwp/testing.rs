//! Test support for the codec (compiled for tests only): a byte-driven value
//! generator (`Gen` and `Arb`), id-size strategies, and the round-trip and
//! never-panic checks every command set's tests run.
//!
//! Values are built from a proptest-chosen entropy vector rather than from
//! composed strategies, so a 32-field reply costs no more than a 2-field one;
//! proptest still shrinks the entropy, which shrinks the value.

use std::fmt::Debug;

use proptest::prelude::*;
use proptest::test_runner::TestCaseError;

use super::command::{
    Command, Decode, Encode, decode_all, decode_reply, decode_request, decode_request_with_tags,
    encode_reply, encode_request,
};
use super::value::Tag;
use super::wire::IdSizes;

/// Reads generation choices from entropy bytes; zeros once they run out.
pub(crate) struct Gen<'a> {
    data: &'a [u8],
    pos: usize,
    sizes: IdSizes,
}

impl<'a> Gen<'a> {
    pub(crate) fn new(data: &'a [u8], sizes: IdSizes) -> Self {
        Self {
            data,
            pos: 0,
            sizes,
        }
    }

    pub(crate) fn sizes(&self) -> IdSizes {
        self.sizes
    }

    pub(crate) fn byte(&mut self) -> u8 {
        let b = self.data.get(self.pos).copied().unwrap_or(0);
        self.pos += 1;
        b
    }

    pub(crate) fn bool(&mut self) -> bool {
        self.byte() & 1 == 1
    }

    pub(crate) fn u16(&mut self) -> u16 {
        u16::from_be_bytes([self.byte(), self.byte()])
    }

    pub(crate) fn u64(&mut self) -> u64 {
        // A short prefix picks the magnitude, so small numbers, zero and
        // full-width numbers all turn up.
        let len = self.byte() % 9;
        (0..len).fold(0u64, |acc, _| (acc << 8) | u64::from(self.byte()))
    }

    pub(crate) fn i32(&mut self) -> i32 {
        self.u64() as i32
    }

    pub(crate) fn i64(&mut self) -> i64 {
        self.u64() as i64
    }

    /// An id that fits `width` bytes.
    pub(crate) fn id(&mut self, width: u8) -> u64 {
        let v = self.u64();
        if width >= 8 {
            v
        } else {
            v & ((1u64 << (u32::from(width) * 8)) - 1)
        }
    }

    /// A small collection length.
    pub(crate) fn len(&mut self) -> usize {
        usize::from(self.byte() % 4)
    }

    pub(crate) fn pick<T: Copy>(&mut self, choices: &[T]) -> T {
        let i = usize::from(self.byte()) % choices.len();
        choices[i]
    }

    pub(crate) fn string(&mut self) -> String {
        const PIECES: &[&str] = &[
            "",
            "a",
            "Ljava/lang/String;",
            "[I",
            "main",
            "é",
            "日本",
            "<init>",
            "\u{1F600}",
            "Foo.java",
        ];
        let n = self.len();
        (0..n).map(|_| self.pick(PIECES)).collect()
    }
}

/// Values that can be generated for round-trip tests.
pub(crate) trait Arb: Sized {
    fn arb(g: &mut Gen<'_>) -> Self;
}

impl Arb for () {
    fn arb(_: &mut Gen<'_>) -> Self {}
}

impl Arb for bool {
    fn arb(g: &mut Gen<'_>) -> Self {
        g.bool()
    }
}

impl Arb for u8 {
    fn arb(g: &mut Gen<'_>) -> Self {
        g.byte()
    }
}

impl Arb for i32 {
    fn arb(g: &mut Gen<'_>) -> Self {
        g.i32()
    }
}

impl Arb for i64 {
    fn arb(g: &mut Gen<'_>) -> Self {
        g.i64()
    }
}

impl Arb for String {
    fn arb(g: &mut Gen<'_>) -> Self {
        g.string()
    }
}

impl<T: Arb> Arb for Vec<T> {
    fn arb(g: &mut Gen<'_>) -> Self {
        let n = g.len();
        (0..n).map(|_| T::arb(g)).collect()
    }
}

impl<T: Arb, const N: usize> Arb for [T; N] {
    fn arb(g: &mut Gen<'_>) -> Self {
        std::array::from_fn(|_| T::arb(g))
    }
}

/// Entropy for one generated case.
pub(crate) fn entropy() -> impl Strategy<Value = Vec<u8>> {
    proptest::collection::vec(any::<u8>(), 0..512)
}

/// Arbitrary bytes fed to decoders.
pub(crate) fn noise() -> impl Strategy<Value = Vec<u8>> {
    proptest::collection::vec(any::<u8>(), 0..160)
}

/// Every id width 4 (32-bit VMs, some other JVMs).
pub(crate) const FOUR: IdSizes = IdSizes {
    field: 4,
    method: 4,
    object: 4,
    reference_type: 4,
    frame: 4,
};

/// HotSpot's widths, all 4, or each width anywhere in 1..=8.
pub(crate) fn id_sizes() -> impl Strategy<Value = IdSizes> {
    let mixed = (1u8..=8, 1u8..=8, 1u8..=8, 1u8..=8, 1u8..=8).prop_map(
        |(field, method, object, reference_type, frame)| IdSizes {
            field,
            method,
            object,
            reference_type,
            frame,
        },
    );
    prop_oneof![Just(IdSizes::HOTSPOT), Just(FOUR), mixed]
}

/// encode → decode gives the value back, and encoding is no shorter than
/// the `min_len` that list counts are checked against.
pub(crate) fn round_trip<T>(g: &mut Gen<'_>) -> Result<(), TestCaseError>
where
    T: Arb + Encode + Decode + PartialEq + Debug,
{
    let value = T::arb(g);
    let bytes = encode_reply(&value, g.sizes());
    prop_assert!(
        bytes.len() >= T::min_len(g.sizes()),
        "{value:?} shorter than min_len"
    );
    let back = decode_all::<T>(&bytes, g.sizes(), "round trip");
    prop_assert_eq!(back, Ok(value));
    Ok(())
}

/// A request and a reply of command `C` both survive encode → decode.
pub(crate) fn command_round_trip<C>(g: &mut Gen<'_>) -> Result<(), TestCaseError>
where
    C: Command + Decode + Arb + PartialEq + Debug,
    C::Reply: Arb + PartialEq + Debug,
{
    command_round_trip_with::<C>(g, |_| Vec::new())
}

/// Like [`command_round_trip`], for requests with untagged values whose
/// tags `tags` extracts from the generated command.
pub(crate) fn command_round_trip_with<C>(
    g: &mut Gen<'_>,
    tags: impl Fn(&C) -> Vec<Tag>,
) -> Result<(), TestCaseError>
where
    C: Command + Decode + Arb + PartialEq + Debug,
    C::Reply: Arb + PartialEq + Debug,
{
    let sizes = g.sizes();
    let cmd = C::arb(g);
    let bytes = encode_request(&cmd, sizes);
    let back = decode_request_with_tags::<C>(&bytes, sizes, &tags(&cmd));
    prop_assert_eq!(back, Ok(cmd), "{} request", C::NAME);

    let reply = C::Reply::arb(g);
    let bytes = encode_reply(&reply, sizes);
    prop_assert!(bytes.len() >= C::Reply::min_len(sizes));
    let back = decode_reply::<C>(&bytes, sizes);
    prop_assert_eq!(back, Ok(reply), "{} reply", C::NAME);
    Ok(())
}

/// Decoding `noise`, and every truncation and a corruption of a valid
/// reply, as `C`'s reply or request returns (Ok or Err) without panicking.
pub(crate) fn never_panics<C>(noise: &[u8], g: &mut Gen<'_>)
where
    C: Command + Decode,
    C::Reply: Arb,
{
    let sizes = g.sizes();
    let _ = decode_reply::<C>(noise, sizes);
    let _ = decode_request::<C>(noise, sizes);
    let _ = decode_request_with_tags::<C>(noise, sizes, &[Tag::Int, Tag::Object]);

    let mut valid = encode_reply(&C::Reply::arb(g), sizes);
    for end in 0..valid.len() {
        let _ = decode_reply::<C>(valid.get(..end).unwrap_or_default(), sizes);
    }
    if !valid.is_empty() {
        let at = usize::from(g.byte()) % valid.len();
        valid[at] ^= g.byte() | 1;
        let _ = decode_reply::<C>(&valid, sizes);
    }
}

/// The round-trip and never-panic proptests for a command set's commands.
macro_rules! command_tests {
    ($($cmd:ty),* $(,)?) => {
        proptest::proptest! {
            #[test]
            fn commands_round_trip(
                seed in $crate::testing::entropy(),
                sizes in $crate::testing::id_sizes(),
            ) {
                let mut g = $crate::testing::Gen::new(&seed, sizes);
                $($crate::testing::command_round_trip::<$cmd>(&mut g)?;)*
            }

            #[test]
            fn arbitrary_bytes_never_panic(
                noise in $crate::testing::noise(),
                seed in $crate::testing::entropy(),
                sizes in $crate::testing::id_sizes(),
            ) {
                let mut g = $crate::testing::Gen::new(&seed, sizes);
                $($crate::testing::never_panics::<$cmd>(&noise, &mut g);)*
            }
        }
    };
}
