//! Primitive reading and writing of JDWP data: big-endian integers, modified
//! UTF-8 strings (read leniently), and ids whose widths come from
//! `VirtualMachine.IDSizes` — never assumed to be 8.

use thiserror::Error;

use super::value::Tag;

/// Widths in bytes of the five id kinds, as the JVM reported them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IdSizes {
    pub field: u8,
    pub method: u8,
    pub object: u8,
    pub reference_type: u8,
    pub frame: u8,
}

impl IdSizes {
    /// The widths HotSpot uses on 64-bit platforms; only a default until the
    /// JVM's own answer arrives.
    pub const HOTSPOT: IdSizes = IdSizes {
        field: 8,
        method: 8,
        object: 8,
        reference_type: 8,
        frame: 8,
    };

    /// Validates widths reported by a peer: JDWP ids are 1 to 8 bytes.
    pub fn checked(self) -> Result<Self, DecodeError> {
        for (what, width) in [
            ("field", self.field),
            ("method", self.method),
            ("object", self.object),
            ("referenceType", self.reference_type),
            ("frame", self.frame),
        ] {
            if !(1..=8).contains(&width) {
                return Err(DecodeError::BadIdSize { what, width });
            }
        }
        Ok(self)
    }
}

impl Default for IdSizes {
    fn default() -> Self {
        Self::HOTSPOT
    }
}

/// Why a packet's data could not be decoded.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum DecodeError {
    #[error("truncated data: needed {needed} more bytes for {what} at offset {offset}")]
    Truncated {
        what: &'static str,
        offset: usize,
        needed: usize,
    },
    #[error("{count} {what} announced but only {remaining} bytes remain")]
    CountTooLarge {
        what: &'static str,
        count: u64,
        remaining: usize,
    },
    #[error("unknown {what} {value:#x}")]
    Unknown { what: &'static str, value: u64 },
    #[error("id size for {what} is {width}, outside 1..=8")]
    BadIdSize { what: &'static str, width: u8 },
    #[error("{extra} unexpected trailing bytes after {what}")]
    Trailing { what: &'static str, extra: usize },
}

/// Reads JDWP data from a byte slice. Every read checks the remaining length
/// first, and counts are checked against it before anything is allocated.
///
/// Untagged values (in `SetValues` requests) carry no type on the wire; a
/// reader decoding such a request must be told their tags with
/// [`Reader::with_untagged_tags`].
#[derive(Debug, Clone)]
pub struct Reader<'a> {
    buf: &'a [u8],
    pos: usize,
    sizes: IdSizes,
    untagged: &'a [Tag],
    untagged_seen: usize,
}

impl<'a> Reader<'a> {
    pub fn new(buf: &'a [u8], sizes: IdSizes) -> Self {
        Self {
            buf,
            pos: 0,
            sizes,
            untagged: &[],
            untagged_seen: 0,
        }
    }

    /// Gives the tags of the untagged values to come, in order; once they
    /// run out the last one repeats (one component tag covers an array).
    pub fn with_untagged_tags(mut self, tags: &'a [Tag]) -> Self {
        self.untagged = tags;
        self.untagged_seen = 0;
        self
    }

    /// The tag of the next untagged value, from the tags given to
    /// [`Reader::with_untagged_tags`].
    pub fn next_untagged_tag(&mut self) -> Result<Tag, DecodeError> {
        let index = self.untagged_seen;
        self.untagged_seen = self.untagged_seen.saturating_add(1);
        self.untagged
            .get(index)
            .or(self.untagged.last())
            .copied()
            .ok_or(DecodeError::Unknown {
                what: "type of untagged value (no tags given to the reader)",
                value: index as u64,
            })
    }

    pub fn sizes(&self) -> IdSizes {
        self.sizes
    }

    pub fn remaining(&self) -> usize {
        self.buf.len().saturating_sub(self.pos)
    }

    pub fn position(&self) -> usize {
        self.pos
    }

    /// Fails when bytes remain unread: a reply longer than its schema is a
    /// sign the ids or the command were misunderstood.
    pub fn finish(&self, what: &'static str) -> Result<(), DecodeError> {
        match self.remaining() {
            0 => Ok(()),
            extra => Err(DecodeError::Trailing { what, extra }),
        }
    }

    pub fn bytes(&mut self, n: usize, what: &'static str) -> Result<&'a [u8], DecodeError> {
        let out = self
            .pos
            .checked_add(n)
            .and_then(|end| self.buf.get(self.pos..end))
            .ok_or(DecodeError::Truncated {
                what,
                offset: self.pos,
                needed: n.saturating_sub(self.remaining()),
            })?;
        self.pos += n;
        Ok(out)
    }

    /// Exactly `N` bytes, as an array.
    fn array<const N: usize>(&mut self, what: &'static str) -> Result<[u8; N], DecodeError> {
        let b = self.bytes(N, what)?;
        let mut out = [0u8; N];
        out.copy_from_slice(b);
        Ok(out)
    }

    pub fn u8(&mut self) -> Result<u8, DecodeError> {
        Ok(u8::from_be_bytes(self.array("byte")?))
    }

    pub fn bool(&mut self) -> Result<bool, DecodeError> {
        Ok(self.u8()? != 0)
    }

    pub fn u16(&mut self) -> Result<u16, DecodeError> {
        Ok(u16::from_be_bytes(self.array("short")?))
    }

    pub fn i32(&mut self) -> Result<i32, DecodeError> {
        Ok(i32::from_be_bytes(self.array("int")?))
    }

    pub fn u32(&mut self) -> Result<u32, DecodeError> {
        Ok(self.i32()? as u32)
    }

    pub fn i64(&mut self) -> Result<i64, DecodeError> {
        Ok(i64::from_be_bytes(self.array("long")?))
    }

    /// An unsigned big-endian integer of `width` bytes (an id).
    pub fn sized(&mut self, width: u8, what: &'static str) -> Result<u64, DecodeError> {
        let b = self.bytes(width as usize, what)?;
        Ok(b.iter().fold(0u64, |acc, &x| (acc << 8) | u64::from(x)))
    }

    pub fn object_id(&mut self) -> Result<u64, DecodeError> {
        self.sized(self.sizes.object, "objectID")
    }

    pub fn reference_type_id(&mut self) -> Result<u64, DecodeError> {
        self.sized(self.sizes.reference_type, "referenceTypeID")
    }

    pub fn method_id(&mut self) -> Result<u64, DecodeError> {
        self.sized(self.sizes.method, "methodID")
    }

    pub fn field_id(&mut self) -> Result<u64, DecodeError> {
        self.sized(self.sizes.field, "fieldID")
    }

    pub fn frame_id(&mut self) -> Result<u64, DecodeError> {
        self.sized(self.sizes.frame, "frameID")
    }

    /// A JDWP string: u32 byte length then (modified) UTF-8. Invalid
    /// sequences are replaced rather than refused, so one odd name never
    /// loses a whole reply.
    pub fn string(&mut self) -> Result<String, DecodeError> {
        let len = self.u32()? as usize;
        let b = self.bytes(len, "string")?;
        Ok(String::from_utf8_lossy(b).into_owned())
    }

    /// A repetition count, checked against the bytes left given the
    /// smallest possible encoded size of one element.
    pub fn count(&mut self, what: &'static str, min_element: usize) -> Result<usize, DecodeError> {
        let raw = self.i32()?;
        let count = u64::from(raw.max(0) as u32);
        if raw < 0 || count.saturating_mul(min_element.max(1) as u64) > self.remaining() as u64 {
            return Err(DecodeError::CountTooLarge {
                what,
                count: raw as u32 as u64,
                remaining: self.remaining(),
            });
        }
        Ok(count as usize)
    }

    /// Reads `count` elements with `f`, after checking the count.
    pub fn list<T>(
        &mut self,
        what: &'static str,
        min_element: usize,
        mut f: impl FnMut(&mut Self) -> Result<T, DecodeError>,
    ) -> Result<Vec<T>, DecodeError> {
        let n = self.count(what, min_element)?;
        let mut out = Vec::with_capacity(n);
        for _ in 0..n {
            out.push(f(self)?);
        }
        Ok(out)
    }
}

/// Writes JDWP data.
/// The bytes a writer reserves up front: a frame's ids and a handful of
/// slots (`StackFrame.GetValues` of 6 locals is 50 bytes).
const REQUEST_CAPACITY: usize = 64;

#[derive(Debug, Clone)]
pub struct Writer {
    buf: Vec<u8>,
    sizes: IdSizes,
}

impl Writer {
    pub fn new(sizes: IdSizes) -> Self {
        Self {
            // Most requests fit: one allocation, never regrown.
            buf: Vec::with_capacity(REQUEST_CAPACITY),
            sizes,
        }
    }

    pub fn sizes(&self) -> IdSizes {
        self.sizes
    }

    pub fn into_bytes(self) -> Vec<u8> {
        self.buf
    }

    pub fn bytes(&mut self, b: &[u8]) {
        self.buf.extend_from_slice(b);
    }

    pub fn u8(&mut self, v: u8) {
        self.buf.push(v);
    }

    pub fn bool(&mut self, v: bool) {
        self.buf.push(u8::from(v));
    }

    pub fn u16(&mut self, v: u16) {
        self.buf.extend_from_slice(&v.to_be_bytes());
    }

    pub fn i32(&mut self, v: i32) {
        self.buf.extend_from_slice(&v.to_be_bytes());
    }

    pub fn u32(&mut self, v: u32) {
        self.buf.extend_from_slice(&v.to_be_bytes());
    }

    pub fn i64(&mut self, v: i64) {
        self.buf.extend_from_slice(&v.to_be_bytes());
    }

    /// An id of `width` bytes; high bytes beyond the width are dropped.
    /// Widths above 8 (which `IdSizes::checked` refuses) write 8 bytes.
    pub fn sized(&mut self, width: u8, v: u64) {
        let all = v.to_be_bytes();
        let skip = 8usize.saturating_sub(usize::from(width));
        self.buf.extend_from_slice(all.get(skip..).unwrap_or(&all));
    }

    pub fn object_id(&mut self, v: u64) {
        self.sized(self.sizes.object, v);
    }

    pub fn reference_type_id(&mut self, v: u64) {
        self.sized(self.sizes.reference_type, v);
    }

    pub fn method_id(&mut self, v: u64) {
        self.sized(self.sizes.method, v);
    }

    pub fn field_id(&mut self, v: u64) {
        self.sized(self.sizes.field, v);
    }

    pub fn frame_id(&mut self, v: u64) {
        self.sized(self.sizes.frame, v);
    }

    pub fn string(&mut self, s: &str) {
        self.u32(s.len() as u32);
        self.buf.extend_from_slice(s.as_bytes());
    }

    /// A count followed by each element written by `f`.
    pub fn list<T>(&mut self, items: &[T], mut f: impl FnMut(&mut Self, &T)) {
        self.i32(items.len() as i32);
        for item in items {
            f(self, item);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_follow_the_reported_width() {
        let sizes = IdSizes {
            field: 4,
            method: 4,
            object: 4,
            reference_type: 4,
            frame: 4,
        };
        let mut w = Writer::new(sizes);
        w.object_id(0x1122_3344);
        let bytes = w.into_bytes();
        assert_eq!(bytes, vec![0x11, 0x22, 0x33, 0x44]);
        let mut r = Reader::new(&bytes, sizes);
        assert_eq!(r.object_id(), Ok(0x1122_3344));
        assert!(r.finish("test").is_ok());
    }

    #[test]
    fn huge_count_is_refused_before_allocating() {
        let bytes = [0x7f, 0xff, 0xff, 0xff, 1, 2];
        let mut r = Reader::new(&bytes, IdSizes::HOTSPOT);
        assert!(matches!(
            r.list("threads", 8, |r| r.object_id()),
            Err(DecodeError::CountTooLarge { .. })
        ));
    }

    #[test]
    fn bad_id_sizes_are_refused() {
        let sizes = IdSizes {
            object: 0,
            ..IdSizes::HOTSPOT
        };
        assert!(sizes.checked().is_err());
    }
}
