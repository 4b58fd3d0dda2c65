//! JDWP packet framing: the handshake, the 11-byte header, and a streaming
//! decoder that checks every announced length before allocating.
//!
//! This file owns bytes-on-the-wire only; it knows nothing of command sets.

use thiserror::Error;

/// The 14 ASCII bytes each side sends once before any packet.
pub const HANDSHAKE: &[u8; 14] = b"JDWP-Handshake";

/// Length of a packet header: length u32, id u32, flags u8, then either
/// command set u8 + command u8 or an error code u16.
pub const HEADER_LEN: usize = 11;

/// Flag bit marking a reply packet.
pub const FLAG_REPLY: u8 = 0x80;

/// The largest packet we accept by default. HotSpot's own replies (a class's
/// bytecodes, a large array region) stay well below this; a larger length is
/// a broken or hostile peer.
pub const DEFAULT_MAX_PACKET: u32 = 64 * 1024 * 1024;

/// A command packet (from us, or an event composite from the JVM).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CommandPacket {
    pub id: u32,
    pub command_set: u8,
    pub command: u8,
    pub data: Vec<u8>,
}

/// A reply packet; `error_code` 0 means success.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReplyPacket {
    pub id: u32,
    pub error_code: u16,
    pub data: Vec<u8>,
}

/// Either kind of packet.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Packet {
    Command(CommandPacket),
    Reply(ReplyPacket),
}

/// Why a byte stream is not a valid JDWP packet stream.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum FrameError {
    #[error("packet length {length} is shorter than the 11-byte header")]
    TooShort { length: u32 },
    #[error("packet length {length} exceeds the maximum of {max} bytes")]
    TooLarge { length: u32, max: u32 },
    #[error("handshake mismatch: peer sent {got:?}, which is not a JDWP endpoint")]
    BadHandshake { got: Vec<u8> },
}

impl CommandPacket {
    /// Encodes the packet, header included.
    pub fn encode(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(HEADER_LEN + self.data.len());
        self.encode_into(&mut out);
        out
    }

    /// Appends the encoded packet, header included, to `out`.
    pub fn encode_into(&self, out: &mut Vec<u8>) {
        let length = (HEADER_LEN + self.data.len()) as u32;
        out.reserve(length as usize);
        out.extend_from_slice(&length.to_be_bytes());
        out.extend_from_slice(&self.id.to_be_bytes());
        out.push(0);
        out.push(self.command_set);
        out.push(self.command);
        out.extend_from_slice(&self.data);
    }
}

impl ReplyPacket {
    /// Encodes the packet, header included.
    pub fn encode(&self) -> Vec<u8> {
        let length = (HEADER_LEN + self.data.len()) as u32;
        let mut out = Vec::with_capacity(length as usize);
        out.extend_from_slice(&length.to_be_bytes());
        out.extend_from_slice(&self.id.to_be_bytes());
        out.push(FLAG_REPLY);
        out.extend_from_slice(&self.error_code.to_be_bytes());
        out.extend_from_slice(&self.data);
        out
    }
}

impl Packet {
    /// Encodes the packet, header included.
    pub fn encode(&self) -> Vec<u8> {
        match self {
            Packet::Command(c) => c.encode(),
            Packet::Reply(r) => r.encode(),
        }
    }

    /// The packet id.
    pub fn id(&self) -> u32 {
        match self {
            Packet::Command(c) => c.id,
            Packet::Reply(r) => r.id,
        }
    }
}

/// Checks the peer's handshake bytes.
pub fn check_handshake(got: &[u8]) -> Result<(), FrameError> {
    if got == HANDSHAKE {
        Ok(())
    } else {
        Err(FrameError::BadHandshake { got: got.to_vec() })
    }
}

/// Reads the total packet length from a header, checked against `max`.
pub fn packet_length(header: &[u8; HEADER_LEN], max: u32) -> Result<u32, FrameError> {
    let length = u32::from_be_bytes([header[0], header[1], header[2], header[3]]);
    if (length as usize) < HEADER_LEN {
        return Err(FrameError::TooShort { length });
    }
    if length > max {
        return Err(FrameError::TooLarge { length, max });
    }
    Ok(length)
}

/// Builds a packet from a validated header and its body (exactly
/// `length - HEADER_LEN` bytes).
pub fn assemble(header: &[u8; HEADER_LEN], body: Vec<u8>) -> Packet {
    let id = u32::from_be_bytes([header[4], header[5], header[6], header[7]]);
    if header[8] & FLAG_REPLY != 0 {
        Packet::Reply(ReplyPacket {
            id,
            error_code: u16::from_be_bytes([header[9], header[10]]),
            data: body,
        })
    } else {
        Packet::Command(CommandPacket {
            id,
            command_set: header[9],
            command: header[10],
            data: body,
        })
    }
}

/// A streaming decoder: push bytes as they arrive, pull whole packets.
///
/// Once it has returned an error the stream is desynchronised for good and
/// every later call returns the same error.
#[derive(Debug)]
pub struct FrameDecoder {
    buf: Vec<u8>,
    /// Bytes of `buf` already returned as packets; dropped on the next
    /// `push`, so taking many packets out of one read stays linear.
    consumed: usize,
    max: u32,
    failed: Option<FrameError>,
}

impl FrameDecoder {
    pub fn new(max: u32) -> Self {
        Self {
            buf: Vec::new(),
            consumed: 0,
            max,
            failed: None,
        }
    }

    /// Appends bytes read from the peer.
    pub fn push(&mut self, bytes: &[u8]) {
        if self.consumed > 0 {
            self.buf.drain(..self.consumed.min(self.buf.len()));
            self.consumed = 0;
        }
        self.buf.extend_from_slice(bytes);
    }

    /// Bytes received but not yet part of a whole packet.
    pub fn buffered(&self) -> usize {
        self.buf.len().saturating_sub(self.consumed)
    }

    /// The next whole packet, `Ok(None)` when more bytes are needed.
    pub fn next_packet(&mut self) -> Result<Option<Packet>, FrameError> {
        if let Some(err) = &self.failed {
            return Err(err.clone());
        }
        let pending = self.buf.get(self.consumed..).unwrap_or_default();
        let Some(head) = pending.first_chunk::<HEADER_LEN>() else {
            return Ok(None);
        };
        let header = *head;
        let length = match packet_length(&header, self.max) {
            Ok(length) => length as usize,
            Err(err) => {
                self.failed = Some(err.clone());
                return Err(err);
            }
        };
        // `packet_length` guarantees HEADER_LEN <= length.
        let Some(body) = pending.get(HEADER_LEN..length) else {
            return Ok(None);
        };
        let body = body.to_vec();
        self.consumed += length;
        Ok(Some(assemble(&header, body)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn command_round_trip() {
        let p = Packet::Command(CommandPacket {
            id: 7,
            command_set: 1,
            command: 1,
            data: vec![1, 2, 3],
        });
        let mut d = FrameDecoder::new(DEFAULT_MAX_PACKET);
        d.push(&p.encode());
        assert_eq!(d.next_packet(), Ok(Some(p)));
        assert_eq!(d.next_packet(), Ok(None));
        assert_eq!(d.buffered(), 0);
    }

    #[test]
    fn partial_packets_stay_buffered() {
        let p = ReplyPacket {
            id: 1,
            error_code: 0,
            data: vec![9; 5],
        }
        .encode();
        let mut d = FrameDecoder::new(DEFAULT_MAX_PACKET);
        d.push(&p);
        d.push(&p[..7]);
        assert!(matches!(d.next_packet(), Ok(Some(Packet::Reply(_)))));
        assert_eq!(d.buffered(), 7);
        assert_eq!(d.next_packet(), Ok(None));
        d.push(&p[7..]);
        assert!(matches!(d.next_packet(), Ok(Some(Packet::Reply(_)))));
        assert_eq!(d.buffered(), 0);
    }

    #[test]
    fn oversized_is_refused_before_allocating() {
        let mut d = FrameDecoder::new(1024);
        d.push(&[0x7f, 0xff, 0xff, 0xf0, 0, 0, 0, 1, 0x80, 0, 0]);
        assert!(matches!(d.next_packet(), Err(FrameError::TooLarge { .. })));
        assert!(d.next_packet().is_err());
    }

    #[test]
    fn short_length_is_refused() {
        let mut d = FrameDecoder::new(1024);
        d.push(&[0, 0, 0, 3, 0, 0, 0, 1, 0x80, 0, 0]);
        assert_eq!(d.next_packet(), Err(FrameError::TooShort { length: 3 }));
    }

    #[test]
    fn http_is_not_a_handshake() {
        assert!(check_handshake(b"HTTP/1.1 400 B").is_err());
        assert!(check_handshake(HANDSHAKE).is_ok());
    }

    fn packet() -> impl Strategy<Value = Packet> {
        let data = proptest::collection::vec(any::<u8>(), 0..64);
        prop_oneof![
            (any::<u32>(), any::<u8>(), any::<u8>(), data.clone()).prop_map(
                |(id, command_set, command, data)| Packet::Command(CommandPacket {
                    id,
                    command_set,
                    command,
                    data
                })
            ),
            (any::<u32>(), any::<u16>(), data).prop_map(|(id, error_code, data)| {
                Packet::Reply(ReplyPacket {
                    id,
                    error_code,
                    data,
                })
            }),
        ]
    }

    proptest! {
        #[test]
        fn packets_round_trip_in_any_chunking(
            packets in proptest::collection::vec(packet(), 1..6),
            chunk in 1usize..40,
        ) {
            let bytes: Vec<u8> = packets.iter().flat_map(Packet::encode).collect();
            let mut d = FrameDecoder::new(DEFAULT_MAX_PACKET);
            let mut out = Vec::new();
            for piece in bytes.chunks(chunk) {
                d.push(piece);
                while let Some(p) = d.next_packet().expect("valid stream") {
                    out.push(p);
                }
            }
            prop_assert_eq!(out, packets);
        }

        #[test]
        fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..256)) {
            let mut d = FrameDecoder::new(4096);
            d.push(&bytes);
            while let Ok(Some(_)) = d.next_packet() {}
        }
    }
}
