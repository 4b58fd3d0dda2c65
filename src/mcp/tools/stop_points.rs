//! Stop-point tools: set a line, exception, field, method-exit or monitor
//! stop point; list, clear, toggle and update them; panic. Arguments become
//! `model::stop_point` definitions here; the registry does the rest.

mod render;

use rmcp::model::{JsonObject, Tool};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;

use super::session::SessionParams;
use super::{Ctx, Effect, Reply, parse, text_and_data, tool};
use crate::actors::SessionHandle;
use crate::actors::events::condition;
use crate::actors::stop_points::{ArmError, ArmReport};
use crate::mcp::error::ToolError;
use crate::model::stop_point::{
    ExceptionSpec, FieldSpec, Filters, LineSpec, LocalsChoice, MethodExitSpec, Mode, MonitorKind,
    MonitorSpec, StopPointSpec, Target, TraceSpec,
};

pub use render::{describe_point, point_json};

/// One value or a list of them.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum OneOrMany<T> {
    One(T),
    Many(Vec<T>),
}

impl<T> OneOrMany<T> {
    pub fn into_vec(self) -> Vec<T> {
        match self {
            OneOrMany::One(t) => vec![t],
            OneOrMany::Many(v) => v,
        }
    }
}

/// `"all"`, `"none"`, or a list of local names.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum LocalsParam {
    Word(String),
    Names(Vec<String>),
}

const MAX_CLASSES_DEFAULT: usize = 20;

/// Declares a stop-point tool's parameters: its own fields, then the
/// filters and trace settings every kind shares.
macro_rules! stop_params {
    ($(#[$m:meta])* pub struct $name:ident { $($(#[$fm:meta])* pub $f:ident : $t:ty,)* }) => {
        $(#[$m])*
        #[derive(Debug, Deserialize, JsonSchema)]
        #[serde(deny_unknown_fields)]
        pub struct $name {
            /// Session id; default: the current session.
            pub session_id: Option<String>,
            $($(#[$fm])* pub $f: $t,)*
            /// Fire on the Nth hit only, then spent.
            pub hit_count: Option<u32>,
            /// Only hits in this thread (@0x…).
            pub thread_id: Option<String>,
            /// Snapshot and resume instead of suspending.
            pub trace: Option<bool>,
            /// Caller frames per snapshot; default 3.
            pub trace_frames: Option<u32>,
            /// "all" (default), "none", or names ("a,b"); each local read is a global safepoint.
            #[schemars(with = "Option<String>")]
            pub trace_locals: Option<LocalsParam>,
            /// Snapshots before disarming; default 200, 0 = unbounded.
            pub trace_max_hits: Option<u32>,
            /// Chars kept per value; default 100, max 4000.
            pub trace_max_length: Option<u32>,
        }

        impl $name {
            fn common(&self) -> Common {
                Common {
                    hit_count: self.hit_count,
                    thread_id: self.thread_id.clone(),
                    trace: self.trace,
                    trace_frames: self.trace_frames,
                    trace_locals: self.trace_locals.clone(),
                    trace_max_hits: self.trace_max_hits,
                    trace_max_length: self.trace_max_length,
                }
            }
        }
    };
}

stop_params! {
    /// Arguments of debug_set_line_stop.
    pub struct LineStopParams {
        /// Exact class, wildcard (com.acme.*, *Repo) or a list of either.
        pub class_pattern: OneOrMany<String>,
        /// Source line.
        pub line: Option<u32>,
        /// Method name: its entry, or (with line) only that method's code.
        pub method: Option<String>,
        /// Expression; stop only when true.
        pub condition: Option<String>,
        /// Expressions recorded per snapshot (up to 4).
        #[schemars(with = "Option<Vec<String>>")]
        pub trace_expr: Option<OneOrMany<String>>,
        /// Only hits whose `this` is this object (@0x…); instance methods only.
        pub instance_id: Option<String>,
        /// Most classes a wildcard arms; default 20.
        pub max_classes: Option<usize>,
    }
}

stop_params! {
    /// Arguments of debug_set_exception_stop.
    pub struct ExceptionStopParams {
        /// Exception type (with subclasses); omit for every exception.
        pub class_pattern: Option<String>,
        /// Report throws that will be caught; default true.
        pub caught: Option<bool>,
        /// Report throws nothing catches; default true.
        pub uncaught: Option<bool>,
        /// Expression; stop only when true (`exception` is in scope).
        pub condition: Option<String>,
        /// Expressions recorded per snapshot (up to 4).
        #[schemars(with = "Option<Vec<String>>")]
        pub trace_expr: Option<OneOrMany<String>>,
        /// Only throws from this object's instance methods (@0x…).
        pub instance_id: Option<String>,
    }
}

stop_params! {
    /// Arguments of debug_set_field_stop.
    pub struct FieldStopParams {
        /// Exact class declaring or inheriting the field.
        pub class_name: String,
        /// Field name.
        pub field_name: String,
        /// Report writes; default true.
        pub modify: Option<bool>,
        /// Report reads; default false (noisy).
        pub access: Option<bool>,
        /// Expression; stop only when true (`newValue` is in scope).
        pub condition: Option<String>,
        /// Expressions recorded per snapshot (up to 4).
        #[schemars(with = "Option<Vec<String>>")]
        pub trace_expr: Option<OneOrMany<String>>,
        /// Watch this object's copy only (@0x…); instance fields only.
        pub instance_id: Option<String>,
    }
}

stop_params! {
    /// Arguments of debug_set_method_exit_stop.
    pub struct MethodExitParams {
        /// Class, or a pattern with one * at the start or end.
        pub class_pattern: String,
        /// Method name (filtered here); omit for every method.
        pub method: Option<String>,
        /// Class patterns the JVM excludes.
        pub exclude_classes: Option<Vec<String>>,
        /// Expression; stop only when true.
        pub condition: Option<String>,
        /// Always refused: HotSpot ignores instance filters on method exits.
        pub instance_id: Option<String>,
    }
}

stop_params! {
    /// Arguments of debug_set_monitor_stop.
    pub struct MonitorParams {
        /// blocked, acquired, wait, waited, or all; default blocked+acquired.
        pub kinds: Option<Vec<String>>,
        /// Keep only pairs lasting at least this long (measured here).
        pub min_duration_ms: Option<u64>,
        /// Only monitors of this loaded class (wait/waited only).
        pub monitor_class: Option<String>,
        /// Always refused: HotSpot ignores instance filters on monitor events.
        pub instance_id: Option<String>,
    }
}

/// Arguments naming one stop point or family.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct IdParams {
    /// Session id; default: the current session.
    pub session_id: Option<String>,
    /// bp_…, exc_…, watch_…, mexit_…, mon_… or bpset_…
    pub id: String,
}

/// Arguments of debug_toggle_stop_point.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ToggleParams {
    /// Session id; default: the current session.
    pub session_id: Option<String>,
    /// bp_…, exc_…, watch_…, mexit_…, mon_… or bpset_…
    pub id: String,
    /// true re-arms, false disables; omitted flips.
    pub enabled: Option<bool>,
}

/// Arguments of debug_update_stop_point.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct UpdateParams {
    /// Session id; default: the current session.
    pub session_id: Option<String>,
    /// The stop point to change.
    pub id: String,
    /// Snapshot and resume (true) or suspend (false).
    pub trace: Option<bool>,
    /// Caller frames per snapshot.
    pub trace_frames: Option<u32>,
    /// "all", "none", or names ("a,b").
    #[schemars(with = "Option<String>")]
    pub trace_locals: Option<LocalsParam>,
    /// Snapshots before it disarms itself; 0 = no limit.
    pub trace_max_hits: Option<u32>,
    /// Characters kept per captured value; max 4000.
    pub trace_max_length: Option<u32>,
    /// Fire on the Nth hit only; 0 removes it.
    pub hit_count: Option<u32>,
    /// Only this thread (@0x…); "" removes the filter.
    pub thread_id: Option<String>,
    /// Only this object (@0x…); "" removes the filter.
    pub instance_id: Option<String>,
    /// Stop only when true; "" removes it.
    pub condition: Option<String>,
}

/// The filters and trace settings every set tool shares.
struct Common {
    hit_count: Option<u32>,
    thread_id: Option<String>,
    trace: Option<bool>,
    trace_frames: Option<u32>,
    trace_locals: Option<LocalsParam>,
    trace_max_hits: Option<u32>,
    trace_max_length: Option<u32>,
}

pub fn tools() -> Vec<Tool> {
    vec![
        tool::<LineStopParams>(
            "debug_set_line_stop",
            "Stop at a line or method entry",
            "Stop at a source line, or at a method's entry (method, no line). class_pattern: an exact class \
             (Outer$Inner), a wildcard (com.acme.*, *Repo; needs method, refuses line: one bp_ per matching \
             class in a bpset_ family that also takes matching classes loaded later, up to max_classes) or a \
             list (each entry reported armed, deferred or refused). Every bytecode location of the line (a \
             finally line has several) on every classloader copy, later copies included, is one id. An \
             unloaded class is deferred (similar loaded names are listed); a line without code is refused \
             with the nearest lines that have code. A hit suspends the VM (debug_wait_for_event, then \
             debug_continue); trace:true snapshots and resumes, holding only the hit thread; with \
             trace_frames:0 and trace_locals:\"none\" nothing is suspended. A condition is evaluated on the hit \
             thread alone and suspends the VM only when true (others run on for one round trip); one that \
             fails is reported. hit_count N fires once, on the Nth hit. instance_id: instance methods only. \
             A method with a breakpoint runs interpreted: clear what you no longer need.",
            Effect::Changes,
        ),
        tool::<ExceptionStopParams>(
            "debug_set_exception_stop",
            "Stop when an exception is thrown",
            "Stop when an exception is thrown: class_pattern is an exact type, its subclasses included \
             (deferred until it loads; omit it for every exception: noisy). caught and uncaught default true. \
             Reports type, stored message (the detailMessage field, nothing invoked; JDK 15+ helpful NPE text \
             is not stored, so not shown), throw and catch location. A hit suspends the VM; trace:true \
             snapshots and resumes instead (debug_get_traces), right for a shared JVM. hit_count N fires \
             once, on the Nth throw. instance_id keeps throws from one object's instance methods.",
            Effect::Changes,
        ),
        tool::<FieldStopParams>(
            "debug_set_field_stop",
            "Stop when a field is written or read",
            "Stop when a field is written (modify, default true) or read (access, default false): class_name \
             exact (deferred until it loads), field_name (an inherited one resolves to its declaring class). \
             A write reports old → new (the event precedes the write; the old value is read while the thread \
             is held). A watched field is not JIT-optimised: clear it when done. A hit suspends the VM; \
             trace:true snapshots and resumes. instance_id watches one object's copy of an instance field \
             (refused on a static one). hit_count N fires once, on the Nth access.",
            Effect::Changes,
        ),
        tool::<MethodExitParams>(
            "debug_set_method_exit_stop",
            "Report what methods return",
            "Report what a method returned and from which return site. class_pattern is matched by the JVM \
             (exact, or one * at the start or end), classes loaded later included. method is filtered here, \
             after the JVM has paid for every exit of the class: debug_list_stop_points counts them as exits \
             discarded; narrow the pattern or use exclude_classes. Traced by default; trace:false needs an \
             exact class and a method. hit_count only without method. instance_id is refused: HotSpot ignores \
             it on method exits.",
            Effect::Changes,
        ),
        tool::<MonitorParams>(
            "debug_set_monitor_stop",
            "Watch lock contention",
            "Watch monitors without suspending: blocked (waiting for a lock another thread holds), acquired \
             (got it), wait (entered Object.wait), waited (returned); default [\"blocked\",\"acquired\"], \
             [\"all\"] for the four. Pair durations are measured here (no event carries one) and include our \
             latency; min_duration_ms keeps longer pairs only (needs both halves; the opening event then \
             holds nothing). Contention can be anywhere, the JDK included: trace_max_hits bounds it. \
             thread_id is the one filter the JVM applies; monitor_class works with wait/waited only. \
             trace:false needs thread_id. No condition or instance_id: a blocked thread must not run our \
             code, and HotSpot ignores instance filters here.",
            Effect::Changes,
        ),
        tool::<SessionParams>(
            "debug_list_stop_points",
            "List stop points",
            "Every stop point and family: id, target, state (armed, deferred, disabled, spent and why; \
             watching for later classes or not), suspend policy, locations, classloaders, and Hits: N always \
             (0 included). Traced ones add snapshots against the budget, hits over budget and the measured \
             cost (mean and p99 hold per snapshot, hits/s, share of time capturing); one sharing a location \
             with a suspending stop point is marked SUSPEND POLICY OVERRIDDEN (it freezes the VM too). Method \
             exits show exits discarded; families their members, max_classes and watch state. Reads only.",
            Effect::Read,
        ),
        tool::<IdParams>(
            "debug_clear_stop_point",
            "Clear a stop point",
            "Clear a stop point (bp_, exc_, watch_, mexit_, mon_) or a whole family (bpset_: every member and \
             its class-load watch). A spent stop point is removed without sending anything: the JVM already \
             deleted its request. Clearing a family member frees a slot, so a full family watches for new \
             classes again.",
            Effect::Changes,
        ),
        tool::<ToggleParams>(
            "debug_toggle_stop_point",
            "Disable or re-arm a stop point",
            "Disable a stop point or family (its JDWP requests are cleared; the definition and counters are \
             kept) or re-arm it; enabled true/false, omitted flips. Re-arming a spent stop point starts a \
             fresh hit_count and trace budget.",
            Effect::Changes,
        ),
        tool::<UpdateParams>(
            "debug_update_stop_point",
            "Change a stop point in place",
            "Change a stop point's trace settings or filters, keeping its id and counters: trace, \
             trace_frames, trace_locals, trace_max_hits, trace_max_length, hit_count (0 removes), thread_id, \
             instance_id and condition (\"\" removes). It is re-armed with the new definition and a fresh budget; a \
             disabled one stays disabled.",
            Effect::Changes,
        ),
        tool::<SessionParams>(
            "debug_panic",
            "Clear everything and resume",
            "Safety: clear every stop point and family, then resume every thread until no suspend count is \
             left, verified by reading each thread's count back. Use it when the JVM seems frozen by the \
             debugger.",
            Effect::Destructive,
        ),
    ]
}

pub async fn call(ctx: &Ctx, name: &str, args: Option<JsonObject>) -> Option<Reply> {
    Some(match name {
        "debug_set_line_stop" => set_line(ctx, parse(name, args)).await,
        "debug_set_exception_stop" => set_exception(ctx, parse(name, args)).await,
        "debug_set_field_stop" => set_field(ctx, parse(name, args)).await,
        "debug_set_method_exit_stop" => set_method_exit(ctx, parse(name, args)).await,
        "debug_set_monitor_stop" => set_monitor(ctx, parse(name, args)).await,
        "debug_list_stop_points" => list(ctx, parse(name, args)).await,
        "debug_clear_stop_point" => clear(ctx, parse(name, args)).await,
        "debug_toggle_stop_point" => toggle(ctx, parse(name, args)).await,
        "debug_update_stop_point" => update(ctx, parse(name, args)).await,
        "debug_panic" => panic(ctx, parse(name, args)).await,
        _ => return None,
    })
}

fn live(ctx: &Ctx, session: Option<&str>) -> Result<SessionHandle, ToolError> {
    let handle = ctx.engine.session(session)?;
    handle.check_alive()?;
    Ok(handle)
}

/// `@0x1f`, `0x1f` or `31` → 31.
pub fn parse_object_id(s: &str) -> Option<u64> {
    let t = s.trim().trim_start_matches('@');
    match t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
        Some(hex) => u64::from_str_radix(hex, 16).ok(),
        None => t.parse().ok(),
    }
}

fn id_arg(tool: &str, what: &str, s: &Option<String>) -> Result<Option<u64>, ToolError> {
    match s {
        None => Ok(None),
        Some(v) => parse_object_id(v).map(Some).ok_or_else(|| {
            ToolError::bad_argument(tool, format!("{what} {v:?} is not an @0x… id"))
        }),
    }
}

fn arm_error(e: ArmError) -> ToolError {
    let mut t = ToolError::new(e.label, e.message);
    if let Some(n) = e.next {
        t = t.next(n);
    }
    t
}

fn refuse(label: &'static str, msg: impl Into<String>, next: &str) -> ToolError {
    ToolError::new(label, msg).next(next)
}

/// Refuses what needs the expression evaluator while it is not there, and
/// checks a condition's syntax.
fn expressions(
    tool: &str,
    condition: &Option<String>,
    exprs: &Option<OneOrMany<String>>,
) -> Result<(), ToolError> {
    if let Some(c) = condition {
        if !condition::AVAILABLE {
            return Err(refuse(
                "NOT_AVAILABLE",
                "conditions need the expression evaluator, which this build does not have yet",
                "arm without condition and filter with hit_count, thread_id or instance_id, or trace and read debug_get_traces",
            ));
        }
        crate::expr::parse_checked(c).map_err(|e| {
            ToolError::bad_argument(tool, format!("condition does not parse: {e:?}"))
        })?;
    }
    if exprs.is_some() && !condition::AVAILABLE {
        return Err(refuse(
            "NOT_AVAILABLE",
            "trace_expr needs the expression evaluator, which this build does not have yet",
            "trace the locals (trace_locals) instead",
        ));
    }
    for e in exprs.iter().flat_map(|x| match x {
        OneOrMany::One(s) => std::slice::from_ref(s),
        OneOrMany::Many(v) => v.as_slice(),
    }) {
        crate::expr::parse_checked(e).map_err(|err| {
            ToolError::bad_argument(tool, format!("trace_expr {e:?} does not parse: {err:?}"))
        })?;
    }
    Ok(())
}

/// Puts trace expressions (at most four) into a traced mode.
fn with_exprs(
    tool: &str,
    mode: &mut Mode,
    exprs: &Option<OneOrMany<String>>,
    notes: &mut Vec<String>,
) -> Result<(), ToolError> {
    let Some(exprs) = exprs.clone() else {
        return Ok(());
    };
    let Mode::Trace(t) = mode else {
        return Err(ToolError::bad_argument(tool, "trace_expr needs trace:true"));
    };
    let mut all = exprs.into_vec();
    if all.len() > TraceSpec::MAX_EXPRS {
        let dropped = all.split_off(TraceSpec::MAX_EXPRS);
        notes.push(format!(
            "trace_expr keeps the first {}; dropped: {}",
            TraceSpec::MAX_EXPRS,
            dropped.join(", ")
        ));
    }
    t.exprs = all;
    Ok(())
}

/// The mode (suspend or trace) and filters from the shared arguments.
fn mode_and_filters(
    tool: &str,
    c: &Common,
    default_trace: bool,
    notes: &mut Vec<String>,
) -> Result<(Mode, Filters), ToolError> {
    let trace = c.trace.unwrap_or(default_trace);
    let trace_args = c.trace_frames.is_some()
        || c.trace_locals.is_some()
        || c.trace_max_hits.is_some()
        || c.trace_max_length.is_some();
    if !trace && trace_args {
        return Err(ToolError::bad_argument(
            tool,
            "trace_frames, trace_locals, trace_max_hits and trace_max_length need trace:true",
        ));
    }
    if c.hit_count == Some(0) {
        return Err(ToolError::bad_argument(tool, "hit_count counts from 1"));
    }
    let mode = if trace {
        let mut t = TraceSpec::default();
        if let Some(f) = c.trace_frames {
            t.frames = f.min(64);
        }
        if let Some(l) = &c.trace_locals {
            t.locals = match l {
                LocalsParam::Word(w) if w == "all" => LocalsChoice::All,
                LocalsParam::Word(w) if w == "none" => LocalsChoice::None,
                LocalsParam::Word(w) => LocalsChoice::Only(
                    w.split(',')
                        .map(|n| n.trim().to_string())
                        .filter(|n| !n.is_empty())
                        .collect(),
                ),
                LocalsParam::Names(n) if n.is_empty() => LocalsChoice::None,
                LocalsParam::Names(n) => LocalsChoice::Only(n.clone()),
            };
        }
        if let Some(m) = c.trace_max_hits {
            t.max_hits = m;
        }
        if let Some(len) = c.trace_max_length {
            let len = len as usize;
            if len > TraceSpec::MAX_LENGTH_CEILING {
                notes.push(format!(
                    "trace_max_length {len} clamped to {}",
                    TraceSpec::MAX_LENGTH_CEILING
                ));
            }
            t.max_length = len.clamp(1, TraceSpec::MAX_LENGTH_CEILING);
        }
        if c.hit_count.is_some() {
            notes.push(
                "hit_count with trace: one snapshot, of the Nth hit (trace_max_hits does not add more)"
                    .into(),
            );
        }
        Mode::Trace(t)
    } else {
        Mode::Suspend
    };
    let filters = Filters {
        condition: None,
        hit_count: c.hit_count,
        thread: id_arg(tool, "thread_id", &c.thread_id)?,
        instance: None,
    };
    Ok((mode, filters))
}

/// One entry's outcome, as text and data.
fn outcome(entry: &str, r: &Result<ArmReport, ArmError>) -> (String, serde_json::Value, bool) {
    match r {
        Ok(report) => {
            let mut text = String::new();
            let mut data = json!({"entry": entry});
            if let Some(p) = &report.point {
                text.push_str(&describe_point(p, false));
                data = point_json(p);
                data["entry"] = json!(entry);
            }
            if let Some(f) = &report.family {
                text.push_str(&render::describe_family(f));
                data = render::family_json(f);
                data["entry"] = json!(entry);
            }
            for n in &report.notes {
                text.push_str(&format!("\n  {n}"));
            }
            data["notes"] = json!(report.notes);
            (text, data, true)
        }
        Err(e) => {
            let t = arm_error(e.clone());
            (
                format!("{entry}: REFUSED {}", t.text().replace('\n', "\n  ")),
                json!({"entry": entry, "state": "refused", "label": e.label, "error": e.message}),
                false,
            )
        }
    }
}

/// Arms one definition and replies (a single entry's failure is a tool
/// error).
async fn arm_one(
    handle: &SessionHandle,
    spec: StopPointSpec,
    max_classes: usize,
    mut notes: Vec<String>,
) -> Reply {
    let label = spec.target.describe();
    let r = handle.stop_points().arm(spec, max_classes).await;
    let r = r.map(|mut rep| {
        rep.notes.append(&mut notes);
        rep
    });
    match &r {
        Err(e) => Err(arm_error(e.clone())),
        Ok(_) => {
            let (text, data, _) = outcome(&label, &r);
            Ok(text_and_data(text, json!({"outcomes": [data]})))
        }
    }
}

async fn set_line(ctx: &Ctx, p: Result<LineStopParams, ToolError>) -> Reply {
    let p = p?;
    let tool = "debug_set_line_stop";
    let handle = live(ctx, p.session_id.as_deref())?;
    expressions(tool, &p.condition, &p.trace_expr)?;
    let mut notes = Vec::new();
    let (mut mode, mut filters) = mode_and_filters(tool, &p.common(), false, &mut notes)?;
    with_exprs(tool, &mut mode, &p.trace_expr, &mut notes)?;
    filters.condition = p.condition.clone();
    filters.instance = id_arg(tool, "instance_id", &p.instance_id)?;
    let entries = p.class_pattern.clone().into_vec();
    if entries.is_empty() {
        return Err(ToolError::bad_argument(tool, "class_pattern is empty"));
    }
    let max_classes = p.max_classes.unwrap_or(MAX_CLASSES_DEFAULT);
    let mut specs = Vec::new();
    for entry in &entries {
        let entry = entry.trim().to_string();
        let spec = if entry.contains('*') {
            if p.line.is_some() {
                Err(refuse(
                    "BAD_ARGUMENT",
                    format!(
                        "{entry}: a wildcard refuses line (line N is a different statement in every class)"
                    ),
                    "give method (its entry is armed in every matching class), or an exact class with line",
                ))
            } else if p.method.is_none() {
                Err(refuse(
                    "BAD_ARGUMENT",
                    format!("{entry}: a wildcard needs method"),
                    "give method, e.g. {\"class_pattern\":\"com.acme.*Service\",\"method\":\"handle\"}",
                ))
            } else {
                Ok(entry.clone())
            }
        } else if p.line.is_none() && p.method.is_none() {
            Err(ToolError::bad_argument(tool, "give line, method, or both"))
        } else {
            Ok(entry.clone())
        };
        specs.push((entry, spec));
    }
    let build = |class: String| StopPointSpec {
        target: Target::Line(LineSpec {
            class,
            method: p.method.clone(),
            line: p.line,
        }),
        mode: mode.clone(),
        filters: filters.clone(),
    };
    if specs.len() == 1 {
        let (_, spec) = specs.remove(0);
        return arm_one(&handle, build(spec?), max_classes, notes).await;
    }
    // A list: every entry on its own, each outcome reported.
    let mut lines = Vec::new();
    let mut data = Vec::new();
    let (mut armed, mut deferred, mut refused) = (0, 0, 0);
    for (entry, spec) in specs {
        let r = match spec {
            Ok(class) => handle.stop_points().arm(build(class), max_classes).await,
            Err(t) => Err(ArmError {
                label: t.label,
                message: t.message,
                next: t.next,
            }),
        };
        match &r {
            Ok(rep)
                if rep
                    .point
                    .as_ref()
                    .is_some_and(|p| p.state.label() == "deferred") =>
            {
                deferred += 1
            }
            Ok(_) => armed += 1,
            Err(_) => refused += 1,
        }
        let (text, d, _) = outcome(&entry, &r);
        lines.push(text);
        data.push(d);
    }
    let mut text = format!("{armed} armed, {deferred} deferred, {refused} refused");
    for n in &notes {
        text.push_str(&format!("\n{n}"));
    }
    for l in lines {
        text.push_str(&format!("\n{l}"));
    }
    let mut r = text_and_data(text, json!({"outcomes": data}));
    if armed + deferred == 0 {
        r.is_error = Some(true);
    }
    Ok(r)
}

async fn set_exception(ctx: &Ctx, p: Result<ExceptionStopParams, ToolError>) -> Reply {
    let p = p?;
    let tool = "debug_set_exception_stop";
    let handle = live(ctx, p.session_id.as_deref())?;
    expressions(tool, &p.condition, &p.trace_expr)?;
    let mut notes = Vec::new();
    let (mut mode, mut filters) = mode_and_filters(tool, &p.common(), false, &mut notes)?;
    with_exprs(tool, &mut mode, &p.trace_expr, &mut notes)?;
    filters.condition = p.condition.clone();
    filters.instance = id_arg(tool, "instance_id", &p.instance_id)?;
    let class = p.class_pattern.as_ref().map(|c| c.trim().to_string());
    if class.as_deref().is_some_and(|c| c.contains('*')) {
        return Err(refuse(
            "BAD_ARGUMENT",
            "exception stops take an exact type (its subclasses match too)",
            "name the common superclass, e.g. java.lang.RuntimeException, or omit class_pattern for all",
        ));
    }
    let (caught, uncaught) = (p.caught.unwrap_or(true), p.uncaught.unwrap_or(true));
    if !caught && !uncaught {
        return Err(ToolError::bad_argument(
            tool,
            "caught and uncaught are both false: nothing would be reported",
        ));
    }
    if class.is_none() {
        notes.push(
            "every exception type is reported: expect noise from the JDK and frameworks".into(),
        );
    }
    let spec = StopPointSpec {
        target: Target::Exception(ExceptionSpec {
            class,
            caught,
            uncaught,
        }),
        mode,
        filters,
    };
    arm_one(&handle, spec, 1, notes).await
}

async fn set_field(ctx: &Ctx, p: Result<FieldStopParams, ToolError>) -> Reply {
    let p = p?;
    let tool = "debug_set_field_stop";
    let handle = live(ctx, p.session_id.as_deref())?;
    expressions(tool, &p.condition, &p.trace_expr)?;
    let mut notes = Vec::new();
    let (mut mode, mut filters) = mode_and_filters(tool, &p.common(), false, &mut notes)?;
    with_exprs(tool, &mut mode, &p.trace_expr, &mut notes)?;
    filters.condition = p.condition.clone();
    filters.instance = id_arg(tool, "instance_id", &p.instance_id)?;
    let (modify, access) = (p.modify.unwrap_or(true), p.access.unwrap_or(false));
    if !modify && !access {
        return Err(ToolError::bad_argument(
            tool,
            "modify and access are both false: nothing would be reported",
        ));
    }
    if p.class_name.contains('*') {
        return Err(ToolError::bad_argument(
            tool,
            "class_name must be an exact class",
        ));
    }
    if modify && access && filters.hit_count.is_some() {
        notes.push("hit_count with reads and writes: they are counted together".into());
    }
    let spec = StopPointSpec {
        target: Target::Field(FieldSpec {
            class: p.class_name.trim().to_string(),
            field: p.field_name.trim().to_string(),
            access,
            modify,
        }),
        mode,
        filters,
    };
    arm_one(&handle, spec, 1, notes).await
}

async fn set_method_exit(ctx: &Ctx, p: Result<MethodExitParams, ToolError>) -> Reply {
    let p = p?;
    let tool = "debug_set_method_exit_stop";
    let handle = live(ctx, p.session_id.as_deref())?;
    expressions(tool, &p.condition, &None)?;
    if p.instance_id.is_some() {
        return Err(refuse(
            "INSTANCE_REFUSED",
            "instance_id on a method exit: HotSpot accepts the filter and then reports exits of every instance",
            "stop on a line inside an instance method with instance_id, or filter with a condition",
        ));
    }
    let pattern = p.class_pattern.trim().to_string();
    let stars = pattern.matches('*').count();
    if stars > 1 || (stars == 1 && !(pattern.starts_with('*') || pattern.ends_with('*'))) {
        return Err(refuse(
            "BAD_ARGUMENT",
            format!("{pattern}: the JVM matches one * at the start or the end only"),
            "use e.g. com.acme.* or *.OrderService",
        ));
    }
    let exact = stars == 0;
    if p.trace == Some(false) && !(exact && p.method.is_some()) {
        return Err(refuse(
            "REFUSED",
            "a suspending method exit needs an exact class and a method: on a pattern it would freeze the VM on every return",
            "keep trace (the default), or name one class and one method",
        ));
    }
    if p.hit_count.is_some() && p.method.is_some() {
        return Err(refuse(
            "REFUSED",
            "hit_count with method: the JVM counts exits of every method of the class, so the Nth could be a getter we then drop",
            "omit method to count exits of the class, or omit hit_count",
        ));
    }
    let mut notes = Vec::new();
    let (mode, mut filters) = mode_and_filters(tool, &p.common(), true, &mut notes)?;
    filters.condition = p.condition.clone();
    let spec = StopPointSpec {
        target: Target::MethodExit(MethodExitSpec {
            class_pattern: pattern,
            method: p.method.clone(),
            exclude: p.exclude_classes.clone().unwrap_or_default(),
        }),
        mode,
        filters,
    };
    arm_one(&handle, spec, 1, notes).await
}

async fn set_monitor(ctx: &Ctx, p: Result<MonitorParams, ToolError>) -> Reply {
    let p = p?;
    let tool = "debug_set_monitor_stop";
    let handle = live(ctx, p.session_id.as_deref())?;
    if p.instance_id.is_some() {
        return Err(refuse(
            "INSTANCE_REFUSED",
            "instance_id on monitor events: HotSpot tests the frame's `this`, not the monitor, and ignores it anyway",
            "filter with thread_id or monitor_class (wait/waited)",
        ));
    }
    let mut kinds = Vec::new();
    for k in p
        .kinds
        .clone()
        .unwrap_or_else(|| vec!["blocked".into(), "acquired".into()])
    {
        if k == "all" {
            kinds = vec![
                MonitorKind::Blocked,
                MonitorKind::Acquired,
                MonitorKind::Wait,
                MonitorKind::Waited,
            ];
            break;
        }
        match MonitorKind::parse(&k) {
            Some(m) if !kinds.contains(&m) => kinds.push(m),
            Some(_) => {}
            None => {
                return Err(ToolError::bad_argument(
                    tool,
                    format!("kind {k:?}: use blocked, acquired, wait, waited or all"),
                ));
            }
        }
    }
    if kinds.is_empty() {
        return Err(ToolError::bad_argument(tool, "kinds is empty"));
    }
    let spec_probe = MonitorSpec {
        kinds: kinds.clone(),
        min_duration_ms: p.min_duration_ms,
        monitor_class: p.monitor_class.clone(),
    };
    if p.min_duration_ms.is_some()
        && !kinds
            .iter()
            .any(|k| !k.is_opening() && spec_probe.pairs(*k))
    {
        return Err(refuse(
            "REFUSED",
            "min_duration_ms needs both halves of a pair (blocked+acquired or wait+waited): nothing could be measured",
            "add the other half of the pair",
        ));
    }
    if p.monitor_class.is_some()
        && kinds
            .iter()
            .any(|k| matches!(k, MonitorKind::Blocked | MonitorKind::Acquired))
    {
        return Err(refuse(
            "REFUSED",
            "monitor_class with blocked/acquired: on the contended pair HotSpot tests the class of the code that blocked, not the lock's",
            "use monitor_class with kinds [\"wait\",\"waited\"], or drop it",
        ));
    }
    if p.trace == Some(false) && p.thread_id.is_none() {
        return Err(refuse(
            "REFUSED",
            "a suspending monitor stop needs thread_id: contention anywhere would freeze the VM on the next lock",
            "keep trace (the default), or give thread_id",
        ));
    }
    if p.hit_count.is_some() {
        return Err(ToolError::bad_argument(
            tool,
            "hit_count is not offered on monitor stops; bound them with trace_max_hits",
        ));
    }
    let mut notes = Vec::new();
    let (mode, filters) = mode_and_filters(tool, &p.common(), true, &mut notes)?;
    let spec = StopPointSpec {
        target: Target::Monitor(spec_probe),
        mode,
        filters,
    };
    arm_one(&handle, spec, 1, notes).await
}

async fn list(ctx: &Ctx, p: Result<SessionParams, ToolError>) -> Reply {
    let p = p?;
    let handle = live(ctx, p.session_id.as_deref())?;
    let listing = handle.stop_points().list().await;
    let ring = handle.events().ring();
    let (text, data) = render::listing(&listing, &ring);
    Ok(text_and_data(text, data))
}

async fn clear(ctx: &Ctx, p: Result<IdParams, ToolError>) -> Reply {
    let p = p?;
    let handle = live(ctx, p.session_id.as_deref())?;
    let r = handle
        .stop_points()
        .clear(p.id.trim())
        .await
        .map_err(arm_error)?;
    let mut text = if r.members > 0 {
        format!(
            "Cleared {} and its {} members ({} JDWP requests).",
            r.id, r.members, r.requests_cleared
        )
    } else {
        format!("Cleared {} ({} JDWP requests).", r.id, r.requests_cleared)
    };
    if let Some(n) = &r.note {
        text.push_str(&format!("\nNote: {n}"));
    }
    Ok(text_and_data(
        text,
        json!({"id": r.id, "requests_cleared": r.requests_cleared, "members": r.members, "note": r.note}),
    ))
}

async fn toggle(ctx: &Ctx, p: Result<ToggleParams, ToolError>) -> Reply {
    let p = p?;
    let handle = live(ctx, p.session_id.as_deref())?;
    let r = handle
        .stop_points()
        .toggle(p.id.trim(), p.enabled)
        .await
        .map_err(arm_error)?;
    let mut text = format!(
        "{} {}.",
        r.id,
        if r.enabled { "enabled" } else { "disabled" }
    );
    if let Some(pv) = &r.point {
        text.push_str(&format!("\n{}", describe_point(pv, false)));
    }
    for n in &r.notes {
        text.push_str(&format!("\nNote: {n}"));
    }
    Ok(text_and_data(
        text,
        json!({"id": r.id, "enabled": r.enabled, "notes": r.notes, "stop_point": r.point.as_ref().map(point_json)}),
    ))
}

async fn update(ctx: &Ctx, p: Result<UpdateParams, ToolError>) -> Reply {
    let p = p?;
    let tool = "debug_update_stop_point";
    let handle = live(ctx, p.session_id.as_deref())?;
    let Some(mut spec) = handle.stop_points().spec(p.id.trim()).await else {
        return Err(refuse(
            "UNKNOWN_STOP_POINT",
            format!("there is no stop point {:?}", p.id),
            "debug_list_stop_points shows the ids (a family is changed member by member)",
        ));
    };
    let mut notes = Vec::new();
    let trace_args = p.trace_frames.is_some()
        || p.trace_locals.is_some()
        || p.trace_max_hits.is_some()
        || p.trace_max_length.is_some();
    let mut t = match (&spec.mode, p.trace) {
        (_, Some(false)) => None,
        (Mode::Trace(t), _) => Some(t.clone()),
        (Mode::Suspend, Some(true)) => Some(TraceSpec::default()),
        (Mode::Suspend, None) => None,
    };
    if trace_args && t.is_none() {
        return Err(ToolError::bad_argument(
            tool,
            "trace settings need a traced stop point (pass trace:true)",
        ));
    }
    if let Some(t) = &mut t {
        let common = Common {
            hit_count: None,
            thread_id: None,
            trace: Some(true),
            trace_frames: p.trace_frames,
            trace_locals: p.trace_locals.clone(),
            trace_max_hits: p.trace_max_hits,
            trace_max_length: p.trace_max_length,
        };
        let (Mode::Trace(fresh), _) = mode_and_filters(tool, &common, true, &mut notes)? else {
            return Err(ToolError::new("INTERNAL", "trace settings"));
        };
        if p.trace_frames.is_some() {
            t.frames = fresh.frames;
        }
        if p.trace_locals.is_some() {
            t.locals = fresh.locals;
        }
        if p.trace_max_hits.is_some() {
            t.max_hits = fresh.max_hits;
        }
        if p.trace_max_length.is_some() {
            t.max_length = fresh.max_length;
        }
    }
    if let (Target::MethodExit(_) | Target::Monitor(_), None) = (&spec.target, &t)
        && p.trace == Some(false)
    {
        return Err(refuse(
            "REFUSED",
            "method-exit and monitor stops stay traced through an update",
            "clear it and arm a suspending one with the set tool (which checks what makes that safe)",
        ));
    }
    spec.mode = match t {
        Some(t) => Mode::Trace(t),
        None => Mode::Suspend,
    };
    match p.hit_count {
        Some(0) => spec.filters.hit_count = None,
        Some(n) => spec.filters.hit_count = Some(n),
        None => {}
    }
    match p.thread_id.as_deref() {
        Some("") => spec.filters.thread = None,
        Some(_) => spec.filters.thread = id_arg(tool, "thread_id", &p.thread_id)?,
        None => {}
    }
    match p.instance_id.as_deref() {
        Some("") => spec.filters.instance = None,
        Some(_) => spec.filters.instance = id_arg(tool, "instance_id", &p.instance_id)?,
        None => {}
    }
    match p.condition.as_deref() {
        Some("") => spec.filters.condition = None,
        Some(c) => {
            if matches!(spec.target, Target::Monitor(_)) {
                return Err(refuse(
                    "REFUSED",
                    "monitor stops take no condition: a thread blocked on a monitor must not run code for us",
                    "use min_duration_ms or thread_id",
                ));
            }
            expressions(tool, &p.condition, &None)?;
            spec.filters.condition = Some(c.to_string());
        }
        None => {}
    }
    let r = handle
        .stop_points()
        .update(p.id.trim(), spec)
        .await
        .map_err(arm_error)?;
    let mut text = format!("Updated {}.", p.id.trim());
    if let Some(pv) = &r.point {
        text.push_str(&format!("\n{}", describe_point(pv, false)));
    }
    for n in notes.iter().chain(r.notes.iter()) {
        text.push_str(&format!("\n  {n}"));
    }
    Ok(text_and_data(
        text,
        json!({"stop_point": r.point.as_ref().map(point_json), "notes": r.notes}),
    ))
}

async fn panic(ctx: &Ctx, p: Result<SessionParams, ToolError>) -> Reply {
    let p = p?;
    let handle = live(ctx, p.session_id.as_deref())?;
    let cleared = handle.stop_points().clear_all().await;
    let report = handle.resume_all().await.map_err(|e| handle.map_err(e))?;
    let mut text = format!(
        "PANIC: cleared {cleared} stop points; {} resume{} sent.",
        report.resumes,
        if report.resumes == 1 { "" } else { "s" }
    );
    if report.still_held == 0 {
        text.push_str(&format!("\nVerified: all {} threads run.", report.total));
    } else if report.resuspended_by_event {
        text.push_str(&format!(
            "\nWARNING: {} threads were suspended again by an event that is not a stop point of ours (a step or another debugger's request); debug_list_threads shows them.",
            report.still_held
        ));
    } else {
        text.push_str(&format!(
            "\nWARNING: {} of {} threads are still suspended after {} resumes; debug_disconnect releases everything.",
            report.still_held, report.total, report.resumes
        ));
    }
    Ok(text_and_data(
        text,
        json!({
            "stop_points_cleared": cleared,
            "resumes": report.resumes,
            "threads_total": report.total,
            "still_suspended": report.still_held,
        }),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn object_ids_parse_in_every_spelling() {
        assert_eq!(parse_object_id("@0x1f"), Some(31));
        assert_eq!(parse_object_id("0x1F"), Some(31));
        assert_eq!(parse_object_id("31"), Some(31));
        assert_eq!(parse_object_id("@zz"), None);
    }

    #[test]
    fn trace_settings_need_trace() {
        let c = Common {
            hit_count: None,
            thread_id: None,
            trace: None,
            trace_frames: Some(2),
            trace_locals: None,
            trace_max_hits: None,
            trace_max_length: None,
        };
        let mut notes = Vec::new();
        assert!(mode_and_filters("t", &c, false, &mut notes).is_err());
        let (mode, _) = mode_and_filters("t", &c, true, &mut notes).expect("traced");
        let Mode::Trace(t) = mode else {
            panic!("trace");
        };
        assert_eq!(t.frames, 2);
        let long = Common {
            trace: Some(true),
            trace_frames: None,
            trace_max_length: Some(9000),
            ..c
        };
        let (mode, _) = mode_and_filters("t", &long, false, &mut notes).expect("traced");
        assert!(matches!(mode, Mode::Trace(t) if t.max_length == 4000));
        assert!(notes.iter().any(|n| n.contains("clamped")));
    }
}
