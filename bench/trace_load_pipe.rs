//! The pipelined raw-JDWP client of bench/trace_load.rs: the fastest
//! capture client we know how to write. One OS thread owns the socket: a
//! blocking read loop decodes whatever arrived and answers each packet at
//! once into one output buffer, which goes out in one write before the
//! next read. Nothing waits for anything but the socket:
//!
//! - a breakpoint event → `Frames` is queued;
//! - the `Frames` reply → `GetValues` of the top frame (and, **eager**,
//!   `Resume` right behind it: a JDWP agent runs one connection's
//!   commands in order, so the values are read before the thread runs);
//! - the `GetValues` reply → `Resume` (**waiting**), and the string
//!   locals' contents (full workload);
//! - the last reply of a hit → the hit is counted.
//!
//! Hits of different threads interleave freely: no hit waits for another.
//! No task, channel, lock or wake-up sits between the socket and the state
//! machine, which is what the tokio clients of `trace_load_raw.rs` pay.

use std::collections::HashMap;
use std::io::{ErrorKind, Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, anyhow, bail};

use jvmscope::jdwp::command::{Command as JdwpCommand, decode_reply, encode_request};
use jvmscope::jdwp::event_request::{Clear, Set};
use jvmscope::jdwp::method::{LineTable, VariableTable};
use jvmscope::jdwp::packet::{CommandPacket, FrameDecoder, HANDSHAKE, Packet, ReplyPacket};
use jvmscope::jdwp::reference_type::Methods;
use jvmscope::jdwp::stack_frame::{GetValues, SlotRequest};
use jvmscope::jdwp::string_reference::Value as StringValue;
use jvmscope::jdwp::thread_reference::{Frames, Resume};
use jvmscope::jdwp::virtual_machine::{ClassesBySignature, Dispose, IdSizesCmd};
use jvmscope::jdwp::{
    Composite, Event, EventKind, IdSizes, Location, Modifier, RequestId, SuspendPolicy, Tag,
    ThreadId, TypeTag, Value,
};

use super::steal::{cpu_ticks, steal_share};
use super::{Fixture, Phase, Shape, Workload, cpu_time};
use jvmscope::actors::testing::{HOLD_BUCKETS, bucketed_quantile, hold_bucket};

/// How long a read blocks before the loop looks at the clock.
const READ_TICK: Duration = Duration::from_millis(10);

/// The socket, the decoder and the output buffer.
struct Wire {
    stream: TcpStream,
    dec: FrameDecoder,
    buf: Vec<u8>,
    out: Vec<u8>,
    next: u32,
    sizes: IdSizes,
    /// The highest reply id seen, and replies that came after a later one.
    latest: u32,
    out_of_order: u64,
    /// Packets read while a set-up call waited for its reply (the first
    /// breakpoint events can come before `EventRequest.Set`'s reply; each
    /// holds a suspended thread).
    backlog: std::collections::VecDeque<Packet>,
}

impl Wire {
    fn connect(port: u16) -> Result<Wire> {
        let mut stream = TcpStream::connect(("127.0.0.1", port))?;
        stream.set_nodelay(true)?;
        stream.write_all(HANDSHAKE)?;
        let mut hs = [0u8; 14];
        stream.read_exact(&mut hs)?;
        if &hs != HANDSHAKE {
            bail!("no JDWP handshake");
        }
        stream.set_read_timeout(Some(READ_TICK))?;
        let mut wire = Wire {
            stream,
            dec: FrameDecoder::new(64 * 1024 * 1024),
            buf: vec![0u8; 256 * 1024],
            out: Vec::with_capacity(64 * 1024),
            next: 1,
            sizes: IdSizes::HOTSPOT,
            latest: 0,
            out_of_order: 0,
            backlog: std::collections::VecDeque::new(),
        };
        wire.sizes = wire.call(&IdSizesCmd)?;
        Ok(wire)
    }

    /// Appends `cmd` to the output buffer; its packet id.
    fn queue<C: JdwpCommand>(&mut self, cmd: &C) -> u32 {
        let id = self.next;
        self.next += 1;
        CommandPacket {
            id,
            command_set: C::SET,
            command: C::ID,
            data: encode_request(cmd, self.sizes),
        }
        .encode_into(&mut self.out);
        id
    }

    /// Writes everything queued, in one write.
    fn flush(&mut self) -> Result<()> {
        if !self.out.is_empty() {
            self.stream.write_all(&self.out)?;
            self.out.clear();
        }
        Ok(())
    }

    /// One blocking read into the decoder; false when the tick passed with
    /// nothing to read.
    fn fill(&mut self) -> Result<bool> {
        match self.stream.read(&mut self.buf) {
            Ok(0) => bail!("the JVM closed the connection"),
            Ok(n) => {
                self.dec.push(&self.buf[..n]);
                Ok(true)
            }
            Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => Ok(false),
            Err(e) => Err(e.into()),
        }
    }

    fn next_packet(&mut self) -> Result<Option<Packet>> {
        if let Some(p) = self.backlog.pop_front() {
            return Ok(Some(p));
        }
        let p = self.dec.next_packet().map_err(|e| anyhow!("{e}"))?;
        if let Some(Packet::Reply(r)) = &p {
            if r.id < self.latest {
                self.out_of_order += 1;
            }
            self.latest = self.latest.max(r.id);
        }
        Ok(p)
    }

    /// Set-up only: sends `cmd` and reads until its reply; anything else
    /// read meanwhile is kept for the event loop.
    fn call<C: JdwpCommand>(&mut self, cmd: &C) -> Result<C::Reply> {
        let id = self.queue(cmd);
        self.flush()?;
        let deadline = Instant::now() + Duration::from_secs(10);
        let mut kept = std::collections::VecDeque::new();
        loop {
            while let Some(p) = self.next_packet()? {
                match p {
                    Packet::Reply(r) if r.id == id => {
                        kept.append(&mut self.backlog);
                        self.backlog = kept;
                        return self.decode::<C>(&r);
                    }
                    other => kept.push_back(other),
                }
            }
            if Instant::now() > deadline {
                bail!("{} got no reply", C::NAME);
            }
            self.fill()?;
        }
    }

    fn decode<C: JdwpCommand>(&self, r: &ReplyPacket) -> Result<C::Reply> {
        if r.error_code != 0 {
            bail!("{} failed: error {}", C::NAME, r.error_code);
        }
        decode_reply::<C>(&r.data, self.sizes).map_err(|e| anyhow!("{}: {e:?}", C::NAME))
    }
}

/// The hot location and the slots of the locals `workload` reads there.
fn resolve(wire: &mut Wire, line: u32, workload: Workload) -> Result<(Location, Vec<SlotRequest>)> {
    let class = wire
        .call(&ClassesBySignature {
            signature: format!("L{};", Shape::get().class()),
        })?
        .into_iter()
        .next()
        .context("the fixture class is not loaded")?
        .ref_type
        .id;
    for m in wire.call(&Methods { ref_type: class })? {
        let Ok(table) = wire.call(&LineTable {
            ref_type: class,
            method: m.method_id,
        }) else {
            continue;
        };
        let Some(entry) = table.lines.iter().find(|e| e.line_number == line as i32) else {
            continue;
        };
        let index = entry.line_code_index;
        let vars = wire.call(&VariableTable {
            ref_type: class,
            method: m.method_id,
        })?;
        let slots = vars
            .slots
            .iter()
            .filter(|v| index >= v.code_index && index < v.code_index + i64::from(v.length))
            .filter(|v| workload.reads_local(&v.name))
            .map(|v| SlotRequest {
                slot: v.slot,
                sig_byte: Tag::from_signature(&v.signature),
            })
            .collect();
        return Ok((
            Location {
                type_tag: TypeTag::Class,
                class,
                method: m.method_id,
                index: index as u64,
            },
            slots,
        ));
    }
    bail!("no code at line {line}")
}

/// What a reply in flight belongs to.
#[derive(Clone, Copy)]
enum Stage {
    Frames,
    Values,
    /// `Resume`, or a string's contents: the hit is done when its last
    /// such reply is in.
    Tail,
}

/// A hit in flight.
struct Hit {
    thread: ThreadId,
    received: Instant,
    /// Replies still awaited.
    left: u32,
    /// When its `Resume` was answered.
    held: Option<Duration>,
}

/// The measured window's figures.
struct Measured {
    t0: Instant,
    t1: Instant,
    cpu: super::Cpu,
    steal: f64,
    out_of_order: u64,
}

/// What the loop counts while measuring.
#[derive(Default)]
struct Tally {
    done: u64,
    holds: Vec<Duration>,
}

/// The per-hit pipeline of the pipelined client: each breakpoint event
/// queues its `Frames` at once, each reply queues the next step (values,
/// resume, string reads), and a hit is done when its last reply is in.
struct Client {
    pending: HashMap<u32, (u64, Stage)>,
    hits: HashMap<u64, Hit>,
    next_hit: u64,
    tally: Tally,
    slots: Vec<SlotRequest>,
    frames: i32,
    eager: bool,
    strings: bool,
    /// Suspension-free (policy NONE): an event is a hit, counted as read.
    free: bool,
}

impl Client {
    fn on_event(&mut self, wire: &mut Wire, c: &CommandPacket, measuring: bool) {
        let Ok(composite) = Composite::decode_data(&c.data, wire.sizes) else {
            return;
        };
        let received = Instant::now();
        for e in composite.events {
            let Event::Breakpoint { thread, .. } = e else {
                continue;
            };
            if self.free {
                if measuring {
                    self.tally.done += 1;
                }
                continue;
            }
            let id = wire.queue(&Frames {
                thread,
                start_frame: 0,
                length: self.frames,
            });
            self.next_hit += 1;
            self.hits.insert(
                self.next_hit,
                Hit {
                    thread,
                    received,
                    left: 0,
                    held: None,
                },
            );
            self.pending.insert(id, (self.next_hit, Stage::Frames));
        }
    }

    fn on_reply(&mut self, wire: &mut Wire, r: &ReplyPacket, measuring: bool) {
        let Some((key, stage)) = self.pending.remove(&r.id) else {
            return;
        };
        let Some(hit) = self.hits.get_mut(&key) else {
            return;
        };
        let thread = hit.thread;
        match stage {
            Stage::Frames => {
                let top = wire
                    .decode::<Frames>(r)
                    .ok()
                    .and_then(|f| f.first().map(|t| t.frame_id));
                let mut queued = Vec::with_capacity(2);
                if let Some(frame) = top {
                    let id = wire.queue(&GetValues {
                        thread,
                        frame,
                        slots: self.slots.clone(),
                    });
                    queued.push((id, Stage::Values));
                }
                if self.eager || top.is_none() {
                    queued.push((wire.queue(&Resume { thread }), Stage::Tail));
                }
                for (id, stage) in queued {
                    if let Stage::Tail = stage {
                        hit.left += 1;
                    }
                    self.pending.insert(id, (key, stage));
                }
            }
            Stage::Values => {
                let mut queued = Vec::new();
                if !self.eager {
                    queued.push(wire.queue(&Resume { thread }));
                }
                if self.strings
                    && let Ok(values) = wire.decode::<GetValues>(r)
                {
                    for v in values {
                        if let Value::Object {
                            tag: Tag::String,
                            id,
                        } = v
                        {
                            queued.push(wire.queue(&StringValue { string_object: id }));
                        }
                    }
                }
                hit.left += queued.len() as u32;
                for id in queued {
                    self.pending.insert(id, (key, Stage::Tail));
                }
            }
            Stage::Tail => {
                hit.left = hit.left.saturating_sub(1);
                if hit.held.is_none() {
                    // The first tail reply is the resume's: it
                    // was queued before any string read.
                    hit.held = Some(hit.received.elapsed());
                }
            }
        }
        if hit.left == 0
            && let Some(held) = hit.held
        {
            if measuring {
                self.tally.done += 1;
                self.tally.holds.push(held);
            }
            self.hits.remove(&key);
        }
    }
}

/// One phase of the pipelined client (blocking: run it off the runtime).
/// `eager`: `Resume` is written right behind `GetValues`. No workload:
/// suspension-free, the breakpoint at policy NONE and its events counted.
pub fn phase(
    fixture: &Fixture,
    port: u16,
    line: u32,
    workload: Option<Workload>,
    eager: bool,
    d: Duration,
) -> Result<Phase> {
    let mut wire = Wire::connect(port)?;
    let free = workload.is_none();
    let workload = workload.unwrap_or(Workload::Light);
    let (location, slots) = resolve(&mut wire, line, workload)?;
    let request: RequestId = wire.call(&Set {
        event_kind: EventKind::Breakpoint,
        suspend_policy: if free {
            SuspendPolicy::None
        } else {
            SuspendPolicy::EventThread
        },
        modifiers: vec![Modifier::LocationOnly { location }],
    })?;
    let mut client = Client {
        pending: HashMap::new(),
        hits: HashMap::new(),
        next_hit: 0,
        tally: Tally::default(),
        slots,
        frames: workload.frames(),
        eager,
        strings: workload.reads_strings(),
        free,
    };
    let started = Instant::now();
    let warm = started + Duration::from_millis(500);
    let end = warm + d;
    let mut window: Option<(Instant, super::Cpu, (u64, u64), u64)> = None;
    let mut measuring = false;
    let mut result: Option<Measured> = None;
    let mut clear_at: Option<Instant> = None;
    loop {
        let now = Instant::now();
        if !measuring && result.is_none() && now >= warm {
            measuring = true;
            window = Some((now, cpu_time(), cpu_ticks(), wire.out_of_order));
        }
        if measuring && now >= end {
            measuring = false;
            if let Some((t0, c0, s0, o0)) = window.take() {
                result = Some(Measured {
                    t0,
                    t1: now,
                    cpu: cpu_time() - c0,
                    steal: steal_share(s0, cpu_ticks()),
                    out_of_order: wire.out_of_order - o0,
                });
            }
            wire.queue(&Clear {
                event_kind: EventKind::Breakpoint,
                request_id: request,
            });
            clear_at = Some(now);
        }
        if clear_at.is_some_and(|t| now.duration_since(t) > Duration::from_millis(200)) {
            break;
        }
        while let Some(p) = wire.next_packet()? {
            match p {
                Packet::Command(c) => client.on_event(&mut wire, &c, measuring),
                Packet::Reply(r) => client.on_reply(&mut wire, &r, measuring),
            }
        }
        wire.flush()?;
        wire.fill()?;
    }
    wire.queue(&Dispose);
    let _ = wire.flush();
    let m = result.context("the phase never measured")?;
    let mut buckets = [0u64; HOLD_BUCKETS];
    let tally = client.tally;
    for h in &tally.holds {
        buckets[hold_bucket(*h)] += 1;
    }
    let q = |f: f64| bucketed_quantile(&buckets, f);
    let n = tally.done;
    let (cpu_per_hit, user_per_hit) = m.cpu.per_hit(n);
    Ok(Phase {
        rate: n as f64 / m.t1.duration_since(m.t0).as_secs_f64(),
        cpu_per_hit,
        user_per_hit,
        p50: q(0.5),
        p99: q(0.99),
        app_ops: fixture.ops_between(m.t0, m.t1),
        out_of_order: Some(m.out_of_order),
        steal: m.steal,
    })
}
