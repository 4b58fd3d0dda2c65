//! The stop-point tools' arguments and how they become definitions: the
//! parameter structs (each kind's own fields, then the filters and trace
//! settings every kind shares), object ids, expression checks, and the mode
//! (suspend or trace) with its filters.

use schemars::JsonSchema;
use serde::Deserialize;

use crate::mcp::error::ToolError;
use crate::model::stop_point::{Calls, Engine, Filters, LocalsChoice, Mode, TraceSpec};

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

/// Declares a stop-point tool's parameters: its own fields, then the
/// filters and trace settings every kind shares.
macro_rules! stop_params {
    ($(#[$m:meta])* pub struct $name:ident { $($body:tt)* }) => {
        stop_params!(@make [engine] $(#[$m])* pub struct $name { $($body)* });
    };
    // Wire-only kinds (exceptions, monitors): no probe can serve them, so
    // they take no `engine`.
    (wire: $(#[$m:meta])* pub struct $name:ident { $($body:tt)* }) => {
        stop_params!(@make [] $(#[$m])* pub struct $name { $($body)* });
    };
    (@make [$($engine:ident)?] $(#[$m:meta])* pub struct $name:ident { $($(#[$fm:meta])* pub $f:ident : $t:ty,)* }) => {
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
            /// "all" (default), "none", or names ("a,b").
            #[schemars(with = "Option<String>")]
            pub trace_locals: Option<LocalsParam>,
            /// Snapshots kept; default 200, 0 unbounded.
            pub trace_max_hits: Option<u32>,
            /// Chars kept per value; default 100, max 4000.
            pub trace_max_length: Option<u32>,
            /// % of a thread's time holds may take before a pause; default 20, 0 off.
            pub max_overhead: Option<u32>,
            /// Let condition and trace_expr call methods (cancelled past 500 ms).
            pub calls: Option<bool>,
            $(
            /// auto (default), wire or probe (in the bytecode).
            pub $engine: Option<String>,
            )?
        }

        impl $name {
            pub(super) fn common(&self) -> Common {
                Common {
                    hit_count: self.hit_count,
                    thread_id: self.thread_id.clone(),
                    trace: self.trace,
                    trace_frames: self.trace_frames,
                    trace_locals: self.trace_locals.clone(),
                    trace_max_hits: self.trace_max_hits,
                    trace_max_length: self.trace_max_length,
                    max_overhead: self.max_overhead,
                    calls: self.calls,
                    engine: stop_params!(@engine self $($engine)?),
                }
            }
        }
    };
    (@engine $self:ident engine) => { $self.engine.clone() };
    (@engine $self:ident) => { None };
}

stop_params! {
    /// Arguments of debug_set_stop kind line.
    pub struct LineStopParams {
        /// Exact class, wildcard (com.acme.*, *Repo), or a list.
        pub class_pattern: OneOrMany<String>,
        pub line: Option<u32>,
        /// Method: its entry (no line), its code (line), or its exits.
        pub method: Option<String>,
        /// Expression; stop only when true.
        pub condition: Option<String>,
        /// Recorded per snapshot (up to 4; frame[1].x: the caller's x).
        #[schemars(with = "Option<Vec<String>>")]
        pub trace_expr: Option<OneOrMany<String>>,
        /// Only hits whose `this` is this object (@0x…).
        pub instance_id: Option<String>,
        /// Most classes a wildcard arms; default 20.
        pub max_classes: Option<usize>,
    }
}

stop_params! {
    wire:
    /// Arguments of debug_set_stop kind exception.
    pub struct ExceptionStopParams {
        /// Exception type (with subclasses), a wildcard, or a list; omit for every exception.
        pub class_pattern: Option<OneOrMany<String>>,
        /// Most classes a wildcard arms; default 20.
        pub max_classes: Option<usize>,
        /// Report caught throws; default true.
        pub caught: Option<bool>,
        /// Report uncaught throws; default true.
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
    /// Arguments of debug_set_stop kind field.
    pub struct FieldStopParams {
        /// Exact class, wildcard, or a list.
        pub class_pattern: OneOrMany<String>,
        /// Most classes a wildcard arms; default 20.
        pub max_classes: Option<usize>,
        pub field_name: String,
        /// Report writes; default true.
        pub modify: Option<bool>,
        /// Report reads; default false (noisy).
        pub access: Option<bool>,
        /// Classes whose writes a probe instruments; default the declaring class.
        #[serde(default, deserialize_with = "crate::mcp::tools::args::strings")]
        pub writers: Option<Vec<String>>,
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
    /// Arguments of debug_set_stop kind method_exit.
    pub struct MethodExitParams {
        /// Class, a pattern with one * at the start or end, or a list of them.
        pub class_pattern: OneOrMany<String>,
        /// Method name (filtered here); omit for every method.
        pub method: Option<String>,
        /// Class patterns the JVM excludes.
        #[serde(default, deserialize_with = "crate::mcp::tools::args::strings")]
        pub exclude_classes: Option<Vec<String>>,
        /// Keep calls or monitor pairs lasting this long.
        pub min_duration_ms: Option<u64>,
        /// Most classes a wildcard arms; default 20.
        pub max_classes: Option<usize>,
        /// Statistics only, no snapshots (one method).
        pub stats: Option<bool>,
        /// Time each call the method makes.
        pub callees: Option<bool>,
        /// Expression; stop only when true (`returnValue` is in scope).
        pub condition: Option<String>,
        /// Expressions recorded per snapshot (up to 4; `returnValue` in scope).
        #[schemars(with = "Option<Vec<String>>")]
        pub trace_expr: Option<OneOrMany<String>>,
        /// Always refused: HotSpot ignores instance filters on method exits.
        pub instance_id: Option<String>,
    }
}

stop_params! {
    wire:
    /// Arguments of debug_set_stop kind monitor.
    pub struct MonitorParams {
        /// monitor: blocked, acquired, wait, waited or all.
        #[serde(default, deserialize_with = "crate::mcp::tools::args::strings")]
        pub events: Option<Vec<String>>,
        /// Keep only pairs lasting at least this long (measured here).
        pub min_duration_ms: Option<u64>,
        /// Only monitors of this class (wait, waited).
        pub monitor_class: Option<String>,
        /// Expressions recorded per snapshot (up to 4; `monitor` in scope; no method calls on blocked).
        #[schemars(with = "Option<Vec<String>>")]
        pub trace_expr: Option<OneOrMany<String>>,
        /// Always refused: HotSpot ignores instance filters on monitor events.
        pub instance_id: Option<String>,
    }
}

/// The arguments every set tool with a condition shares, borrowed from
/// its parameters: where it arms, what it evaluates, which object it
/// watches, and the filters and trace settings.
pub(super) struct Shared<'a> {
    pub(super) session_id: Option<&'a str>,
    pub(super) condition: &'a Option<String>,
    pub(super) trace_expr: &'a Option<OneOrMany<String>>,
    pub(super) instance_id: &'a Option<String>,
    pub(super) common: Common,
}

/// Gives each set tool with a condition its [`Shared`] view.
macro_rules! shared_view {
    ($($name:ident),*) => {$(
        impl $name {
            pub(super) fn shared(&self) -> Shared<'_> {
                Shared {
                    session_id: self.session_id.as_deref(),
                    condition: &self.condition,
                    trace_expr: &self.trace_expr,
                    instance_id: &self.instance_id,
                    common: self.common(),
                }
            }
        }
    )*};
}

shared_view!(
    LineStopParams,
    ExceptionStopParams,
    FieldStopParams,
    MethodExitParams
);

/// Arguments of debug_list_stop_points.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ListParams {
    /// Session id; default: the current session.
    pub session_id: Option<String>,
    /// Return the set as debug_set_stop calls.
    pub export: Option<bool>,
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

/// Arguments of debug_update_stop_point kind toggle.
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
    pub id: String,
    /// Snapshot and resume (true) or suspend (false).
    pub trace: Option<bool>,
    /// Caller frames per snapshot.
    pub trace_frames: Option<u32>,
    /// "all", "none", or names ("a,b").
    #[schemars(with = "Option<String>")]
    pub trace_locals: Option<LocalsParam>,
    /// Snapshots kept; 0 unbounded.
    pub trace_max_hits: Option<u32>,
    /// Characters kept per captured value; max 4000.
    pub trace_max_length: Option<u32>,
    /// Fire on the Nth hit only; 0 removes it.
    pub hit_count: Option<u32>,
    /// Only this thread; "" removes.
    pub thread_id: Option<String>,
    /// Only this object; "" removes.
    pub instance_id: Option<String>,
    /// Stop only when true; "" removes it.
    pub condition: Option<String>,
    /// Recorded per snapshot (up to 4; replaces).
    #[schemars(with = "Option<Vec<String>>")]
    pub trace_expr: Option<OneOrMany<String>>,
    /// Overhead budget, %; 0 none. Re-arms a paused one.
    pub max_overhead: Option<u32>,
    /// Let condition and trace_expr call methods.
    pub calls: Option<bool>,
}

/// The filters and trace settings every set tool shares.
pub(super) struct Common {
    pub(super) hit_count: Option<u32>,
    pub(super) thread_id: Option<String>,
    pub(super) trace: Option<bool>,
    pub(super) trace_frames: Option<u32>,
    pub(super) trace_locals: Option<LocalsParam>,
    pub(super) trace_max_hits: Option<u32>,
    pub(super) trace_max_length: Option<u32>,
    pub(super) max_overhead: Option<u32>,
    pub(super) calls: Option<bool>,
    pub(super) engine: Option<String>,
}

/// The engine asked for; a misspelt one is refused, naming the three.
pub(super) fn engine_arg(tool: &str, c: &Common) -> Result<Engine, ToolError> {
    match c.engine.as_deref() {
        None => Ok(Engine::Auto),
        Some(s) => Engine::parse(s.trim()).ok_or_else(|| {
            ToolError::bad_argument(
                tool,
                format!("engine {s:?} is not one of \"auto\", \"wire\", \"probe\""),
            )
        }),
    }
}

pub(super) fn id_arg(tool: &str, what: &str, s: &Option<String>) -> Result<Option<u64>, ToolError> {
    match s {
        None => Ok(None),
        Some(v) => crate::mcp::tools::args::object_id(v)
            .map(Some)
            .ok_or_else(|| {
                ToolError::bad_argument(tool, format!("{what} {v:?} is not an @0x… id"))
            }),
    }
}

pub(super) fn refuse(label: &'static str, msg: impl Into<String>, next: &str) -> ToolError {
    ToolError::new(label, msg).next(next)
}

/// Refuses what needs the expression evaluator while it is not there, and
/// checks a condition's syntax.
pub(super) fn expressions(
    tool: &str,
    condition: &Option<String>,
    exprs: &Option<OneOrMany<String>>,
) -> Result<(), ToolError> {
    if let Some(c) = condition {
        if !crate::actors::CONDITIONS_AVAILABLE {
            return Err(refuse(
                "NOT_AVAILABLE",
                "conditions need the expression evaluator, which this build does not have yet",
                "arm without condition and filter with hit_count, thread_id or instance_id, or trace and read debug_get_traces",
            ));
        }
        crate::expr::parse_checked(c)
            .map_err(|e| ToolError::bad_argument(tool, format!("condition does not parse: {e}")))?;
    }
    if exprs.is_some() && !crate::actors::CONDITIONS_AVAILABLE {
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
            ToolError::bad_argument(tool, format!("trace_expr {e:?} does not parse: {err}"))
        })?;
    }
    Ok(())
}

/// Puts trace expressions (at most four) into a traced mode.
pub(super) fn with_exprs(
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

/// `max_overhead`, checked: a percentage of one thread's time, 0 = none.
pub(super) fn overhead_arg(tool: &str, pct: Option<u32>) -> Result<Option<u32>, ToolError> {
    match pct {
        Some(p) if p > crate::model::overhead::MAX_PCT => Err(ToolError::bad_argument(
            tool,
            format!(
                "max_overhead {p} is past {}% (a hundred threads held all the time); 0 turns the guard off",
                crate::model::overhead::MAX_PCT
            ),
        )),
        p => Ok(p),
    }
}

/// The mode (suspend or trace) and filters from the shared arguments.
pub(super) fn mode_and_filters(
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
        overhead_pct: overhead_arg(tool, c.max_overhead)?,
        calls: calls_arg(c.calls),
    };
    Ok((mode, filters))
}

/// `calls` as the definition keeps it.
pub(super) fn calls_arg(calls: Option<bool>) -> Calls {
    if calls == Some(true) {
        Calls::Allowed
    } else {
        Calls::Refused
    }
}

/// Refuses a condition or trace expression that calls a method when the
/// stop point does not allow calls: each hit would run the application's
/// code on its thread, and a call that never returns takes that thread.
pub(super) fn calls_allowed(filters: &Filters, mode: &Mode) -> Result<(), ToolError> {
    if filters.calls == Calls::Allowed {
        return Ok(());
    }
    let exprs = match mode {
        Mode::Trace(t) => t.exprs.as_slice(),
        Mode::Suspend => &[],
    };
    let sources = filters
        .condition
        .iter()
        .map(|c| ("the condition", c))
        .chain(exprs.iter().map(|e| ("trace_expr", e)));
    for (what, src) in sources {
        let Ok(parsed) = crate::expr::parse(src) else {
            continue;
        };
        let calls = parsed.expr.calls();
        if calls.is_empty() {
            continue;
        }
        return Err(refuse(
            "CALLS_NOT_ALLOWED",
            format!(
                "{what} {src:?} calls {}: every hit would run the application's code on its thread, and a call that never returns takes that thread",
                calls.join(", ")
            ),
            "set calls:true to allow it (a call past its 500 ms budget is cancelled; one that cannot be keeps its thread, and every reply names it [INVOKING]), or read fields instead of calling getters",
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

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
            max_overhead: None,
            calls: None,
            engine: None,
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
