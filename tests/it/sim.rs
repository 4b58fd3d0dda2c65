//! A simulated JVM for the middle layer: a scripted model (`model.rs`)
//! answering the JDWP commands the actors send (`answer.rs`) over an
//! in-process stream (`tokio::io::duplex`), served by a task of the test's
//! own runtime, so a paused clock is never fooled by a real socket. It
//! emits breakpoint hits on request, with the suspend policy the request
//! asked for, and can stall a command or die mid-call.
#![allow(dead_code)] // Not every test uses every knob.

pub mod answer;
pub mod model;

use std::sync::{Arc, Mutex, MutexGuard};

use jvmscope::jdwp::packet::{CommandPacket, HANDSHAKE, ReplyPacket};
use jvmscope::jdwp::{
    Composite, Event, EventKind, FrameDecoder, Location, Modifier, Packet, RequestId,
    SuspendPolicy, ThreadId,
};
use tokio::io::{AsyncReadExt, AsyncWriteExt, DuplexStream};
use tokio::sync::mpsc;

use answer::SIZES;
use model::Jvm;

/// What the sim does with a command beyond answering it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fault {
    /// Never answer this command.
    Stall,
    /// Close the connection when this command arrives.
    Die,
}

#[derive(Default)]
struct Shared {
    jvm: Mutex<Jvm>,
    faults: Mutex<Vec<((u8, u8), Fault)>>,
}

/// A running simulated JVM; its model is read and changed through it.
pub struct Sim {
    shared: Arc<Shared>,
    out: mpsc::UnboundedSender<Out>,
}

enum Out {
    Packet(Vec<u8>),
    Close,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

impl Sim {
    /// Starts serving `jvm` on a task of the current runtime; the other
    /// end of the stream is for `Engine::attach_stream`.
    pub fn start(jvm: Jvm) -> (Sim, DuplexStream) {
        let (ours, theirs) = tokio::io::duplex(1 << 20);
        let shared = Arc::new(Shared {
            jvm: Mutex::new(jvm),
            faults: Mutex::default(),
        });
        let (out, rx) = mpsc::unbounded_channel();
        tokio::spawn(serve(ours, shared.clone(), rx));
        (Sim { shared, out }, theirs)
    }

    /// The model, to read or change.
    pub fn jvm(&self) -> MutexGuard<'_, Jvm> {
        lock(&self.shared.jvm)
    }

    /// Every thread's suspend count, `(thread, count)`.
    pub fn counts(&self) -> Vec<(u64, i32)> {
        self.jvm().counts()
    }

    /// How many times `command` was received.
    pub fn received(&self, command: (u8, u8)) -> usize {
        self.jvm()
            .received
            .iter()
            .filter(|c| **c == command)
            .count()
    }

    /// Applies `fault` to every later `command`.
    pub fn fault(&self, command: (u8, u8), fault: Fault) {
        lock(&self.shared.faults).push((command, fault));
    }

    /// Closes the connection now, as a JVM that exits.
    pub fn kill(&self) {
        let _ = self.out.send(Out::Close);
    }

    /// Thread `thread` reaches `class.method:line`: every live breakpoint
    /// request for that location (and its thread and count filters) is
    /// reported in one composite, after the JVM suspended what the
    /// strongest policy asks. Returns the requests reported.
    pub fn hit(&self, thread: u64, class: &str, method: &str, line: i32) -> Vec<RequestId> {
        let mut jvm = self.jvm();
        let location = jvm.location(class, method, line);
        if let Some(t) = jvm.thread_mut(thread)
            && let Some(top) = t.frames.first_mut()
        {
            top.index = location.index;
        }
        let mut fired = Vec::new();
        let mut policy = SuspendPolicy::None;
        for r in jvm.requests.iter_mut() {
            if r.kind != EventKind::Breakpoint
                || r.spent
                || !matches(&r.modifiers, thread, &location)
            {
                continue;
            }
            r.seen += 1;
            if let Some(n) = count_of(&r.modifiers) {
                if r.seen < n {
                    continue;
                }
                r.spent = true;
            }
            fired.push(RequestId(r.id));
            if rank(r.policy) > rank(policy) {
                policy = r.policy;
            }
        }
        if fired.is_empty() {
            return fired;
        }
        match policy {
            SuspendPolicy::All => jvm.threads.iter_mut().for_each(|t| t.count += 1),
            SuspendPolicy::EventThread => {
                if let Some(t) = jvm.thread_mut(thread) {
                    t.count += 1;
                }
            }
            SuspendPolicy::None => {}
        }
        drop(jvm);
        let composite = Composite {
            suspend_policy: policy,
            events: fired
                .iter()
                .map(|&request_id| Event::Breakpoint {
                    request_id,
                    thread: ThreadId(thread),
                    location,
                })
                .collect(),
        };
        let packet = CommandPacket {
            id: 0x4000_0000 | fired[0].0 as u32,
            command_set: Composite::SET,
            command: Composite::ID,
            data: composite.encode_data(SIZES),
        };
        let _ = self.out.send(Out::Packet(packet.encode()));
        fired
    }

    /// The live breakpoint requests, as `(line, policy)` of their
    /// location (line 0 when a request names none).
    pub fn breakpoints(&self) -> Vec<(i32, SuspendPolicy)> {
        let jvm = self.jvm();
        jvm.requests_of(EventKind::Breakpoint)
            .iter()
            .map(|r| {
                let line = r
                    .modifiers
                    .iter()
                    .find_map(|m| match m {
                        Modifier::LocationOnly { location } => jvm.line_of(location),
                        _ => None,
                    })
                    .unwrap_or(0);
                (line, r.policy)
            })
            .collect()
    }
}

fn rank(p: SuspendPolicy) -> u8 {
    match p {
        SuspendPolicy::None => 0,
        SuspendPolicy::EventThread => 1,
        SuspendPolicy::All => 2,
    }
}

fn count_of(modifiers: &[Modifier]) -> Option<i32> {
    modifiers.iter().find_map(|m| match m {
        Modifier::Count { count } => Some(*count),
        _ => None,
    })
}

/// Whether a request's location and thread filters admit the hit.
fn matches(modifiers: &[Modifier], thread: u64, at: &Location) -> bool {
    modifiers.iter().all(|m| match m {
        Modifier::LocationOnly { location } => location == at,
        Modifier::ThreadOnly { thread: t } => t.0 == thread,
        _ => true,
    })
}

/// The sim's side of the stream: the handshake, then each command
/// answered from the model in arrival order, with event composites
/// written between whole replies.
async fn serve(stream: DuplexStream, shared: Arc<Shared>, mut out: mpsc::UnboundedReceiver<Out>) {
    let (mut read, mut write) = tokio::io::split(stream);
    let mut greeting = [0u8; 14];
    if read.read_exact(&mut greeting).await.is_err() || &greeting != HANDSHAKE {
        return;
    }
    if write.write_all(HANDSHAKE).await.is_err() {
        return;
    }
    let mut decoder = FrameDecoder::new(1 << 24);
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        tokio::select! {
            got = read.read(&mut buf) => {
                let n = match got {
                    Ok(0) | Err(_) => return,
                    Ok(n) => n,
                };
                decoder.push(&buf[..n]);
                while let Ok(Some(packet)) = decoder.next_packet() {
                    let Packet::Command(c) = packet else { continue };
                    let Some(reply) = respond(&shared, c) else {
                        return;
                    };
                    if let Some(bytes) = reply
                        && write.write_all(&bytes).await.is_err()
                    {
                        return;
                    }
                }
            }
            next = out.recv() => match next {
                Some(Out::Packet(bytes)) => {
                    if write.write_all(&bytes).await.is_err() {
                        return;
                    }
                }
                Some(Out::Close) | None => return,
            },
        }
    }
}

/// The reply to one command: `Some(None)` for a stalled command, `None`
/// when the sim dies here.
fn respond(shared: &Shared, c: CommandPacket) -> Option<Option<Vec<u8>>> {
    let key = (c.command_set, c.command);
    let mut jvm = lock(&shared.jvm);
    jvm.received.push(key);
    let fault = lock(&shared.faults)
        .iter()
        .find(|(k, _)| *k == key)
        .map(|(_, f)| *f);
    match fault {
        Some(Fault::Die) => return None,
        Some(Fault::Stall) => return Some(None),
        None => {}
    }
    let reply = match answer::answer(&mut jvm, c.command_set, c.command, &c.data) {
        Ok(data) => ReplyPacket {
            id: c.id,
            error_code: 0,
            data,
        },
        Err(error_code) => ReplyPacket {
            id: c.id,
            error_code,
            data: Vec::new(),
        },
    };
    Some(Some(reply.encode()))
}

/// Command numbers the tests count, read from the codec's command types.
pub mod cmd {
    use jvmscope::jdwp::Command;
    use jvmscope::jdwp::{
        event_request as er, method, object_reference as or, stack_frame as sf,
        thread_reference as tr, virtual_machine as vm,
    };

    const fn of<C: Command>() -> (u8, u8) {
        (C::SET, C::ID)
    }

    pub const VARIABLE_TABLE_GENERIC: (u8, u8) = of::<method::VariableTableWithGeneric>();
    pub const FRAMES: (u8, u8) = of::<tr::Frames>();
    pub const FRAME_COUNT: (u8, u8) = of::<tr::FrameCount>();
    pub const GET_LOCALS: (u8, u8) = of::<sf::GetValues>();
    pub const SET_LOCALS: (u8, u8) = of::<sf::SetValues>();
    pub const SET_FIELDS: (u8, u8) = of::<or::SetValues>();
    pub const INVOKE: (u8, u8) = of::<or::InvokeMethod>();
    pub const VERSION: (u8, u8) = of::<vm::Version>();
    pub const SUSPEND: (u8, u8) = of::<vm::Suspend>();
    pub const RESUME: (u8, u8) = of::<vm::Resume>();
    pub const THREAD_RESUME: (u8, u8) = of::<tr::Resume>();
    pub const EVENT_SET: (u8, u8) = of::<er::Set>();
    pub const EVENT_CLEAR: (u8, u8) = of::<er::Clear>();
}
