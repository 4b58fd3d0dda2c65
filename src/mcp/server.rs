//! The rmcp server handler: initialize, tools/list, tools/call. Each tool
//! call is a root span of its own (`mcp.tool <name>`), so one trace shows
//! one call and the JDWP round trips it cost. Calls run concurrently (rmcp
//! spawns a task per request); calls on different sessions never wait on
//! each other.

use std::borrow::Cow;
use std::sync::Arc;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CancelTaskParams, CancelledNotificationParam,
    CreateTaskResult, CustomRequest, CustomResult, GetPromptRequestParams, GetPromptResponse,
    GetTaskParams, GetTaskResult, ListPromptsResult, ListResourcesResult, ListToolsResult,
    PaginatedRequestParams, ProtocolVersion, ReadResourceRequestParams, ReadResourceResponse,
    ServerCapabilities, ServerConfig, SubscribeRequestParams, Tool, UnsubscribeRequestParams,
    UpdateTaskParams,
};
use rmcp::service::{NotificationContext, RequestContext};
use rmcp::{ErrorData, RoleServer, ServerHandler};
use tracing::Instrument;

use super::resources::{self, Subscriptions};
use super::tasks::Tasks;
use super::tools::{self, Ctx};
use crate::actors::Engine;

/// Guidance sent once at initialize: how to start, and what not to do to
/// a JVM that is not yours.
const INSTRUCTIONS: &str = concat!(
    "jvmscope debugs live JVMs over JDWP.
Start: debug_list_jvms shows the local JVMs and which can be attached; debug_attach {port} \
(read_only for a shared JVM) or debug_launch your own program.
Observe first: stop points with trace:true record values without stopping anything \
(debug_get_traces). Suspend (suspending stop points, debug_pause) only a JVM that is yours.
A stop point that stays silent: debug_diagnose {stop_point}. Something else wrong: debug_diagnose.
",
    crate::shared_arguments!(),
    " Errors start with a stable [LABEL] and name the next step. debug_disconnect releases every \
thread.
jdwp://guide/<tool> explains a tool in full (rules, traps, every argument).
The prompt `investigate` walks through an investigation of a shared JVM."
);

/// The MCP server: the engine plus the tool catalogue.
#[derive(Clone)]
pub struct JvmScope {
    ctx: Ctx,
    tools: Arc<Vec<Tool>>,
    subscriptions: Arc<Subscriptions>,
    tasks: Tasks,
    /// The protocol revisions this server speaks.
    versions: Versions,
    /// For one client of several: releases its JVMs when the last clone
    /// of this server goes (the client's MCP session ended).
    _release: Option<Arc<Release>>,
}

/// Which protocol revisions a server instance speaks.
#[derive(Clone, Copy, Debug)]
enum Versions {
    /// Every revision rmcp knows (stdio: the pipe is the client).
    All,
    /// Only the revisions with an `initialize` handshake. Over HTTP the
    /// handshake opens the MCP session that keeps a client's jvmscope
    /// sessions; a sessionless (2026-07-28) client would get a fresh
    /// server, and lose its sessions, on every request.
    Handshake,
}

/// Releases the JVMs of one client's scope when dropped.
struct Release(Engine);

impl Drop for Release {
    fn drop(&mut self) {
        let engine = self.0.clone();
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            runtime.spawn(async move { engine.release().await });
        }
    }
}

impl JvmScope {
    pub fn new(engine: Engine) -> Self {
        // The server's uptime counts from here.
        let _ = tools::diagnose::started();
        Self {
            ctx: Ctx { engine },
            tools: Arc::new(tools::catalogue()),
            subscriptions: Arc::default(),
            tasks: Tasks::default(),
            versions: Versions::All,
            _release: None,
        }
    }

    /// The server one MCP client over HTTP talks to: the shared actors,
    /// a session table of its own (it neither lists nor names another
    /// client's sessions), and its JVMs released when its MCP session
    /// ends.
    pub fn for_http_client(engine: &Engine) -> Self {
        let scope = engine.scope();
        Self {
            versions: Versions::Handshake,
            _release: Some(Arc::new(Release(scope.clone()))),
            ..Self::new(scope)
        }
    }

    /// Ends the tool calls still running as tasks (the server is exiting).
    pub fn end_tasks(&self) {
        self.tasks.shutdown();
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
        let named = args
            .as_ref()
            .and_then(|a| a.get("session_id"))
            .and_then(serde_json::Value::as_str)
            .map(str::to_string);
        let span = tracing::info_span!(
            parent: None,
            "mcp.tool",
            "otel.name" = %format_args!("mcp.tool {name}"),
            "otel.kind" = "server",
            mcp.tool.name = name,
        );
        let mut result = tools::call(&self.ctx, name, args)
            .instrument(span.clone())
            .await;
        if tools::mutates(name) {
            span.in_scope(|| audit(&self.ctx, name, named.as_deref(), &result));
        }
        // A watchdog rescue is news for whoever calls next.
        for session in self.ctx.engine.sessions() {
            for rescue in session.take_unreported_rescues() {
                result.content.push(rmcp::model::ContentBlock::text(format!(
                    "[WATCHDOG] session {}: {}",
                    session.id(),
                    super::render::rescue(&rescue)
                )));
            }
            // A thread a call of ours still holds is named until it is back.
            let live = session.dead_reason().is_none();
            for i in session.invoking().into_iter().filter(|_| live) {
                result.content.push(rmcp::model::ContentBlock::text(format!(
                    "[INVOKING] session {}: {}",
                    session.id(),
                    super::render::invoking(&i)
                )));
            }
            // So is a stop point the overhead guard paused.
            for p in session.take_untold_pauses() {
                result.content.push(rmcp::model::ContentBlock::text(format!(
                    "[OVERHEAD] session {}: stop point {} {}",
                    session.id(),
                    p.id.0,
                    match p.switched {
                        Some(us) => super::tools::stop_points::render::switched_text(&p.over, us),
                        None => super::tools::stop_points::render::paused_text(&p.over),
                    }
                )));
            }
        }
        result
    }
}

impl JvmScope {
    /// Runs a call inside its cancellation and progress scope (what
    /// [`tools::cancelled`] and [`tools::progress`] read).
    async fn scoped(
        &self,
        name: &str,
        args: serde_json::Value,
        cancel: futures::future::Shared<futures::future::BoxFuture<'static, ()>>,
        progress: Option<tools::Progress>,
    ) -> rmcp::model::CallToolResult {
        let run = tools::CANCEL.scope(cancel, self.call(name, args));
        match progress {
            Some(progress) => tools::PROGRESS.scope(progress, run).await,
            None => run.await,
        }
    }
}

/// Records a call of a tool that changes state as an event of the call's
/// span (an OpenTelemetry span event once exported, and a log line): the
/// tool, the session and JVM it addressed (the one it named, else the
/// current one after the call, which is the new one for an attach), the
/// time, and whether it was done or refused. Arguments are not recorded:
/// they can carry what replies mask.
fn audit(ctx: &Ctx, tool: &str, named: Option<&str>, result: &rmcp::model::CallToolResult) {
    let session = named
        .map(str::to_string)
        .or_else(|| ctx.engine.current().map(|s| s.0));
    let jvm = session
        .as_deref()
        .and_then(|id| ctx.engine.session(Some(id)).ok())
        .map(|s| format!("{}:{}", s.host(), s.port()));
    let unix_ms = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX));
    let outcome = if result.is_error == Some(true) {
        "refused"
    } else {
        "done"
    };
    tracing::info!(
        mcp.tool.name = tool,
        jvmscope.session = session.as_deref().unwrap_or("none"),
        jvmscope.jvm = jvm.as_deref().unwrap_or("none"),
        jvmscope.audit.unix_ms = unix_ms,
        jvmscope.audit.outcome = outcome,
        "jvmscope.audit"
    );
}

impl ServerHandler for JvmScope {
    fn supported_protocol_versions(&self) -> Cow<'static, [ProtocolVersion]> {
        match self.versions {
            Versions::All => Cow::Borrowed(ProtocolVersion::KNOWN_VERSIONS),
            Versions::Handshake => Cow::Borrowed(ProtocolVersion::known_up_to(
                &ProtocolVersion::LATEST_WITH_INITIALIZE,
            )),
        }
    }

    fn get_info(&self) -> ServerConfig {
        let capabilities = ServerCapabilities::builder()
            .enable_tools()
            .enable_resources()
            .enable_resources_subscribe()
            .enable_prompts()
            .enable_tasks()
            .build();
        let mut info = ServerConfig::new(capabilities).with_instructions(INSTRUCTIONS);
        info.protocol_version = match self.versions {
            Versions::All => ProtocolVersion::LATEST,
            Versions::Handshake => ProtocolVersion::LATEST_WITH_INITIALIZE,
        };
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
        let notify = token.map(|token| (context.peer.clone(), token));
        let as_task = tools::runs_long(&self.ctx, &request.name, request.arguments.as_ref())
            && context
                .client_capabilities()
                .is_some_and(|c| c.supports_tasks());
        let name = request.name.to_string();
        let args = request
            .arguments
            .map(serde_json::Value::Object)
            .unwrap_or(serde_json::Value::Null);
        if as_task {
            let server = self.clone();
            let tool = name.clone();
            let task = self.tasks.spawn(context.id.clone(), &name, move |running| {
                Box::pin(async move {
                    let progress = tools::Progress::new(notify, Some(running.task));
                    server.scoped(&tool, args, running.cancel, progress).await
                })
            });
            return Ok(CallToolResponse::Task(CreateTaskResult::new(task)));
        }
        // A tool that can stop early races its work against this.
        let cancel: futures::future::BoxFuture<'static, ()> =
            Box::pin(context.ct.clone().cancelled_owned());
        let cancel = futures::FutureExt::shared(cancel);
        let progress = tools::Progress::new(notify, None);
        Ok(self.scoped(&name, args, cancel, progress).await.into())
    }

    async fn get_task(
        &self,
        request: GetTaskParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<GetTaskResult, ErrorData> {
        Ok(GetTaskResult::new(self.tasks.get(&request.task_id)?))
    }

    async fn update_task(
        &self,
        request: UpdateTaskParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        self.tasks.update(&request.task_id, request.input_responses)
    }

    async fn cancel_task(
        &self,
        request: CancelTaskParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        self.tasks.cancel(&request.task_id)
    }

    /// A cancelled request that created a task cancels the task (a plain
    /// call's cancellation reaches it through rmcp's token).
    async fn on_cancelled(
        &self,
        notification: CancelledNotificationParam,
        _context: NotificationContext<RoleServer>,
    ) {
        if let Some(id) = &notification.request_id {
            self.tasks.cancel_request(id);
        }
    }

    // Resources and prompts (src/mcp/resources.rs).

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        Ok(ListResourcesResult::with_all_items(resources::list()))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        Ok(resources::read(&self.ctx, &request.uri).await?.into())
    }

    #[allow(
        deprecated,
        reason = "stdio clients of protocol 2025-06-18 subscribe this way"
    )]
    async fn subscribe(
        &self,
        request: SubscribeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        self.subscriptions
            .subscribe(&request.uri, &self.ctx, context.peer.clone())
    }

    #[allow(deprecated, reason = "the pair of subscribe")]
    async fn unsubscribe(
        &self,
        request: UnsubscribeRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        self.subscriptions.unsubscribe(&request.uri);
        Ok(())
    }

    async fn list_prompts(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, ErrorData> {
        Ok(ListPromptsResult::with_all_items(resources::prompts()))
    }

    /// rmcp hands over as "custom" a request whose params do not fit its
    /// method (`arguments` as a string, say): that is invalid params
    /// (-32602), not an unknown method.
    async fn on_custom_request(
        &self,
        request: CustomRequest,
        _context: RequestContext<RoleServer>,
    ) -> Result<CustomResult, ErrorData> {
        Err(custom_request_error(&request))
    }

    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, ErrorData> {
        Ok(resources::get_prompt(&request.name, request.arguments.as_ref())?.into())
    }
}

/// The MCP methods this server serves: a request for one of them that
/// reaches `on_custom_request` had params rmcp could not read.
const SERVED_METHODS: &[&str] = &[
    "initialize",
    "ping",
    "tools/list",
    "tools/call",
    "resources/list",
    "resources/templates/list",
    "resources/read",
    "resources/subscribe",
    "resources/unsubscribe",
    "prompts/list",
    "prompts/get",
    "completion/complete",
    "logging/setLevel",
    "tasks/get",
    "tasks/update",
    "tasks/cancel",
];

/// The JSON-RPC error for a request rmcp could not type.
fn custom_request_error(request: &CustomRequest) -> ErrorData {
    let method = request.method.as_str();
    if !SERVED_METHODS.contains(&method) {
        return ErrorData::new(
            rmcp::model::ErrorCode::METHOD_NOT_FOUND,
            format!("method not found: {method}"),
            None,
        );
    }
    let why = match method {
        "tools/call" => request
            .params_as::<CallToolRequestParams>()
            .err()
            .map(|e| e.to_string()),
        _ => None,
    };
    let why = why.unwrap_or_else(|| "they do not have the shape the method takes".into());
    let hint = if method == "tools/call" {
        " (`name` is a string, `arguments` an object)"
    } else {
        ""
    };
    ErrorData::invalid_params(format!("invalid params for {method}: {why}{hint}"), None)
}
