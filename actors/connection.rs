//! The Connection actor: sole owner of one JVM's socket. One reader task
//! owns the read half and turns bytes into packets: it hands each reply to
//! the request waiting for it, matched by packet id in the window it
//! shares with the actor and every handle (`wire.rs`), and event
//! composites straight to EventDispatch (composites that arrive while no
//! EventDispatch is set are kept, in order). A handle submits its requests
//! into that bounded window itself, one span per round trip, refused in
//! read-only mode; the actor expires overdue ones and ends the connection.
//! What is sent goes to the outbox (`outbox.rs`): written at once when the
//! socket takes it, else by one writer task, so a peer that stops reading
//! stalls only that task (ADR 0016).
//!
//! It must not interpret replies (callers decode them) or block its mailbox
//! on socket I/O.

pub mod burst;
pub mod dial;
mod outbox;
mod request;
pub mod requests;
pub mod window;
mod wire;

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, RwLock};
use std::time::{Duration, Instant};

use ractor::{Actor, ActorProcessingErr, ActorRef, RpcReplyPort};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite};
use tokio::net::TcpStream;
use tracing::Span;

use crate::error::JdwpError;
use crate::jdwp::command::encode_request;
use crate::jdwp::packet::{CommandPacket, DEFAULT_MAX_PACKET, FrameDecoder, Packet};
use crate::jdwp::{Command, IdSizes};
use crate::lock::lock;
use outbox::{Outbox, write_loop};
use request::decoded;
use wire::Wire;

/// Default number of requests in flight at once.
pub const DEFAULT_WINDOW: usize = 32;
/// Default time a JVM gets to answer one command.
pub const DEFAULT_REQUEST_TIMEOUT: Duration = Duration::from_secs(10);
/// How often overdue requests are looked for.
const TICK: Duration = Duration::from_millis(50);

/// The byte stream a connection talks over, as its two halves: a TCP
/// socket's own halves, or any in-process stream (a test's simulated JVM
/// over `tokio::io::duplex`). The stream is already handshaken. Writes
/// must not be buffered inside the stream: nothing flushes them.
pub struct Transport {
    read: ReadHalf,
    write: outbox::WriteHalf,
}

type ReadHalf = Box<dyn AsyncRead + Send + Unpin>;

impl Transport {
    /// Any byte stream, split in halves that share it.
    pub fn new<S: AsyncRead + AsyncWrite + Send + 'static>(stream: S) -> Self {
        let (read, write) = tokio::io::split(stream);
        Self {
            read: Box::new(read),
            write: Box::new(write),
        }
    }
}

impl From<TcpStream> for Transport {
    /// A socket's own halves, which need no lock between them.
    fn from(stream: TcpStream) -> Self {
        let (read, write) = stream.into_split();
        Self {
            read: Box::new(read),
            write: Box::new(write),
        }
    }
}

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

/// Messages of the Connection actor. Requests do not go through it: a
/// handle submits them into the window it shares with the actor and the
/// reader (`wire.rs`), so a round trip costs no mailbox message.
pub enum ConnectionMsg {
    /// The reader task stopped: the peer closed, or sent bytes that are not
    /// JDWP. The connection ends with this reason.
    ReadEnded(String),
    /// A write could not complete (sent by the writer task); the
    /// connection ends.
    WriteFailed(String),
    /// Look for overdue requests; sent by a timer.
    Tick,
    /// Route event composites to this EventDispatch from now on; sent by the
    /// Session whenever it (re)starts EventDispatch.
    SetEventSink(EventSink),
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
    /// The event requests set through this connection and not cleared.
    pub requests: requests::RequestBook,
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
    /// The window and the outbox, shared with the actor and its reader:
    /// requests are submitted here directly, in the caller's turn.
    wire: Arc<Wire>,
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
        self.wire.submit([out]);
        reply
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
    stream: Transport,
    shared: Arc<ConnectionShared>,
    wire: Arc<Wire>,
    config: ConnectionConfig,
}

pub struct ConnectionState {
    shared: Arc<ConnectionShared>,
    /// The window and the outbox, shared with the reader task.
    wire: Arc<Wire>,
    events: Arc<Mutex<EventRoute>>,
    /// The reader task, which holds the socket's read half.
    reader: tokio::task::AbortHandle,
}

impl Drop for ConnectionState {
    /// However the actor ends (stopped, or killed with its Session, which
    /// skips `post_stop`): every request still waiting is answered that
    /// the session ended, the writer ends (closing the socket's write
    /// half) and the reader is stopped (closing the read half), so no
    /// caller waits for a peer that may never speak again, and the JVM
    /// sees its debugger leave.
    fn drop(&mut self) {
        let reason = self.shared.ended.get_or_init(|| "the session ended".into());
        self.wire.fail_all(reason);
        self.wire.outbox.close();
        self.reader.abort();
    }
}

/// An event composite as it came off the socket, undecoded, with the
/// moment it arrived.
pub struct CompositeArrived {
    pub data: Vec<u8>,
    pub received: Instant,
}

/// Where the Connection hands event composites: EventDispatch, seen only
/// through the one message it takes from us, so this room imports no
/// actor above it.
pub type EventSink = ractor::DerivedActorRef<CompositeArrived>;

/// Where the reader task sends event composites, shared with the actor
/// (which sets the sink) under one lock, so composites reach EventDispatch
/// in the order they arrived even across a restart of it.
#[derive(Default)]
struct EventRoute {
    sink: Option<EventSink>,
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
                if let Err(ractor::MessagingErr::SendErr(CompositeArrived { data, received })) =
                    sink.send_message(CompositeArrived { data, received })
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
    fn set_sink(&mut self, sink: EventSink) {
        for (data, at) in self.held.drain(..) {
            let _ = sink.send_message(CompositeArrived { data, received: at });
        }
        self.sink = Some(sink);
    }
}

impl Connection {
    /// Spawns a Connection linked to `supervisor` and returns its handle.
    pub async fn spawn(
        stream: impl Into<Transport>,
        config: ConnectionConfig,
        supervisor: ractor::ActorCell,
    ) -> Result<ConnectionHandle, ractor::SpawnErr> {
        Self::spawn_inner(stream.into(), config, Some(supervisor)).await
    }

    /// Spawns a Connection nobody supervises (a short-lived check).
    pub async fn spawn_unlinked(
        stream: impl Into<Transport>,
        config: ConnectionConfig,
    ) -> Result<ConnectionHandle, ractor::SpawnErr> {
        Self::spawn_inner(stream.into(), config, None).await
    }

    async fn spawn_inner(
        stream: Transport,
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
            requests: requests::RequestBook::default(),
        });
        let wire = Arc::new(Wire::new(
            config.window,
            config.request_timeout,
            shared.clone(),
            Arc::new(Outbox::default()),
        ));
        let args = ConnectionArgs {
            stream,
            shared: shared.clone(),
            wire: wire.clone(),
            config,
        };
        let spawned = match supervisor {
            Some(sup) => Actor::spawn_linked(None, Connection, args, sup).await,
            None => Actor::spawn(None, Connection, args).await,
        };
        let (actor, _) = spawned.inspect_err(|_| {
            // No actor will ever fail what a handle could submit.
            wire.fail_all("the connection could not start");
            wire.outbox.close();
        })?;
        Ok(ConnectionHandle {
            actor,
            shared,
            wire,
        })
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
        let Transport {
            read: read_half,
            write: write_half,
        } = args.stream;
        let events = Arc::new(Mutex::new(EventRoute::default()));
        let wire = args.wire;
        let outbox = wire.outbox.clone();
        let reader = tokio::spawn(read_loop(
            read_half,
            args.config.max_packet,
            Reader {
                conn: myself.clone(),
                wire: wire.clone(),
                events: events.clone(),
            },
        ))
        .abort_handle();
        outbox.attach(write_half);
        tokio::spawn(write_loop(outbox, myself.clone()));
        myself.send_interval(TICK, || ConnectionMsg::Tick);
        Ok(ConnectionState {
            shared: args.shared,
            wire,
            events,
            reader,
        })
    }

    async fn handle(
        &self,
        myself: ActorRef<Self::Msg>,
        message: Self::Msg,
        state: &mut Self::State,
    ) -> Result<(), ActorProcessingErr> {
        match message {
            ConnectionMsg::Tick => state.wire.expire(),
            ConnectionMsg::SetEventSink(sink) => lock(&state.events).set_sink(sink),
            ConnectionMsg::Stats(reply) => {
                let window = state.wire.stats();
                let _ = reply.send(ConnectionStats {
                    in_flight: window.in_flight,
                    queued: window.queued,
                    high_water: window.high_water,
                    events_received: lock(&state.events).received,
                });
            }
            ConnectionMsg::ReadEnded(reason) | ConnectionMsg::WriteFailed(reason) => {
                let _ = state.shared.ended.set(reason.clone());
                state.wire.fail_all(&reason);
                myself.stop(Some(reason));
            }
        }
        Ok(())
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

/// What the reader task hands packets to.
struct Reader {
    conn: ActorRef<ConnectionMsg>,
    wire: Arc<Wire>,
    events: Arc<Mutex<EventRoute>>,
}

/// The one task that reads the socket. It never races a read against
/// anything else, so a packet is never half-consumed. Each reply goes to
/// its caller as soon as it is decoded, so the replies before an event
/// composite are handed on before it; composites go straight to
/// EventDispatch.
async fn read_loop(mut read: ReadHalf, max_packet: u32, to: Reader) {
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
        // The actor is gone: nobody waits for these replies.
        if to.wire.outbox.is_closed() {
            return;
        }
        let failed = loop {
            match decoder.next_packet() {
                Ok(Some(Packet::Command(cmd))) => {
                    if let Some(data) = composite_data(cmd) {
                        lock(&to.events).deliver(data, Instant::now());
                    }
                }
                Ok(Some(Packet::Reply(reply))) => to.wire.complete(reply),
                Ok(None) => break None,
                Err(e) => break Some(format!("the peer sent bytes that are not JDWP: {e}")),
            }
        };
        if let Some(reason) = failed {
            break reason;
        }
    };
    let _ = to.conn.send_message(ConnectionMsg::ReadEnded(reason));
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
