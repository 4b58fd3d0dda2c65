//! The rmcp server handler: initialize, tools/list, tools/call. Each tool
//! call is a root span of its own (`mcp.tool <name>`), so one trace shows
//! one call and the JDWP round trips it cost. Calls run concurrently (rmcp
//! spawns a task per request); calls on different sessions never wait on
//! each other.

use std::sync::Arc;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, ListToolsResult, PaginatedRequestParams,
    ProtocolVersion, ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler};
use tracing::Instrument;

use super::tools::{self, Ctx};
use crate::actors::Engine;

/// Guidance sent once at initialize.
const INSTRUCTIONS: &str = "jvmscope debugs live JVMs over JDWP. Start with debug_attach (a JVM \
started with -agentlib:jdwp) or debug_launch. Every tool takes an optional session_id (default: \
the current session). Errors start with a stable [LABEL] and name the next step. The JVM may be \
someone's production: disconnect with debug_disconnect, which releases every thread.";

/// The MCP server: the engine plus the tool catalogue.
#[derive(Clone)]
pub struct JvmScope {
    ctx: Ctx,
    tools: Arc<Vec<Tool>>,
}

impl JvmScope {
    pub fn new(engine: Engine) -> Self {
        Self {
            ctx: Ctx { engine },
            tools: Arc::new(tools::catalogue()),
        }
    }

    pub fn engine(&self) -> &Engine {
        &self.ctx.engine
    }

    pub fn tools(&self) -> &[Tool] {
        &self.tools
    }

    /// Runs one tool call as the MCP layer does (used by the demo too).
    pub async fn call(&self, name: &str, args: serde_json::Value) -> rmcp::model::CallToolResult {
        let args = match args {
            serde_json::Value::Object(map) => Some(map),
            _ => None,
        };
        let span = tracing::info_span!(
            parent: None,
            "mcp.tool",
            "otel.name" = %format_args!("mcp.tool {name}"),
            "otel.kind" = "server",
            "mcp.tool.name" = name,
        );
        let mut result = tools::call(&self.ctx, name, args).instrument(span).await;
        // A watchdog rescue is news for whoever calls next.
        for session in self.ctx.engine.sessions() {
            for rescue in session.take_unreported_rescues() {
                result.content.push(rmcp::model::ContentBlock::text(format!(
                    "[WATCHDOG] session {}: {}",
                    session.id(),
                    super::render::rescue(&rescue)
                )));
            }
        }
        result
    }
}

impl ServerHandler for JvmScope {
    fn get_info(&self) -> ServerConfig {
        let mut info = ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_instructions(INSTRUCTIONS);
        info.protocol_version = ProtocolVersion::LATEST;
        info.server_info.name = "jvmscope".into();
        info.server_info.version = env!("CARGO_PKG_VERSION").into();
        info
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(self.tools.as_ref().clone()))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let token = context
            .meta
            .get_progress_token()
            .or_else(|| request.meta.as_ref().and_then(|m| m.get_progress_token()));
        let args = request
            .arguments
            .map(serde_json::Value::Object)
            .unwrap_or(serde_json::Value::Null);
        // A call that asked for progress can report it from anywhere on its
        // task (debug_wait_for_event does, while it waits).
        // A tool that can stop early races its work against this.
        let cancel: futures::future::BoxFuture<'static, ()> =
            Box::pin(context.ct.clone().cancelled_owned());
        let cancel = futures::FutureExt::shared(cancel);
        let result = match token {
            Some(token) => {
                let progress = tools::Progress {
                    peer: context.peer.clone(),
                    token,
                };
                tools::PROGRESS
                    .scope(
                        progress,
                        tools::CANCEL.scope(cancel, self.call(&request.name, args)),
                    )
                    .await
            }
            None => {
                tools::CANCEL
                    .scope(cancel, self.call(&request.name, args))
                    .await
            }
        };
        Ok(result.into())
    }
}
