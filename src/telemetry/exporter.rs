//! Builds the `opentelemetry-otlp` span exporter: gRPC through tonic or
//! http/protobuf through reqwest, with TLS (rustls), gzip and the library's
//! retry with back-off. Also reads the variables the library leaves to us:
//! `OTEL_EXPORTER_OTLP_CERTIFICATE`, `…_CLIENT_CERTIFICATE` and
//! `…_CLIENT_KEY` (the HTTP exporter reads none of them, the gRPC one only
//! takes a TLS configuration), and checks `…_TIMEOUT` and `…_COMPRESSION`
//! so a bad value is named in a warning. Each has a `_TRACES_` variant that
//! wins. Headers (`…_HEADERS`) the library reads itself.

use std::path::PathBuf;
use std::time::Duration;

use opentelemetry_otlp::tonic_types::transport::{Certificate, ClientTlsConfig, Identity};
use opentelemetry_otlp::{Compression, WithExportConfig, WithHttpConfig, WithTonicConfig};

use super::config::Protocol;

/// Default per-request timeout (`OTEL_EXPORTER_OTLP_TIMEOUT`), also the
/// library's budget for one export and its retries.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(10);

/// What the exporter's own variables say.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Settings {
    /// Longest one export (with its retries) may take.
    pub timeout: Duration,
    /// gzip the requests.
    pub gzip: bool,
    /// PEM file of the certificates the collector's certificate is checked
    /// against (instead of the system's roots).
    pub certificate: Option<PathBuf>,
    /// PEM files of our client certificate and its key, for mutual TLS.
    pub client_certificate: Option<PathBuf>,
    pub client_key: Option<PathBuf>,
    /// `OTEL_EXPORTER_OTLP_INSECURE=true`: a gRPC endpoint without a scheme
    /// is plain text (otherwise it is TLS, as the library treats it).
    pub insecure: bool,
}

impl Default for Settings {
    fn default() -> Self {
        Self {
            timeout: DEFAULT_TIMEOUT,
            gzip: false,
            certificate: None,
            client_certificate: None,
            client_key: None,
            insecure: false,
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
        if let Some((name, v)) = get("COMPRESSION") {
            if v.eq_ignore_ascii_case("gzip") {
                settings.gzip = true;
            } else if !v.eq_ignore_ascii_case("none") {
                warnings.push(format!(
                    "{name}={v:?} is not supported (use gzip or none); spans are sent uncompressed"
                ));
            }
        }
        settings.certificate = get("CERTIFICATE").map(|(_, v)| PathBuf::from(v));
        settings.client_certificate = get("CLIENT_CERTIFICATE").map(|(_, v)| PathBuf::from(v));
        settings.client_key = get("CLIENT_KEY").map(|(_, v)| PathBuf::from(v));
        settings.insecure = get("INSECURE").is_some_and(|(_, v)| v.eq_ignore_ascii_case("true"));
        if settings.client_certificate.is_some() != settings.client_key.is_some() {
            warnings.push(
                "OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE and OTEL_EXPORTER_OTLP_CLIENT_KEY go \
                 together; the one given is ignored"
                    .to_string(),
            );
            settings.client_certificate = None;
            settings.client_key = None;
        }
        settings
    }

    /// The PEM files' contents: (trusted certificates, (client certificate,
    /// client key)). A file that cannot be read is named in `warnings` and
    /// left out.
    fn pem_files(&self, warnings: &mut Vec<String>) -> PemFiles {
        let read = |path: &PathBuf, what: &str, warnings: &mut Vec<String>| {
            std::fs::read(path)
                .map_err(|e| {
                    warnings.push(format!(
                        "cannot read the {what} {} ({e}); it is left out",
                        path.display()
                    ))
                })
                .ok()
        };
        let ca = self
            .certificate
            .as_ref()
            .and_then(|p| read(p, "collector's CA certificate", warnings));
        let identity = match (&self.client_certificate, &self.client_key) {
            (Some(cert), Some(key)) => {
                read(cert, "client certificate", warnings).zip(read(key, "client key", warnings))
            }
            _ => None,
        };
        PemFiles { ca, identity }
    }
}

struct PemFiles {
    ca: Option<Vec<u8>>,
    identity: Option<(Vec<u8>, Vec<u8>)>,
}

/// The exporter for `endpoint` over `protocol`. Call it inside the tokio
/// runtime (the gRPC channel is created there; nothing connects until the
/// first export). Problems with the TLS files join `warnings`.
pub fn build(
    endpoint: &str,
    protocol: Protocol,
    settings: &Settings,
    warnings: &mut Vec<String>,
) -> Result<opentelemetry_otlp::SpanExporter, String> {
    let pem = settings.pem_files(warnings);
    let built = match protocol {
        Protocol::Grpc => {
            let mut builder = opentelemetry_otlp::SpanExporter::builder()
                .with_tonic()
                .with_endpoint(endpoint)
                .with_timeout(settings.timeout);
            if settings.gzip {
                builder = builder.with_compression(Compression::Gzip);
            }
            if uses_tls(endpoint, settings.insecure) {
                let mut tls = ClientTlsConfig::new();
                tls = match &pem.ca {
                    Some(ca) => tls.ca_certificate(Certificate::from_pem(ca)),
                    None => tls.with_native_roots(),
                };
                if let Some((cert, key)) = &pem.identity {
                    tls = tls.identity(Identity::from_pem(cert, key));
                }
                builder = builder.with_tls_config(tls);
            }
            builder.build()
        }
        Protocol::HttpProtobuf => {
            let client = http_client(settings, &pem)?;
            let mut builder = opentelemetry_otlp::SpanExporter::builder()
                .with_http()
                .with_protocol(opentelemetry_otlp::Protocol::HttpBinary)
                .with_endpoint(endpoint)
                .with_timeout(settings.timeout)
                .with_http_client(client);
            if settings.gzip {
                builder = builder.with_compression(Compression::Gzip);
            }
            builder.build()
        }
    };
    built.map_err(|e| e.to_string())
}

/// Whether a gRPC endpoint is TLS: `https://…`, or no scheme at all unless
/// `OTEL_EXPORTER_OTLP_INSECURE` says plain text (the library's rule).
fn uses_tls(endpoint: &str, insecure: bool) -> bool {
    let endpoint = endpoint.to_ascii_lowercase();
    match endpoint.split_once("://") {
        Some((scheme, _)) => scheme == "https",
        None => !insecure,
    }
}

/// The async reqwest client the HTTP exporter sends with: rustls (ring),
/// trusting the given CA besides the system's roots, presenting the client
/// certificate when one is given.
fn http_client(settings: &Settings, pem: &PemFiles) -> Result<reqwest::Client, String> {
    // reqwest is built without a default crypto provider; ring is ours.
    // Installing fails harmlessly when a provider is already installed.
    let _ = rustls::crypto::ring::default_provider().install_default();
    let mut builder = reqwest::Client::builder().timeout(settings.timeout);
    if let Some(ca) = &pem.ca {
        let certs = reqwest::Certificate::from_pem_bundle(ca)
            .map_err(|e| format!("the collector's CA certificate is not PEM: {e}"))?;
        for cert in certs {
            builder = builder.add_root_certificate(cert);
        }
    }
    if let Some((cert, key)) = &pem.identity {
        let mut both = cert.clone();
        both.push(b'\n');
        both.extend_from_slice(key);
        let identity = reqwest::Identity::from_pem(&both)
            .map_err(|e| format!("the client certificate and key are not PEM: {e}"))?;
        builder = builder.identity(identity);
    }
    builder.build().map_err(|e| e.to_string())
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
        let s = Settings::from_lookup(|name| map.get(name).cloned(), &mut warnings);
        (s, warnings)
    }

    #[test]
    fn defaults_without_variables() {
        let (s, warnings) = settings(&[]);
        assert_eq!(s, Settings::default());
        assert!(warnings.is_empty());
    }

    #[test]
    fn traces_variants_win_and_bad_values_warn() {
        let (s, warnings) = settings(&[
            ("OTEL_EXPORTER_OTLP_TIMEOUT", "100"),
            ("OTEL_EXPORTER_OTLP_TRACES_TIMEOUT", "250"),
            ("OTEL_EXPORTER_OTLP_COMPRESSION", "gzip"),
            ("OTEL_EXPORTER_OTLP_TRACES_CERTIFICATE", "/ca.pem"),
            ("OTEL_EXPORTER_OTLP_CERTIFICATE", "/other.pem"),
        ]);
        assert_eq!(s.timeout, Duration::from_millis(250));
        assert!(s.gzip);
        assert_eq!(s.certificate, Some(PathBuf::from("/ca.pem")));
        assert!(warnings.is_empty(), "{warnings:?}");

        let (s, warnings) = settings(&[
            ("OTEL_EXPORTER_OTLP_TIMEOUT", "soon"),
            ("OTEL_EXPORTER_OTLP_COMPRESSION", "zstd"),
            ("OTEL_EXPORTER_OTLP_CLIENT_KEY", "/key.pem"),
        ]);
        assert_eq!(s.timeout, DEFAULT_TIMEOUT);
        assert!(!s.gzip);
        assert_eq!(s.client_key, None, "a key without its certificate");
        assert_eq!(warnings.len(), 3, "{warnings:?}");
    }

    #[test]
    fn grpc_tls_follows_the_scheme_and_insecure() {
        assert!(uses_tls("https://collector:4317", false));
        assert!(uses_tls("HTTPS://collector:4317", true));
        assert!(!uses_tls("http://collector:4317", false));
        assert!(uses_tls("collector:4317", false));
        assert!(!uses_tls("collector:4317", true));
        let (s, _) = settings(&[("OTEL_EXPORTER_OTLP_TRACES_INSECURE", "TRUE")]);
        assert!(s.insecure);
    }

    #[test]
    fn an_unreadable_certificate_is_named_and_left_out() {
        let (s, _) = settings(&[(
            "OTEL_EXPORTER_OTLP_CERTIFICATE",
            "/nonexistent/jvmscope-ca.pem",
        )]);
        let mut warnings = Vec::new();
        let pem = s.pem_files(&mut warnings);
        assert!(pem.ca.is_none());
        assert_eq!(warnings.len(), 1);
        assert!(warnings[0].contains("jvmscope-ca.pem"), "{warnings:?}");
    }
}
