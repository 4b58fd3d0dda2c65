//! A request's way back: the future of a command's reply data (a reply
//! port dropped unanswered reads as the connection's end, with its
//! reason) and the decoding of a typed command's reply. Shared by single
//! sends and bursts.

use std::sync::Arc;
use std::time::Duration;

use tracing::Span;

use super::{ConnectionShared, Outbound};
use crate::error::JdwpError;
use crate::jdwp::command::decode_reply;
use crate::jdwp::{Command, IdSizes};

impl Outbound {
    /// A command on its way, and the future of its reply's data (a reply
    /// port dropped unanswered reads as the connection's end).
    pub(super) fn with_reply(
        shared: &Arc<ConnectionShared>,
        (command_set, command, name): (u8, u8, &'static str),
        data: Vec<u8>,
        timeout: Option<Duration>,
        parent: Span,
    ) -> (
        Self,
        impl Future<Output = Result<Vec<u8>, JdwpError>> + Send + 'static + use<>,
    ) {
        let (tx, rx) = ractor::concurrency::oneshot();
        let out = Outbound {
            command_set,
            command,
            name,
            data,
            timeout,
            parent,
            reply: tx.into(),
        };
        let shared = shared.clone();
        let reply = async move {
            rx.await
                .map_err(|_| gone(&shared, name, "the connection ended before replying"))?
        };
        (out, reply)
    }
}

/// A command's failure for a connection that has ended: why it ended, if
/// known.
pub(super) fn gone(shared: &ConnectionShared, command: &'static str, fallback: &str) -> JdwpError {
    JdwpError::Disconnected {
        command,
        reason: shared.end_reason().unwrap_or(fallback).to_string(),
    }
}

/// Decodes the reply to a typed command.
/// (Not an `async fn`: that would capture the command's type, and ask
/// every command to be `'static`; the reply is all the future keeps.)
#[allow(clippy::manual_async_fn)]
pub(super) fn decoded<C: Command, F>(
    data: F,
    sizes: IdSizes,
) -> impl Future<Output = Result<C::Reply, JdwpError>> + Send + 'static + use<C, F>
where
    C::Reply: Send + 'static,
    F: Future<Output = Result<Vec<u8>, JdwpError>> + Send + 'static,
{
    async move {
        let data = data.await?;
        decode_reply::<C>(&data, sizes).map_err(|source| JdwpError::Decode {
            command: C::NAME,
            source,
        })
    }
}
