//! What the Connection actor and its reader task share: the in-flight
//! window and the outbox. The actor submits requests and expires overdue
//! ones; the reader completes each reply as it decodes it, as the raw
//! client does, so a reply reaches its caller without a trip through the
//! actor's mailbox (ADR 0016). Every method is synchronous and takes the
//! window's lock for its whole step: a reply, a submission or an expiry is
//! never seen half done.

use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use ractor::RpcReplyPort;

use super::outbox::Outbox;
use super::requests::Effect;
use super::window::Window;
use super::{ConnectionShared, Outbound, command_set_name, is_mutation};
use crate::error::JdwpError;
use crate::jdwp::ErrorCode;
use crate::jdwp::packet::{CommandPacket, HEADER_LEN, ReplyPacket};
use crate::lock::lock;
use crate::telemetry::{RoundTrip, RoundTripStart};

/// Now, by tokio's clock: the real time in production, the virtual time
/// under a paused test runtime, so a test drives request deadlines in
/// milliseconds.
pub(super) fn now() -> Instant {
    tokio::time::Instant::now().into_std()
}

/// A request in the window.
struct Pending {
    name: &'static str,
    span: RoundTrip,
    reply: Option<RpcReplyPort<Result<Vec<u8>, JdwpError>>>,
    command_set: u8,
    command: u8,
    data: Vec<u8>,
    /// What it does to the request book: a Set's kind waits for its id.
    effect: Effect,
}

/// The window, and why the connection ended once it has: a request
/// submitted after that is answered at once, never left waiting.
struct Guarded {
    window: Window<Pending>,
    ended: Option<String>,
}

impl std::ops::Deref for Guarded {
    type Target = Window<Pending>;

    fn deref(&self) -> &Window<Pending> {
        &self.window
    }
}

impl std::ops::DerefMut for Guarded {
    fn deref_mut(&mut self) -> &mut Window<Pending> {
        &mut self.window
    }
}

/// The window and the outbox of one connection.
pub(super) struct Wire {
    window: Mutex<Guarded>,
    /// Encoded packets for the writer task, which owns the write half.
    pub outbox: Arc<Outbox>,
    shared: Arc<ConnectionShared>,
    request_timeout: Duration,
}

/// The window's counters.
pub(super) struct WindowStats {
    pub in_flight: usize,
    pub queued: usize,
    pub high_water: usize,
}

impl Wire {
    pub fn new(
        limit: usize,
        request_timeout: Duration,
        shared: Arc<ConnectionShared>,
        outbox: Arc<Outbox>,
    ) -> Self {
        Self {
            window: Mutex::new(Guarded {
                window: Window::new(limit),
                ended: None,
            }),
            outbox,
            shared,
            request_timeout,
        }
    }

    fn lock(&self) -> MutexGuard<'_, Guarded> {
        lock(&self.window)
    }

    /// Queues requests in this order; each is written as soon as the
    /// window has room for it.
    pub fn submit(&self, outs: impl IntoIterator<Item = Outbound>) {
        let mut window = self.lock();
        for out in outs {
            self.submit_one(&mut window, out);
        }
        // One write for all of them (a capture's reads and its resume).
        self.outbox.flush();
    }

    fn submit_one(&self, window: &mut Guarded, out: Outbound) {
        let Outbound {
            command_set,
            command,
            name,
            data,
            timeout,
            parent,
            reply,
        } = out;
        if let Some(reason) = &window.ended {
            let _ = reply.send(Err(JdwpError::Disconnected {
                command: name,
                reason: reason.clone(),
            }));
            return;
        }
        if self.shared.read_only && is_mutation(command_set, command) {
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
                host: &self.shared.host,
                port: self.shared.port,
                request_bytes: (data.len() + HEADER_LEN) as u64,
            },
        );
        let effect = self.shared.requests.submitted(command_set, command, &data);
        let pending = Pending {
            name,
            span,
            reply: Some(reply),
            command_set,
            command,
            data,
            effect,
        };
        let timeout = timeout.unwrap_or(self.request_timeout);
        if let Some(id) = window.submit(pending, now(), timeout) {
            self.write(window, id);
        }
    }

    fn write(&self, window: &mut Guarded, id: u32) {
        let Some(p) = window.payload_mut(id) else {
            return;
        };
        p.span.sent(id);
        let packet = CommandPacket {
            id,
            command_set: p.command_set,
            command: p.command,
            data: std::mem::take(&mut p.data),
        };
        let len = (packet.data.len() + HEADER_LEN) as u64;
        self.shared.packets_sent.fetch_add(1, Ordering::Relaxed);
        self.shared.bytes_sent.fetch_add(len, Ordering::Relaxed);
        // Written when the step that queued it flushes: a capture's reads
        // and the resume behind them take one syscall.
        self.outbox.push(|out| packet.encode_into(out));
    }

    /// Hands a reply to the request waiting for it, and writes what was
    /// queued behind the window.
    pub fn complete(&self, reply: ReplyPacket) {
        let mut window = self.lock();
        let ReplyPacket {
            id,
            error_code,
            data,
        } = reply;
        let Some(slot) = window.complete(id) else {
            tracing::debug!(id, "reply to a request no longer waiting (timed out)");
            return;
        };
        let mut p = slot.payload;
        let queued = slot.sent_at.map_or(0, |sent| {
            sent.duration_since(slot.queued_at).as_micros() as u64
        });
        p.span.replied(queued, (data.len() + HEADER_LEN) as u64);
        if let Effect::Set(kind) = p.effect {
            let ok = (error_code == 0).then_some(data.as_slice());
            self.shared.requests.answered(kind, ok);
        }
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
        self.promote(&mut window, now());
    }

    /// Fails the requests past their deadline.
    pub fn expire(&self) {
        let mut window = self.lock();
        let at = now();
        for slot in window.expire(at) {
            let after = slot.deadline.duration_since(slot.queued_at);
            let mut p = slot.payload;
            self.unanswered(&p);
            p.span.failed("TIMEOUT");
            let command = p.name;
            finish(p, Err(JdwpError::Timeout { command, after }));
        }
        self.promote(&mut window, at);
    }

    fn promote(&self, window: &mut Guarded, now: Instant) {
        for id in window.promote(now) {
            self.write(window, id);
        }
        self.outbox.flush();
    }

    /// Fails every request still waiting, and any submitted later: the
    /// connection ended.
    pub fn fail_all(&self, reason: &str) {
        let mut window = self.lock();
        window.ended.get_or_insert_with(|| reason.to_string());
        for slot in window.drain() {
            let mut p = slot.payload;
            self.unanswered(&p);
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

    /// A request that will get no reply: a Set of it is counted as
    /// answered (with nothing set), so nobody waits for its id.
    fn unanswered(&self, p: &Pending) {
        if let Effect::Set(kind) = p.effect {
            self.shared.requests.answered(kind, None);
        }
    }

    pub fn stats(&self) -> WindowStats {
        let window = self.lock();
        WindowStats {
            in_flight: window.in_flight(),
            queued: window.queued(),
            high_water: window.high_water(),
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::jdwp::IdSizes;
    use crate::jdwp::packet::{FrameDecoder, Packet};
    use std::sync::RwLock;
    use std::sync::atomic::AtomicU64;
    use tokio::sync::oneshot;

    type Answer = oneshot::Receiver<Result<Vec<u8>, JdwpError>>;

    /// The answer a request got already.
    fn answer(rx: &mut Answer) -> Result<Vec<u8>, JdwpError> {
        rx.try_recv().expect("the request was answered")
    }

    fn wire(limit: usize, read_only: bool) -> Wire {
        let shared = Arc::new(ConnectionShared {
            host: "127.0.0.1".into(),
            port: 5005,
            read_only,
            sizes: RwLock::new(IdSizes::HOTSPOT),
            packets_sent: AtomicU64::new(0),
            bytes_sent: AtomicU64::new(0),
            ended: std::sync::OnceLock::new(),
            requests: Default::default(),
        });
        Wire::new(limit, Duration::from_secs(10), shared, Arc::default())
    }

    fn request(set: u8, cmd: u8, data: &[u8]) -> (Outbound, Answer) {
        let (tx, rx) = oneshot::channel();
        let out = Outbound {
            command_set: set,
            command: cmd,
            name: "Test.Command",
            data: data.to_vec(),
            timeout: None,
            parent: tracing::Span::none(),
            reply: tx.into(),
        };
        (out, rx)
    }

    /// The commands written so far, as (id, set, command, data).
    fn written(wire: &Wire) -> Vec<(u32, u8, u8, Vec<u8>)> {
        let mut bytes = Vec::new();
        wire.outbox.take(&mut bytes);
        let mut decoder = FrameDecoder::new(1 << 20);
        decoder.push(&bytes);
        let mut out = Vec::new();
        while let Ok(Some(Packet::Command(c))) = decoder.next_packet() {
            out.push((c.id, c.command_set, c.command, c.data));
        }
        out
    }

    fn reply(id: u32, error_code: u16, data: &[u8]) -> ReplyPacket {
        ReplyPacket {
            id,
            error_code,
            data: data.to_vec(),
        }
    }

    #[test]
    fn a_reply_that_frees_a_slot_writes_the_request_queued_behind_it() {
        let wire = wire(1, false);
        let (a, mut a_rx) = request(1, 1, b"a");
        let (b, mut b_rx) = request(1, 2, b"b");
        wire.submit([a, b]);
        assert_eq!(written(&wire), vec![(1, 1, 1, b"a".to_vec())]);
        assert_eq!(wire.stats().queued, 1);
        wire.complete(reply(1, 0, b"first"));
        assert_eq!(answer(&mut a_rx).expect("a reply"), b"first");
        assert!(b_rx.try_recv().is_err(), "b has no reply yet");
        assert_eq!(written(&wire), vec![(2, 1, 2, b"b".to_vec())]);
        wire.complete(reply(2, 0, b"second"));
        assert_eq!(answer(&mut b_rx).expect("a reply"), b"second");
        // A reply nobody waits for (a timed-out request's) is dropped.
        wire.complete(reply(2, 0, b"again"));
        assert_eq!(wire.stats().in_flight, 0);
    }

    #[test]
    fn read_only_refuses_a_mutation_before_anything_is_written() {
        let wire = wire(8, true);
        let (invoke, mut rx) = request(9, 6, b"");
        let (read, _read_rx) = request(1, 1, b"");
        wire.submit([invoke, read]);
        assert!(matches!(answer(&mut rx), Err(JdwpError::ReadOnly { .. })));
        let out = written(&wire);
        assert_eq!(out.len(), 1, "only the read goes out");
        assert_eq!((out[0].1, out[0].2), (1, 1));
    }

    #[test]
    fn a_request_submitted_after_the_end_is_answered_at_once_and_never_written() {
        let wire = wire(8, false);
        wire.fail_all("the JVM closed the connection");
        let (late, mut rx) = request(1, 1, b"");
        wire.submit([late]);
        match answer(&mut rx) {
            Err(JdwpError::Disconnected { reason, .. }) => {
                assert_eq!(reason, "the JVM closed the connection")
            }
            other => panic!("expected a disconnect, got {other:?}"),
        }
        assert!(written(&wire).is_empty());
        assert_eq!(wire.stats().in_flight, 0);
    }

    #[test]
    fn an_error_reply_and_the_end_of_the_connection_each_answer_their_request() {
        let wire = wire(8, false);
        let (a, mut a_rx) = request(11, 6, b"");
        let (b, mut b_rx) = request(11, 7, b"");
        wire.submit([a, b]);
        wire.complete(reply(1, 10, b""));
        match answer(&mut a_rx) {
            Err(JdwpError::Jvm { code, .. }) => assert_eq!(code, ErrorCode(10)),
            other => panic!("expected the JVM's error, got {other:?}"),
        }
        wire.fail_all("the JVM closed the connection");
        match answer(&mut b_rx) {
            Err(JdwpError::Disconnected { reason, .. }) => {
                assert_eq!(reason, "the JVM closed the connection")
            }
            other => panic!("expected a disconnect, got {other:?}"),
        }
    }
}
