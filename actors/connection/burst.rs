//! Commands queued as one burst: they reach the Connection in one message,
//! in the order they were added, and so go out together (one write unless
//! the window is full). A capture's reads and the resume behind them are
//! one burst: one mailbox hop instead of one per command.

use tracing::Span;

use super::{ConnectionHandle, Outbound, decoded};
use crate::error::JdwpError;
use crate::jdwp::Command;
use crate::jdwp::command::encode_request;

/// Commands collected for one message to the Connection. A reply future
/// it hands out resolves once the burst is submitted: by `submit`, or
/// when the burst is dropped. Awaiting one before that would wait for
/// ever, so a burst is submitted before anything of it is awaited.
pub struct Burst<'a> {
    handle: &'a ConnectionHandle,
    /// The span the round trips are children of, taken once.
    parent: Span,
    out: Vec<Outbound>,
}

impl ConnectionHandle {
    /// Starts a burst of commands (see [`Burst`]).
    pub fn burst(&self) -> Burst<'_> {
        Burst {
            handle: self,
            parent: Span::current(),
            out: Vec::with_capacity(4),
        }
    }
}

impl Burst<'_> {
    /// Adds a typed command; the future decodes its reply.
    pub fn send<C: Command>(
        &mut self,
        cmd: &C,
    ) -> impl Future<Output = Result<C::Reply, JdwpError>> + Send + 'static + use<C>
    where
        C::Reply: Send + 'static,
    {
        let sizes = self.handle.shared.id_sizes();
        let (out, reply) = Outbound::with_reply(
            &self.handle.shared,
            (C::SET, C::ID, C::NAME),
            encode_request(cmd, sizes),
            None,
            self.parent.clone(),
        );
        self.out.push(out);
        decoded::<C, _>(reply, sizes)
    }

    /// Submits what was added so far, in order, under one lock of the
    /// window; the burst stays usable for commands that must go out
    /// after these.
    pub fn submit(&mut self) {
        if !self.out.is_empty() {
            // A connection that has ended answers each request with why.
            self.handle.wire.submit(self.out.drain(..));
        }
    }
}

impl Drop for Burst<'_> {
    fn drop(&mut self) {
        self.submit();
    }
}
