//! The execution samples of a flight recording, read from `jfr print
//! --events jdk.ExecutionSample` line by line as the tool writes them (a
//! two-minute recording prints tens of MB): only the sampled thread's name
//! and each frame's class and method are kept, and each sample goes
//! straight into the profile. The JDK's own reader understands every
//! recording format it can write, so jvmscope parses no JFR chunk itself.
//!
//! The form read (JDK 17 and 25 alike):
//!
//! ```text
//! jdk.ExecutionSample {
//!   startTime = 05:35:55.725
//!   sampledThread = "busy-spinner-worker" (javaThreadId = 12)
//!   stackTrace = [
//!     Spinner.burn(long) line: 11
//!     java.lang.Thread.run() line: 840
//!     ...
//!   ]
//! }
//! ```

use std::io::{BufRead, BufReader, Read};

use crate::model::profile::{Profile, method_label};

/// What reading stopped on.
#[derive(Debug)]
pub enum DecodeError {
    /// `go_on` answered false.
    Stopped,
    /// The output could not be read.
    Read(String),
}

/// The sample being read.
#[derive(Default)]
struct Pending {
    thread: Option<String>,
    frames: Vec<String>,
    truncated: bool,
    in_stack: bool,
}

/// Reads every execution sample of `input` into `profile`; `go_on` is
/// asked before each sample (false ends the read: the call was
/// cancelled). Returns the number of samples read. Lines it does not know
/// are skipped, so a field a later JDK adds changes nothing.
pub fn read_samples(
    input: impl Read,
    profile: &mut Profile,
    go_on: &mut dyn FnMut() -> bool,
) -> Result<u64, DecodeError> {
    let mut read = 0;
    let mut pending: Option<Pending> = None;
    for line in BufReader::new(input).split(b'\n') {
        let line = line.map_err(|e| DecodeError::Read(e.to_string()))?;
        let line = String::from_utf8_lossy(&line);
        let trimmed = line.trim();
        if !line.starts_with(' ') && trimmed.ends_with('{') {
            if !go_on() {
                return Err(DecodeError::Stopped);
            }
            pending = (trimmed.trim_end_matches('{').trim() == "jdk.ExecutionSample")
                .then(Pending::default);
            continue;
        }
        let Some(p) = pending.as_mut() else { continue };
        if trimmed == "}" && !line.starts_with(' ') {
            if let Some(p) = pending.take() {
                let thread = p.thread.as_deref().unwrap_or("?");
                profile.add(thread, p.frames, p.truncated);
                read += 1;
            }
        } else if p.in_stack {
            match trimmed {
                "]" => p.in_stack = false,
                "..." => p.truncated = true,
                frame => p.frames.extend(frame_label(frame)),
            }
        } else if let Some(v) = trimmed.strip_prefix("sampledThread = ") {
            p.thread = thread_name(v);
        } else if trimmed.starts_with("stackTrace = [") {
            p.in_stack = !trimmed.ends_with(']');
        }
    }
    Ok(read)
}

/// `"name" (javaThreadId = 12)` → `name`.
fn thread_name(v: &str) -> Option<String> {
    let start = v.find('"')?;
    let end = v.rfind('"')?;
    (end > start).then(|| v[start + 1..end].to_string())
}

/// `java.lang.Thread.run() line: 840` → `java.lang.Thread.run`.
fn frame_label(frame: &str) -> Option<String> {
    let call = frame.split('(').next()?.trim();
    let (class, method) = call.rsplit_once('.')?;
    (!class.is_empty() && !method.is_empty()).then(|| method_label(class, method))
}

#[cfg(test)]
mod tests {
    use super::*;

    const TWO: &str = "jdk.ExecutionSample {
  startTime = 05:35:55.725 (2026-12-07)
  sampledThread = \"busy \\\"spinner\\\" worker\" (javaThreadId = 12)
  state = \"STATE_RUNNABLE\"
  stackTrace = [
    Spinner.burn(long) line: 11
    Spinner$$Lambda/0x000001c0d8003200.run() line: 0
    java.lang.Thread.run() line: 840
  ]
}

jdk.ExecutionSample {
  sampledThread = \"main\" (javaThreadId = 1)
  stackTrace = [
    Main.main(String[]) line: 3
    ...
  ]
}

jdk.CPULoad {
  machineTotal = 10%
}

jdk.ExecutionSample {
  sampledThread = N/A
  stackTrace = []
}
";

    #[test]
    fn samples_stream_into_the_profile() {
        let mut p = Profile::default();
        let n = read_samples(TWO.as_bytes(), &mut p, &mut || true).expect("reads");
        assert_eq!(n, 3);
        assert_eq!(p.total(), 2);
        assert_eq!((p.truncated, p.empty), (1, 1));
        let stacks = p.stacks();
        assert!(
            stacks.iter().any(|s| s.frames
                == [
                    "java.lang.Thread.run",
                    "Spinner$$Lambda.run",
                    "Spinner.burn"
                ]),
            "{stacks:?}"
        );
        let threads: Vec<String> = p.threads().into_iter().map(|t| t.thread).collect();
        assert!(threads.contains(&"busy \\\"spinner\\\" worker".to_string()));
        assert!(threads.contains(&"main".to_string()));
    }

    #[test]
    fn a_stop_is_told_apart_and_garbage_reads_as_nothing() {
        let mut p = Profile::default();
        let stopped = read_samples(TWO.as_bytes(), &mut p, &mut || false);
        assert!(matches!(stopped, Err(DecodeError::Stopped)));
        for bad in [
            "",
            "}",
            "jdk.ExecutionSample {\n  stackTrace = [\n    (\n    .x(\n",
            "\u{0}\u{ff}{",
        ] {
            let mut p = Profile::default();
            let r = read_samples(bad.as_bytes(), &mut p, &mut || true);
            assert_eq!(r.ok(), Some(0), "{bad:?}");
            assert_eq!(p.total(), 0);
        }
    }
}
