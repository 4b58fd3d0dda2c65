//! The floor under bench/group_arm.rs: what any debugger pays to do the
//! least a probe needs, measured the same way (one JVM, then the whole
//! group at once). The client is the simplest there is, one blocking
//! socket per JVM on its own thread, with nothing of jvmscope in the path
//! but the codec. Two rows:
//!
//! - **round trips**: 100 requests one after another (`IDSizes`, which the
//!   agent answers from constants), what any exchange of questions and
//!   answers costs;
//! - **a redefinition**: one `RedefineClasses` of the class's own bytes,
//!   the one command no probe can do without.
//!
//! When these go from one JVM to eight at the ratio the tool does, the
//! ratio is the host's (its cores against the members' CPU), not the
//! tool's.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::sync::{Arc, Barrier};
use std::time::{Duration, Instant};

use jvmscope::jdwp::command::{Command as JdwpCommand, decode_reply, encode_request};
use jvmscope::jdwp::packet::CommandPacket;
use jvmscope::jdwp::virtual_machine::{
    ClassDef, ClassesBySignature, Dispose, IdSizesCmd, RedefineClasses,
};
use jvmscope::jdwp::{IdSizes, ReferenceTypeId};

/// One blocking JDWP connection: a request, then its reply.
struct Raw {
    stream: TcpStream,
    next: u32,
    sizes: IdSizes,
}

impl Raw {
    fn connect(port: u16) -> Result<Raw, String> {
        let mut stream = TcpStream::connect(("127.0.0.1", port)).map_err(|e| e.to_string())?;
        stream.set_nodelay(true).map_err(|e| e.to_string())?;
        stream
            .write_all(b"JDWP-Handshake")
            .map_err(|e| e.to_string())?;
        let mut hs = [0u8; 14];
        stream.read_exact(&mut hs).map_err(|e| e.to_string())?;
        if &hs != b"JDWP-Handshake" {
            return Err("no JDWP handshake".into());
        }
        let mut raw = Raw {
            stream,
            next: 1,
            sizes: IdSizes::HOTSPOT,
        };
        raw.sizes = raw.send(&IdSizesCmd)?;
        Ok(raw)
    }

    /// Sends `cmd` and reads until its reply (an event packet is skipped).
    fn send<C: JdwpCommand>(&mut self, cmd: &C) -> Result<C::Reply, String> {
        let id = self.next;
        self.next += 1;
        let packet = CommandPacket {
            id,
            command_set: C::SET,
            command: C::ID,
            data: encode_request(cmd, self.sizes),
        }
        .encode();
        self.stream.write_all(&packet).map_err(|e| e.to_string())?;
        loop {
            let mut head = [0u8; 11];
            self.stream
                .read_exact(&mut head)
                .map_err(|e| e.to_string())?;
            let len = u32::from_be_bytes([head[0], head[1], head[2], head[3]]) as usize;
            let mut data = vec![0u8; len.saturating_sub(11)];
            self.stream
                .read_exact(&mut data)
                .map_err(|e| e.to_string())?;
            let reply_id = u32::from_be_bytes([head[4], head[5], head[6], head[7]]);
            if head[8] & 0x80 == 0 || reply_id != id {
                continue;
            }
            let error = u16::from_be_bytes([head[9], head[10]]);
            if error != 0 {
                return Err(format!("{} answered error {error}", C::NAME));
            }
            return decode_reply::<C>(&data, self.sizes).map_err(|e| e.to_string());
        }
    }
}

/// One floor run on `ports` at once: the wall time of 100 round trips on
/// every JVM, then of one redefinition on every JVM (each from a start
/// all threads share to the last reply). Each connection is let go
/// (`Dispose`) afterwards; the caller waits until the JVMs listen again.
pub fn run(ports: &[u16], class: &str, bytes: &Arc<Vec<u8>>) -> (Duration, Duration) {
    let n = ports.len();
    let (trips, redefine) = (Arc::new(Barrier::new(n)), Arc::new(Barrier::new(n)));
    let started = Arc::new(std::sync::Mutex::new((None::<Instant>, None::<Instant>)));
    let workers: Vec<_> = ports
        .iter()
        .map(|&port| {
            let (trips, redefine, started) = (trips.clone(), redefine.clone(), started.clone());
            let (bytes, signature) = (bytes.clone(), format!("L{class};"));
            std::thread::spawn(move || {
                let mut raw = Raw::connect(port).expect("a raw JDWP connection");
                let ty: ReferenceTypeId = raw
                    .send(&ClassesBySignature { signature })
                    .expect("the class")
                    .first()
                    .expect("the class is loaded")
                    .ref_type
                    .id;
                let mark = |which: usize| {
                    let mut s = started.lock().expect("start");
                    let slot = if which == 0 { &mut s.0 } else { &mut s.1 };
                    slot.get_or_insert_with(Instant::now);
                };
                trips.wait();
                mark(0);
                for _ in 0..100 {
                    raw.send(&IdSizesCmd).expect("a round trip");
                }
                let trips_done = Instant::now();
                redefine.wait();
                mark(1);
                raw.send(&RedefineClasses {
                    classes: vec![ClassDef {
                        ref_type: ty,
                        classfile: bytes.to_vec(),
                    }],
                })
                .expect("a redefinition");
                let redefined = Instant::now();
                let _ = raw.send(&Dispose);
                (trips_done, redefined)
            })
        })
        .collect();
    let ends: Vec<(Instant, Instant)> = workers
        .into_iter()
        .map(|w| w.join().expect("a floor thread"))
        .collect();
    let (t0, r0) = *started.lock().expect("start");
    let last = |f: fn(&(Instant, Instant)) -> Instant| ends.iter().map(f).max();
    let span = |from: Option<Instant>, to: Option<Instant>| match (from, to) {
        (Some(a), Some(b)) => b.saturating_duration_since(a),
        _ => Duration::ZERO,
    };
    (span(t0, last(|e| e.0)), span(r0, last(|e| e.1)))
}
