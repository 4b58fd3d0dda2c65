//! A scripted fake JDWP peer (std::net, own threads) for fault cases a real JVM cannot produce: wrong protocol, silence, bad or truncated replies.
#![allow(dead_code)] // Not every test uses every behaviour.

use std::io::{Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

/// The 14-byte JDWP handshake, sent by the debugger and echoed by the VM.
pub const HANDSHAKE: &[u8; 14] = b"JDWP-Handshake";
/// Size of a JDWP packet header.
pub const HEADER_LEN: usize = 11;
/// Flag bit marking a reply packet.
pub const REPLY_FLAG: u8 = 0x80;
/// JDWP error NOT_IMPLEMENTED.
pub const ERROR_NOT_IMPLEMENTED: u16 = 99;
/// The canned HTTP answer of [`Behaviour::Http`].
pub const HTTP_400: &[u8] = b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n";

/// Command set / command pairs the fake knows, read from the codec's own
/// command types (the one table of command numbers).
pub mod cmd {
    use jvmscope::jdwp::Command;
    use jvmscope::jdwp::{
        event, event_request as er, thread_reference as tr, virtual_machine as vm,
    };

    const fn of<C: Command>() -> (u8, u8) {
        (C::SET, C::ID)
    }

    pub const VERSION: (u8, u8) = of::<vm::Version>();
    pub const ALL_THREADS: (u8, u8) = of::<vm::AllThreads>();
    pub const DISPOSE: (u8, u8) = of::<vm::Dispose>();
    pub const ID_SIZES: (u8, u8) = of::<vm::IdSizesCmd>();
    pub const RESUME: (u8, u8) = of::<vm::Resume>();
    pub const CAPABILITIES: (u8, u8) = of::<vm::Capabilities>();
    pub const CAPABILITIES_NEW: (u8, u8) = of::<vm::CapabilitiesNew>();
    pub const EVENT_CLEAR: (u8, u8) = of::<er::Clear>();
    pub const CLEAR_ALL_BREAKPOINTS: (u8, u8) = of::<er::ClearAllBreakpoints>();
    pub const SUSPEND: (u8, u8) = of::<vm::Suspend>();
    pub const THREAD_NAME: (u8, u8) = of::<tr::Name>();
    pub const THREAD_SUSPEND: (u8, u8) = of::<tr::Suspend>();
    pub const THREAD_RESUME: (u8, u8) = of::<tr::Resume>();
    pub const THREAD_STATUS: (u8, u8) = of::<tr::Status>();
    pub const THREAD_SUSPEND_COUNT: (u8, u8) = of::<tr::SuspendCount>();
    /// Sent by the VM.
    pub const COMPOSITE_EVENT: (u8, u8) = (event::Composite::SET, event::Composite::ID);
}

/// What the fake does with one incoming command packet.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Step {
    /// A well-formed reply with the request's id, error 0 and this data.
    Reply(Vec<u8>),
    /// A reply with the request's id, this error code and no data.
    ReplyError(u16),
    /// Raw bytes written as they are (no framing).
    Garbage(Vec<u8>),
    /// A reply header announcing 100 data bytes, then only 5 of them; the socket stays open.
    Truncated,
    /// A reply header announcing a total length of 0x7FFF_FFF0; the socket stays open.
    Oversized,
    /// No answer to this command; the socket stays open.
    Stall,
    /// Close the connection.
    Close,
    /// Sleep this long, then perform the inner step (models a slow VM).
    Delayed(Duration, Box<Step>),
    /// Perform several steps for the same command, e.g. a reply followed by an injected event.
    Seq(Vec<Step>),
}

/// How the fake behaves on each accepted connection (every connection replays the script from the start).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Behaviour {
    /// Read whatever arrives, answer `HTTP/1.1 400 Bad Request`, close.
    Http,
    /// Accept and never write; hold the socket until the fake is dropped.
    Silent,
    /// Real handshake, then the steps apply to the incoming commands in order; afterwards stall.
    HandshakeThen(Vec<Step>),
    /// Real handshake; Version, IDSizes, Capabilities(New), AllThreads, EventRequest.Clear,
    /// ClearAllBreakpoints, Dispose and Resume are answered automatically; every other command
    /// takes the next step; afterwards stall.
    Auto { then: Vec<Step> },
    /// Real handshake; commands are auto-answered (as in `Auto`, unknown ones get NOT_IMPLEMENTED)
    /// until IDSizes has been answered and `skip` further commands have arrived; from then on
    /// EVERY command takes the next step. `AfterAttach { skip: 0, then: vec![Step::Truncated] }`
    /// means "the first command after attach gets a truncated reply".
    AfterAttach { skip: usize, then: Vec<Step> },
    /// As `Auto`, with a model of these threads' suspend counts (all 0 at
    /// the start, shared by every connection): AllThreads lists them, and
    /// VirtualMachine.Suspend/Resume and ThreadReference.Name, Suspend,
    /// Resume, Status and SuspendCount are answered from the model, as a
    /// JVM would (a resume never takes a count below 0; an unknown thread
    /// is INVALID_THREAD). Every other command takes the next step.
    Vm { threads: Vec<u64>, then: Vec<Step> },
}

/// JDWP error INVALID_THREAD.
pub const ERROR_INVALID_THREAD: u16 = 10;

/// Options beyond the behaviour.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FakeOpts {
    /// The size of every id in the IDSizes reply (8 like HotSpot, or e.g. 4).
    pub id_size: i32,
}

impl Default for FakeOpts {
    fn default() -> Self {
        FakeOpts { id_size: 8 }
    }
}

/// One command packet received by the fake.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Received {
    /// 0-based index of the connection it came on.
    pub conn: usize,
    /// Packet id.
    pub id: u32,
    /// Command set.
    pub set: u8,
    /// Command.
    pub cmd: u8,
    /// Command data.
    pub data: Vec<u8>,
}

impl Received {
    /// `(set, cmd)`, comparable with the [`cmd`] constants.
    pub fn command(&self) -> (u8, u8) {
        (self.set, self.cmd)
    }
}

#[derive(Debug, Default)]
struct Log {
    connections: usize,
    handshakes: usize,
    /// Connections whose peer closed or that the fake closed.
    closed: usize,
    received: Vec<Received>,
    /// Bytes received on non-JDWP paths (Http) or a bad handshake.
    raw: Vec<Vec<u8>>,
}

#[derive(Debug, Default)]
struct State {
    log: Mutex<Log>,
    changed: Condvar,
    stopping: AtomicBool,
    /// Clones of every accepted stream, shut down on drop so blocked threads wake.
    streams: Mutex<Vec<TcpStream>>,
    /// `Behaviour::Vm`'s threads and their suspend counts.
    counts: Mutex<Vec<(u64, i32)>>,
    /// A clone of the last handshaken stream, for [`FakeJdwp::inject`];
    /// held while anything is written, so packets never interleave.
    writer: Mutex<Option<TcpStream>>,
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

impl State {
    fn record(&self, update: impl FnOnce(&mut Log)) {
        update(&mut lock(&self.log));
        self.changed.notify_all();
    }
}

/// A running fake JDWP peer on 127.0.0.1. Dropping it closes the listener and every connection.
#[derive(Debug)]
pub struct FakeJdwp {
    port: u16,
    state: Arc<State>,
}

impl FakeJdwp {
    /// Starts a fake with the default options (8-byte ids).
    pub fn start(behaviour: Behaviour) -> FakeJdwp {
        FakeJdwp::start_with(behaviour, FakeOpts::default())
    }

    /// Starts a fake listening on an ephemeral port of 127.0.0.1.
    pub fn start_with(behaviour: Behaviour, opts: FakeOpts) -> FakeJdwp {
        let listener = TcpListener::bind("127.0.0.1:0")
            .unwrap_or_else(|e| panic!("fake JDWP: cannot bind 127.0.0.1:0: {e}"));
        let port = listener
            .local_addr()
            .unwrap_or_else(|e| panic!("fake JDWP: no local address: {e}"))
            .port();
        let state = Arc::new(State::default());
        if let Behaviour::Vm { threads, .. } = &behaviour {
            *lock(&state.counts) = threads.iter().map(|&t| (t, 0)).collect();
        }
        let accept_state = Arc::clone(&state);
        std::thread::spawn(move || {
            for (conn, stream) in listener.incoming().enumerate() {
                if accept_state.stopping.load(Ordering::SeqCst) {
                    break;
                }
                let Ok(stream) = stream else { continue };
                {
                    // Checked under the lock Drop takes, so no stream escapes the shutdown.
                    let mut streams = lock(&accept_state.streams);
                    if accept_state.stopping.load(Ordering::SeqCst) {
                        break;
                    }
                    if let Ok(clone) = stream.try_clone() {
                        streams.push(clone);
                    }
                }
                accept_state.record(|log| log.connections += 1);
                let conn_state = Arc::clone(&accept_state);
                let behaviour = behaviour.clone();
                let opts = opts.clone();
                std::thread::spawn(move || {
                    serve(conn, stream, &behaviour, &opts, &conn_state);
                    conn_state.record(|log| log.closed += 1);
                });
            }
        });
        FakeJdwp { port, state }
    }

    /// The port on 127.0.0.1.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// `127.0.0.1:<port>`.
    pub fn address(&self) -> String {
        format!("127.0.0.1:{}", self.port)
    }

    /// Every command packet received so far, over all connections.
    pub fn received(&self) -> Vec<Received> {
        lock(&self.state.log).received.clone()
    }

    /// `(set, cmd)` of every command received so far.
    pub fn commands(&self) -> Vec<(u8, u8)> {
        self.received().iter().map(Received::command).collect()
    }

    /// Accepted connections so far.
    pub fn connections(&self) -> usize {
        lock(&self.state.log).connections
    }

    /// Connections that completed a valid handshake.
    pub fn handshakes(&self) -> usize {
        lock(&self.state.log).handshakes
    }

    /// Connections that have ended (peer closed, `Step::Close`, or a bad handshake).
    pub fn closed_connections(&self) -> usize {
        lock(&self.state.log).closed
    }

    /// `Behaviour::Vm`'s threads with their suspend counts now.
    pub fn suspend_counts(&self) -> Vec<(u64, i32)> {
        lock(&self.state.counts).clone()
    }

    /// Sends `packet` (e.g. an event composite) on the last handshaken
    /// connection, between two whole replies; with `suspend_all`, every
    /// modelled thread's count goes up first, as a JVM suspends before it
    /// sends a SUSPEND_ALL event.
    pub fn inject(&self, packet: &[u8], suspend_all: bool) {
        if suspend_all {
            lock(&self.state.counts).iter_mut().for_each(|c| c.1 += 1);
        }
        let mut writer = lock(&self.state.writer);
        let stream = writer
            .as_mut()
            .expect("fake JDWP: no handshaken connection");
        stream
            .write_all(packet)
            .and_then(|()| stream.flush())
            .unwrap_or_else(|e| panic!("fake JDWP: inject: {e}"));
    }

    /// Sends `packet` like [`FakeJdwp::inject`], raising only `thread`'s
    /// count first, as a JVM does before an EVENT_THREAD event.
    pub fn inject_holding(&self, packet: &[u8], thread: u64) {
        lock(&self.state.counts)
            .iter_mut()
            .filter(|c| c.0 == thread)
            .for_each(|c| c.1 += 1);
        self.inject(packet, false);
    }

    /// Raw bytes seen by `Http` mode or a rejected handshake, one entry per connection.
    pub fn raw_received(&self) -> Vec<Vec<u8>> {
        lock(&self.state.log).raw.clone()
    }

    /// Waits until `pred` holds for the received commands; panics with them on timeout.
    #[track_caller]
    pub fn wait_until(&self, what: &str, timeout: Duration, pred: impl Fn(&FakeView) -> bool) {
        let deadline = Instant::now() + timeout;
        let mut log = lock(&self.state.log);
        loop {
            let view = FakeView {
                received: &log.received,
                connections: log.connections,
                handshakes: log.handshakes,
                closed: log.closed,
            };
            if pred(&view) {
                return;
            }
            let now = Instant::now();
            if now >= deadline {
                panic!(
                    "fake JDWP: timed out after {timeout:?} waiting for {what}; connections {}, \
                     handshakes {}, closed {}, commands {:?}",
                    log.connections,
                    log.handshakes,
                    log.closed,
                    log.received
                        .iter()
                        .map(Received::command)
                        .collect::<Vec<_>>()
                );
            }
            log = self
                .state
                .changed
                .wait_timeout(log, deadline - now)
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .0;
        }
    }

    /// Waits until a command `(set, cmd)` has been received; returns the first one.
    #[track_caller]
    pub fn wait_for_command(&self, command: (u8, u8), timeout: Duration) -> Received {
        self.wait_until(&format!("command {command:?}"), timeout, |view| {
            view.received.iter().any(|r| r.command() == command)
        });
        self.received()
            .into_iter()
            .find(|r| r.command() == command)
            .unwrap_or_else(|| panic!("command {command:?} vanished"))
    }
}

/// A snapshot of the fake's log, for [`FakeJdwp::wait_until`].
#[derive(Debug)]
pub struct FakeView<'a> {
    /// Commands received so far.
    pub received: &'a [Received],
    /// Accepted connections.
    pub connections: usize,
    /// Valid handshakes.
    pub handshakes: usize,
    /// Ended connections.
    pub closed: usize,
}

impl Drop for FakeJdwp {
    fn drop(&mut self) {
        let mut streams = lock(&self.state.streams);
        self.state.stopping.store(true, Ordering::SeqCst);
        for stream in streams.drain(..) {
            let _ = stream.shutdown(Shutdown::Both);
        }
        drop(streams);
        // Wake the accept loop so it sees `stopping` and drops the listener.
        let _ = TcpStream::connect(("127.0.0.1", self.port));
    }
}

// ---- packet builders -------------------------------------------------------------------------

/// A JDWP string: u32 big-endian byte length, then UTF-8.
pub fn jdwp_string(text: &str) -> Vec<u8> {
    let len = u32::try_from(text.len()).unwrap_or(u32::MAX);
    let mut out = len.to_be_bytes().to_vec();
    out.extend_from_slice(text.as_bytes());
    out
}

/// A reply packet: header (length, id, flags 0x80, error code) then `data`.
pub fn reply_packet(id: u32, error: u16, data: &[u8]) -> Vec<u8> {
    let len = u32::try_from(HEADER_LEN + data.len()).unwrap_or(u32::MAX);
    let mut out = Vec::with_capacity(HEADER_LEN + data.len());
    out.extend_from_slice(&len.to_be_bytes());
    out.extend_from_slice(&id.to_be_bytes());
    out.push(REPLY_FLAG);
    out.extend_from_slice(&error.to_be_bytes());
    out.extend_from_slice(data);
    out
}

/// A command packet: header (length, id, flags 0, set, cmd) then `data` — e.g. an event to inject with [`Step::Garbage`].
pub fn command_packet(id: u32, (set, cmd): (u8, u8), data: &[u8]) -> Vec<u8> {
    let len = u32::try_from(HEADER_LEN + data.len()).unwrap_or(u32::MAX);
    let mut out = Vec::with_capacity(HEADER_LEN + data.len());
    out.extend_from_slice(&len.to_be_bytes());
    out.extend_from_slice(&id.to_be_bytes());
    out.push(0);
    out.push(set);
    out.push(cmd);
    out.extend_from_slice(data);
    out
}

/// VirtualMachine.Version reply data: "Fake JVM", JDWP 17.0, "17.0.0", "FakeVM".
pub fn version_reply() -> Vec<u8> {
    let mut out = jdwp_string("Fake JVM");
    out.extend_from_slice(&17i32.to_be_bytes());
    out.extend_from_slice(&0i32.to_be_bytes());
    out.extend_from_slice(&jdwp_string("17.0.0"));
    out.extend_from_slice(&jdwp_string("FakeVM"));
    out
}

/// VirtualMachine.IDSizes reply data with every size 8 (field, method, object, reference type, frame).
pub fn id_sizes_reply() -> Vec<u8> {
    id_sizes_reply_with(8)
}

/// VirtualMachine.IDSizes reply data with every size `size` (e.g. 4).
pub fn id_sizes_reply_with(size: i32) -> Vec<u8> {
    (0..5).flat_map(|_| size.to_be_bytes()).collect()
}

/// VirtualMachine.Capabilities reply data: 7 false booleans.
pub fn capabilities_reply() -> Vec<u8> {
    vec![0; 7]
}

/// VirtualMachine.CapabilitiesNew reply data: 32 false booleans.
pub fn capabilities_new_reply() -> Vec<u8> {
    vec![0; 32]
}

/// VirtualMachine.AllThreads reply data: zero threads.
pub fn all_threads_reply() -> Vec<u8> {
    0i32.to_be_bytes().to_vec()
}

/// The automatic answer for a known command, if any.
pub fn auto_reply(command: (u8, u8), opts: &FakeOpts) -> Option<Vec<u8>> {
    match command {
        cmd::VERSION => Some(version_reply()),
        cmd::ID_SIZES => Some(id_sizes_reply_with(opts.id_size)),
        cmd::CAPABILITIES => Some(capabilities_reply()),
        cmd::CAPABILITIES_NEW => Some(capabilities_new_reply()),
        cmd::ALL_THREADS => Some(all_threads_reply()),
        cmd::EVENT_CLEAR | cmd::CLEAR_ALL_BREAKPOINTS | cmd::DISPOSE | cmd::RESUME => {
            Some(Vec::new())
        }
        _ => None,
    }
}

// ---- connection handling ---------------------------------------------------------------------

/// Reads one command packet; `None` on EOF, error or an impossible length.
fn read_packet(stream: &mut TcpStream) -> Option<(u32, u8, u8, u8, Vec<u8>)> {
    let mut header = [0u8; HEADER_LEN];
    stream.read_exact(&mut header).ok()?;
    let len = u32::from_be_bytes([header[0], header[1], header[2], header[3]]) as usize;
    let id = u32::from_be_bytes([header[4], header[5], header[6], header[7]]);
    let flags = header[8];
    if !(HEADER_LEN..=16 * 1024 * 1024).contains(&len) {
        return None;
    }
    let mut data = vec![0u8; len - HEADER_LEN];
    stream.read_exact(&mut data).ok()?;
    Some((id, flags, header[9], header[10], data))
}

/// Keeps reading (and recording) until the peer goes away, never answering.
fn stall(conn: usize, stream: &mut TcpStream, state: &State) {
    while let Some((id, flags, set, cmd, data)) = read_packet(stream) {
        if flags & REPLY_FLAG == 0 {
            state.record(|log| {
                log.received.push(Received {
                    conn,
                    id,
                    set,
                    cmd,
                    data,
                })
            });
        }
    }
}

/// Outcome of one step.
enum Flow {
    Continue,
    Closed,
}

fn apply(step: &Step, id: u32, stream: &mut TcpStream, state: &State) -> Flow {
    let _writing = lock(&state.writer);
    let written = match step {
        Step::Reply(data) => stream.write_all(&reply_packet(id, 0, data)),
        Step::ReplyError(code) => stream.write_all(&reply_packet(id, *code, &[])),
        Step::Garbage(bytes) => stream.write_all(bytes),
        Step::Truncated => {
            let mut packet = reply_packet(id, 0, &[0u8; 100]);
            packet.truncate(HEADER_LEN + 5);
            stream.write_all(&packet)
        }
        Step::Oversized => {
            let mut packet = reply_packet(id, 0, &[]);
            packet[..4].copy_from_slice(&0x7FFF_FFF0u32.to_be_bytes());
            stream.write_all(&packet)
        }
        Step::Stall => Ok(()),
        Step::Close => {
            let _ = stream.shutdown(Shutdown::Both);
            return Flow::Closed;
        }
        Step::Delayed(delay, inner) => {
            // The scripted slowness is the behaviour under test: a peer
            // that answers late, not a wait for something to happen.
            drop(_writing);
            std::thread::sleep(*delay);
            return apply(inner, id, stream, state);
        }
        Step::Seq(steps) => {
            drop(_writing);
            for inner in steps {
                if let Flow::Closed = apply(inner, id, stream, state) {
                    return Flow::Closed;
                }
            }
            return Flow::Continue;
        }
    };
    match written.and_then(|()| stream.flush()) {
        Ok(()) => Flow::Continue,
        Err(_) => Flow::Closed,
    }
}

fn serve(
    conn: usize,
    mut stream: TcpStream,
    behaviour: &Behaviour,
    opts: &FakeOpts,
    state: &State,
) {
    let _ = stream.set_nodelay(true);
    match behaviour {
        Behaviour::Http => {
            // Read what the client sends first (its handshake), then answer like an HTTP server.
            let _ = stream.set_read_timeout(Some(Duration::from_millis(500)));
            let mut buf = [0u8; 1024];
            let got = stream.read(&mut buf).unwrap_or(0);
            state.record(|log| log.raw.push(buf[..got].to_vec()));
            let _ = stream.write_all(HTTP_400);
            let _ = stream.flush();
            let _ = stream.shutdown(Shutdown::Both);
        }
        Behaviour::Silent => {
            let mut sink = [0u8; 1024];
            while matches!(stream.read(&mut sink), Ok(n) if n > 0) {}
        }
        Behaviour::HandshakeThen(_)
        | Behaviour::Auto { .. }
        | Behaviour::AfterAttach { .. }
        | Behaviour::Vm { .. } => {
            let mut greeting = [0u8; HANDSHAKE.len()];
            if stream.read_exact(&mut greeting).is_err() {
                return;
            }
            if &greeting != HANDSHAKE {
                state.record(|log| log.raw.push(greeting.to_vec()));
                let _ = stream.shutdown(Shutdown::Both);
                return;
            }
            if stream
                .write_all(HANDSHAKE)
                .and_then(|()| stream.flush())
                .is_err()
            {
                return;
            }
            state.record(|log| log.handshakes += 1);
            *lock(&state.writer) = stream.try_clone().ok();
            run_script(conn, &mut stream, behaviour, opts, state);
        }
    }
}

fn run_script(
    conn: usize,
    stream: &mut TcpStream,
    behaviour: &Behaviour,
    opts: &FakeOpts,
    state: &State,
) {
    let (steps, auto, mut skip) = match behaviour {
        Behaviour::HandshakeThen(steps) => (steps.as_slice(), Auto::Never, 0),
        Behaviour::Auto { then } => (then.as_slice(), Auto::Always, 0),
        Behaviour::AfterAttach { skip, then } => (then.as_slice(), Auto::UntilAttached, *skip),
        Behaviour::Vm { then, .. } => (then.as_slice(), Auto::Model, 0),
        Behaviour::Http | Behaviour::Silent => return,
    };
    let mut attached = false;
    let mut next = steps.iter();
    while let Some((id, flags, set, cmd, data)) = read_packet(stream) {
        if flags & REPLY_FLAG != 0 {
            continue; // a reply to something we sent (e.g. an injected command); ignore
        }
        state.record(|log| {
            log.received.push(Received {
                conn,
                id,
                set,
                cmd,
                data: data.clone(),
            });
        });
        let command = (set, cmd);
        if let Auto::Model = auto
            && let Some(answer) = model_reply(command, &data, opts, state)
        {
            let step = match answer {
                Ok(data) => Step::Reply(data),
                Err(code) => Step::ReplyError(code),
            };
            if let Flow::Closed = apply(&step, id, stream, state) {
                return;
            }
            continue;
        }
        let automatic = match auto {
            Auto::Never => false,
            Auto::Always | Auto::Model => auto_reply(command, opts).is_some(),
            Auto::UntilAttached => {
                if !attached {
                    attached = command == cmd::ID_SIZES;
                    true
                } else if skip > 0 {
                    skip -= 1;
                    true
                } else {
                    false
                }
            }
        };
        let step = if automatic {
            match auto_reply(command, opts) {
                Some(data) => Step::Reply(data),
                None => Step::ReplyError(ERROR_NOT_IMPLEMENTED),
            }
        } else {
            match next.next() {
                Some(step) => step.clone(),
                None => {
                    stall(conn, stream, state);
                    return;
                }
            }
        };
        if let Flow::Closed = apply(&step, id, stream, state) {
            return;
        }
    }
}

/// `Behaviour::Vm`'s answer from its thread model, if the command is one
/// it models: the reply data, or a JDWP error code.
fn model_reply(
    command: (u8, u8),
    data: &[u8],
    opts: &FakeOpts,
    state: &State,
) -> Option<Result<Vec<u8>, u16>> {
    let width = usize::try_from(opts.id_size).unwrap_or(8);
    let mut counts = lock(&state.counts);
    let thread = || {
        let id = data
            .get(..width)?
            .iter()
            .fold(0u64, |n, b| n << 8 | u64::from(*b));
        counts.iter().position(|(t, _)| *t == id)
    };
    let at = thread();
    let one =
        |at: Option<usize>, f: &dyn Fn(usize) -> Vec<u8>| at.map(f).ok_or(ERROR_INVALID_THREAD);
    let answer = match command {
        cmd::ALL_THREADS => {
            let mut out = (counts.len() as i32).to_be_bytes().to_vec();
            for (t, _) in counts.iter() {
                out.extend_from_slice(&t.to_be_bytes()[8 - width..]);
            }
            Ok(out)
        }
        cmd::SUSPEND | cmd::RESUME => {
            let step = if command == cmd::SUSPEND { 1 } else { -1 };
            counts.iter_mut().for_each(|c| c.1 = (c.1 + step).max(0));
            Ok(Vec::new())
        }
        cmd::THREAD_SUSPEND | cmd::THREAD_RESUME => match at {
            Some(i) => {
                let step = if command == cmd::THREAD_SUSPEND {
                    1
                } else {
                    -1
                };
                counts[i].1 = (counts[i].1 + step).max(0);
                Ok(Vec::new())
            }
            None => Err(ERROR_INVALID_THREAD),
        },
        cmd::THREAD_NAME => one(at, &|i| jdwp_string(&format!("thread-{}", counts[i].0))),
        cmd::THREAD_SUSPEND_COUNT => one(at, &|i| counts[i].1.to_be_bytes().to_vec()),
        cmd::THREAD_STATUS => one(at, &|i| {
            // RUNNING (1); SUSPEND_STATUS_SUSPENDED (1) while counted.
            let mut out = 1i32.to_be_bytes().to_vec();
            out.extend_from_slice(&i32::from(counts[i].1 > 0).to_be_bytes());
            out
        }),
        _ => return None,
    };
    Some(answer)
}

#[derive(Clone, Copy)]
enum Auto {
    Never,
    Always,
    UntilAttached,
    /// `Always`, with `Behaviour::Vm`'s thread model answered first.
    Model,
}
