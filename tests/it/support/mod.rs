//! Shared integration-test support: JDK/JVM launching (`java`), the MCP stdio client (`mcp`), and small polling/port helpers.
#![allow(dead_code)] // Not every test module uses every helper.

pub mod frameworks;
pub mod golden;
pub mod java;
pub mod levels;
pub mod mcp;
pub mod otlp;
pub mod otlp_http;
pub mod rig;
pub mod schema;
pub mod text;

/// A test per JDK from one function taking the JDK's home: `case:
/// name_on_jdk17, name_on_temurin25;` (Temurin 25 required, never
/// skipped).
macro_rules! on_both_jdks {
    ($($case:ident: $jdk17:ident, $temurin25:ident;)*) => {$(
        #[test]
        fn $jdk17() {
            $case($crate::support::java::default_java_home());
        }

        #[test]
        fn $temurin25() {
            $case($crate::support::java::temurin25_required());
        }
    )*};
}
pub(crate) use on_both_jdks;

use std::net::TcpListener;
use std::time::{Duration, Instant};

/// Interval between two checks in [`poll_until`].
const POLL_INTERVAL: Duration = Duration::from_millis(10);

/// A TCP port on 127.0.0.1 that was free a moment ago (bound to port 0, then released).
pub fn free_port() -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0")
        .unwrap_or_else(|e| panic!("free_port: cannot bind 127.0.0.1:0: {e}"));
    listener
        .local_addr()
        .unwrap_or_else(|e| panic!("free_port: no local address: {e}"))
        .port()
}

/// A port on 127.0.0.1 that refuses connections and stays ours: bound, never
/// listening, for as long as this lives. A port from [`free_port`] that
/// nothing listens on can be handed to another test's server meanwhile (a
/// collector that then receives this test's spans).
pub struct RefusedPort {
    _socket: tokio::net::TcpSocket,
    pub port: u16,
}

/// See [`RefusedPort`].
pub fn refused_port() -> RefusedPort {
    let socket =
        tokio::net::TcpSocket::new_v4().unwrap_or_else(|e| panic!("refused_port: no socket: {e}"));
    socket
        .bind(std::net::SocketAddr::from(([127, 0, 0, 1], 0)))
        .unwrap_or_else(|e| panic!("refused_port: cannot bind 127.0.0.1:0: {e}"));
    let port = socket
        .local_addr()
        .unwrap_or_else(|e| panic!("refused_port: no local address: {e}"))
        .port();
    RefusedPort {
        _socket: socket,
        port,
    }
}

/// Calls `check` until it returns `Some`, at most for `timeout`; panics on timeout.
#[track_caller]
pub fn poll_until<T>(timeout: Duration, check: impl FnMut() -> Option<T>) -> T {
    poll_until_msg(timeout, "condition", check)
}

/// The async form of [`poll_until_msg`], for tests on the tokio runtime:
/// awaits `check` until it returns `Some`, at most for `timeout`.
pub async fn poll_async<T>(
    timeout: Duration,
    what: &str,
    mut check: impl AsyncFnMut() -> Option<T>,
) -> T {
    let deadline = Instant::now() + timeout;
    loop {
        if let Some(value) = check().await {
            return value;
        }
        assert!(
            Instant::now() < deadline,
            "timed out after {timeout:?} waiting for {what}"
        );
        tokio::time::sleep(POLL_INTERVAL).await;
    }
}

/// Like [`poll_until`], naming `what` was awaited in the timeout panic.
#[track_caller]
pub fn poll_until_msg<T>(timeout: Duration, what: &str, mut check: impl FnMut() -> Option<T>) -> T {
    poll(
        timeout,
        || check().ok_or(()),
        |()| format!("timed out after {timeout:?} waiting for {what}"),
    )
}

/// Calls `check` until it returns `Ok`, at most for `timeout`; the timeout
/// panic names `what` and the last `Err`, the state the condition was
/// still waiting on.
#[track_caller]
pub fn poll_until_ok<T, E: std::fmt::Debug>(
    timeout: Duration,
    what: &str,
    check: impl FnMut() -> Result<T, E>,
) -> T {
    poll(timeout, check, |last| {
        format!("timed out after {timeout:?} waiting for {what}; last seen: {last:?}")
    })
}

/// The one synchronous poll loop: checks every [`POLL_INTERVAL`] until
/// `check` succeeds, and panics with `timed_out(last error)` past `timeout`.
#[track_caller]
fn poll<T, E>(
    timeout: Duration,
    mut check: impl FnMut() -> Result<T, E>,
    timed_out: impl FnOnce(E) -> String,
) -> T {
    let deadline = Instant::now() + timeout;
    loop {
        match check() {
            Ok(value) => return value,
            Err(last) if Instant::now() >= deadline => panic!("{}", timed_out(last)),
            Err(_) => std::thread::sleep(POLL_INTERVAL),
        }
    }
}

/// Keeps the last `max_chars` characters of `text` (on a char boundary), prefixed with `...` when cut.
pub fn tail(text: &str, max_chars: usize) -> String {
    let count = text.chars().count();
    if count <= max_chars {
        return text.to_owned();
    }
    let skip = count - max_chars;
    let cut: String = text.chars().skip(skip).collect();
    format!("...{cut}")
}
