//! The Connection actor: sole owner of one JVM's socket. One reader task
//! owns the read half, turns bytes into packets, hands replies to the actor
//! and event composites straight to EventDispatch (one hop less per hit;
//! composites that arrive while no EventDispatch is set are kept, in
//! order). The actor owns the write half: it matches replies to requests
//! by packet id, keeps a bounded window of requests in flight, expires
//! overdue ones, refuses mutations in read-only mode, and opens one span
//! per round trip. What it sends while handling its mailbox is written in
//! one non-blocking write once the requests queued behind it are handled
//! (a `Flush` it sends itself); only when the socket would block does a
//! helper task finish the write, and the write half comes back with it.
//!
//! It must not interpret replies (callers decode them) or block its mailbox
//! on socket I/O.

pub mod burst;
pub mod dial;
mod request;
pub mod window;

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, RwLock};
use std::time::{Duration, Instant};

use ractor::{Actor, ActorProcessingErr, ActorRef, RpcReplyPort};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::net::tcp::{OwnedReadHalf, OwnedWriteHalf};
use tracing::Span;

use crate::actors::error::JdwpError;
use crate::actors::events::EventsMsg;
use crate::jdwp::command::encode_request;
use crate::jdwp::packet::{CommandPacket, DEFAULT_MAX_PACKET, FrameDecoder, Packet, ReplyPacket};
use crate::jdwp::{Command, ErrorCode, IdSizes};
use crate::telemetry::{RoundTrip, RoundTripStart};
use request::{decoded, gone};
use window::Window;

/// Default number of requests in flight at once.
pub const DEFAULT_WINDOW: usize = 32;
/// Default time a JVM gets to answer one command.
pub const DEFAULT_REQUEST_TIMEOUT: Duration = Duration::from_secs(10);
/// How often overdue requests are looked for.
const TICK: Duration = Duration::from_millis(50);

/// Configuration of one connection.
#[derive(Debug, Clone)]
pub struct ConnectionConfig {
    pub host: String,
    pub port: u16,
    pub window: usize,
    pub request_timeout: Duration,
    pub read_only: bool,
    pub max_packet: u32,
}

impl ConnectionConfig {
    pub fn new(host: &str, port: u16) -> Self {
        Self {
            host: host.to_string(),
            port,
            window: DEFAULT_WINDOW,
            request_timeout: DEFAULT_REQUEST_TIMEOUT,
            read_only: false,
            max_packet: DEFAULT_MAX_PACKET,
        }
    }
}

/// One command on its way to the JVM.
pub struct Outbound {
    pub command_set: u8,
    pub command: u8,
    pub name: &'static str,
    pub data: Vec<u8>,
    pub timeout: Option<Duration>,
    /// The span the round trip's span is a child of.
    pub parent: Span,
    pub reply: RpcReplyPort<Result<Vec<u8>, JdwpError>>,
}

/// Messages of the Connection actor.
pub enum ConnectionMsg {
    /// Send a command and answer with the reply's data (or the failure).
    Send(Box<Outbound>),
    /// Send several commands, in this order (a `Burst`).
    SendMany(Vec<Outbound>),
    /// The replies of one socket read, in the order they arrived; sent by
    /// the reader task (which hands event composites to EventDispatch
    /// itself).
    Replies(Vec<ReplyPacket>),
    /// The reader task stopped: the peer closed, or sent bytes that are not
    /// JDWP. The connection ends with this reason.
    ReadEnded(String),
    /// A write could not complete; the connection ends.
    WriteFailed(String),
    /// Write what was sent while handling the messages before this one;
    /// sent by the actor to itself, so requests queued together go out in
    /// one write.
    Flush,
    /// A write the socket blocked on finished on its helper task, which
    /// hands the write half back.
    Written(OwnedWriteHalf),
    /// Look for overdue requests; sent by a timer.
    Tick,
    /// Route event composites to this EventDispatch from now on; sent by the
    /// Session whenever it (re)starts EventDispatch.
    SetEventSink(ActorRef<EventsMsg>),
    /// Report counters.
    Stats(RpcReplyPort<ConnectionStats>),
}

/// Counters of one connection.
#[derive(Debug, Clone, Default)]
pub struct ConnectionStats {
    pub in_flight: usize,
    pub queued: usize,
    pub high_water: usize,
    pub events_received: u64,
}

/// What the session and tools share about a connection without messaging
/// the actor.
#[derive(Debug)]
pub struct ConnectionShared {
    pub host: String,
    pub port: u16,
    pub read_only: bool,
    sizes: RwLock<IdSizes>,
    packets_sent: AtomicU64,
    bytes_sent: AtomicU64,
    /// Why the connection ended, once it has: what a request sent after
    /// that is told, rather than only that it is gone.
    ended: std::sync::OnceLock<String>,
}

impl ConnectionShared {
    /// Why the connection ended, if it has.
    pub fn end_reason(&self) -> Option<&str> {
        self.ended.get().map(String::as_str)
    }

    pub fn id_sizes(&self) -> IdSizes {
        self.sizes.read().map(|s| *s).unwrap_or_default()
    }

    pub fn set_id_sizes(&self, sizes: IdSizes) {
        if let Ok(mut s) = self.sizes.write() {
            *s = sizes;
        }
    }

    pub fn packets_sent(&self) -> u64 {
        self.packets_sent.load(Ordering::Relaxed)
    }

    pub fn bytes_sent(&self) -> u64 {
        self.bytes_sent.load(Ordering::Relaxed)
    }
}

/// A typed handle on a Connection: encode, send, await, decode.
#[derive(Clone)]
pub struct ConnectionHandle {
    actor: ActorRef<ConnectionMsg>,
    shared: Arc<ConnectionShared>,
}

impl ConnectionHandle {
    pub fn shared(&self) -> &Arc<ConnectionShared> {
        &self.shared
    }

    pub fn actor(&self) -> &ActorRef<ConnectionMsg> {
        &self.actor
    }

    /// Sends a typed command and decodes its reply. The packet is queued
    /// when this is called (not when the future is first polled), so
    /// commands issued one after another are written in that order and
    /// several can be in flight at once.
    pub fn send<C: Command>(
        &self,
        cmd: &C,
    ) -> impl Future<Output = Result<C::Reply, JdwpError>> + Send + 'static + use<C>
    where
        C::Reply: Send + 'static,
    {
        self.send_opt(cmd, None)
    }

    /// Like `send`, with a timeout other than the connection's default.
    pub fn send_within<C: Command>(
        &self,
        cmd: &C,
        timeout: Duration,
    ) -> impl Future<Output = Result<C::Reply, JdwpError>> + Send + 'static + use<C>
    where
        C::Reply: Send + 'static,
    {
        self.send_opt(cmd, Some(timeout))
    }

    fn send_opt<C: Command>(
        &self,
        cmd: &C,
        timeout: Option<Duration>,
    ) -> impl Future<Output = Result<C::Reply, JdwpError>> + Send + 'static + use<C>
    where
        C::Reply: Send + 'static,
    {
        let sizes = self.shared.id_sizes();
        decoded::<C, _>(
            self.raw(C::SET, C::ID, C::NAME, encode_request(cmd, sizes), timeout),
            sizes,
        )
    }

    /// Sends pre-encoded request data and returns the reply's data.
    pub fn raw(
        &self,
        command_set: u8,
        command: u8,
        name: &'static str,
        data: Vec<u8>,
        timeout: Option<Duration>,
    ) -> impl Future<Output = Result<Vec<u8>, JdwpError>> + Send + 'static + use<> {
        let (out, reply) = Outbound::with_reply(
            &self.shared,
            (command_set, command, name),
            data,
            timeout,
            Span::current(),
        );
        let shared = self.shared.clone();
        let sent = self
            .actor
            .send_message(ConnectionMsg::Send(Box::new(out)))
            .map_err(|_| gone(&shared, name, "the connection has ended"));
        async move {
            sent?;
            reply.await
        }
    }

    /// Counters of the connection.
    pub async fn stats(&self) -> Option<ConnectionStats> {
        ractor::call!(self.actor, ConnectionMsg::Stats).ok()
    }
}

/// The specification's name of a command set, for span attributes.
pub fn command_set_name(command_set: u8) -> &'static str {
    match command_set {
        1 => "VirtualMachine",
        2 => "ReferenceType",
        3 => "ClassType",
        4 => "ArrayType",
        5 => "InterfaceType",
        6 => "Method",
        8 => "Field",
        9 => "ObjectReference",
        10 => "StringReference",
        11 => "ThreadReference",
        12 => "ThreadGroupReference",
        13 => "ArrayReference",
        14 => "ClassLoaderReference",
        15 => "EventRequest",
        16 => "StackFrame",
        17 => "ClassObjectReference",
        18 => "ModuleReference",
        64 => "Event",
        _ => "Unknown",
    }
}

/// The mutating commands read-only mode refuses, by (command set, command).
const MUTATIONS: &[(u8, u8)] = &[
    (1, 10),  // VirtualMachine.Exit
    (1, 18),  // VirtualMachine.RedefineClasses
    (3, 2),   // ClassType.SetValues
    (3, 3),   // ClassType.InvokeMethod
    (3, 4),   // ClassType.NewInstance
    (4, 1),   // ArrayType.NewInstance
    (5, 1),   // InterfaceType.InvokeMethod
    (9, 3),   // ObjectReference.SetValues
    (9, 6),   // ObjectReference.InvokeMethod
    (11, 10), // ThreadReference.Stop
    (11, 11), // ThreadReference.Interrupt
    (11, 14), // ThreadReference.ForceEarlyReturn
    (13, 3),  // ArrayReference.SetValues
    (16, 2),  // StackFrame.SetValues
    (16, 4),  // StackFrame.PopFrames
];

/// True when a command changes the debuggee's state or runs its code.
pub fn is_mutation(command_set: u8, command: u8) -> bool {
    MUTATIONS.contains(&(command_set, command))
}

/// The Connection actor (its struct is configuration only).
pub struct Connection;

/// Arguments: the handshaken stream and the config.
pub struct ConnectionArgs {
    pub stream: TcpStream,
    pub shared: Arc<ConnectionShared>,
    pub config: ConnectionConfig,
}

/// A request in the window.
struct Pending {
    name: &'static str,
    span: RoundTrip,
    reply: Option<RpcReplyPort<Result<Vec<u8>, JdwpError>>>,
    command_set: u8,
    command: u8,
    data: Vec<u8>,
}

pub struct ConnectionState {
    config: ConnectionConfig,
    shared: Arc<ConnectionShared>,
    window: Window<Pending>,
    myself: ActorRef<ConnectionMsg>,
    /// The socket's write half; `None` while a helper task finishes a
    /// write the socket blocked on.
    write_half: Option<OwnedWriteHalf>,
    /// Encoded packets not written yet.
    out: Vec<u8>,
    /// A `Flush` is in the mailbox.
    flush_queued: bool,
    events: Arc<Mutex<EventRoute>>,
}

/// Where the reader task sends event composites, shared with the actor
/// (which sets the sink) under one lock, so composites reach EventDispatch
/// in the order they arrived even across a restart of it.
#[derive(Default)]
struct EventRoute {
    sink: Option<ActorRef<EventsMsg>>,
    /// Composites that arrived while no EventDispatch was available; they
    /// are delivered when one is set, never dropped (a dropped suspending
    /// event is a thread nobody resumes).
    held: Vec<(Vec<u8>, Instant)>,
    received: u64,
}

impl EventRoute {
    /// Hands one composite on, or keeps it for the next EventDispatch.
    fn deliver(&mut self, data: Vec<u8>, received: Instant) {
        self.received += 1;
        match &self.sink {
            Some(sink) => {
                if let Err(ractor::MessagingErr::SendErr(EventsMsg::Composite { data, received })) =
                    sink.send_message(EventsMsg::Composite { data, received })
                {
                    // EventDispatch is restarting; keep the composite for
                    // its successor.
                    self.sink = None;
                    self.held.push((data, received));
                }
            }
            None => self.held.push((data, received)),
        }
    }

    /// Routes composites to `sink` from now on, those kept first.
    fn set_sink(&mut self, sink: ActorRef<EventsMsg>) {
        for (data, at) in self.held.drain(..) {
            let _ = sink.send_message(EventsMsg::Composite { data, received: at });
        }
        self.sink = Some(sink);
    }
}

fn lock_route(route: &Mutex<EventRoute>) -> std::sync::MutexGuard<'_, EventRoute> {
    route
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

impl Connection {
    /// Spawns a Connection linked to `supervisor` and returns its handle.
    pub async fn spawn(
        stream: TcpStream,
        config: ConnectionConfig,
        supervisor: ractor::ActorCell,
    ) -> Result<ConnectionHandle, ractor::SpawnErr> {
        Self::spawn_inner(stream, config, Some(supervisor)).await
    }

    /// Spawns a Connection nobody supervises (a short-lived check).
    pub async fn spawn_unlinked(
        stream: TcpStream,
        config: ConnectionConfig,
    ) -> Result<ConnectionHandle, ractor::SpawnErr> {
        Self::spawn_inner(stream, config, None).await
    }

    async fn spawn_inner(
        stream: TcpStream,
        config: ConnectionConfig,
        supervisor: Option<ractor::ActorCell>,
    ) -> Result<ConnectionHandle, ractor::SpawnErr> {
        let shared = Arc::new(ConnectionShared {
            host: config.host.clone(),
            port: config.port,
            read_only: config.read_only,
            sizes: RwLock::new(IdSizes::HOTSPOT),
            packets_sent: AtomicU64::new(0),
            bytes_sent: AtomicU64::new(0),
            ended: std::sync::OnceLock::new(),
        });
        let args = ConnectionArgs {
            stream,
            shared: shared.clone(),
            config,
        };
        let (actor, _) = match supervisor {
            Some(sup) => Actor::spawn_linked(None, Connection, args, sup).await?,
            None => Actor::spawn(None, Connection, args).await?,
        };
        Ok(ConnectionHandle { actor, shared })
    }
}

impl Actor for Connection {
    type Msg = ConnectionMsg;
    type State = ConnectionState;
    type Arguments = ConnectionArgs;

    async fn pre_start(
        &self,
        myself: ActorRef<Self::Msg>,
        args: Self::Arguments,
    ) -> Result<Self::State, ActorProcessingErr> {
        let (read_half, write_half) = args.stream.into_split();
        let events = Arc::new(Mutex::new(EventRoute::default()));
        tokio::spawn(read_loop(
            read_half,
            args.config.max_packet,
            myself.clone(),
            events.clone(),
        ));
        myself.send_interval(TICK, || ConnectionMsg::Tick);
        Ok(ConnectionState {
            window: Window::new(args.config.window),
            config: args.config,
            shared: args.shared,
            myself,
            write_half: Some(write_half),
            out: Vec::with_capacity(4096),
            flush_queued: false,
            events,
        })
    }

    async fn handle(
        &self,
        myself: ActorRef<Self::Msg>,
        message: Self::Msg,
        state: &mut Self::State,
    ) -> Result<(), ActorProcessingErr> {
        match message {
            ConnectionMsg::Send(out) => state.submit(*out),
            ConnectionMsg::SendMany(outs) => outs.into_iter().for_each(|o| state.submit(o)),
            ConnectionMsg::Replies(replies) => {
                for r in replies {
                    state.complete(r.id, r.error_code, r.data);
                }
            }
            ConnectionMsg::Tick => state.expire(),
            ConnectionMsg::Flush => {
                state.flush_queued = false;
                state.flush();
            }
            ConnectionMsg::Written(half) => {
                state.write_half = Some(half);
                state.flush();
            }
            ConnectionMsg::SetEventSink(sink) => lock_route(&state.events).set_sink(sink),
            ConnectionMsg::Stats(reply) => {
                let _ = reply.send(ConnectionStats {
                    in_flight: state.window.in_flight(),
                    queued: state.window.queued(),
                    high_water: state.window.high_water(),
                    events_received: lock_route(&state.events).received,
                });
            }
            ConnectionMsg::ReadEnded(reason) | ConnectionMsg::WriteFailed(reason) => {
                let _ = state.shared.ended.set(reason.clone());
                state.fail_all(&reason);
                myself.stop(Some(reason));
            }
        }
        Ok(())
    }

    async fn post_stop(
        &self,
        _: ActorRef<Self::Msg>,
        state: &mut Self::State,
    ) -> Result<(), ActorProcessingErr> {
        let _ = state.shared.ended.set("the session ended".into());
        state.fail_all("the session ended");
        Ok(())
    }
}

impl ConnectionState {
    fn submit(&mut self, out: Outbound) {
        let Outbound {
            command_set,
            command,
            name,
            data,
            timeout,
            parent,
            reply,
        } = out;
        if self.config.read_only && is_mutation(command_set, command) {
            let _ = reply.send(Err(JdwpError::ReadOnly { command: name }));
            return;
        }
        // Recorded straight into its export form, and only when its trace
        // is sampled: no `tracing` span per round trip.
        let span = RoundTrip::open(
            &parent,
            &RoundTripStart {
                method: name,
                service: command_set_name(command_set),
                host: &self.config.host,
                port: self.config.port,
                request_bytes: (data.len() + crate::jdwp::packet::HEADER_LEN) as u64,
            },
        );
        let pending = Pending {
            name,
            span,
            reply: Some(reply),
            command_set,
            command,
            data,
        };
        let timeout = timeout.unwrap_or(self.config.request_timeout);
        if let Some(id) = self.window.submit(pending, Instant::now(), timeout) {
            self.write(id);
        }
    }

    fn write(&mut self, id: u32) {
        let Some(p) = self.window.payload_mut(id) else {
            return;
        };
        p.span.sent(id);
        let packet = CommandPacket {
            id,
            command_set: p.command_set,
            command: p.command,
            data: std::mem::take(&mut p.data),
        }
        .encode();
        self.shared.packets_sent.fetch_add(1, Ordering::Relaxed);
        self.shared
            .bytes_sent
            .fetch_add(packet.len() as u64, Ordering::Relaxed);
        self.out.extend_from_slice(&packet);
        // Written once the messages already in the mailbox are handled: a
        // capture's reads and the resume behind them take one syscall.
        if !self.flush_queued {
            self.flush_queued = self.myself.send_message(ConnectionMsg::Flush).is_ok();
        }
    }

    /// Writes what is pending without blocking; what the socket does not
    /// take now is finished by a helper task, and bytes sent meanwhile
    /// wait for the write half to come back.
    fn flush(&mut self) {
        let Some(half) = &self.write_half else {
            return;
        };
        let mut written = 0;
        while written < self.out.len() {
            match half.try_write(&self.out[written..]) {
                Ok(n) => written += n,
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => break,
                Err(e) => {
                    self.out.clear();
                    let _ = self.myself.send_message(ConnectionMsg::WriteFailed(format!(
                        "writing to the JVM failed: {e}"
                    )));
                    return;
                }
            }
        }
        if written == self.out.len() {
            self.out.clear();
            self.out.shrink_to(64 * 1024);
            return;
        }
        // The peer is not reading fast enough: never block the mailbox.
        let rest = self.out.split_off(written);
        self.out.clear();
        if let Some(half) = self.write_half.take() {
            tokio::spawn(write_rest(half, rest, self.myself.clone()));
        }
    }

    fn complete(&mut self, id: u32, error_code: u16, data: Vec<u8>) {
        let Some(slot) = self.window.complete(id) else {
            tracing::debug!(id, "reply to a request no longer waiting (timed out)");
            return;
        };
        let mut p = slot.payload;
        let queued = slot.sent_at.map_or(0, |sent| {
            sent.duration_since(slot.queued_at).as_micros() as u64
        });
        p.span.replied(
            queued,
            (data.len() + crate::jdwp::packet::HEADER_LEN) as u64,
        );
        let result = if error_code == 0 {
            Ok(data)
        } else {
            let code = ErrorCode(error_code);
            p.span.failed(code.name());
            Err(JdwpError::Jvm {
                command: p.name,
                code,
            })
        };
        finish(p, result);
        for id in self.window.promote(Instant::now()) {
            self.write(id);
        }
    }

    fn expire(&mut self) {
        let now = Instant::now();
        for slot in self.window.expire(now) {
            let after = slot.deadline.duration_since(slot.queued_at);
            let mut p = slot.payload;
            p.span.failed("TIMEOUT");
            let command = p.name;
            finish(p, Err(JdwpError::Timeout { command, after }));
        }
        for id in self.window.promote(now) {
            self.write(id);
        }
    }

    fn fail_all(&mut self, reason: &str) {
        for slot in self.window.drain() {
            let mut p = slot.payload;
            p.span.failed("DISCONNECTED");
            let command = p.name;
            finish(
                p,
                Err(JdwpError::Disconnected {
                    command,
                    reason: reason.to_string(),
                }),
            );
        }
    }
}

/// Ends a round trip: its span closes first, then the caller gets the
/// result, so whoever sees the result also sees the span ended.
fn finish(mut p: Pending, result: Result<Vec<u8>, JdwpError>) {
    let reply = p.reply.take();
    drop(p);
    if let Some(reply) = reply {
        let _ = reply.send(result);
    }
}

/// The data of an event composite, the only command a JVM sends.
fn composite_data(cmd: CommandPacket) -> Option<Vec<u8>> {
    if (cmd.command_set, cmd.command) != (64, 100) {
        tracing::warn!(
            set = cmd.command_set,
            cmd = cmd.command,
            "the JVM sent a command that is not an event composite; ignored"
        );
        return None;
    }
    Some(cmd.data)
}

/// The one task that reads the socket. It never races a read against
/// anything else, so a packet is never half-consumed. Replies go to the
/// actor; composites straight to EventDispatch.
async fn read_loop(
    mut read: OwnedReadHalf,
    max_packet: u32,
    conn: ActorRef<ConnectionMsg>,
    events: Arc<Mutex<EventRoute>>,
) {
    let mut decoder = FrameDecoder::new(max_packet);
    let mut buf = vec![0u8; 64 * 1024];
    let reason = loop {
        match read.read(&mut buf).await {
            Ok(0) => {
                break if decoder.buffered() > 0 {
                    format!(
                        "the JVM closed the connection in the middle of a packet ({} bytes pending)",
                        decoder.buffered()
                    )
                } else {
                    "the JVM closed the connection".to_string()
                };
            }
            Ok(n) => decoder.push(&buf[..n]),
            Err(e) => break format!("reading from the JVM failed: {e}"),
        }
        // The replies of one read reach the actor in one message; those
        // before an event composite are handed on before it.
        let mut replies = Vec::new();
        let failed = loop {
            match decoder.next_packet() {
                Ok(Some(Packet::Command(cmd))) => {
                    if !hand_over(&conn, &mut replies) {
                        return;
                    }
                    if let Some(data) = composite_data(cmd) {
                        lock_route(&events).deliver(data, Instant::now());
                    }
                }
                Ok(Some(Packet::Reply(reply))) => replies.push(reply),
                Ok(None) => break None,
                Err(e) => break Some(format!("the peer sent bytes that are not JDWP: {e}")),
            }
        };
        if !hand_over(&conn, &mut replies) {
            return;
        }
        if let Some(reason) = failed {
            break reason;
        }
    };
    let _ = conn.send_message(ConnectionMsg::ReadEnded(reason));
}

/// Hands the replies read so far to the actor; false once it is gone.
fn hand_over(conn: &ActorRef<ConnectionMsg>, replies: &mut Vec<ReplyPacket>) -> bool {
    replies.is_empty()
        || conn
            .send_message(ConnectionMsg::Replies(std::mem::take(replies)))
            .is_ok()
}

/// Finishes a write the socket blocked on, off the actor, so a peer that
/// stops reading stalls this task and never the mailbox (whose timers keep
/// expiring requests); then hands the write half back.
async fn write_rest(mut half: OwnedWriteHalf, rest: Vec<u8>, conn: ActorRef<ConnectionMsg>) {
    let msg = match half.write_all(&rest).await {
        Ok(()) => ConnectionMsg::Written(half),
        Err(e) => ConnectionMsg::WriteFailed(format!("writing to the JVM failed: {e}")),
    };
    let _ = conn.send_message(msg);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mutations_are_the_state_changing_commands() {
        assert!(is_mutation(9, 6));
        assert!(is_mutation(16, 4));
        assert!(!is_mutation(1, 1));
        assert!(!is_mutation(11, 6));
    }
}
