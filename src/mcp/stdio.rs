//! The stdio transport: rmcp's own line transport, with a guard on each
//! side so that a line rmcp cannot read gets the JSON-RPC answer
//! (`-32700 Parse error`, with the request's id when a lenient read finds
//! one, else `id: null`) instead of silence.
//!
//! rmcp drops an unparsable line without a word (it cannot know the id),
//! which leaves a client waiting for ever. Two small pumps sit between the
//! process's stdio and rmcp's transport: the reader parses each line as
//! rmcp will, passes every line it can read through unchanged and answers
//! every other one (not JSON, invalid UTF-8, a lone surrogate, nesting too
//! deep); the writer copies
//! rmcp's frames to stdout whole and slips each parse-error reply in
//! between two frames, so stdout carries only complete JSON-RPC lines. The
//! line length is bounded as rmcp bounds it. Everything that is JSON, valid
//! or not as JSON-RPC, is still judged by rmcp.

use serde_json::error::Category;
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader, DuplexStream};
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

/// The longest line read, as rmcp's `DEFAULT_MAX_LINE_LENGTH`.
const MAX_LINE: usize = rmcp::transport::async_rw::DEFAULT_MAX_LINE_LENGTH;

/// How much of the conversation sits in each in-process pipe.
const PIPE: usize = 64 * 1024;

/// A transport for `serve`, and the writer pump to wait for after the
/// service ends (so the last reply reaches stdout before the process
/// exits).
pub struct Stdio {
    pub transport: (DuplexStream, DuplexStream),
    pub flushed: JoinHandle<()>,
}

/// rmcp's stdio pair, guarded.
pub fn stdio() -> Stdio {
    let (input, output) = rmcp::transport::stdio();
    guard(input, output)
}

/// Guards any reader/writer pair (the process's stdio, or pipes in tests).
pub fn guard<R, W>(input: R, output: W) -> Stdio
where
    R: AsyncRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin + Send + 'static,
{
    let (rmcp_in, pump_in) = tokio::io::duplex(PIPE);
    let (rmcp_out, pump_out) = tokio::io::duplex(PIPE);
    let (errors, error_rx) = mpsc::unbounded_channel();
    tokio::spawn(read_pump(input, pump_in, errors));
    let flushed = tokio::spawn(write_pump(pump_out, error_rx, output));
    Stdio {
        transport: (rmcp_in, rmcp_out),
        flushed,
    }
}

/// What one input line is.
#[derive(Debug, PartialEq)]
enum Line {
    /// Nothing but whitespace: skipped, as rmcp skips it.
    Blank,
    /// JSON: handed to rmcp.
    Json,
    /// Not JSON: answered with this parse-error frame.
    Malformed(String),
}

/// Judges one line (without its `\n`) as rmcp will: parsed into the very
/// message type rmcp reads, so whatever rmcp would drop as unparsable
/// (not JSON, invalid UTF-8 in a string, a lone surrogate escape, nesting
/// past serde_json's 128 levels) is answered here. JSON that is merely not
/// a valid message goes on to rmcp, which answers it as an invalid request.
fn judge(line: &[u8]) -> Line {
    let line = line.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(line);
    if line.iter().all(u8::is_ascii_whitespace) {
        return Line::Blank;
    }
    match serde_json::from_slice::<rmcp::model::ClientJsonRpcMessage>(line) {
        Ok(_) => Line::Json,
        Err(e) => match e.classify() {
            Category::Syntax | Category::Eof => {
                Line::Malformed(parse_error(request_id(line), &e.to_string()))
            }
            Category::Data | Category::Io => Line::Json,
        },
    }
}

/// The id of a request whose line rmcp cannot read, when a lenient read
/// (one that skips the other members unchecked) still finds one: the
/// client waiting on it gets its answer. `null` otherwise.
pub(crate) fn request_id(line: &[u8]) -> serde_json::Value {
    #[derive(serde::Deserialize)]
    struct Probe {
        id: Option<serde_json::Value>,
    }
    serde_json::from_slice::<Probe>(line)
        .ok()
        .and_then(|p| p.id)
        .filter(|id| id.is_string() || id.is_i64() || id.is_u64())
        .unwrap_or(serde_json::Value::Null)
}

/// The JSON-RPC reply to a line that cannot be read, as one frame.
fn parse_error(id: serde_json::Value, why: &str) -> String {
    let frame = serde_json::json!({
        "jsonrpc": "2.0",
        "id": id,
        "error": {"code": -32700, "message": format!("Parse error: {why}")},
    });
    format!("{frame}\n")
}

/// Reads lines from `input`: JSON goes to rmcp, anything else is answered.
/// Ends (closing rmcp's input) at EOF or on a read error.
async fn read_pump<R>(input: R, mut to_rmcp: DuplexStream, errors: mpsc::UnboundedSender<String>)
where
    R: AsyncRead + Unpin,
{
    let mut input = BufReader::new(input);
    let mut line = Vec::new();
    loop {
        line.clear();
        let too_long = match read_bounded(&mut input, &mut line).await {
            Ok(Read::Eof) => break,
            Ok(Read::Line) => false,
            Ok(Read::TooLong) => true,
            Err(e) => {
                tracing::warn!(error = %e, "cannot read stdin");
                break;
            }
        };
        let verdict = if too_long {
            Line::Malformed(parse_error(
                serde_json::Value::Null,
                &format!("the line is longer than {MAX_LINE} bytes"),
            ))
        } else {
            judge(line.strip_suffix(b"\n").unwrap_or(&line))
        };
        match verdict {
            Line::Blank => {}
            Line::Json => {
                if to_rmcp.write_all(&line).await.is_err() {
                    break;
                }
                if !line.ends_with(b"\n") && to_rmcp.write_all(b"\n").await.is_err() {
                    break;
                }
            }
            Line::Malformed(frame) => {
                tracing::debug!("answered a line that is not JSON");
                // A channel to the writer pump (not a JDWP send).
                if mpsc::UnboundedSender::send(&errors, frame).is_err() {
                    break;
                }
            }
        }
    }
}

/// How one bounded read ended.
enum Read {
    Line,
    TooLong,
    Eof,
}

/// Reads one line into `line`, at most [`MAX_LINE`] bytes; the rest of a
/// longer line is consumed and dropped. A last line without `\n` counts.
async fn read_bounded<R: AsyncRead + Unpin>(
    input: &mut BufReader<R>,
    line: &mut Vec<u8>,
) -> std::io::Result<Read> {
    let mut too_long = false;
    loop {
        let available = input.fill_buf().await?;
        if available.is_empty() {
            return Ok(match (too_long, line.is_empty()) {
                (true, _) => Read::TooLong,
                (false, true) => Read::Eof,
                (false, false) => Read::Line,
            });
        }
        let newline = available.iter().position(|b| *b == b'\n');
        let take = newline.map_or(available.len(), |i| i + 1);
        if !too_long && line.len() + take <= MAX_LINE {
            line.extend_from_slice(&available[..take]);
        } else {
            too_long = true;
            line.clear();
        }
        input.consume(take);
        if newline.is_some() {
            return Ok(if too_long { Read::TooLong } else { Read::Line });
        }
    }
}

/// Copies rmcp's frames to `output` whole, with the parse-error replies
/// between them. Ends when rmcp closes its side, after the last reply.
async fn write_pump<W>(
    from_rmcp: DuplexStream,
    mut errors: mpsc::UnboundedReceiver<String>,
    output: W,
) where
    W: AsyncWrite + Unpin,
{
    let mut output = output;
    let mut from_rmcp = BufReader::new(from_rmcp);
    let mut frame = Vec::new();
    let mut errors_open = true;
    loop {
        let bytes: Vec<u8> = tokio::select! {
            read = from_rmcp.read_until(b'\n', &mut frame) => match read {
                Ok(0) | Err(_) => break,
                Ok(_) => std::mem::take(&mut frame),
            },
            error = errors.recv(), if errors_open => match error {
                Some(error) => error.into_bytes(),
                None => {
                    errors_open = false;
                    continue;
                }
            },
        };
        if output.write_all(&bytes).await.is_err() || output.flush().await.is_err() {
            return;
        }
    }
    // rmcp is done; answer what the reader still found.
    while let Ok(error) = errors.try_recv() {
        if output.write_all(error.as_bytes()).await.is_err() {
            return;
        }
    }
    let _ = output.flush().await;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_are_judged_as_json_or_not() {
        assert_eq!(judge(b"{\"jsonrpc\":\"2.0\"}"), Line::Json);
        assert_eq!(judge(b"\xEF\xBB\xBF[1]\r"), Line::Json);
        assert_eq!(judge(b"   \r"), Line::Blank);
        assert!(matches!(judge(b"{not json"), Line::Malformed(_)));
        assert!(matches!(judge(b"\xFF\xFE"), Line::Malformed(_)));
        let Line::Malformed(frame) = judge(b"{\"a\":") else {
            panic!("malformed")
        };
        let v: serde_json::Value = serde_json::from_str(&frame).expect("a frame is JSON");
        assert_eq!(v["id"], serde_json::Value::Null);
        assert_eq!(v["error"]["code"], -32700);
        assert!(frame.ends_with('\n') && !frame[..frame.len() - 1].contains('\n'));
    }

    /// Lines rmcp drops unread, each answered with the id a lenient read
    /// finds (null when none).
    #[test]
    fn what_rmcp_cannot_read_is_answered_with_the_id_when_one_is_found() {
        let deep = format!(
            "{{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"ping\",\"params\":{{\"x\":{}{}}}}}",
            "[".repeat(200),
            "]".repeat(200)
        );
        for (line, id) in [
            (
                &b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\",\"params\":{\"x\":\"\xFF\"}}"
                    [..],
                serde_json::json!(1),
            ),
            (
                br#"{"jsonrpc":"2.0","id":"a","method":"ping","params":{"x":"\ud800"}}"#,
                serde_json::json!("a"),
            ),
            (deep.as_bytes(), serde_json::json!(3)),
            (
                br#"{"jsonrpc":"2.0","id":{"x":1},"params":"\ud800"}"#,
                serde_json::Value::Null,
            ),
        ] {
            let Line::Malformed(frame) = judge(line) else {
                panic!("{:?} must be answered", String::from_utf8_lossy(line))
            };
            let v: serde_json::Value = serde_json::from_str(&frame).expect("a frame is JSON");
            assert_eq!(v["id"], id, "{frame}");
            assert_eq!(v["error"]["code"], -32700);
        }
        // JSON that is not a valid message is rmcp's to answer.
        assert_eq!(judge(br#"{"jsonrpc":"2.0","id":1}"#), Line::Json);
        assert_eq!(
            judge(br#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#),
            Line::Json
        );
    }
}
