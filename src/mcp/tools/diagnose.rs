//! Discovery and diagnosis tools: what can be attached to (debug_list_jvms)
//! and why something does not work (debug_diagnose: this server, each
//! session, the local JVMs; or why one stop point has not fired). The same
//! texts serve the `jdwp://jvms` and `jdwp://diagnose` resources.

mod jvms;
mod report;
mod vitals;

use std::sync::OnceLock;
use std::time::Instant;

use schemars::JsonSchema;
use serde::Deserialize;

use super::{Call, Ctx, Effect, Reply, Route};
use crate::actors::{DiscoveryBudget, JvmListing};
use crate::mcp::error::ToolError;

pub use jvms::state_label;

/// When this server started (first asked), for its uptime.
pub fn started() -> Instant {
    static STARTED: OnceLock<Instant> = OnceLock::new();
    *STARTED.get_or_init(Instant::now)
}

/// Arguments of debug_list_jvms.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ListJvmsParams {
    /// Also handshake this loopback endpoint (host:port or port).
    pub probe: Option<String>,
}

/// Arguments of debug_diagnose.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DiagnoseParams {
    /// Session id; default: the current session (only with stop_point).
    pub session_id: Option<String>,
    pub stop_point: Option<String>,
}

pub fn routes() -> Vec<Route> {
    vec![
        Route::new(
            "debug_list_jvms",
            "List the local JVMs",
            "The JVMs this user runs here, JDWP or not: pid, main class, JDK, uptime, masked \
             command line, and the JDWP endpoint's state (LISTENING, WAITING_FOR_DEBUGGER: never \
             dialled, a dial would release it; CONNECTED_TO_US, UNREACHABLE, NOT_PROBED).",
            Effect::Read,
            list_jvms,
        )
            .with_guide(
                "The JVMs this user runs here (/proc and hsperfdata, so JVMs without JDWP too): pid, main class or jar, \
                  JDK, uptime, command line with secrets masked, and the JDWP endpoint's state: CONNECTED_TO_US, \
                  LISTENING, WAITING_FOR_DEBUGGER (suspend=y), UNREACHABLE or NOT_PROBED, each with a remedy. The agent \
                  is read from the command line, its @argfiles and JAVA_TOOL_OPTIONS/JDK_JAVA_OPTIONS/_JAVA_OPTIONS, its \
                  state from the JVM's own sockets: a listing dials nothing. Only `probe` handshakes a loopback endpoint, \
                  never a JVM that waits for its debugger. Changes nothing in any JVM.",
            )
        .with_output::<super::data::Jvms>(),
        Route::new(
            "debug_diagnose",
            "Diagnose",
            "Without stop_point: this server, each session (capabilities, suspension, stop points, \
             recent events, errors) and the local JVMs with their vital signs. With stop_point: \
             why it has not fired, each cause checked.",
            Effect::Read,
            diagnose,
        )
            .with_guide(
                "Without stop_point: this server (pid, version, tools, config, log), each session \
                  (connected, capabilities, suspension, stop points, recent events, last error), the local JVMs and \
                  their vital signs from hsperfdata (heap, GC, threads, classes, safepoints, JIT; rates since the last read). \
                  With stop_point: why it has not fired, each cause checked (class not loaded, line without code, \
                  stale bytecode, condition never true with its last operand values, thread or instance filter, hit_count pending, \
                  disabled or spent, VM held). Reads only.",
            ),
    ]
}

/// Reads `host:port` or a bare port.
fn parse_probe(tool: &str, raw: &str) -> Result<(String, u16), ToolError> {
    let raw = raw.trim();
    let (host, port) = match raw.rsplit_once(':') {
        Some((h, p)) => (
            h.trim_start_matches('[').trim_end_matches(']').to_string(),
            p,
        ),
        None => ("127.0.0.1".to_string(), raw),
    };
    let port = port.parse::<u16>().map_err(|_| {
        ToolError::bad_argument(tool, format!("probe {raw:?} is not host:port or a port"))
    })?;
    Ok((host, port))
}

/// Every local JVM, and the probe when asked.
pub async fn listing(ctx: &Ctx, probe: Option<(String, u16)>) -> JvmListing {
    ctx.engine
        .list_jvms(probe, DiscoveryBudget::default())
        .await
}

async fn list_jvms(ctx: Ctx, call: Call<ListJvmsParams>) -> Reply {
    let (tool, p) = (call.tool, call.params?);
    let probe = p
        .probe
        .as_deref()
        .map(|raw| parse_probe(tool, raw))
        .transpose()?;
    let l = listing(&ctx, probe).await;
    Ok(super::data(jvms::listing_text(&l), &jvms::listing_data(&l)))
}

/// The local-JVM block alone (the `jdwp://jvms` resource).
pub async fn jvms_text(ctx: &Ctx) -> String {
    jvms::listing_text(&listing(ctx, None).await)
}

/// The report (the tool without stop_point, and `jdwp://diagnose`):
/// this server, the sessions, the local JVMs and their vital signs.
pub async fn report_text(ctx: &Ctx) -> String {
    let (sessions, l) = futures::join!(report::sessions_block(ctx), listing(ctx, None));
    format!(
        "{}\n\n{}\n\n== local JVMs\n{}\n\n{}",
        report::server_block(ctx, started()),
        sessions,
        jvms::listing_text(&l),
        vitals::block(ctx, &l).await
    )
}

/// Every local JVM's vital signs (the `jdwp://vitals` resource).
pub async fn vitals_text(ctx: &Ctx) -> String {
    vitals::block(ctx, &listing(ctx, None).await).await
}

async fn diagnose(ctx: Ctx, call: Call<DiagnoseParams>) -> Reply {
    let (tool, p) = (call.tool, call.params?);
    let Some(id) = p.stop_point else {
        if p.session_id.is_some() {
            return Err(ToolError::bad_argument(
                tool,
                "session_id goes with stop_point; without it every session is reported",
            ));
        }
        return Ok(super::text(report_text(&ctx).await));
    };
    let handle = ctx.engine.session(p.session_id.as_deref())?;
    let d = handle.diagnose_stop_point(&id).await?;
    Ok(super::text(report::stop_point_text(&d)))
}
