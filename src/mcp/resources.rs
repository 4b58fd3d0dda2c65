//! MCP resources and prompts: `jdwp://jvms` (the local JVMs),
//! `jdwp://diagnose` (the report), `jdwp://vitals` (each local JVM's vital
//! signs), the texts the tools answer with; `jdwp://guide` and
//! `jdwp://guide/<tool>` (the tools in full, beyond what tools/list has
//! room for); `jdwp://profile/<n>/…` (the last profiles' flame graphs); the `investigate` prompt; and the subscriptions that turn
//! a change in the sessions or the local JVMs into
//! `notifications/resources/updated`.

use std::collections::BTreeSet;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rmcp::model::{
    GetPromptResult, Prompt, PromptArgument, PromptMessage, ReadResourceResult, Resource,
    ResourceContents, ResourceUpdatedNotificationParam, Role,
};
use rmcp::{ErrorData, Peer, RoleServer};

use super::tools::{self, Ctx, diagnose};

pub const JVMS: &str = "jdwp://jvms";
pub const DIAGNOSE: &str = "jdwp://diagnose";
pub const VITALS: &str = "jdwp://vitals";
/// Every tool's guide; `jdwp://guide/<tool>` is one tool's.
pub const GUIDE: &str = "jdwp://guide";

/// How often subscribed resources are checked for a change in the sessions.
const WATCH_EVERY: Duration = Duration::from_millis(500);
/// How often the local JVMs are scanned for a change while subscribed.
const SCAN_EVERY: Duration = Duration::from_secs(1);

/// The resources this server offers (a fixed list).
pub fn list() -> Vec<Resource> {
    let mut all = vec![
        Resource::new(JVMS, "jvms")
            .with_title("Local JVMs")
            .with_description("The JVMs this user runs here and the state of their JDWP endpoints (as debug_list_jvms)")
            .with_mime_type("text/plain"),
        Resource::new(DIAGNOSE, "diagnose")
            .with_title("Diagnosis")
            .with_description("This server, every session and the local JVMs (as debug_diagnose)")
            .with_mime_type("text/plain"),
        Resource::new(VITALS, "vitals")
            .with_title("Vital signs")
            .with_description("Each local JVM's heap, GC, threads, classes, safepoints and JIT from hsperfdata, with rates since the last read")
            .with_mime_type("text/plain"),
        Resource::new(GUIDE, "guide")
            .with_title("Tool guide")
            .with_description("Every tool in full: rules, traps and arguments; jdwp://guide/<tool> for one")
            .with_mime_type("text/markdown"),
    ];
    // The flame graphs and collapsed stacks of the last debug_profile calls.
    all.extend(tools::profile::resources());
    all
}

/// Reads one resource.
pub async fn read(ctx: &Ctx, uri: &str) -> Result<ReadResourceResult, ErrorData> {
    let guide = |text: String| {
        Ok(ReadResourceResult::new(vec![
            ResourceContents::text(text, uri).with_mime_type("text/markdown"),
        ]))
    };
    let text = match uri {
        JVMS => diagnose::jvms_text(ctx).await,
        DIAGNOSE => diagnose::report_text(ctx).await,
        VITALS => diagnose::vitals_text(ctx).await,
        GUIDE => return guide(tools::markdown()),
        _ if uri.starts_with(tools::profile::PREFIX) => match tools::profile::resource(uri) {
            Some((text, mime)) => {
                return Ok(ReadResourceResult::new(vec![
                    ResourceContents::text(text, uri).with_mime_type(mime),
                ]));
            }
            None => {
                return Err(ErrorData::resource_not_found(
                    format!(
                        "no resource {uri:?}: only the last 8 profiles are kept; call debug_profile again"
                    ),
                    None,
                ));
            }
        },
        _ => match uri
            .strip_prefix(GUIDE)
            .and_then(|t| t.strip_prefix('/'))
            .and_then(tools::guide)
        {
            Some(text) => return guide(text),
            None => {
                return Err(ErrorData::resource_not_found(
                    format!(
                        "no resource {uri:?}; resources/list names {JVMS}, {DIAGNOSE}, {VITALS} and {GUIDE} \
                         ({GUIDE}/<tool> for one tool)"
                    ),
                    None,
                ));
            }
        },
    };
    Ok(ReadResourceResult::new(vec![
        ResourceContents::text(text, uri).with_mime_type("text/plain"),
    ]))
}

/// The prompts this server offers.
pub fn prompts() -> Vec<Prompt> {
    vec![Prompt::new(
        "investigate",
        Some("Investigate a problem on a JVM someone else may be using, without stopping it"),
        Some(vec![
            PromptArgument::new("problem")
                .with_description("What is wrong, in a sentence (e.g. orders stay PENDING)")
                .with_required(false),
            PromptArgument::new("port")
                .with_description("The JDWP port, if known")
                .with_required(false),
        ]),
    )]
}

/// Builds a prompt's messages.
pub fn get_prompt(
    name: &str,
    args: Option<&serde_json::Map<String, serde_json::Value>>,
) -> Result<GetPromptResult, ErrorData> {
    if name != "investigate" {
        return Err(ErrorData::invalid_params(
            format!("no prompt {name:?}; prompts/list names investigate"),
            None,
        ));
    }
    let arg = |k: &str| {
        args.and_then(|a| a.get(k)).map(|v| match v {
            serde_json::Value::String(s) => s.clone(),
            other => other.to_string(),
        })
    };
    let problem = arg("problem").unwrap_or_else(|| "the problem the user reported".into());
    let attach = match arg("port") {
        Some(p) => format!("debug_attach {{port: {p}, read_only: true}}"),
        None => "debug_attach {port, read_only: true} on the LISTENING endpoint".into(),
    };
    let text = format!(
        "Investigate {problem} on a JVM that others may depend on. Keep it running.\n\
         1. debug_list_jvms: find the JVM and its endpoint state. WAITING_FOR_DEBUGGER means its main has not run: attach only if it is yours.\n\
         2. {attach}. read_only refuses every change at the wire.\n\
         3. Observe without suspending: debug_set_stop (kind line) with trace:true, trace_expr for the values that matter and trace_max_hits; read them with debug_get_traces. Exception stops with trace:true show where errors start.\n\
         4. Narrow with a condition. If a stop point stays silent, debug_diagnose {{stop_point}} says why.\n\
         5. Do not suspend a shared JVM (no debug_pause, no suspending stop points): every request thread waits while you read. If you must, keep it short; the watchdog resumes a JVM held too long.\n\
         6. debug_disconnect when done: it clears every stop point and releases every thread.\n\
         Report what you saw (values, threads, stacks), not guesses."
    );
    let mut result = GetPromptResult::new(vec![PromptMessage::new_text(Role::User, text)]);
    result.description = Some("A non-intrusive investigation of a shared JVM".into());
    Ok(result)
}

/// Resource subscriptions of the one client on stdio, and the task that
/// notifies it when the sessions change.
#[derive(Default)]
pub struct Subscriptions {
    inner: Mutex<SubState>,
}

#[derive(Default)]
struct SubState {
    uris: BTreeSet<String>,
    watching: bool,
}

impl Subscriptions {
    /// Subscribes `uri`; the first subscription starts the watch.
    pub fn subscribe(
        self: &Arc<Self>,
        uri: &str,
        ctx: &Ctx,
        peer: Peer<RoleServer>,
    ) -> Result<(), ErrorData> {
        if uri != JVMS && uri != DIAGNOSE {
            return Err(ErrorData::resource_not_found(
                format!("no resource {uri:?}"),
                None,
            ));
        }
        let start = {
            let mut s = self
                .inner
                .lock()
                .map_err(|_| ErrorData::internal_error("subscriptions poisoned", None))?;
            s.uris.insert(uri.to_string());
            !std::mem::replace(&mut s.watching, true)
        };
        if start {
            tokio::spawn(watch(self.clone(), ctx.clone(), peer));
        }
        Ok(())
    }

    pub fn unsubscribe(&self, uri: &str) {
        if let Ok(mut s) = self.inner.lock() {
            s.uris.remove(uri);
        }
    }

    /// Ends the watch when nothing is subscribed any more (under the lock
    /// a new subscription takes, so it then starts a fresh watch).
    fn stop_if_unwatched(&self) -> bool {
        match self.inner.lock() {
            Ok(mut s) if s.uris.is_empty() => {
                s.watching = false;
                true
            }
            Ok(_) => false,
            Err(_) => true,
        }
    }

    /// Ends the watch (the client is gone).
    fn stop(&self) {
        if let Ok(mut s) = self.inner.lock() {
            s.watching = false;
        }
    }

    fn uris(&self) -> Vec<String> {
        self.inner
            .lock()
            .map(|s| s.uris.iter().cloned().collect())
            .unwrap_or_default()
    }
}

/// What a change in the sessions looks like: each id and whether it lives.
fn fingerprint(ctx: &Ctx) -> Vec<(String, bool)> {
    ctx.engine
        .sessions()
        .iter()
        .map(|s| (s.id().to_string(), s.check_alive().is_ok()))
        .collect()
}

/// Notifies every subscribed resource when a session opens, ends or dies,
/// and when a local JVM outside our sessions starts, stops or changes the
/// state of its JDWP endpoint (a `/proc` scan every `SCAN_EVERY`, nothing
/// dialled). Runs only while something is subscribed; stops when the last
/// subscription goes or the client is gone.
async fn watch(subs: Arc<Subscriptions>, ctx: Ctx, peer: Peer<RoleServer>) {
    let scan_budget = crate::actors::DiscoveryBudget::default().scan;
    let mut last = fingerprint(&ctx);
    let mut jvms = ctx.engine.jvms_snapshot(scan_budget).await;
    let mut since_scan = Duration::ZERO;
    loop {
        tokio::time::sleep(WATCH_EVERY).await;
        if subs.stop_if_unwatched() {
            return;
        }
        let now = fingerprint(&ctx);
        let mut changed = now != last;
        last = now;
        since_scan += WATCH_EVERY;
        if since_scan >= SCAN_EVERY {
            since_scan = Duration::ZERO;
            // A scan cut short by its budget proves nothing either way.
            if let Some(seen) = ctx.engine.jvms_snapshot(scan_budget).await {
                changed |= jvms.as_ref().is_some_and(|j| *j != seen);
                jvms = Some(seen);
            }
        }
        if !changed {
            continue;
        }
        for uri in subs.uris() {
            if peer
                .notify_resource_updated(ResourceUpdatedNotificationParam::new(uri))
                .await
                .is_err()
            {
                subs.stop();
                return;
            }
        }
    }
}
