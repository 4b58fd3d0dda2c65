//! An OTLP/HTTP trace receiver for the telemetry tests: HTTP/1.1 on 127.0.0.1, optionally over
//! TLS with a certificate signed by a CA made in the test (rcgen), that records each request's
//! headers, decodes gzip bodies and the protobuf `ExportTraceServiceRequest`, and can refuse the
//! first requests with 503 to exercise the exporter's retry.

use std::io::Read as _;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
use prost::Message as _;
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, BufReader};
use tokio_rustls::rustls;

use super::java::lock;
use super::otlp::{CollectedSpan, ReceiverThread, spans_of, wait_for_spans};

/// One export request as the receiver saw it.
#[derive(Debug, Clone, PartialEq)]
pub struct SeenRequest {
    pub path: String,
    pub content_type: Option<String>,
    pub content_encoding: Option<String>,
    /// Body bytes on the wire (compressed, if it was).
    pub wire_bytes: usize,
    /// The status answered.
    pub status: u16,
    /// The spans the request carried (decoded even when refused).
    pub spans: Vec<CollectedSpan>,
}

/// A CA and a server certificate for `localhost` it signed, made fresh for one test.
#[derive(Debug)]
pub struct TestPki {
    /// The CA's certificate, PEM: what `OTEL_EXPORTER_OTLP_CERTIFICATE` points at.
    pub ca_pem: String,
    /// The server's certificate and key, PEM (for tonic's TLS server).
    pub server_pem: String,
    pub server_key_pem: String,
    server_der: Vec<u8>,
    server_key_der: Vec<u8>,
}

impl TestPki {
    pub fn generate() -> TestPki {
        use rcgen::{BasicConstraints, CertificateParams, CertifiedIssuer, DnType, IsCa, KeyPair};
        let ca_key = KeyPair::generate().unwrap_or_else(|e| panic!("CA key: {e}"));
        let mut ca_params =
            CertificateParams::new(Vec::<String>::new()).unwrap_or_else(|e| panic!("{e}"));
        ca_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        ca_params
            .distinguished_name
            .push(DnType::CommonName, "jvmscope test CA");
        let ca = CertifiedIssuer::self_signed(ca_params, ca_key)
            .unwrap_or_else(|e| panic!("CA certificate: {e}"));
        let server_key = KeyPair::generate().unwrap_or_else(|e| panic!("server key: {e}"));
        let server = CertificateParams::new(vec!["localhost".to_string()])
            .unwrap_or_else(|e| panic!("{e}"))
            .signed_by(&server_key, &ca)
            .unwrap_or_else(|e| panic!("server certificate: {e}"));
        TestPki {
            ca_pem: ca.pem(),
            server_pem: server.pem(),
            server_key_pem: server_key.serialize_pem(),
            server_der: server.der().to_vec(),
            server_key_der: server_key.serialize_der(),
        }
    }

    fn server_config(&self) -> Arc<rustls::ServerConfig> {
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let key = rustls::pki_types::PrivatePkcs8KeyDer::from(self.server_key_der.clone());
        let config = rustls::ServerConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .unwrap_or_else(|e| panic!("TLS versions: {e}"))
            .with_no_client_auth()
            .with_single_cert(
                vec![rustls::pki_types::CertificateDer::from(
                    self.server_der.clone(),
                )],
                key.into(),
            )
            .unwrap_or_else(|e| panic!("TLS server config: {e}"));
        Arc::new(config)
    }
}

/// How the receiver behaves.
#[derive(Debug, Default)]
pub struct HttpReceiverOpts<'a> {
    /// Serve HTTPS with this PKI's server certificate.
    pub tls: Option<&'a TestPki>,
    /// Answer the first this many requests with 503 Service Unavailable.
    pub refuse_first: usize,
}

#[derive(Debug, Default)]
struct Seen {
    requests: Mutex<Vec<SeenRequest>>,
    /// TLS handshakes that failed (a client that did not trust us).
    handshake_failures: Mutex<Vec<String>>,
}

/// The receiver (its own thread and runtime). Dropping it stops it.
#[derive(Debug)]
pub struct HttpReceiver {
    server: ReceiverThread,
    seen: Arc<Seen>,
}

impl HttpReceiver {
    /// Starts the receiver on an ephemeral port; returns once it accepts connections.
    pub fn start(opts: HttpReceiverOpts<'_>) -> HttpReceiver {
        let seen = Arc::new(Seen::default());
        let acceptor = opts
            .tls
            .map(|pki| tokio_rustls::TlsAcceptor::from(pki.server_config()));
        let refuse_first = opts.refuse_first;
        let shared = seen.clone();
        let tls = acceptor.is_some();
        let server = ReceiverThread::spawn(
            "OTLP/HTTP receiver",
            tls,
            move |listener, mut stop| async move {
                loop {
                    let socket = tokio::select! {
                        _ = &mut stop => return,
                        accepted = listener.accept() => match accepted {
                            Ok((socket, _)) => socket,
                            Err(_) => continue,
                        },
                    };
                    let seen = shared.clone();
                    let acceptor = acceptor.clone();
                    tokio::spawn(async move {
                        match acceptor {
                            None => serve(socket, &seen, refuse_first).await,
                            Some(acceptor) => match acceptor.accept(socket).await {
                                Ok(stream) => serve(stream, &seen, refuse_first).await,
                                Err(e) => lock(&seen.handshake_failures).push(e.to_string()),
                            },
                        }
                    });
                }
            },
        );
        HttpReceiver { server, seen }
    }

    /// The base URL for `OTEL_EXPORTER_OTLP_ENDPOINT` (the exporter appends `/v1/traces`):
    /// `https://localhost:<port>` with TLS (the name the certificate is for), else
    /// `http://127.0.0.1:<port>`.
    pub fn endpoint(&self) -> String {
        self.server.endpoint()
    }

    /// Every request received so far, in order.
    pub fn requests(&self) -> Vec<SeenRequest> {
        lock(&self.seen.requests).clone()
    }

    /// The spans of the requests answered 200.
    pub fn spans(&self) -> Vec<CollectedSpan> {
        self.requests()
            .into_iter()
            .filter(|r| r.status == 200)
            .flat_map(|r| r.spans)
            .collect()
    }

    /// Why TLS handshakes failed, if any did.
    pub fn handshake_failures(&self) -> Vec<String> {
        lock(&self.seen.handshake_failures).clone()
    }

    /// Waits until `done` accepts the spans accepted so far.
    #[track_caller]
    pub fn wait_for(
        &self,
        timeout: Duration,
        what: &str,
        done: impl Fn(&[CollectedSpan]) -> bool,
    ) -> Vec<CollectedSpan> {
        wait_for_spans(timeout, what, || self.spans(), done)
    }
}

/// Serves HTTP/1.1 requests on one connection until the client closes it.
async fn serve<S: AsyncRead + AsyncWrite + Unpin>(stream: S, seen: &Seen, refuse_first: usize) {
    let mut stream = BufReader::new(stream);
    loop {
        let mut request_line = String::new();
        match stream.read_line(&mut request_line).await {
            Ok(0) | Err(_) => return,
            Ok(_) => {}
        }
        let path = request_line
            .split_whitespace()
            .nth(1)
            .unwrap_or_default()
            .to_string();
        let mut headers: Vec<(String, String)> = Vec::new();
        loop {
            let mut line = String::new();
            match stream.read_line(&mut line).await {
                Ok(0) | Err(_) => return,
                Ok(_) => {}
            }
            let line = line.trim_end();
            if line.is_empty() {
                break;
            }
            if let Some((k, v)) = line.split_once(':') {
                headers.push((k.trim().to_ascii_lowercase(), v.trim().to_string()));
            }
        }
        let header = |name: &str| {
            headers
                .iter()
                .find(|(k, _)| k == name)
                .map(|(_, v)| v.clone())
        };
        let length: usize = header("content-length")
            .and_then(|v| v.parse().ok())
            .unwrap_or_else(|| panic!("the exporter sent no Content-Length: {headers:?}"));
        let mut body = vec![0u8; length];
        if stream.read_exact(&mut body).await.is_err() {
            return;
        }
        let encoding = header("content-encoding");
        let decoded = match encoding.as_deref() {
            Some("gzip") => {
                let mut out = Vec::new();
                flate2::read::GzDecoder::new(body.as_slice())
                    .read_to_end(&mut out)
                    .unwrap_or_else(|e| panic!("Content-Encoding: gzip, but the body is not: {e}"));
                out
            }
            None => body.clone(),
            Some(other) => panic!("unexpected Content-Encoding {other:?}"),
        };
        let request = ExportTraceServiceRequest::decode(decoded.as_slice())
            .unwrap_or_else(|e| panic!("not an ExportTraceServiceRequest: {e}"));
        let status = {
            let mut requests = lock(&seen.requests);
            let status = if requests.len() < refuse_first {
                503
            } else {
                200
            };
            requests.push(SeenRequest {
                path,
                content_type: header("content-type"),
                content_encoding: encoding,
                wire_bytes: body.len(),
                status,
                spans: spans_of(request),
            });
            status
        };
        let response = if status == 200 {
            // An empty ExportTraceServiceResponse is zero bytes.
            "HTTP/1.1 200 OK\r\ncontent-type: application/x-protobuf\r\ncontent-length: 0\r\n\r\n"
        } else {
            "HTTP/1.1 503 Service Unavailable\r\ncontent-length: 0\r\n\r\n"
        };
        let stream = stream.get_mut();
        if stream.write_all(response.as_bytes()).await.is_err() || stream.flush().await.is_err() {
            return;
        }
        if header("connection").is_some_and(|v| v.eq_ignore_ascii_case("close")) {
            return;
        }
    }
}
