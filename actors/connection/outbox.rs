//! The write side of a connection. The actor appends each encoded packet
//! to an [`Outbox`]; one writer task, which owns the socket's write half,
//! takes everything appended so far and writes it. The writer is woken
//! when the outbox goes from empty to not empty, so requests the actor
//! queues while handling a run of messages leave in one write, once the
//! actor's turn on the worker ends (ADR 0016). A peer that stops reading
//! stalls the writer, never the actor's mailbox.

use std::sync::{Arc, Mutex, MutexGuard};

use ractor::ActorRef;
use tokio::io::AsyncWriteExt;
use tokio::net::tcp::OwnedWriteHalf;
use tokio::sync::Notify;

use super::ConnectionMsg;
use crate::actors::lock::lock;

/// Bytes the actor queued and the writer has not taken yet.
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
}

/// What a writer keeps of its buffer between writes.
const KEPT_CAPACITY: usize = 64 * 1024;

impl Outbox {
    fn lock(&self) -> MutexGuard<'_, Pending> {
        lock(&self.inner)
    }

    /// Appends what `encode` writes; wakes the writer if it had nothing
    /// to write. Nothing is appended once the outbox is closed.
    pub fn push(&self, encode: impl FnOnce(&mut Vec<u8>)) {
        let was_empty = {
            let mut g = self.lock();
            if g.closed {
                return;
            }
            let was_empty = g.bytes.is_empty();
            encode(&mut g.bytes);
            was_empty
        };
        // A permit is kept when the writer is busy: it looks again once
        // its write is done.
        if was_empty {
            self.wake.notify_one();
        }
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

    /// Bytes queued and not yet taken by the writer.
    #[cfg(test)]
    fn queued(&self) -> usize {
        self.lock().bytes.len()
    }

    /// Swaps `spare` (empty) with what is queued; whether the outbox is
    /// closed.
    pub(super) fn take(&self, spare: &mut Vec<u8>) -> bool {
        let mut g = self.lock();
        std::mem::swap(&mut g.bytes, spare);
        g.closed
    }
}

/// The writer task: writes what the outbox holds each time it is woken,
/// until the outbox is closed or a write fails (the actor is told, and the
/// connection ends).
pub(super) async fn write_loop(
    mut half: OwnedWriteHalf,
    outbox: Arc<Outbox>,
    conn: ActorRef<ConnectionMsg>,
) {
    let mut chunk: Vec<u8> = Vec::with_capacity(4096);
    loop {
        outbox.wake.notified().await;
        let closed = outbox.take(&mut chunk);
        if closed {
            // Whatever the socket takes at once; nobody waits for more.
            let _ = half.try_write(&chunk);
            return;
        }
        if chunk.is_empty() {
            continue;
        }
        if let Err(e) = half.write_all(&chunk).await {
            let _ = conn.send_message(ConnectionMsg::WriteFailed(format!(
                "writing to the JVM failed: {e}"
            )));
            return;
        }
        chunk.clear();
        chunk.shrink_to(KEPT_CAPACITY);
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
