//! What the Connection actor and its reader task share: the in-flight
//! window and the outbox. The actor submits requests and expires overdue
//! ones; the reader completes each reply as it decodes it, as the raw
//! client does, so a reply reaches its caller without a trip through the
//! actor's mailbox (ADR 0016). Every method is synchronous and takes the
//! window's lock for its whole step: a reply, a submission or an expiry is
//! never seen half done.

use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use ractor::RpcReplyPort;

use super::outbox::Outbox;
use super::window::Window;
use super::{ConnectionShared, Outbound, command_set_name, is_mutation};
use crate::actors::error::JdwpError;
use crate::jdwp::ErrorCode;
use crate::jdwp::packet::{CommandPacket, HEADER_LEN, ReplyPacket};
use crate::telemetry::{RoundTrip, RoundTripStart};

/// A request in the window.
struct Pending {
    name: &'static str,
    span: RoundTrip,
    reply: Option<RpcReplyPort<Result<Vec<u8>, JdwpError>>>,
    command_set: u8,
    command: u8,
    data: Vec<u8>,
}

/// The window and the outbox of one connection.
pub(super) struct Wire {
    window: Mutex<Window<Pending>>,
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
            window: Mutex::new(Window::new(limit)),
            outbox,
            shared,
            request_timeout,
        }
    }

    fn lock(&self) -> MutexGuard<'_, Window<Pending>> {
        self.window.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Queues requests in this order; each is written as soon as the
    /// window has room for it.
    pub fn submit(&self, outs: impl IntoIterator<Item = Outbound>) {
        let mut window = self.lock();
        for out in outs {
            self.submit_one(&mut window, out);
        }
    }

    fn submit_one(&self, window: &mut Window<Pending>, out: Outbound) {
        let Outbound {
            command_set,
            command,
            name,
            data,
            timeout,
            parent,
            reply,
        } = out;
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
        let pending = Pending {
            name,
            span,
            reply: Some(reply),
            command_set,
            command,
            data,
        };
        let timeout = timeout.unwrap_or(self.request_timeout);
        if let Some(id) = window.submit(pending, Instant::now(), timeout) {
            self.write(window, id);
        }
    }

    fn write(&self, window: &mut Window<Pending>, id: u32) {
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
        // Written by the writer task once this turn ends: a capture's reads
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
        self.promote(&mut window, Instant::now());
    }

    /// Fails the requests past their deadline.
    pub fn expire(&self) {
        let mut window = self.lock();
        let now = Instant::now();
        for slot in window.expire(now) {
            let after = slot.deadline.duration_since(slot.queued_at);
            let mut p = slot.payload;
            p.span.failed("TIMEOUT");
            let command = p.name;
            finish(p, Err(JdwpError::Timeout { command, after }));
        }
        self.promote(&mut window, now);
    }

    fn promote(&self, window: &mut Window<Pending>, now: Instant) {
        for id in window.promote(now) {
            self.write(window, id);
        }
    }

    /// Fails every request still waiting: the connection ended.
    pub fn fail_all(&self, reason: &str) {
        let mut window = self.lock();
        for slot in window.drain() {
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
