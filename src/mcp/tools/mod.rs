//! The tool catalogue and dispatch. One file per tool family; each family
//! lists its tools (name, description, schema, annotations) and answers the
//! calls addressed to them. Descriptions are the model's documentation:
//! short, exact, and honest about what a tool costs the JVM.

pub mod args;
pub mod classes;
pub mod code;
pub mod data;
pub mod diagnose;
pub mod dump;
pub mod events;
pub mod execution;
pub mod fan_out;
pub mod group;
pub mod inspect;
pub mod investigation;
pub mod invoke;
pub mod kinds;
pub mod members;
pub mod memory;
pub mod mutation;
pub mod output;
pub mod profile;
pub mod session;
pub mod stop_points;

use std::collections::HashMap;
use std::sync::{Arc, OnceLock};

use futures::future::BoxFuture;

use rmcp::model::{CallToolResult, ContentBlock, JsonObject, Tool, ToolAnnotations};
use schemars::JsonSchema;
use serde::Serialize;
use serde::de::DeserializeOwned;

use crate::actors::{Engine, SessionHandle};
use crate::mcp::error::ToolError;

/// Where a long tool call reports progress: the client's progress token
/// and the peer to notify (a call that carried a `progressToken`), the
/// task's status message (a call running as an MCP task), or both. Set
/// (as a task-local) by the server.
#[derive(Clone)]
pub struct Progress {
    notify: Option<(rmcp::Peer<rmcp::RoleServer>, rmcp::model::ProgressToken)>,
    task: Option<rmcp::task_manager::TaskContext>,
}

impl Progress {
    /// A sink, when there is anyone to tell.
    pub fn new(
        notify: Option<(rmcp::Peer<rmcp::RoleServer>, rmcp::model::ProgressToken)>,
        task: Option<rmcp::task_manager::TaskContext>,
    ) -> Option<Self> {
        (notify.is_some() || task.is_some()).then_some(Self { notify, task })
    }

    /// Says how far the call is: one `notifications/progress` for a token,
    /// and the task's status message (what `tasks/get` shows) for a task.
    pub fn report(&self, done: f64, total: Option<f64>, message: String) {
        if let Some(task) = &self.task {
            task.set_status_message(message.clone());
        }
        if let Some((peer, token)) = &self.notify {
            let mut param = rmcp::model::ProgressNotificationParam::new(token.clone(), done);
            if let Some(total) = total {
                param = param.with_total(total);
            }
            param.message = Some(message);
            let peer = peer.clone();
            tokio::spawn(async move {
                let _ = peer.notify_progress(param).await;
            });
        }
    }
}

tokio::task_local! {
    /// The progress sink of the tool call running on this task, if any.
    pub static PROGRESS: Progress;
}

tokio::task_local! {
    /// Resolves when the client cancels the tool call running on this task
    /// (`notifications/cancelled`, or `tasks/cancel` for a call running as
    /// a task). Set by the server for every call.
    pub static CANCEL: futures::future::Shared<BoxFuture<'static, ()>>;
}

/// Resolves when the client cancels this call; never when it cannot
/// (the demo and the in-process rig). A tool opts in by racing its work
/// against it, and must only do so where dropping the work is safe.
pub async fn cancelled() {
    match CANCEL.try_with(|c| c.clone()) {
        Ok(c) => c.await,
        Err(_) => std::future::pending().await,
    }
}

/// This call's progress sink, if it has one.
pub fn progress() -> Option<Progress> {
    PROGRESS.try_with(|p| p.clone()).ok()
}

/// A progress callback for a long call that asked for progress: each call
/// `(done, total)` reports `done of total what`.
pub fn progress_reporter(what: &'static str) -> Option<crate::actors::ProgressFn> {
    let p = progress()?;
    Some(Arc::new(move |done: u64, total: u64| {
        p.report(
            done as f64,
            Some(total as f64),
            format!("{done} of {total} {what}"),
        );
    }))
}

/// What the arguments several tools share mean, said once (in the
/// server's instructions and docs/tools.md) instead of in every schema.
#[macro_export]
macro_rules! shared_arguments {
    () => {
        "Every tool takes an optional session_id (default: the current session). thread_id is a \
         thread's @0x… id (default: the newest thread a stop point suspended); class_roots and \
         source_roots are directories where .class and .java package trees start; max_depth \
         (default 2) and max_children (default 20) bound a field tree."
    };
}

/// What every tool call gets.
#[derive(Clone)]
pub struct Ctx {
    pub engine: Engine,
}

impl Ctx {
    /// The session a call names (the current one when it names none),
    /// refused when it is dead.
    pub fn live(&self, session: Option<&str>) -> Result<SessionHandle, ToolError> {
        let handle = self.engine.session(session)?;
        handle.check_alive()?;
        Ok(handle)
    }

    /// The session a call names, refused when it is read-only (the refusal
    /// says what was not done: `action`).
    pub fn writable(
        &self,
        session: Option<&str>,
        action: &'static str,
    ) -> Result<SessionHandle, ToolError> {
        let handle = self.engine.session(session)?;
        handle.ensure_writable(action)?;
        Ok(handle)
    }
}

/// A tool's outcome before it becomes an MCP result.
pub type Reply = Result<CallToolResult, ToolError>;

/// How a tool touches the JVM, for the annotations.
#[derive(Debug, Clone, Copy)]
pub enum Effect {
    /// Reads only.
    Read,
    /// Changes debugger or JVM state; repeating it is harmless.
    Idempotent,
    /// Changes state; repeating it does something again.
    Changes,
    /// May end or alter something irreversibly (terminating a JVM).
    Destructive,
}

/// Builds a tool definition from its parameter type.
fn tool<P: JsonSchema + 'static>(
    name: &'static str,
    title: &'static str,
    description: &'static str,
    effect: Effect,
) -> Tool {
    // The title is the tool's own `title`, not repeated here; a read-only
    // tool needs no destructive or idempotent hint (the spec reads them
    // only when readOnlyHint is false). openWorldHint is left at the spec's
    // default (true): every tool acts on a running JVM outside this server,
    // and through it on what the application reaches (a database).
    let annotations = match effect {
        Effect::Read => ToolAnnotations::new().read_only(true),
        _ => ToolAnnotations::new()
            .read_only(false)
            .destructive(matches!(effect, Effect::Destructive))
            .idempotent(matches!(effect, Effect::Idempotent)),
    };
    let mut tool = Tool::new(name, description, Arc::new(JsonObject::new()))
        .with_input_schema::<P>()
        .with_title(title)
        .with_annotations(annotations);
    let mut schema = (*tool.input_schema).clone();
    compact_schema(&mut schema);
    tool.input_schema = Arc::new(schema);
    tool
}

/// Trims a generated input schema to what a client needs, because every
/// byte of `tools/list` is read by the model before its first call (the
/// 64 KB budget): no `$schema` URL, an optional argument is typed `X`
/// rather than `[X, null]` (being absent from `required` already makes it
/// optional; `null` is still accepted), no Rust integer `format` and no
/// `minimum: 0` (a negative count is refused by name when it comes), and
/// no description of `session_id` (the instructions give it once).
fn compact_schema(schema: &mut JsonObject) {
    schema.remove("$schema");
    compact_node(schema);
    // The instructions say once what session_id is; 47 copies say nothing more.
    if let Some(serde_json::Value::Object(session)) = schema
        .get_mut("properties")
        .and_then(|p| p.get_mut("session_id"))
    {
        session.remove("description");
    }
}

/// Trims a generated output schema the same way where that keeps it exact:
/// no `$schema`, `title`, descriptions, integer `format`s, the bounds of
/// Rust integer types or `required` lists (the tool's description and the
/// field names say what the data is; the data test checks every declared
/// field is written). Nullable types
/// stay `[X, "null"]`: the data does carry `null`s.
fn compact_output_schema(schema: &mut JsonObject) {
    schema.remove("$schema");
    schema.remove("title");
    strip_output_node(schema);
}

fn strip_output_node(node: &mut JsonObject) {
    node.remove("description");
    node.remove("title");
    // Every field is always written (the serialised form); saying so for
    // each of them costs 2 KB of tools/list.
    node.remove("required");
    let integer = match node.get("type") {
        Some(serde_json::Value::String(t)) => t == "integer",
        Some(serde_json::Value::Array(t)) => t.iter().any(|t| t == "integer"),
        _ => false,
    };
    if integer {
        // Bounds of Rust integer types say nothing about the data.
        node.remove("format");
        node.remove("minimum");
        node.remove("maximum");
    }
    let number = match node.get("type") {
        Some(serde_json::Value::String(t)) => t == "number",
        Some(serde_json::Value::Array(t)) => t.iter().any(|t| t == "number"),
        _ => false,
    };
    if number {
        // `double` is how Rust stores it; JSON has one number type.
        node.remove("format");
    }
    for (key, value) in node.iter_mut() {
        match value {
            // Under these, the keys are names, each mapped to a schema.
            serde_json::Value::Object(named) if key == "properties" || key == "$defs" => {
                for schema in named.values_mut() {
                    if let serde_json::Value::Object(schema) = schema {
                        strip_output_node(schema);
                    }
                }
            }
            serde_json::Value::Object(child) => strip_output_node(child),
            serde_json::Value::Array(items) => {
                for item in items {
                    if let serde_json::Value::Object(child) = item {
                        strip_output_node(child);
                    }
                }
            }
            _ => {}
        }
    }
}

fn compact_node(node: &mut JsonObject) {
    // `#[serde(default)]` on an optional argument says `default: null`:
    // being optional already says so.
    if node.get("default") == Some(&serde_json::Value::Null) {
        node.remove("default");
    }
    if let Some(serde_json::Value::Array(types)) = node.get("type") {
        let kept: Vec<serde_json::Value> = types
            .iter()
            .filter(|t| t.as_str() != Some("null"))
            .cloned()
            .collect();
        if kept.len() == 1 {
            node.insert("type".into(), kept[0].clone());
        }
    }
    if node.get("type").and_then(|t| t.as_str()) == Some("integer") {
        node.remove("format");
        // Every count and id is unsigned; a negative one is refused by name.
        if node.get("minimum") == Some(&serde_json::Value::from(0)) {
            node.remove("minimum");
        }
    }
    for value in node.values_mut() {
        match value {
            serde_json::Value::Object(child) => compact_node(child),
            serde_json::Value::Array(items) => {
                for item in items {
                    if let serde_json::Value::Object(child) = item {
                        compact_node(child);
                    }
                }
            }
            _ => {}
        }
    }
}

/// A tool call as its handler receives it: the tool's own name, for the
/// messages that name it, and the arguments parsed into the tool's
/// parameter type (or why they did not parse).
pub struct Call<P> {
    pub tool: &'static str,
    pub params: Result<P, ToolError>,
}

/// What a route keeps of its handler: the call's context and its raw
/// arguments in, the tool's outcome out.
type Handler = dyn Fn(Ctx, Option<JsonObject>) -> BoxFuture<'static, Reply> + Send + Sync;

/// One tool: its definition (name, schema, description, annotations) and
/// its handler, declared together once in its family's `routes()`.
pub struct Route {
    pub tool: Tool,
    call: Arc<Handler>,
    /// What the tool's description leaves out, served as the resource
    /// `jdwp://guide/<tool>` and in docs/tools.md.
    guide: Option<String>,
    /// When a call of this tool can run long enough to be an MCP task
    /// (for a client that declares the tasks extension), judged on its
    /// arguments.
    long: Option<fn(&JsonObject) -> bool>,
    /// How the tool runs across a group; `None`: a group is refused,
    /// naming its members.
    fan_out: Option<fan_out::FanOut>,
}

impl Route {
    /// Declares a tool whose arguments are `P`, answered by `handler` (an
    /// `async fn(Ctx, Call<P>) -> Reply`, or a closure that adds what one
    /// handler serving several tools needs). The handler receives the
    /// tool's name and the arguments parsed (misspelt names refused,
    /// naming the accepted ones), so the name is written only here.
    pub fn new<P, H, F>(
        name: &'static str,
        title: &'static str,
        description: &'static str,
        effect: Effect,
        handler: H,
    ) -> Self
    where
        P: JsonSchema + DeserializeOwned + Send + 'static,
        H: Fn(Ctx, Call<P>) -> F + Send + Sync + 'static,
        F: Future<Output = Reply> + Send + 'static,
    {
        Self {
            tool: tool::<P>(name, title, description, effect),
            call: Arc::new(move |ctx, args| {
                let params = parse::<P>(name, args);
                Box::pin(handler(ctx, Call { tool: name, params }))
            }),
            guide: None,
            long: None,
            fan_out: None,
        }
    }

    /// Declares when a call of the tool runs long (a wait, a walk, a
    /// build): such a call runs as an MCP task for a client that declared
    /// the tasks extension, and stays a plain call for the others.
    pub fn runs_long_when(mut self, when: fn(&JsonObject) -> bool) -> Self {
        self.long = Some(when);
        self
    }

    /// The tool's guide: the rules and traps its description has no room
    /// for (tools/list is read whole before the first call).
    pub fn with_guide(mut self, guide: &'static str) -> Self {
        self.guide = Some(guide.to_string());
        self
    }

    /// Declares that the tool's results are data of type `O`: its
    /// `outputSchema` is generated from `O`, and its replies are built
    /// with [`data`] from an `O`. Only such tools carry structured content.
    pub fn with_output<O: JsonSchema + 'static>(mut self) -> Self {
        let mut schema = (*rmcp::handler::server::common::schema_for_output::<O>()).clone();
        compact_output_schema(&mut schema);
        self.tool.output_schema = Some(Arc::new(schema));
        self
    }
}

/// Every route of every family, in catalogue order, with an index by name.
struct Catalogue {
    routes: Vec<Route>,
    by_name: HashMap<String, usize>,
}

fn routes() -> &'static Catalogue {
    static CATALOGUE: OnceLock<Catalogue> = OnceLock::new();
    CATALOGUE.get_or_init(|| {
        let mut routes = session::routes();
        routes.extend(output::routes());
        routes.extend(diagnose::routes());
        routes.extend(execution::routes());
        routes.extend(stop_points::routes());
        routes.extend(events::routes());
        routes.extend(inspect::routes());
        routes.extend(dump::routes());
        routes.extend(classes::routes());
        routes.extend(members::routes());
        routes.extend(memory::routes());
        routes.extend(profile::routes());
        routes.extend(code::routes());
        routes.extend(mutation::routes());
        routes.extend(invoke::routes());
        routes.extend(investigation::routes());
        for r in &mut routes {
            r.fan_out = fan_out::of(&r.tool.name);
        }
        let by_name = routes
            .iter()
            .enumerate()
            .map(|(i, r)| (r.tool.name.to_string(), i))
            .collect();
        Catalogue { routes, by_name }
    })
}

/// Every tool, in catalogue order.
pub fn catalogue() -> Vec<Tool> {
    routes().routes.iter().map(|r| r.tool.clone()).collect()
}

/// Whether this call runs long enough to be an MCP task (see
/// [`Route::runs_long_when`]), or is a long fan-out across the group it
/// names (or the current group: [`fan_out::FanOut::long`]). Unknown tools
/// and bad arguments do not.
pub fn runs_long(ctx: &Ctx, name: &str, args: Option<&JsonObject>) -> bool {
    let all = routes();
    let empty = JsonObject::new();
    let Some(route) = all.by_name.get(name).map(|&i| &all.routes[i]) else {
        return false;
    };
    let args = args.unwrap_or(&empty);
    let named = args.get("session_id").and_then(serde_json::Value::as_str);
    route.long.is_some_and(|long| long(args))
        || route
            .fan_out
            .is_some_and(|f| f.long && ctx.engine.group(named).is_some())
}

/// Whether a tool changes debugger or JVM state (its annotations say it
/// does not only read): the calls a read-only session refuses, and the
/// calls the audit records. Unknown tools change nothing.
pub fn mutates(name: &str) -> bool {
    let all = routes();
    all.by_name.get(name).is_some_and(|&i| {
        all.routes[i]
            .tool
            .annotations
            .as_ref()
            .and_then(|a| a.read_only_hint)
            != Some(true)
    })
}

/// Whether a boolean argument is given as `true`.
pub fn flag(args: &JsonObject, name: &str) -> bool {
    args.get(name).and_then(serde_json::Value::as_bool) == Some(true)
}

/// Runs one tool call.
pub async fn call(ctx: &Ctx, name: &str, args: Option<JsonObject>) -> CallToolResult {
    let all = routes();
    let reply = match all.by_name.get(name) {
        Some(&i) => {
            let route = &all.routes[i];
            let named = args
                .as_ref()
                .and_then(|a| a.get("session_id"))
                .and_then(serde_json::Value::as_str);
            match route
                .fan_out
                .and_then(|f| Some((f, ctx.engine.group(named)?)))
            {
                Some((fan, group)) => fan_out::run(ctx, name, route, fan, group, args).await,
                None => (route.call)(ctx.clone(), args).await,
            }
        }
        None => Err(match kinds::renamed(name) {
            Some((tool, kind)) => ToolError::new(
                "UNKNOWN_TOOL",
                format!("there is no tool {name:?}: it is now {tool} with kind {kind:?}"),
            )
            .next(format!(
                "call {tool} with \"kind\": \"{kind}\"; jdwp://guide/{tool} lists its arguments"
            )),
            None => ToolError::new("UNKNOWN_TOOL", format!("there is no tool {name:?}"))
                .next("tools/list names every tool"),
        }),
    };
    let mut result = reply.unwrap_or_else(|e| e.in_tool(name).into_result());
    if let Some(&i) = all.by_name.get(name)
        && all.routes[i].tool.output_schema.is_none()
    {
        // Structured content only where a schema declares it.
        result.structured_content = None;
    }
    result
}

/// Parses a call's arguments; unknown or misspelt names are refused with
/// the accepted ones listed.
fn parse<P: DeserializeOwned>(tool: &str, args: Option<JsonObject>) -> Result<P, ToolError> {
    let value = serde_json::Value::Object(args.unwrap_or_default());
    serde_json::from_value(value).map_err(|e| ToolError::bad_argument(tool, e))
}

/// A plain text reply.
pub fn text(s: impl Into<String>) -> CallToolResult {
    CallToolResult::success(vec![ContentBlock::text(s.into())])
}

/// A data tool's reply: the text, complete on its own, and the same facts
/// as structured content of the type its `outputSchema` declares.
pub fn data<O: Serialize>(s: impl Into<String>, data: &O) -> CallToolResult {
    let mut r = text(s);
    match serde_json::to_value(data) {
        Ok(v) => r.structured_content = Some(v),
        Err(e) => tracing::warn!(error = %e, "structured content not serialisable"),
    }
    r
}

/// `docs/tools.md`: the catalogue rendered for people. Generated from the
/// same definitions tools/list serves; a test keeps the file in step.
pub fn markdown() -> String {
    let mut out = String::from(concat!(
        "# Tools\n\n<!-- Generated from the tool catalogue (src/mcp/tools); a test checks it. \
         Refresh with `UPDATE_GOLDEN=1 cargo test --test it docs_tools_md`. -->\n\n",
        crate::shared_arguments!(),
        " Errors start with a stable `[LABEL]` and say what to do next. Each section is also \
         served as the MCP resource `jdwp://guide/<tool>`.\n",
    ));
    for r in &routes().routes {
        out.push('\n');
        out.push_str(&route_markdown(r));
    }
    out
}

/// One tool's guide (`jdwp://guide/<tool>`): its description, what the
/// description leaves out, its effect and its arguments.
pub fn guide(name: &str) -> Option<String> {
    let all = routes();
    all.by_name
        .get(name)
        .map(|&i| route_markdown(&all.routes[i]))
}

fn route_markdown(r: &Route) -> String {
    let t = &r.tool;
    let hints = t.annotations.clone().unwrap_or_default();
    let effect = if hints.read_only_hint == Some(true) {
        "reads only"
    } else if hints.destructive_hint == Some(true) {
        "destructive"
    } else if hints.idempotent_hint == Some(true) {
        "changes state, idempotent"
    } else {
        "changes state"
    };
    let mut out = format!(
        "## `{}` — {}\n\n{}\n\n",
        t.name,
        t.title.clone().unwrap_or_default(),
        t.description.clone().unwrap_or_default(),
    );
    if let Some(g) = &r.guide {
        out.push_str(g);
        out.push_str("\n\n");
    }
    out.push_str(&format!(
        "*Effect:* {effect}.\n\n| argument | type | required | meaning |\n|---|---|---|---|\n"
    ));
    let schema = t.input_schema.as_ref();
    let required: Vec<String> = schema
        .get("required")
        .and_then(|r| r.as_array())
        .map(|r| {
            r.iter()
                .filter_map(|v| v.as_str().map(String::from))
                .collect()
        })
        .unwrap_or_default();
    if let Some(props) = schema.get("properties").and_then(|p| p.as_object()) {
        for (name, prop) in props {
            let ty = match prop.get("type") {
                Some(serde_json::Value::String(s)) => s.clone(),
                Some(serde_json::Value::Array(a)) => a
                    .iter()
                    .filter_map(|v| v.as_str())
                    .filter(|s| *s != "null")
                    .collect::<Vec<_>>()
                    .join("/"),
                _ => "any".into(),
            };
            let doc = prop
                .get("description")
                .and_then(|d| d.as_str())
                .unwrap_or("");
            out.push_str(&format!(
                "| `{name}` | {ty} | {} | {} |\n",
                if required.contains(name) { "yes" } else { "no" },
                doc.replace('|', "\\|").replace('\n', " ")
            ));
        }
    }
    out
}
