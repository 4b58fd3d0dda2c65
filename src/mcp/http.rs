//! The HTTP transport (`jvmscope --http ADDR`, ADR 0025): rmcp's
//! streamable HTTP service at `/mcp`, mounted in axum behind three
//! layers, outermost first:
//!
//! 1. **auth**: a request without `Authorization: Bearer <token>` (the
//!    token compared in constant time) is answered 401 and goes no
//!    further; every other refusal below leaves with a JSON-RPC error body;
//! 2. **body limit**: a body over [`MAX_BODY`] is answered 413;
//! 3. **frame check**: a POST body that is not JSON gets 400 with the
//!    JSON-RPC parse error (-32700), JSON that is not a JSON-RPC message
//!    400 with invalid request (-32600), as the stdio guard answers them.
//!
//! rmcp then judges the rest (an unknown `Mcp-Session-Id` is 404). Each
//! MCP session rmcp opens gets its own server from the factory: the shared
//! actors and a session table of its own ([`JvmScope::for_http_client`]).

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{self, HeaderValue, StatusCode, header};
use axum::middleware::Next;
use axum::response::Response;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};
use serde_json::error::Category;
use subtle::ConstantTimeEq;

use super::JvmScope;
use crate::actors::Engine;

/// Where MCP is served.
pub const ENDPOINT: &str = "/mcp";

/// The largest request body read: 4 MiB (a tool call's arguments are
/// a few KiB; a hot-swapped class file well under a MiB).
pub const MAX_BODY: usize = 4 * 1024 * 1024;

/// The variable holding the bearer token.
pub const TOKEN_ENV: &str = "JVMSCOPE_AUTH_TOKEN";
/// The variable naming a file that holds the bearer token.
pub const TOKEN_FILE_ENV: &str = "JVMSCOPE_AUTH_TOKEN_FILE";

/// The port `--http` binds when given an address without one (or nothing).
pub const DEFAULT_PORT: u16 = 8787;

/// How long an MCP session may stay silent before rmcp closes it (and its
/// JVMs are released, as when the client ends it).
const IDLE: Duration = Duration::from_secs(30 * 60);

/// Why the HTTP server cannot start.
#[derive(Debug, thiserror::Error)]
pub enum HttpError {
    #[error(
        "--http needs a bearer token: set {TOKEN_ENV}, or {TOKEN_FILE_ENV} to a file holding it"
    )]
    NoToken,
    #[error("set either {TOKEN_ENV} or {TOKEN_FILE_ENV}, not both")]
    TwoTokens,
    #[error("{0} is set but empty")]
    EmptyToken(&'static str),
    #[error("cannot read the token file {path} ({TOKEN_FILE_ENV}): {source}")]
    TokenFile {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{0:?} is not an address to listen on: give IP:PORT, or a port")]
    Address(String),
    #[error("--tls-cert and --tls-key go together")]
    HalfTls,
    #[error("cannot read {what} {path}: {why}")]
    TlsFile {
        what: &'static str,
        path: PathBuf,
        why: String,
    },
    #[error("the certificate and key do not make a TLS server: {0}")]
    Tls(String),
    #[error("cannot listen on {addr}: {source}")]
    Bind {
        addr: SocketAddr,
        source: std::io::Error,
    },
}

/// The bearer token. Its bytes are never shown (`Debug` hides them) and
/// never logged or exported.
pub struct Token(Vec<u8>);

impl std::fmt::Debug for Token {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Token(<hidden>)")
    }
}

impl Token {
    /// Whether `presented` is the token, in time that does not depend on
    /// where they differ nor on how long either is: both are hashed and
    /// the digests compared in constant time.
    pub fn matches(&self, presented: &[u8]) -> bool {
        let ours = ring::digest::digest(&ring::digest::SHA256, &self.0);
        let theirs = ring::digest::digest(&ring::digest::SHA256, presented);
        ours.as_ref().ct_eq(theirs.as_ref()).into()
    }

    /// Whether a request's `Authorization` header carries the token
    /// (`Bearer`, any case, then the token).
    fn admits(&self, authorization: Option<&HeaderValue>) -> bool {
        let Some(value) = authorization.map(HeaderValue::as_bytes) else {
            return false;
        };
        let scheme = b"bearer ";
        if value.len() < scheme.len() || !value[..scheme.len()].eq_ignore_ascii_case(scheme) {
            return false;
        }
        self.matches(value[scheme.len()..].trim_ascii())
    }
}

/// The token from the environment (`var` reads a variable, `read` a
/// file): [`TOKEN_ENV`] itself, or the content of the file [`TOKEN_FILE_ENV`]
/// names (surrounding whitespace, a final newline among it, dropped).
pub fn token_from(
    var: impl Fn(&str) -> Option<String>,
    read: impl Fn(&Path) -> std::io::Result<String>,
) -> Result<Token, HttpError> {
    let value = var(TOKEN_ENV);
    let file = var(TOKEN_FILE_ENV);
    let (text, source) = match (value, file) {
        (Some(_), Some(_)) => return Err(HttpError::TwoTokens),
        (None, None) => return Err(HttpError::NoToken),
        (Some(value), None) => (value, TOKEN_ENV),
        (None, Some(path)) => {
            let path = PathBuf::from(path);
            let text = read(&path).map_err(|source| HttpError::TokenFile { path, source })?;
            (text, TOKEN_FILE_ENV)
        }
    };
    let token = text.trim();
    if token.is_empty() {
        return Err(HttpError::EmptyToken(source));
    }
    Ok(Token(token.as_bytes().to_vec()))
}

/// The token from this process's environment.
pub fn token_from_env() -> Result<Token, HttpError> {
    token_from(
        |name| std::env::var(name).ok(),
        |path| std::fs::read_to_string(path),
    )
}

/// The address `--http` listens on: `IP:PORT`, a bare `PORT` (on
/// 127.0.0.1), a bare IP (on [`DEFAULT_PORT`]), or empty (127.0.0.1 on
/// [`DEFAULT_PORT`]).
pub fn listen_address(given: &str) -> Result<SocketAddr, HttpError> {
    let given = given.trim();
    let loopback = std::net::Ipv4Addr::LOCALHOST.into();
    if given.is_empty() {
        return Ok(SocketAddr::new(loopback, DEFAULT_PORT));
    }
    if let Ok(port) = given.parse::<u16>() {
        return Ok(SocketAddr::new(loopback, port));
    }
    if let Ok(ip) = given.trim_matches(['[', ']']).parse::<std::net::IpAddr>() {
        return Ok(SocketAddr::new(ip, DEFAULT_PORT));
    }
    given
        .parse()
        .map_err(|_| HttpError::Address(given.to_string()))
}

/// A certificate chain and its key, PEM files.
#[derive(Debug, Clone)]
pub struct TlsFiles {
    pub cert: PathBuf,
    pub key: PathBuf,
}

impl TlsFiles {
    /// From `--tls-cert` and `--tls-key`: both or neither.
    pub fn from_flags(
        cert: Option<PathBuf>,
        key: Option<PathBuf>,
    ) -> Result<Option<TlsFiles>, HttpError> {
        match (cert, key) {
            (None, None) => Ok(None),
            (Some(cert), Some(key)) => Ok(Some(TlsFiles { cert, key })),
            _ => Err(HttpError::HalfTls),
        }
    }

    /// The rustls server configuration (ring), offering HTTP/2 and 1.1.
    fn server_config(&self) -> Result<Arc<rustls::ServerConfig>, HttpError> {
        use rustls::pki_types::pem::PemObject;
        use rustls::pki_types::{CertificateDer, PrivateKeyDer};
        let certs = CertificateDer::pem_file_iter(&self.cert)
            .and_then(|certs| certs.collect::<Result<Vec<_>, _>>())
            .map_err(|e| HttpError::TlsFile {
                what: "the certificate",
                path: self.cert.clone(),
                why: e.to_string(),
            })?;
        let key = PrivateKeyDer::from_pem_file(&self.key).map_err(|e| HttpError::TlsFile {
            what: "the key",
            path: self.key.clone(),
            why: e.to_string(),
        })?;
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let mut config = rustls::ServerConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .map_err(|e| HttpError::Tls(e.to_string()))?
            .with_no_client_auth()
            .with_single_cert(certs, key)
            .map_err(|e| HttpError::Tls(e.to_string()))?;
        config.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
        Ok(Arc::new(config))
    }
}

/// What `--http` was given.
#[derive(Debug)]
pub struct HttpConfig {
    pub addr: SocketAddr,
    pub token: Token,
    pub tls: Option<TlsFiles>,
}

/// A bound HTTP server, not yet serving.
pub struct Bound {
    listener: tokio::net::TcpListener,
    tls: Option<tokio_rustls::TlsAcceptor>,
    app: axum::Router,
    /// Called at shutdown: rmcp ends every MCP session.
    sessions: Box<dyn FnOnce() + Send>,
    pub local: SocketAddr,
}

/// Binds the address and builds the app; the TLS files are read here, so
/// a bad certificate stops the start, not the first client.
pub async fn bind(engine: &Engine, config: HttpConfig) -> Result<Bound, HttpError> {
    let tls = match &config.tls {
        Some(files) => Some(tokio_rustls::TlsAcceptor::from(files.server_config()?)),
        None => None,
    };
    let listener = tokio::net::TcpListener::bind(config.addr)
        .await
        .map_err(|source| HttpError::Bind {
            addr: config.addr,
            source,
        })?;
    let local = listener.local_addr().map_err(|source| HttpError::Bind {
        addr: config.addr,
        source,
    })?;
    let mut rmcp_config = StreamableHttpServerConfig::default()
        .with_max_request_body_bytes(MAX_BODY)
        .with_legacy_session_mode(true);
    if !config.addr.ip().is_loopback() {
        // Reached by a name or an address we cannot know (a pod IP, a
        // Service): the token guards the door, not the Host header.
        rmcp_config = rmcp_config.disable_allowed_hosts();
    }
    let cancel = rmcp_config.cancellation_token.clone();
    let mut sessions = LocalSessionManager::default();
    sessions.session_config.keep_alive = Some(IDLE);
    let engine = engine.clone();
    let service = StreamableHttpService::new(
        move || Ok(JvmScope::for_http_client(&engine)),
        Arc::new(sessions),
        rmcp_config,
    );
    let token = Arc::new(config.token);
    let app = axum::Router::new()
        .route_service(ENDPOINT, service)
        .layer(axum::middleware::from_fn(check_frame))
        .layer(tower_http::limit::RequestBodyLimitLayer::new(MAX_BODY))
        .layer(axum::middleware::from_fn_with_state(token, authorize));
    Ok(Bound {
        listener,
        tls,
        app,
        sessions: Box::new(move || cancel.cancel()),
        local,
    })
}

impl Bound {
    /// The URL clients use.
    pub fn url(&self) -> String {
        let scheme = if self.tls.is_some() { "https" } else { "http" };
        format!("{scheme}://{}{ENDPOINT}", self.local)
    }

    /// Serves until `stop` resolves; then ends every MCP session.
    pub async fn serve(self, stop: impl Future<Output = ()> + Send + 'static) {
        let Bound {
            listener,
            tls,
            app,
            sessions,
            ..
        } = self;
        match tls {
            None => {
                let served = axum::serve(listener, app).with_graceful_shutdown(async move {
                    stop.await;
                    sessions();
                });
                if let Err(e) = served.await {
                    tracing::warn!(error = %e, "the HTTP server stopped");
                }
            }
            Some(acceptor) => {
                serve_tls(listener, acceptor, app, stop).await;
                sessions();
            }
        }
    }
}

/// Accepts TLS connections until `stop`, each served by hyper-util
/// (HTTP/1.1 or HTTP/2, as ALPN chose).
async fn serve_tls(
    listener: tokio::net::TcpListener,
    acceptor: tokio_rustls::TlsAcceptor,
    app: axum::Router,
    stop: impl Future<Output = ()>,
) {
    let mut stop = std::pin::pin!(stop);
    loop {
        let (stream, peer) = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok(accepted) => accepted,
                Err(e) => {
                    tracing::debug!(error = %e, "accept failed");
                    continue;
                }
            },
            () = &mut stop => return,
        };
        let acceptor = acceptor.clone();
        let app = app.clone();
        tokio::spawn(async move {
            let stream = match acceptor.accept(stream).await {
                Ok(stream) => stream,
                Err(e) => {
                    tracing::debug!(%peer, error = %e, "TLS handshake failed");
                    return;
                }
            };
            let service = hyper_util::service::TowerToHyperService::new(app);
            let builder =
                hyper_util::server::conn::auto::Builder::new(hyper_util::rt::TokioExecutor::new());
            if let Err(e) = builder
                .serve_connection_with_upgrades(hyper_util::rt::TokioIo::new(stream), service)
                .await
            {
                tracing::debug!(%peer, error = %e, "HTTPS connection ended");
            }
        });
    }
}

/// The auth layer: no token, no entry (401, and nothing runs). Past it,
/// a refusal of a layer below that came as plain text is given the
/// JSON-RPC error body a client can read.
async fn authorize(State(token): State<Arc<Token>>, request: Request, next: Next) -> Response {
    if !token.admits(request.headers().get(header::AUTHORIZATION)) {
        let mut response = refusal(
            StatusCode::UNAUTHORIZED,
            serde_json::Value::Null,
            INVALID_REQUEST,
            "Unauthorized: this server needs Authorization: Bearer <token>",
        );
        response.headers_mut().insert(
            header::WWW_AUTHENTICATE,
            HeaderValue::from_static("Bearer realm=\"jvmscope\""),
        );
        return response;
    }
    as_jsonrpc(next.run(request).await).await
}

/// JSON-RPC's parse error.
const PARSE_ERROR: i64 = -32700;
/// JSON-RPC's invalid request.
const INVALID_REQUEST: i64 = -32600;

/// The frame check: a POST body is read whole (within the body limit)
/// and judged as rmcp will read it; what rmcp could not read is answered
/// here with the JSON-RPC error for it.
async fn check_frame(request: Request, next: Next) -> Response {
    if request.method() != http::Method::POST {
        return next.run(request).await;
    }
    let (parts, body) = request.into_parts();
    let bytes = match axum::body::to_bytes(body, MAX_BODY).await {
        Ok(bytes) => bytes,
        Err(e) => {
            let too_large = over_limit(&e);
            return if too_large {
                too_large_response()
            } else {
                refusal(
                    StatusCode::BAD_REQUEST,
                    serde_json::Value::Null,
                    INVALID_REQUEST,
                    &format!("Bad Request: cannot read the body: {e}"),
                )
            };
        }
    };
    if let Err(e) = serde_json::from_slice::<rmcp::model::ClientJsonRpcMessage>(&bytes) {
        let id = super::stdio::request_id(&bytes);
        let (code, what) = match e.classify() {
            Category::Syntax | Category::Eof | Category::Io => (PARSE_ERROR, "Parse error"),
            Category::Data => (INVALID_REQUEST, "Invalid Request"),
        };
        return refusal(StatusCode::BAD_REQUEST, id, code, &format!("{what}: {e}"));
    }
    next.run(Request::from_parts(parts, Body::from(bytes)))
        .await
}

/// Whether reading a body failed on the body limit (the limit layer's
/// error, or the read's own), as opposed to the connection.
fn over_limit(e: &(dyn std::error::Error + 'static)) -> bool {
    let mut next = Some(e);
    while let Some(e) = next {
        if e.to_string().contains("length limit exceeded") {
            return true;
        }
        next = e.source();
    }
    false
}

fn too_large_response() -> Response {
    refusal(
        StatusCode::PAYLOAD_TOO_LARGE,
        serde_json::Value::Null,
        INVALID_REQUEST,
        &format!("Payload Too Large: the body exceeds {MAX_BODY} bytes"),
    )
}

/// An HTTP refusal with a JSON-RPC error body.
fn refusal(status: StatusCode, id: serde_json::Value, code: i64, message: &str) -> Response {
    let body = serde_json::json!({
        "jsonrpc": "2.0",
        "id": id,
        "error": {"code": code, "message": message},
    });
    let mut response = Response::new(Body::from(body.to_string()));
    *response.status_mut() = status;
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    response
}

/// A 4xx answered as plain text (rmcp's 404 for an unknown session, the
/// body limit's 413) is given a JSON-RPC error body saying the same.
async fn as_jsonrpc(response: Response) -> Response {
    let status = response.status();
    let plain = !response
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.contains("json") || v.contains("event-stream"));
    if !status.is_client_error() || !plain {
        return response;
    }
    if status == StatusCode::PAYLOAD_TOO_LARGE {
        return too_large_response();
    }
    let (parts, body) = response.into_parts();
    let text = axum::body::to_bytes(body, 64 * 1024)
        .await
        .map(|b| String::from_utf8_lossy(&b).into_owned())
        .unwrap_or_default();
    let text = if text.trim().is_empty() {
        status
            .canonical_reason()
            .unwrap_or("Bad Request")
            .to_string()
    } else {
        text
    };
    let mut out = refusal(status, serde_json::Value::Null, INVALID_REQUEST, &text);
    for (name, value) in &parts.headers {
        if name != header::CONTENT_TYPE && name != header::CONTENT_LENGTH {
            out.headers_mut().insert(name.clone(), value.clone());
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env<'a>(vars: &'a [(&'a str, &'a str)]) -> impl Fn(&str) -> Option<String> + 'a {
        move |name| {
            vars.iter()
                .find(|(k, _)| *k == name)
                .map(|(_, v)| v.to_string())
        }
    }

    fn no_file(_: &Path) -> std::io::Result<String> {
        Err(std::io::ErrorKind::NotFound.into())
    }

    #[test]
    fn the_token_matches_itself_only() {
        let token = Token(b"s3cret-token".to_vec());
        assert!(token.matches(b"s3cret-token"));
        for other in [&b""[..], b"s3cret-toke", b"s3cret-token2", b"S3cret-token"] {
            assert!(!token.matches(other), "{other:?}");
        }
        let bearer = |v: &'static str| Some(HeaderValue::from_static(v));
        assert!(token.admits(bearer("Bearer s3cret-token").as_ref()));
        assert!(token.admits(bearer("bearer  s3cret-token ").as_ref()));
        assert!(!token.admits(bearer("Basic s3cret-token").as_ref()));
        assert!(!token.admits(bearer("s3cret-token").as_ref()));
        assert!(!token.admits(bearer("Bearer").as_ref()));
        assert!(!token.admits(None));
        assert_eq!(format!("{token:?}"), "Token(<hidden>)");
    }

    #[test]
    fn the_token_comes_from_the_variable_or_the_file_it_names() {
        let t = token_from(env(&[(TOKEN_ENV, " abc\n")]), no_file).expect("from the variable");
        assert!(t.matches(b"abc"));
        let read = |p: &Path| {
            assert_eq!(p, Path::new("/run/secrets/token"));
            Ok("from-file\n".to_string())
        };
        let t = token_from(env(&[(TOKEN_FILE_ENV, "/run/secrets/token")]), read)
            .expect("from the file");
        assert!(t.matches(b"from-file"));
        assert!(matches!(
            token_from(env(&[]), no_file),
            Err(HttpError::NoToken)
        ));
        assert!(matches!(
            token_from(env(&[(TOKEN_ENV, "a"), (TOKEN_FILE_ENV, "/x")]), no_file),
            Err(HttpError::TwoTokens)
        ));
        assert!(matches!(
            token_from(env(&[(TOKEN_ENV, " \n")]), no_file),
            Err(HttpError::EmptyToken(TOKEN_ENV))
        ));
        let err = token_from(env(&[(TOKEN_FILE_ENV, "/nope")]), no_file)
            .expect_err("a missing file is refused");
        assert!(err.to_string().contains("/nope"), "{err}");
        // The message for no token names both ways to give one.
        let none = HttpError::NoToken.to_string();
        assert!(
            none.contains(TOKEN_ENV) && none.contains(TOKEN_FILE_ENV),
            "{none}"
        );
    }

    #[test]
    fn listen_addresses_default_to_loopback() {
        let a = |s: &str| listen_address(s).map(|a| a.to_string());
        assert_eq!(a("").ok().as_deref(), Some("127.0.0.1:8787"));
        assert_eq!(a("9000").ok().as_deref(), Some("127.0.0.1:9000"));
        assert_eq!(a("0.0.0.0:80").ok().as_deref(), Some("0.0.0.0:80"));
        assert_eq!(a("0.0.0.0").ok().as_deref(), Some("0.0.0.0:8787"));
        assert_eq!(a("[::1]:9").ok().as_deref(), Some("[::1]:9"));
        assert!(matches!(
            listen_address("localhost:x"),
            Err(HttpError::Address(_))
        ));
    }
}
