//! Fuzz target: bytes from a peer, cut into chunks, through `FrameDecoder`;
//! every reply decoded as a handful of reply types, every command as an
//! event composite (and as the requests a fake JVM parses). Nothing may
//! panic, and whatever decodes must re-encode to bytes that decode to the
//! same encoding.
//!
//! The first input byte picks the chunk size (low 6 bits, plus one) and the
//! id widths (top two bits: HotSpot's 8, all 4, or a mix).

#![no_main]

use jvmscope_jdwp::command::{
    Command, Decode, Encode, command_name, decode_all, decode_reply, decode_request, encode_reply,
};
use jvmscope_jdwp::packet::{FrameDecoder, Packet};
use jvmscope_jdwp::{
    Composite, IdSizes, array_reference, class_type, event_request, method, object_reference,
    reference_type, stack_frame, thread_reference, virtual_machine,
};
use libfuzzer_sys::fuzz_target;

/// Larger packets are refused by the decoder; keeps runs fast.
const MAX_PACKET: u32 = 1 << 20;

fuzz_target!(|data: &[u8]| {
    let Some((&first, stream)) = data.split_first() else {
        return;
    };
    let chunk = usize::from(first & 0x3F) + 1;
    let sizes = match first >> 6 {
        0 | 1 => IdSizes::HOTSPOT,
        2 => IdSizes {
            field: 4,
            method: 4,
            object: 4,
            reference_type: 4,
            frame: 4,
        },
        _ => IdSizes {
            field: 2,
            method: 8,
            object: 4,
            reference_type: 3,
            frame: 1,
        },
    };

    let mut decoder = FrameDecoder::new(MAX_PACKET);
    for piece in stream.chunks(chunk) {
        decoder.push(piece);
        loop {
            match decoder.next_packet() {
                Ok(Some(packet)) => check_packet(&packet, sizes),
                Ok(None) => break,
                // The stream is desynchronised for good.
                Err(_) => return,
            }
        }
    }
});

fn check_packet(packet: &Packet, sizes: IdSizes) {
    match packet {
        Packet::Reply(reply) => {
            let data = &reply.data;
            reply_stable::<virtual_machine::Version>(data, sizes);
            reply_stable::<virtual_machine::IdSizesCmd>(data, sizes);
            reply_stable::<virtual_machine::AllThreads>(data, sizes);
            reply_stable::<virtual_machine::AllClasses>(data, sizes);
            reply_stable::<reference_type::Methods>(data, sizes);
            reply_stable::<reference_type::GetValues>(data, sizes);
            reply_stable::<method::LineTable>(data, sizes);
            reply_stable::<method::VariableTable>(data, sizes);
            reply_stable::<object_reference::MonitorInfo>(data, sizes);
            reply_stable::<class_type::InvokeMethod>(data, sizes);
            reply_stable::<thread_reference::Frames>(data, sizes);
            reply_stable::<thread_reference::Status>(data, sizes);
            reply_stable::<array_reference::GetValues>(data, sizes);
            reply_stable::<stack_frame::GetValues>(data, sizes);
            reply_stable::<event_request::Set>(data, sizes);
        }
        Packet::Command(cmd) => {
            let _ = command_name(cmd.command_set, cmd.command);
            let data = &cmd.data;
            if let Ok(composite) = Composite::decode_data(data, sizes) {
                stable(&composite, sizes);
            }
            let _ = decode_request::<event_request::Set>(data, sizes);
            let _ = decode_request::<stack_frame::SetValues>(data, sizes);
            let _ = decode_request::<thread_reference::Frames>(data, sizes);
        }
    }
}

/// Decodes `data` as `C`'s reply and, when that works, checks stability.
fn reply_stable<C: Command>(data: &[u8], sizes: IdSizes) {
    if let Ok(reply) = decode_reply::<C>(data, sizes) {
        stable(&reply, sizes);
    }
}

/// A decoded value re-encodes to bytes that decode and re-encode to the
/// same bytes. (Decoding is lenient — any non-zero byte is `true`, bad
/// UTF-8 is replaced — so the first encoding may differ from the input.)
fn stable<T: Decode + Encode>(value: &T, sizes: IdSizes) {
    let bytes = encode_reply(value, sizes);
    let again: T = match decode_all(&bytes, sizes, "re-decode") {
        Ok(again) => again,
        Err(err) => panic!("re-encoded value does not decode: {err}"),
    };
    assert_eq!(encode_reply(&again, sizes), bytes, "encoding is not stable");
}
