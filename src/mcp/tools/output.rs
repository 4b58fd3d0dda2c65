//! debug_read_output: what a JVM started by debug_launch wrote, numbered
//! so an agent can follow it without reading a line twice.

use schemars::JsonSchema;
use serde::Deserialize;

use super::{Call, Ctx, Effect, Reply, Route};
use crate::actors::{OUTPUT_LINES, OutputLine, OutputQuery, OutputSlice, OutputStream};
use crate::mcp::error::ToolError;

const DEFAULT_TAIL: usize = 50;
const MAX_TAIL: usize = 500;
/// Bytes of lines one reply carries at most; older lines beyond it are
/// counted as not shown.
const REPLY_BYTES: usize = 32 * 1024;

/// Arguments of debug_read_output.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ReadOutputParams {
    /// Session id; default: the current session.
    pub session_id: Option<String>,
    /// Only lines numbered above this.
    pub since: Option<u64>,
    /// Newest lines to show; default 50, max 500.
    pub tail: Option<usize>,
    /// stdout, stderr or both (default).
    pub stream: Option<String>,
}

pub fn routes() -> Vec<Route> {
    vec![Route::new(
        "debug_read_output",
        "Read JVM output",
        "Lines a launched JVM wrote to stdout and stderr, numbered: the newest tail, or those after \
         since (follow with the reply's next). Kept after the JVM exits.",
        Effect::Read,
        read,
    )
             .with_guide(
                 "Lines a launched JVM wrote to stdout/stderr, numbered and tagged out/err: the newest `tail`, only \
                   those above `since` (the reply's next, to follow output). Reads a kept buffer, even after the JVM \
                   exited; the JVM is untouched.",
             )]
}

async fn read(ctx: Ctx, call: Call<ReadOutputParams>) -> Reply {
    let (tool, p) = (call.tool, call.params?);
    let handle = ctx.engine.session(p.session_id.as_deref())?;
    let tail = p.tail.unwrap_or(DEFAULT_TAIL);
    if tail == 0 || tail > MAX_TAIL {
        return Err(ToolError::bad_argument(
            tool,
            format!("tail must be 1..={MAX_TAIL}, got {tail}"),
        ));
    }
    let stream = match p.stream.as_deref().unwrap_or("both") {
        "stdout" | "out" => Some(OutputStream::Stdout),
        "stderr" | "err" => Some(OutputStream::Stderr),
        "both" => None,
        other => {
            return Err(ToolError::bad_argument(
                tool,
                format!("stream is stdout, stderr or both, not {other:?}"),
            ));
        }
    };
    let query = OutputQuery {
        since: p.since,
        tail,
        stream,
    };
    let Some(slice) = handle.read_output(&query) else {
        return Err(ToolError::new(
            "NOT_LAUNCHED",
            format!(
                "session {} was attached, not launched: its output goes wherever that JVM's own stdout and \
                 stderr go, and jvmscope never sees it",
                handle.id()
            ),
        )
        .next("read the JVM's own log; debug_launch starts a JVM whose output can be read here"));
    };
    let whose = match (handle.launched_pid(), handle.launched_exit()) {
        (Some(pid), Some(exit)) => format!("pid {pid} (exited: {exit})"),
        (Some(pid), None) if slice.ended => format!("pid {pid} (its output has closed)"),
        (Some(pid), None) => format!("pid {pid} (running)"),
        (None, _) => "the launched JVM".into(),
    };
    Ok(super::text(render(
        &handle.id().to_string(),
        &whose,
        &query,
        slice,
    )))
}

fn tag(stream: OutputStream) -> &'static str {
    match stream {
        OutputStream::Stdout => "out",
        OutputStream::Stderr => "err",
    }
}

fn line_text(l: &OutputLine) -> String {
    let mut s = format!("{:>6} {}| {}", l.number, tag(l.stream), l.text);
    if l.cut > 0 {
        s.push_str(&format!(" [+{} bytes not kept]", l.cut));
    }
    s
}

/// The reply: a header, the lines, what was left out, and the cursor.
fn render(session: &str, whose: &str, q: &OutputQuery, mut slice: OutputSlice) -> String {
    let streams = match q.stream {
        Some(s) => tag(s),
        None => "out+err",
    };
    // The newest lines that fit the reply.
    let mut body = Vec::new();
    let mut bytes = 0;
    while let Some(l) = slice.lines.pop() {
        let t = line_text(&l);
        if bytes + t.len() > REPLY_BYTES && !body.is_empty() {
            slice.not_shown += slice.lines.len() + 1;
            break;
        }
        bytes += t.len() + 1;
        body.push(t);
    }
    body.reverse();
    let mut out = format!(
        "Output of {whose}, session {session} [{streams}]: {} line{} written",
        slice.written,
        if slice.written == 1 { "" } else { "s" }
    );
    match (body.is_empty(), q.since) {
        (true, Some(since)) if since > slice.written => out.push_str(&format!(
            "; since={since} is past the last line, {}",
            slice.written
        )),
        (true, Some(since)) => out.push_str(&format!("; nothing new after line {since}")),
        (true, None) => out.push_str("; none to show"),
        (false, _) => {
            out.push('\n');
            out.push_str(&body.join("\n"));
        }
    }
    if slice.not_shown > 0 {
        out.push_str(&format!(
            "\nNot shown: {} older matching lines (raise tail, up to {MAX_TAIL}, or pass since)",
            slice.not_shown
        ));
    }
    if slice.dropped > 0 {
        out.push_str(&format!(
            "\nDropped: {} lines before line {} are gone (the buffer keeps the last {OUTPUT_LINES})",
            slice.dropped, slice.first_kept
        ));
    }
    out.push_str(&format!(
        "\nNext: since={} reads only what comes after",
        slice.written
    ));
    out
}
