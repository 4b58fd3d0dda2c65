//! The composition root: command line, logging, the actor engine, and the
//! MCP server on stdio. Nothing else lives here.

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
    let result = match cli.command.unwrap_or(Command::Serve) {
        Command::Serve => serve().await,
        Command::Demo => demo::run().await,
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
