//! The raw-JDWP baseline of bench/trace_load.rs: the fastest capture client
//! we can write by hand. One socket, one writer (packets go out in the
//! order their ids are given), one reader matching replies by id; the hits
//! of several suspended threads are in flight at once, each hit's reads
//! one after another. Two variants:
//!
//! - **waiting**: each request of a hit is sent when the previous reply
//!   arrived (`Frames`, then `GetValues`, then `Resume`);
//! - **eager**: `Resume` is written right behind `GetValues`, without
//!   waiting for its reply: a JDWP agent runs one connection's commands in
//!   order, so the values are read before the thread runs. The reader
//!   counts replies that arrive after a reply to a later request, to
//!   verify that order.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, anyhow, bail};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::sync::{mpsc, oneshot};

use jvmscope::jdwp::command::{Command as JdwpCommand, decode_reply, encode_request};
use jvmscope::jdwp::event_request::{Clear, Set};
use jvmscope::jdwp::method::{LineTable, VariableTable};
use jvmscope::jdwp::packet::{CommandPacket, FrameDecoder, Packet};
use jvmscope::jdwp::reference_type::Methods;
use jvmscope::jdwp::stack_frame::{GetValues, SlotRequest};
use jvmscope::jdwp::thread_reference::{Frames, Resume};
use jvmscope::jdwp::virtual_machine::{ClassesBySignature, Dispose, IdSizesCmd};
use jvmscope::jdwp::{
    Composite, Event, EventKind, IdSizes, Location, Modifier, RequestId, SuspendPolicy, Tag,
    ThreadId, TypeTag, Value,
};

use super::steal::{cpu_ticks, steal_share};
use super::{Fixture, Phase, Shape, Workload, cpu_time};
use jvmscope::actors::testing::{HOLD_BUCKETS, bucketed_quantile, hold_bucket};

/// Requests waiting for their reply, by packet id.
type Pending = HashMap<u32, oneshot::Sender<(u16, Vec<u8>)>>;

/// The writer side: ids are given and packets queued under one lock, so
/// the wire carries them in id order.
struct Out {
    next: u32,
    pending: Arc<Mutex<Pending>>,
    tx: mpsc::UnboundedSender<Vec<u8>>,
}

/// A minimal JDWP client: one reader, one writer, replies matched by id.
pub struct Raw {
    sizes: IdSizes,
    out: Mutex<Out>,
    /// Replies that arrived after a reply to a later request.
    pub out_of_order: Arc<AtomicU64>,
}

impl Raw {
    pub async fn connect(port: u16) -> Result<(Arc<Raw>, mpsc::UnboundedReceiver<Vec<u8>>)> {
        let mut stream = TcpStream::connect(("127.0.0.1", port)).await?;
        stream.set_nodelay(true)?;
        stream.write_all(b"JDWP-Handshake").await?;
        let mut hs = [0u8; 14];
        stream.read_exact(&mut hs).await?;
        if &hs != b"JDWP-Handshake" {
            bail!("no JDWP handshake");
        }
        let (mut rd, mut wr) = stream.into_split();
        let (tx, mut out_rx) = mpsc::unbounded_channel::<Vec<u8>>();
        tokio::spawn(async move {
            let mut batch = Vec::new();
            while let Some(b) = out_rx.recv().await {
                // Whatever is queued goes out in one write.
                batch.clear();
                batch.extend_from_slice(&b);
                while let Ok(more) = out_rx.try_recv() {
                    batch.extend_from_slice(&more);
                }
                if wr.write_all(&batch).await.is_err() {
                    return;
                }
            }
        });
        let pending: Arc<Mutex<Pending>> = Arc::new(Mutex::new(HashMap::new()));
        let out_of_order = Arc::new(AtomicU64::new(0));
        let (ev_tx, ev_rx) = mpsc::unbounded_channel();
        let p2 = pending.clone();
        let ooo = out_of_order.clone();
        tokio::spawn(async move {
            let mut dec = FrameDecoder::new(64 * 1024 * 1024);
            let mut buf = vec![0u8; 64 * 1024];
            let mut latest = 0u32;
            loop {
                let n = match rd.read(&mut buf).await {
                    Ok(0) | Err(_) => return,
                    Ok(n) => n,
                };
                dec.push(&buf[..n]);
                while let Ok(Some(packet)) = dec.next_packet() {
                    match packet {
                        Packet::Reply(r) => {
                            if r.id < latest {
                                ooo.fetch_add(1, Ordering::Relaxed);
                            }
                            latest = latest.max(r.id);
                            let tx = p2.lock().ok().and_then(|mut m| m.remove(&r.id));
                            if let Some(tx) = tx {
                                let _ = tx.send((r.error_code, r.data));
                            }
                        }
                        Packet::Command(c) => {
                            let _ = ev_tx.send(c.data);
                        }
                    }
                }
            }
        });
        let mut raw = Raw {
            sizes: IdSizes::HOTSPOT,
            out: Mutex::new(Out {
                next: 1,
                pending,
                tx,
            }),
            out_of_order,
        };
        raw.sizes = raw.send(&IdSizesCmd).await?;
        Ok((Arc::new(raw), ev_rx))
    }

    /// Queues `cmd` now; the future awaits its reply.
    pub fn send<C: JdwpCommand>(&self, cmd: &C) -> impl Future<Output = Result<C::Reply>> + use<C> {
        let (tx, rx) = oneshot::channel();
        let data = encode_request(cmd, self.sizes);
        let sent = match self.out.lock() {
            Ok(mut out) => {
                let id = out.next;
                out.next += 1;
                if let Ok(mut m) = out.pending.lock() {
                    m.insert(id, tx);
                }
                let packet = CommandPacket {
                    id,
                    command_set: C::SET,
                    command: C::ID,
                    data,
                }
                .encode();
                out.tx
                    .send(packet)
                    .map_err(|_| anyhow!("connection closed"))
            }
            Err(_) => Err(anyhow!("writer poisoned")),
        };
        let sizes = self.sizes;
        async move {
            sent?;
            let (code, data) = rx.await?;
            if code != 0 {
                bail!("{} failed: error {code}", C::NAME);
            }
            decode_reply::<C>(&data, sizes).map_err(|e| anyhow!("{}: {e:?}", C::NAME))
        }
    }
}

/// The hot location and the slots of the locals `workload` reads there.
async fn resolve(raw: &Raw, line: u32, workload: Workload) -> Result<(Location, Vec<SlotRequest>)> {
    let class = raw
        .send(&ClassesBySignature {
            signature: format!("L{};", Shape::get().class()),
        })
        .await?
        .into_iter()
        .next()
        .context("the fixture class is not loaded")?
        .ref_type
        .id;
    for m in raw.send(&Methods { ref_type: class }).await? {
        let Ok(table) = raw
            .send(&LineTable {
                ref_type: class,
                method: m.method_id,
            })
            .await
        else {
            continue;
        };
        let Some(entry) = table.lines.iter().find(|e| e.line_number == line as i32) else {
            continue;
        };
        let index = entry.line_code_index;
        let vars = raw
            .send(&VariableTable {
                ref_type: class,
                method: m.method_id,
            })
            .await?;
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

/// How the raw client captures: which workload, and whether `Resume`
/// waits for the values' reply. `None`: suspension-free (policy NONE).
#[derive(Clone, Copy)]
pub struct Mode {
    pub workload: Option<Workload>,
    pub eager: bool,
}

pub async fn phase(fixture: &Fixture, line: u32, mode: Mode, d: Duration) -> Result<Phase> {
    let (raw, events) = Raw::connect(fixture.port().await?).await?;
    let workload = mode.workload.unwrap_or(Workload::Light);
    let (location, slots) = resolve(&raw, line, workload).await?;
    let policy = match mode.workload {
        Some(_) => SuspendPolicy::EventThread,
        None => SuspendPolicy::None,
    };
    let request: RequestId = raw
        .send(&Set {
            event_kind: EventKind::Breakpoint,
            suspend_policy: policy,
            modifiers: vec![Modifier::LocationOnly { location }],
        })
        .await?;
    let tally = Arc::new(Tally::default());
    let how = Arc::new(How {
        slots,
        frames: workload.frames(),
        strings: workload.reads_strings(),
        eager: mode.eager,
    });
    let handler = tokio::spawn(handle_events(raw.clone(), events, how, tally.clone()));
    tokio::time::sleep(Duration::from_millis(500)).await;
    let ooo0 = raw.out_of_order.load(Ordering::Relaxed);
    tally.measuring.store(true, Ordering::Relaxed);
    let t0 = Instant::now();
    let (c0, s0) = (cpu_time(), cpu_ticks());
    tokio::time::sleep(d).await;
    tally.measuring.store(false, Ordering::Relaxed);
    let t1 = Instant::now();
    let (c1, s1) = (cpu_time(), cpu_ticks());
    let n = tally.done.load(Ordering::Relaxed);
    let out_of_order = raw.out_of_order.load(Ordering::Relaxed) - ooo0;
    let _ = raw
        .send(&Clear {
            event_kind: EventKind::Breakpoint,
            request_id: request,
        })
        .await;
    tokio::time::sleep(Duration::from_millis(200)).await;
    let _ = raw.send(&Dispose).await;
    handler.abort();
    // Through the same buckets as jvmscope's own hold statistics (upper
    // bounds, ±25%), so the two quantiles compare like with like.
    let mut buckets = [0u64; HOLD_BUCKETS];
    for h in tally.holds.lock().map(|h| h.clone()).unwrap_or_default() {
        buckets[hold_bucket(h)] += 1;
    }
    let q = |f: f64| bucketed_quantile(&buckets, f);
    let (cpu_per_hit, user_per_hit) = (c1 - c0).per_hit(n);
    Ok(Phase {
        rate: n as f64 / t1.duration_since(t0).as_secs_f64(),
        cpu_per_hit,
        user_per_hit,
        p50: q(0.5),
        p99: q(0.99),
        app_ops: fixture.ops_between(t0, t1),
        out_of_order: Some(out_of_order),
        steal: steal_share(s0, s1),
    })
}

/// What the raw client's hits add up to while a phase measures.
#[derive(Default)]
struct Tally {
    /// Hits handled (captured, or counted under policy NONE).
    done: AtomicU64,
    /// How long each captured hit held its thread.
    holds: Mutex<Vec<Duration>>,
    /// Set for the measured window only, so warm-up hits are not counted.
    measuring: AtomicBool,
}

/// What each hit reads, and how.
struct How {
    slots: Vec<SlotRequest>,
    frames: i32,
    strings: bool,
    eager: bool,
}

/// The raw client's event loop: a hit under policy NONE is only counted;
/// a suspending hit is captured in its own task.
async fn handle_events(
    raw: Arc<Raw>,
    mut events: mpsc::UnboundedReceiver<Vec<u8>>,
    how: Arc<How>,
    tally: Arc<Tally>,
) {
    let sizes = raw.sizes;
    while let Some(data) = events.recv().await {
        let received = Instant::now();
        let Ok(composite) = Composite::decode_data(&data, sizes) else {
            continue;
        };
        for e in composite.events {
            let Event::Breakpoint { thread, .. } = e else {
                continue;
            };
            if composite.suspend_policy == SuspendPolicy::None {
                if tally.measuring.load(Ordering::Relaxed) {
                    tally.done.fetch_add(1, Ordering::Relaxed);
                }
                continue;
            }
            // Hits overlap; each capture's reads go one after another.
            tokio::spawn(capture(
                raw.clone(),
                thread,
                how.clone(),
                received,
                tally.clone(),
            ));
        }
    }
}

/// One suspending hit: the top frames, the locals, resume (after the
/// values' reply, or right behind their request), then any string local's
/// contents.
async fn capture(
    raw: Arc<Raw>,
    thread: ThreadId,
    how: Arc<How>,
    received: Instant,
    tally: Arc<Tally>,
) {
    let frames = raw
        .send(&Frames {
            thread,
            start_frame: 0,
            length: how.frames,
        })
        .await;
    let read = frames.as_ref().ok().and_then(|f| f.first()).map(|top| {
        raw.send(&GetValues {
            thread,
            frame: top.frame_id,
            slots: how.slots.clone(),
        })
    });
    let values = if how.eager {
        let resume = raw.send(&Resume { thread });
        let values = match read {
            Some(r) => r.await.ok(),
            None => None,
        };
        let _ = resume.await;
        values
    } else {
        let values = match read {
            Some(r) => r.await.ok(),
            None => None,
        };
        let _ = raw.send(&Resume { thread }).await;
        values
    };
    let held = received.elapsed();
    if how.strings {
        for v in values.unwrap_or_default() {
            if let Value::Object {
                tag: Tag::String,
                id,
            } = v
            {
                let _ = raw
                    .send(&jvmscope::jdwp::string_reference::Value { string_object: id })
                    .await;
            }
        }
    }
    if tally.measuring.load(Ordering::Relaxed) {
        tally.done.fetch_add(1, Ordering::Relaxed);
        if let Ok(mut h) = tally.holds.lock() {
            h.push(held);
        }
    }
}
