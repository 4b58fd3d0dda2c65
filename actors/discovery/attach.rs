//! HotSpot's attach socket, the second channel beside JDWP (ADR 0019):
//! the Unix socket `/tmp/.java_pid<pid>` that `jmap` and `jcmd` speak to.
//! When the JVM has not opened it yet, it is asked to, as the JDK's own
//! tools ask: a file `.attach_pid<pid>` in its working directory (or
//! `/tmp`), then SIGQUIT, which HotSpot answers by starting its attach
//! listener instead of printing a thread dump. A JVM started with `-Xrs`
//! or `-XX:+DisableAttachMechanism` would print the dump instead, so it
//! is refused before anything is sent. Blocking; run off the runtime.

use std::io::{Read, Write};
use std::os::unix::net::UnixStream;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use crate::error::LocalError;

/// Longest reply read (a histogram of a large application is a few MB).
const MAX_REPLY: u64 = 64 * 1024 * 1024;
/// How often the socket's appearance is polled.
const POLL: Duration = Duration::from_millis(10);

/// Options that make SIGQUIT something other than a request to attach.
const REFUSING: &[(&str, &str)] = &[
    ("-XX:+DisableAttachMechanism", "-XX:+DisableAttachMechanism"),
    ("-Xrs", "-Xrs"),
];

fn socket_path(pid: u32) -> PathBuf {
    PathBuf::from(format!("/tmp/.java_pid{pid}"))
}

/// Runs one attach command (`inspectheap`, `threaddump`, …) with up to
/// three arguments and returns its output, within `limit`.
pub fn execute(
    pid: u32,
    command: &str,
    args: &[&str],
    limit: Duration,
) -> Result<String, LocalError> {
    let deadline = Instant::now() + limit;
    let fail = |detail: String| LocalError::Attach { pid, detail };
    let path = socket_path(pid);
    if !path.exists() {
        start_listener(pid, deadline)?;
    }
    let mut stream = UnixStream::connect(&path).map_err(|e| fail(format!("connect: {e}")))?;
    let left = deadline
        .saturating_duration_since(Instant::now())
        .max(Duration::from_millis(1));
    stream
        .set_read_timeout(Some(left))
        .and_then(|()| stream.set_write_timeout(Some(left)))
        .map_err(|e| fail(e.to_string()))?;
    let mut request = b"1\0".to_vec();
    request.extend(command.as_bytes());
    request.push(0);
    for i in 0..3 {
        request.extend(args.get(i).copied().unwrap_or("").as_bytes());
        request.push(0);
    }
    stream
        .write_all(&request)
        .map_err(|e| fail(format!("write: {e}")))?;
    let mut reply = Vec::new();
    (&mut stream)
        .take(MAX_REPLY)
        .read_to_end(&mut reply)
        .map_err(|e| fail(format!("read: {e}")))?;
    let text = String::from_utf8_lossy(&reply).into_owned();
    let (code, body) = text.split_once('\n').unwrap_or((text.as_str(), ""));
    match code.trim() {
        "0" => Ok(body.to_string()),
        other => Err(fail(format!("{command} answered {other}: {}", body.trim()))),
    }
}

/// Asks the JVM to open its attach socket and waits for it.
fn start_listener(pid: u32, deadline: Instant) -> Result<(), LocalError> {
    let argv = super::local::argv(pid);
    if argv.is_empty() {
        return Err(LocalError::Proc {
            pid,
            detail: "its command line is unreadable (gone, or not ours)".into(),
        });
    }
    for (flag, option) in REFUSING {
        if argv.iter().any(|a| a == flag) {
            return Err(LocalError::AttachDisabled { pid, option });
        }
    }
    let name = format!(".attach_pid{pid}");
    let candidates = [
        super::local::cwd(pid).map(|d| d.join(&name)),
        Some(PathBuf::from("/tmp").join(&name)),
    ];
    let trigger = candidates
        .into_iter()
        .flatten()
        .find(|p| std::fs::write(p, b"").is_ok())
        .ok_or_else(|| LocalError::Attach {
            pid,
            detail: "no place to write .attach_pid".into(),
        })?;
    let signalled = std::process::Command::new("kill")
        .args(["-QUIT", &pid.to_string()])
        .status();
    let result = match signalled {
        Ok(s) if s.success() => wait_for_socket(pid, deadline),
        Ok(s) => Err(LocalError::Attach {
            pid,
            detail: format!("kill -QUIT exited {s}"),
        }),
        Err(e) => Err(LocalError::Attach {
            pid,
            detail: format!("kill -QUIT: {e}"),
        }),
    };
    let _ = std::fs::remove_file(&trigger);
    result
}

fn wait_for_socket(pid: u32, deadline: Instant) -> Result<(), LocalError> {
    let path = socket_path(pid);
    while !path.exists() {
        if Instant::now() >= deadline {
            return Err(LocalError::Attach {
                pid,
                detail: "the attach socket did not appear in time".into(),
            });
        }
        std::thread::sleep(POLL);
    }
    Ok(())
}
