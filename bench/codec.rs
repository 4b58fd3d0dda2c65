//! Micro benches of the sans-IO codec: framing a stream of packets and
//! decoding the replies a capture reads most (Frames, GetValues-style
//! tagged values). Run: `cargo bench --bench codec`.

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use jvmscope::jdwp::packet::{DEFAULT_MAX_PACKET, FrameDecoder, ReplyPacket};
use jvmscope::jdwp::{IdSizes, ObjectId, Reader, Tag, Value, Writer};

fn framing(c: &mut Criterion) {
    let packet = ReplyPacket {
        id: 7,
        error_code: 0,
        data: vec![0u8; 64],
    }
    .encode();
    let stream: Vec<u8> = std::iter::repeat_n(packet, 1000).flatten().collect();
    let mut g = c.benchmark_group("framing");
    g.throughput(Throughput::Elements(1000));
    g.bench_function("1000 replies of 75 bytes, 4 KiB reads", |b| {
        b.iter(|| {
            let mut d = FrameDecoder::new(DEFAULT_MAX_PACKET);
            let mut n = 0;
            for chunk in stream.chunks(4096) {
                d.push(chunk);
                while let Ok(Some(_)) = d.next_packet() {
                    n += 1;
                }
            }
            assert_eq!(n, 1000);
        })
    });
    g.finish();
}

fn values(c: &mut Criterion) {
    let mut w = Writer::new(IdSizes::HOTSPOT);
    w.i32(16);
    for i in 0..16 {
        if i % 2 == 0 {
            Value::Int(i).write_tagged(&mut w);
        } else {
            Value::Object {
                tag: Tag::String,
                id: ObjectId(0x1000 + i as u64),
            }
            .write_tagged(&mut w);
        }
    }
    let bytes = w.into_bytes();
    c.bench_function("decode 16 tagged values", |b| {
        b.iter(|| {
            let mut r = Reader::new(&bytes, IdSizes::HOTSPOT);
            let v = r.list("values", 2, Value::read_tagged).expect("decodes");
            assert_eq!(v.len(), 16);
        })
    });
}

criterion_group!(benches, framing, values);
criterion_main!(benches);
