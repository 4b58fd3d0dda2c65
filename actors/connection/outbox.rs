//! The write side of a connection. Encoded packets are appended to an
//! [`Outbox`]; whoever appended them (a caller submitting a burst, the
//! reader promoting a queued request) then flushes: when nothing is being
//! written, the bytes go out at once in one non-blocking write, in the
//! caller's own turn, with no task to wake. What the socket does not take
//! at once goes to the writer task, which borrows the write half, writes
//! with `write_all`, and hands the half back once the outbox is empty
//! (ADR 0016). A peer that stops reading stalls the writer, never a caller
//! nor the actor's mailbox. Bytes always leave in the order appended: only
//! whoever holds the half writes, and only from the front of the outbox.

use std::io::ErrorKind;
use std::pin::Pin;
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::{Context, Poll, Waker};

use ractor::ActorRef;
use tokio::io::{AsyncWrite, AsyncWriteExt};
use tokio::sync::Notify;

use super::ConnectionMsg;
use crate::lock::lock;

/// The write half of a connection's stream (a socket's, or an
/// in-process stream's).
pub type WriteHalf = Box<dyn AsyncWrite + Send + Unpin>;

/// One write without waiting: what the stream takes now, or `WouldBlock`
/// (a socket's `try_write`, for any stream).
fn try_write(half: &mut WriteHalf, bytes: &[u8]) -> std::io::Result<usize> {
    let mut cx = Context::from_waker(Waker::noop());
    match Pin::new(half).poll_write(&mut cx, bytes) {
        Poll::Ready(written) => written,
        Poll::Pending => Err(ErrorKind::WouldBlock.into()),
    }
}

/// Bytes appended and not written yet, and the write half while nobody
/// is writing with it.
#[derive(Default)]
pub(super) struct Outbox {
    inner: Mutex<Pending>,
    wake: Notify,
}

#[derive(Default)]
struct Pending {
    bytes: Vec<u8>,
    /// The connection ended: the writer writes what it can at once and
    /// stops, which closes the write half.
    closed: bool,
    /// The socket's write half, here while no write is under way (the
    /// writer task takes it for a write that must wait).
    half: Option<WriteHalf>,
}

/// What a buffer keeps of its capacity between writes.
const KEPT_CAPACITY: usize = 64 * 1024;

impl Outbox {
    fn lock(&self) -> MutexGuard<'_, Pending> {
        lock(&self.inner)
    }

    /// Hands the outbox the socket's write half.
    pub fn attach(&self, half: WriteHalf) {
        self.lock().half = Some(half);
    }

    /// Appends what `encode` writes; `flush` sends it. Nothing is
    /// appended once the outbox is closed.
    pub fn push(&self, encode: impl FnOnce(&mut Vec<u8>)) {
        let mut g = self.lock();
        if !g.closed {
            encode(&mut g.bytes);
        }
    }

    /// Writes what was appended: at once, when the write half is free and
    /// the socket takes it all; else the writer task is woken for the
    /// rest (a failed write is the writer's to report, as it retries).
    pub fn flush(&self) {
        let mut guard = self.lock();
        let g = &mut *guard;
        if g.bytes.is_empty() {
            return;
        }
        if !g.closed
            && let Some(half) = &mut g.half
        {
            match try_write(half, &g.bytes) {
                Ok(n) if n == g.bytes.len() => {
                    g.bytes.clear();
                    g.bytes.shrink_to(KEPT_CAPACITY);
                    return;
                }
                Ok(n) => {
                    g.bytes.drain(..n);
                }
                Err(e) if e.kind() == ErrorKind::WouldBlock => {}
                Err(_) => {}
            }
        }
        drop(guard);
        // A permit is kept when the writer is busy: it looks again once
        // its write is done.
        self.wake.notify_one();
    }

    /// Ends the writer (the connection is ending).
    pub fn close(&self) {
        self.lock().closed = true;
        self.wake.notify_one();
    }

    /// Whether the connection ended.
    pub fn is_closed(&self) -> bool {
        self.lock().closed
    }

    /// Bytes queued and not yet written.
    #[cfg(test)]
    fn queued(&self) -> usize {
        self.lock().bytes.len()
    }

    /// Swaps `spare` (empty) with what is queued; whether the outbox is
    /// closed.
    #[cfg(test)]
    pub(super) fn take(&self, spare: &mut Vec<u8>) -> bool {
        let mut g = self.lock();
        std::mem::swap(&mut g.bytes, spare);
        g.closed
    }

    /// The writer's turn: what is queued, the write half (taken out), and
    /// whether the outbox is closed.
    fn take_all(&self, spare: &mut Vec<u8>) -> (Option<WriteHalf>, bool) {
        let mut g = self.lock();
        std::mem::swap(&mut g.bytes, spare);
        (g.half.take(), g.closed)
    }

    /// Gives the write half back when nothing more is queued; else takes
    /// what is (the writer goes on with the half).
    fn give_back(&self, half: WriteHalf, spare: &mut Vec<u8>) -> Option<WriteHalf> {
        let mut g = self.lock();
        if g.bytes.is_empty() || g.closed {
            g.half = Some(half);
            return None;
        }
        std::mem::swap(&mut g.bytes, spare);
        Some(half)
    }
}

/// The writer task: each time it is woken, takes the write half and
/// writes what the outbox holds until it is empty, then gives the half
/// back; until the outbox is closed or a write fails (the actor is told,
/// and the connection ends).
pub(super) async fn write_loop(outbox: Arc<Outbox>, conn: ActorRef<ConnectionMsg>) {
    let mut chunk: Vec<u8> = Vec::with_capacity(4096);
    loop {
        outbox.wake.notified().await;
        let (half, closed) = outbox.take_all(&mut chunk);
        let Some(half) = half else {
            // The half was never attached, or is gone: nothing to write with.
            return;
        };
        if closed {
            // Whatever the socket takes at once; nobody waits for more.
            let mut half = half;
            let _ = try_write(&mut half, &chunk);
            return;
        }
        let mut writing = Some(half);
        while let Some(mut half) = writing.take() {
            if !chunk.is_empty()
                && let Err(e) = half.write_all(&chunk).await
            {
                let _ = conn.send_message(ConnectionMsg::WriteFailed(format!(
                    "writing to the JVM failed: {e}"
                )));
                outbox.close();
                return;
            }
            chunk.clear();
            chunk.shrink_to(KEPT_CAPACITY);
            writing = outbox.give_back(half, &mut chunk);
        }
        if outbox.is_closed() {
            // Closed meanwhile: end as above, with the half given back.
            let (half, _) = outbox.take_all(&mut chunk);
            if let Some(mut half) = half {
                let _ = try_write(&mut half, &chunk);
            }
            return;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bytes_pushed_are_taken_in_order_and_a_closed_outbox_takes_no_more() {
        let outbox = Outbox::default();
        outbox.push(|b| b.extend_from_slice(b"ab"));
        outbox.push(|b| b.extend_from_slice(b"cd"));
        // No write half attached: a flush leaves the bytes for the writer.
        outbox.flush();
        assert_eq!(outbox.queued(), 4);
        let mut spare = Vec::new();
        assert!(!outbox.take(&mut spare));
        assert_eq!(spare, b"abcd");
        assert_eq!(outbox.queued(), 0);
        outbox.close();
        outbox.push(|b| b.extend_from_slice(b"ef"));
        let mut rest = Vec::new();
        assert!(outbox.take(&mut rest));
        assert!(rest.is_empty());
    }
}
