//! Sends encoded OTLP requests to the collector: gRPC (a unary call of
//! `opentelemetry.proto.collector.trace.v1.TraceService/Export` through a
//! tonic channel whose codec passes our bytes through untouched) or
//! http/protobuf (a POST of `application/x-protobuf`). Also reads the
//! transport's own standard variables: `OTEL_EXPORTER_OTLP_HEADERS`,
//! `OTEL_EXPORTER_OTLP_TIMEOUT` and `OTEL_EXPORTER_OTLP_COMPRESSION`, each
//! with its `_TRACES_` variant winning.

use std::time::Duration;

use bytes::{Buf, BufMut, Bytes};
use tonic::codec::{Codec, DecodeBuf, Decoder, EncodeBuf, Encoder};
use tonic::codegen::http::uri::PathAndQuery;
use tonic::metadata::{MetadataKey, MetadataMap, MetadataValue};

use super::config::Protocol;

/// Default per-request timeout (`OTEL_EXPORTER_OTLP_TIMEOUT`).
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(10);

/// The gRPC method every export calls.
const EXPORT_PATH: &str = "/opentelemetry.proto.collector.trace.v1.TraceService/Export";

/// What the transport variables say.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Settings {
    /// Extra request headers (gRPC metadata), keys in lower case.
    pub headers: Vec<(String, String)>,
    /// Longest one request may take.
    pub timeout: Duration,
}

impl Default for Settings {
    fn default() -> Self {
        Self {
            headers: Vec::new(),
            timeout: DEFAULT_TIMEOUT,
        }
    }
}

impl Settings {
    /// Reads the variables through `lookup` (empty values count as unset);
    /// problems go to `warnings`, and the setting keeps its default.
    pub fn from_lookup(
        lookup: impl Fn(&str) -> Option<String>,
        warnings: &mut Vec<String>,
    ) -> Self {
        let get = |suffix: &str| {
            [
                format!("OTEL_EXPORTER_OTLP_TRACES_{suffix}"),
                format!("OTEL_EXPORTER_OTLP_{suffix}"),
            ]
            .into_iter()
            .find_map(|name| {
                lookup(&name)
                    .map(|v| v.trim().to_string())
                    .filter(|v| !v.is_empty())
                    .map(|v| (name, v))
            })
        };
        let mut settings = Settings::default();
        if let Some((name, v)) = get("TIMEOUT") {
            match v.parse::<u64>() {
                Ok(ms) if ms > 0 => settings.timeout = Duration::from_millis(ms),
                _ => warnings.push(format!(
                    "{name}={v:?} is not a positive number of milliseconds; using {}",
                    DEFAULT_TIMEOUT.as_millis()
                )),
            }
        }
        if let Some((name, v)) = get("HEADERS") {
            for pair in v.split(',').filter(|p| !p.trim().is_empty()) {
                match pair.split_once('=') {
                    Some((key, value)) if valid_key(key.trim()) => settings.headers.push((
                        key.trim().to_ascii_lowercase(),
                        percent_decode(value.trim()),
                    )),
                    _ => warnings.push(format!(
                        "{name}: {pair:?} is not a key=value header; it is left out"
                    )),
                }
            }
        }
        if let Some((name, v)) = get("COMPRESSION")
            && !v.eq_ignore_ascii_case("none")
        {
            warnings.push(format!(
                "{name}={v:?} is not supported; spans are sent uncompressed"
            ));
        }
        settings
    }
}

/// A header name: the token characters HTTP allows.
fn valid_key(key: &str) -> bool {
    !key.is_empty()
        && key
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b))
}

/// `%XX` escapes decoded (the header values' encoding); anything malformed
/// is kept as written.
fn percent_decode(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = |b: u8| (b as char).to_digit(16);
        if bytes[i] == b'%'
            && i + 2 < bytes.len()
            && let (Some(h), Some(l)) = (hex(bytes[i + 1]), hex(bytes[i + 2]))
        {
            out.push((h * 16 + l) as u8);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).unwrap_or_else(|_| s.to_string())
}

/// Passes already-encoded request bytes through, and ignores the reply's
/// content (an `ExportTraceServiceResponse`; its optional partial-success
/// note is not acted on).
#[derive(Debug, Clone, Copy, Default)]
struct Passthrough;

impl Codec for Passthrough {
    type Encode = Bytes;
    type Decode = ();
    type Encoder = Passthrough;
    type Decoder = Passthrough;

    fn encoder(&mut self) -> Self::Encoder {
        Passthrough
    }

    fn decoder(&mut self) -> Self::Decoder {
        Passthrough
    }
}

impl Encoder for Passthrough {
    type Item = Bytes;
    type Error = tonic::Status;

    fn encode(&mut self, item: Bytes, dst: &mut EncodeBuf<'_>) -> Result<(), Self::Error> {
        dst.put(item);
        Ok(())
    }
}

impl Decoder for Passthrough {
    type Item = ();
    type Error = tonic::Status;

    fn decode(&mut self, src: &mut DecodeBuf<'_>) -> Result<Option<()>, Self::Error> {
        src.advance(src.remaining());
        Ok(Some(()))
    }
}

/// The connection to the collector.
#[derive(Debug)]
pub enum Transport {
    Grpc {
        client: tonic::client::Grpc<tonic::transport::Channel>,
        metadata: MetadataMap,
        timeout: Duration,
    },
    Http {
        client: reqwest::Client,
        url: String,
        headers: reqwest::header::HeaderMap,
    },
}

impl Transport {
    /// Prepares the transport; nothing connects until the first export.
    /// Call it inside the tokio runtime (the gRPC channel lives there).
    pub fn new(endpoint: &str, protocol: Protocol, settings: &Settings) -> Result<Self, String> {
        match protocol {
            Protocol::Grpc => {
                let channel = tonic::transport::Endpoint::from_shared(endpoint.to_string())
                    .map_err(|e| format!("{endpoint:?} is not a valid gRPC endpoint: {e}"))?
                    .connect_timeout(settings.timeout)
                    .timeout(settings.timeout)
                    .connect_lazy();
                let mut metadata = MetadataMap::new();
                for (key, value) in &settings.headers {
                    let key = MetadataKey::from_bytes(key.as_bytes())
                        .map_err(|e| format!("header {key:?}: {e}"))?;
                    let value = MetadataValue::try_from(value.as_str())
                        .map_err(|e| format!("header {key:?}: {e}"))?;
                    metadata.insert(key, value);
                }
                Ok(Transport::Grpc {
                    client: tonic::client::Grpc::new(channel),
                    metadata,
                    timeout: settings.timeout,
                })
            }
            Protocol::HttpProtobuf => {
                let url = reqwest::Url::parse(endpoint)
                    .map_err(|e| format!("{endpoint:?} is not a valid URL: {e}"))?;
                let mut headers = reqwest::header::HeaderMap::new();
                headers.insert(
                    reqwest::header::CONTENT_TYPE,
                    reqwest::header::HeaderValue::from_static("application/x-protobuf"),
                );
                for (key, value) in &settings.headers {
                    let name = reqwest::header::HeaderName::from_bytes(key.as_bytes())
                        .map_err(|e| format!("header {key:?}: {e}"))?;
                    let value = reqwest::header::HeaderValue::from_str(value)
                        .map_err(|e| format!("header {key:?}: {e}"))?;
                    headers.insert(name, value);
                }
                let client = reqwest::Client::builder()
                    .timeout(settings.timeout)
                    .build()
                    .map_err(|e| format!("cannot build the HTTP client: {e}"))?;
                Ok(Transport::Http {
                    client,
                    url: url.to_string(),
                    headers,
                })
            }
        }
    }

    /// Sends one encoded `ExportTraceServiceRequest`. The returned future
    /// owns what it needs (the clients are cheap handles), so several
    /// requests can be in flight at once.
    pub fn send(&self, body: Bytes) -> impl Future<Output = Result<(), String>> + Send + 'static {
        let this = self.clone_handle();
        async move {
            match this {
                Transport::Grpc {
                    mut client,
                    metadata,
                    timeout,
                } => {
                    let call = async {
                        client
                            .ready()
                            .await
                            .map_err(|e| format!("gRPC channel: {e}"))?;
                        let mut request = tonic::Request::new(body);
                        *request.metadata_mut() = metadata;
                        client
                            .unary::<Bytes, (), _>(
                                request,
                                PathAndQuery::from_static(EXPORT_PATH),
                                Passthrough,
                            )
                            .await
                            .map(|_| ())
                            .map_err(|status| {
                                format!("gRPC {:?}: {}", status.code(), status.message())
                            })
                    };
                    match tokio::time::timeout(timeout, call).await {
                        Ok(result) => result,
                        Err(_) => Err(format!("no answer within {timeout:?}")),
                    }
                }
                Transport::Http {
                    client,
                    url,
                    headers,
                } => {
                    let response = client
                        .post(url.as_str())
                        .headers(headers)
                        .body(body)
                        .send()
                        .await
                        .map_err(|e| format!("HTTP: {e}"))?;
                    let status = response.status();
                    // Read the (small) answer so the connection can be reused.
                    let _ = response.bytes().await;
                    if status.is_success() {
                        Ok(())
                    } else {
                        Err(format!("HTTP {status}"))
                    }
                }
            }
        }
    }

    /// Another handle on the same connection(s).
    fn clone_handle(&self) -> Transport {
        match self {
            Transport::Grpc {
                client,
                metadata,
                timeout,
            } => Transport::Grpc {
                client: client.clone(),
                metadata: metadata.clone(),
                timeout: *timeout,
            },
            Transport::Http {
                client,
                url,
                headers,
            } => Transport::Http {
                client: client.clone(),
                url: url.clone(),
                headers: headers.clone(),
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn settings(vars: &[(&str, &str)]) -> (Settings, Vec<String>) {
        let map: HashMap<String, String> = vars
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        let mut warnings = Vec::new();
        let s = Settings::from_lookup(|n| map.get(n).cloned(), &mut warnings);
        (s, warnings)
    }

    #[test]
    fn headers_timeout_and_their_traces_variants() {
        let (s, w) = settings(&[
            (
                "OTEL_EXPORTER_OTLP_HEADERS",
                "Api-Key=a%20b, x-team=core,bad",
            ),
            ("OTEL_EXPORTER_OTLP_TIMEOUT", "2500"),
            ("OTEL_EXPORTER_OTLP_TRACES_TIMEOUT", "700"),
        ]);
        assert_eq!(
            s.headers,
            vec![
                ("api-key".to_string(), "a b".to_string()),
                ("x-team".to_string(), "core".to_string())
            ]
        );
        assert_eq!(s.timeout, Duration::from_millis(700), "_TRACES_ wins");
        assert_eq!(w.len(), 1, "{w:?}");
        let (s, w) = settings(&[]);
        assert_eq!(s, Settings::default());
        assert!(w.is_empty());
    }

    #[test]
    fn bad_values_warn_and_keep_the_defaults() {
        let (s, w) = settings(&[
            ("OTEL_EXPORTER_OTLP_TIMEOUT", "soon"),
            ("OTEL_EXPORTER_OTLP_COMPRESSION", "gzip"),
        ]);
        assert_eq!(s.timeout, DEFAULT_TIMEOUT);
        assert_eq!(w.len(), 2, "{w:?}");
        let (_, w) = settings(&[("OTEL_EXPORTER_OTLP_TRACES_COMPRESSION", "none")]);
        assert!(w.is_empty());
    }

    #[test]
    fn percent_escapes_decode_and_malformed_ones_stay() {
        assert_eq!(percent_decode("a%3Db%2c"), "a=b,");
        assert_eq!(percent_decode("100%"), "100%");
        assert_eq!(percent_decode("%zz"), "%zz");
    }

    #[tokio::test]
    async fn endpoints_are_checked_when_the_transport_is_made() {
        let s = Settings::default();
        assert!(Transport::new("not a url", Protocol::HttpProtobuf, &s).is_err());
        assert!(Transport::new("http://127.0.0.1:4317", Protocol::Grpc, &s).is_ok());
        assert!(
            Transport::new(
                "http://127.0.0.1:4318/v1/traces",
                Protocol::HttpProtobuf,
                &s
            )
            .is_ok()
        );
    }
}
