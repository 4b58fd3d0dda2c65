//! The composition root: command line, logging, the actor engine, and the
//! MCP server on stdio (or on HTTP with `--http`). Nothing else lives here.

mod demo;

use anyhow::Result;
use clap::{Parser, Subcommand};
use rmcp::ServiceExt;

use jvmscope::actors::{Engine, EngineConfig};
use jvmscope::mcp::JvmScope;

/// An MCP server that debugs live JVMs over JDWP.
#[derive(Parser)]
#[command(name = "jvmscope", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
    /// Serve MCP over streamable HTTP at /mcp instead of stdio: IP:PORT,
    /// a port (on 127.0.0.1), or nothing (127.0.0.1:8787). Needs a bearer
    /// token in JVMSCOPE_AUTH_TOKEN or a file named by
    /// JVMSCOPE_AUTH_TOKEN_FILE; sessions are read-only unless
    /// JDWP_READONLY=0.
    #[arg(long, value_name = "ADDR", num_args = 0..=1, default_missing_value = "")]
    http: Option<String>,
    /// With --http: serve HTTPS with this PEM certificate chain.
    #[arg(long, value_name = "PEM", requires = "http")]
    tls_cert: Option<std::path::PathBuf>,
    /// With --http: the PEM private key of --tls-cert.
    #[arg(long, value_name = "PEM", requires = "http")]
    tls_key: Option<std::path::PathBuf>,
}

#[derive(Subcommand)]
enum Command {
    /// Serve MCP on stdin/stdout (the default).
    Serve,
    /// Compile a small bundled Java program, launch it under the debugger
    /// and run a short scripted session through the real tools.
    Demo,
}

fn main() {
    let cli = Cli::parse();
    // One worker unless TOKIO_WORKER_THREADS says otherwise (ADR 0014).
    let runtime = match jvmscope::actors::runtime::build() {
        Ok(rt) => rt,
        Err(e) => {
            jvmscope::telemetry::init_logging();
            tracing::error!(error = %e, "cannot start the tokio runtime");
            std::process::exit(1);
        }
    };
    runtime.block_on(run(cli))
}

async fn run(cli: Cli) -> ! {
    let telemetry = jvmscope::telemetry::init();
    let result = match (cli.command.unwrap_or(Command::Serve), cli.http) {
        (Command::Serve, None) => serve().await,
        (Command::Serve, Some(addr)) => serve_http(&addr, cli.tls_cert, cli.tls_key).await,
        (Command::Demo, None) => demo::run().await,
        (Command::Demo, Some(_)) => Err(anyhow::anyhow!("--http serves MCP; the demo runs alone")),
    };
    // After serve() has released every JVM: export the last spans (bounded).
    telemetry.shutdown().await;
    if let Err(e) = &result {
        tracing::error!(error = %e, "jvmscope stopped");
        std::process::exit(1);
    }
    // Exit now: a blocking read of stdin (still open after SIGTERM) would
    // otherwise keep the runtime alive.
    std::process::exit(0)
}

async fn serve() -> Result<()> {
    let engine = Engine::start(EngineConfig::from_env())
        .await
        .map_err(anyhow::Error::msg)?;
    let server = JvmScope::new(engine.clone());
    let tasks = server.clone();
    // rmcp's transport behind a guard that answers lines that are not JSON.
    let stdio = jvmscope::mcp::stdio::stdio();
    let running = server.serve(stdio.transport).await?;
    let mut term = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())?;
    tokio::select! {
        result = running.waiting() => {
            if let Err(e) = result {
                tracing::warn!(error = %e, "MCP service ended with an error");
            }
            // The last replies reach stdout before the process exits.
            let _ = tokio::time::timeout(std::time::Duration::from_secs(2), stdio.flushed).await;
        }
        _ = term.recv() => tracing::info!("SIGTERM: releasing every JVM"),
        _ = tokio::signal::ctrl_c() => tracing::info!("interrupted: releasing every JVM"),
    }
    // Calls still running as tasks end first (a dump undoes its
    // suspension as it does when cancelled) ...
    tasks.end_tasks();
    // ... and no JVM is left suspended because our client went away.
    engine.shutdown().await;
    Ok(())
}

/// `--http`: rmcp's streamable HTTP server, one session table per MCP
/// client, until SIGTERM or Ctrl-C; then every JVM is released.
async fn serve_http(
    addr: &str,
    tls_cert: Option<std::path::PathBuf>,
    tls_key: Option<std::path::PathBuf>,
) -> Result<()> {
    use jvmscope::mcp::http;
    let config = http::HttpConfig {
        token: http::token_from_env()?,
        addr: http::listen_address(addr)?,
        tls: http::TlsFiles::from_flags(tls_cert, tls_key)?,
    };
    // Read-only unless JDWP_READONLY says otherwise.
    let engine = Engine::start(EngineConfig::from_env_read_only_unless_set(true))
        .await
        .map_err(anyhow::Error::msg)?;
    let bound = match http::bind(&engine, config).await {
        Ok(bound) => bound,
        Err(e) => {
            engine.shutdown().await;
            return Err(e.into());
        }
    };
    tracing::info!(
        url = %bound.url(),
        read_only = engine.config().force_read_only,
        "serving MCP over HTTP"
    );
    let mut term = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())?;
    let stop = async move {
        tokio::select! {
            _ = term.recv() => tracing::info!("SIGTERM: releasing every JVM"),
            _ = tokio::signal::ctrl_c() => tracing::info!("interrupted: releasing every JVM"),
        }
    };
    bound.serve(stop).await;
    engine.shutdown().await;
    Ok(())
}
