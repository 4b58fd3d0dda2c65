//! Opening a JDWP connection: TCP connect and the 14-byte handshake, each
//! bounded by the caller's timeout, with errors that tell a refused port
//! from a port that is not JDWP.

use std::time::Duration;

use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::time::timeout;

use crate::error::AttachError;
use crate::jdwp::packet::{HANDSHAKE, check_handshake};

/// Connects to `host:port` and exchanges handshakes within `limit`.
pub async fn dial(host: &str, port: u16, limit: Duration) -> Result<TcpStream, AttachError> {
    let addr = format!("{host}:{port}");
    let started = tokio::time::Instant::now();
    let mut stream = match timeout(limit, TcpStream::connect((host, port))).await {
        Err(_) => {
            return Err(AttachError::Connect {
                addr,
                detail: format!("no answer within {} ms", limit.as_millis()),
            });
        }
        Ok(Err(e)) if e.kind() == std::io::ErrorKind::ConnectionRefused => {
            return Err(AttachError::Refused { addr });
        }
        Ok(Err(e)) => {
            return Err(AttachError::Connect {
                addr,
                detail: e.to_string(),
            });
        }
        Ok(Ok(stream)) => stream,
    };
    let _ = stream.set_nodelay(true);
    let left = limit.saturating_sub(started.elapsed());
    handshake(&mut stream, &addr, limit, left).await?;
    Ok(stream)
}

/// Exchanges the 14-byte handshake on a connected `stream` within `left`
/// (`limit` is the whole budget, as the error says it); `addr` names the
/// peer in errors. Any byte stream: a TCP socket, or an in-process one.
pub async fn handshake<S: AsyncRead + AsyncWrite + Unpin>(
    stream: &mut S,
    addr: &str,
    limit: Duration,
    left: Duration,
) -> Result<(), AttachError> {
    let addr = addr.to_string();
    let exchange = async {
        stream.write_all(HANDSHAKE).await?;
        let mut got = [0u8; 14];
        let mut filled = 0;
        while filled < got.len() {
            let n = stream.read(&mut got[filled..]).await?;
            if n == 0 {
                break;
            }
            filled += n;
        }
        Ok::<_, std::io::Error>(got[..filled].to_vec())
    };
    match timeout(left, exchange).await {
        Err(_) => Err(AttachError::NotJdwp {
            addr,
            detail: format!(
                "it accepted the connection but sent no JDWP handshake within {} ms",
                limit.as_millis()
            ),
        }),
        Ok(Err(e)) => Err(AttachError::NotJdwp {
            addr,
            detail: format!("the connection failed during the handshake: {e}"),
        }),
        Ok(Ok(got)) if got.is_empty() => Err(AttachError::NotJdwp {
            addr,
            detail: "it closed the connection without a handshake (is another debugger attached?)"
                .into(),
        }),
        Ok(Ok(got)) => match check_handshake(&got) {
            Ok(()) => Ok(()),
            Err(_) => Err(AttachError::NotJdwp {
                addr,
                detail: format!(
                    "it answered {:?} instead of the JDWP handshake",
                    String::from_utf8_lossy(&got)
                ),
            }),
        },
    }
}
