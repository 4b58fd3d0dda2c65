//! The declared shapes of the data tools' `structuredContent` (ADR 0012).
//! Only the tools whose result a program reads carry structured content:
//! the sessions, the local JVMs, the stop-point set and its arming
//! outcomes, and the traces. Each reply is built from one of these types,
//! and the tool's `outputSchema` is generated from the same type, so the
//! data always has the shape the schema declares. Every fact is also in
//! the reply's text.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// `debug_list_sessions`.
#[derive(Debug, Serialize, JsonSchema)]
pub struct Sessions {
    pub sessions: Vec<SessionRow>,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct SessionRow {
    pub session_id: String,
    pub address: String,
    pub current: bool,
    pub state: String,
    pub detail: String,
    pub vm_name: String,
    pub vm_version: String,
    pub packets_sent: u64,
    pub stop_points: usize,
    pub read_only: bool,
    /// The launched JVM's pid (null when attached).
    pub pid: Option<u32>,
    pub held_threads: Vec<String>,
    /// How a launched JVM that ended exited.
    pub exit: Option<String>,
    pub last_output: Vec<String>,
    pub installed_classes: Vec<String>,
}

/// `debug_list_jvms`.
#[derive(Debug, Serialize, JsonSchema)]
pub struct Jvms {
    pub jvms: Vec<JvmRow>,
    pub probe: Option<Probe>,
    pub scanned: usize,
    pub took_ms: u64,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct JvmRow {
    pub pid: u32,
    pub main: String,
    pub java_home: Option<String>,
    pub uptime_s: Option<u64>,
    pub argv: Vec<String>,
    pub jdwp: Option<Agent>,
    pub seen_in: String,
    pub launched_by: Option<String>,
    pub state: String,
    pub remedy: String,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct Agent {
    pub options: String,
    pub server: bool,
    pub suspend: bool,
    pub port: Option<u16>,
    pub from: String,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct Probe {
    pub host: String,
    pub port: u16,
    pub pid: Option<u32>,
    pub state: String,
    pub remedy: String,
    pub took_ms: u64,
}

/// `debug_list_stop_points`: the listing, or with `export:true` the calls
/// that arm the set again.
#[derive(Debug, Default, Serialize, JsonSchema)]
pub struct StopPoints {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stop_points: Option<Vec<Point>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub families: Option<Vec<Family>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ring: Option<Ring>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub export: Option<Vec<ExportCall>>,
}

/// One stop point with its counters and measured cost.
#[derive(Debug, Serialize, JsonSchema)]
pub struct Point {
    pub id: String,
    pub kind: String,
    pub target: String,
    pub state: String,
    pub spent_reason: Option<String>,
    pub trace: bool,
    pub policy: String,
    pub hits: u64,
    pub captured: u64,
    pub budget_used: u64,
    pub over_budget: u64,
    pub not_recorded: u64,
    pub exits_discarded: u64,
    pub below_threshold: u64,
    pub rethrows_folded: u64,
    pub instance_collected: bool,
    pub overridden_hits: u64,
    pub overridden_by: Vec<String>,
    pub condition_errors: u64,
    pub condition_false: u64,
    pub locations: usize,
    pub classloaders: usize,
    pub copies_loaded_later: usize,
    pub watching: bool,
    pub family: Option<String>,
    pub mean_capture_ms: Option<f64>,
    pub mean_check_ms: Option<f64>,
    pub checks: u64,
    pub mean_hold_ms: Option<f64>,
    pub p99_hold_ms: Option<f64>,
    pub hits_per_second: Option<f64>,
    /// The holds' share of one thread's time since the first hit.
    pub hold_share: Option<f64>,
    /// The same over the overhead guard's sliding window.
    pub recent_hold_share: Option<f64>,
    /// 0: no overhead budget.
    pub overhead_budget_pct: u32,
    /// Set when the overhead guard paused it.
    pub paused: Option<Paused>,
    pub last_error: Option<String>,
    pub stopped_by_errors: bool,
    pub notes: Vec<String>,
    /// Set when a probe in the class's bytecode serves it.
    pub probe: Option<ProbeMeter>,
}

/// What a probe measured inside the JVM.
#[derive(Debug, Serialize, JsonSchema)]
pub struct ProbeMeter {
    pub calls: u64,
    pub passes: u64,
    /// Passing hits the JVM's ring had no room for.
    pub drops: u64,
    /// Sampled ns per call.
    pub ns_per_call: Option<u64>,
    /// The redefinition that armed it.
    pub pause_ms: f64,
    pub lease_lapses: u64,
    /// Drain rounds that failed.
    pub drain_failures: u64,
}

/// What the overhead guard measured when it paused a stop point.
#[derive(Debug, Serialize, JsonSchema)]
pub struct Paused {
    pub share: f64,
    pub own_share: f64,
    pub budget_pct: u32,
    /// stop_point or session.
    pub scope: String,
    pub window_s: f64,
}

/// A wildcard family: one stop point per matching class.
#[derive(Debug, Serialize, JsonSchema)]
pub struct Family {
    pub id: String,
    pub pattern: String,
    pub method: Option<String>,
    pub members: Vec<Member>,
    pub max_classes: usize,
    /// watching, parked, disabled or failed.
    pub watch: String,
    pub left_out: usize,
    pub without_method: usize,
    pub joined_later: usize,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct Member {
    pub id: String,
    pub class: String,
}

/// The trace ring's counters.
#[derive(Debug, Serialize, JsonSchema)]
pub struct Ring {
    pub held: usize,
    pub capacity: usize,
    pub evicted: u64,
}

impl Ring {
    pub fn of(ring: &crate::actors::RingStats) -> Ring {
        Ring {
            held: ring.held,
            capacity: ring.capacity,
            evicted: ring.evicted,
        }
    }
}

/// One call of an exported set.
#[derive(Debug, Serialize, JsonSchema)]
pub struct ExportCall {
    pub tool: String,
    pub args: Map<String, Value>,
    pub from: String,
    /// Set when the stop point was disabled or spent when exported.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub state: Option<String>,
}

/// `debug_set_stop` and `debug_arm_stop_points`: one outcome per entry
/// armed (a single definition has one): its id and state. What it is and
/// its counters are in `debug_list_stop_points`.
#[derive(Debug, Serialize, JsonSchema, Deserialize)]
pub struct Armed {
    pub outcomes: Vec<Outcome>,
}

#[derive(Debug, Default, Serialize, JsonSchema, Deserialize)]
pub struct Outcome {
    /// The class pattern or exported entry this outcome is for.
    pub entry: String,
    /// The stop point or family id (null when refused or skipped).
    pub id: Option<String>,
    /// armed, deferred, refused, skipped, or the stop point's state.
    pub state: String,
    pub notes: Vec<String>,
    /// Why it was refused (`[LABEL] message`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// `debug_get_traces`: the snapshots, or with `group_by` the groups.
#[derive(Debug, Serialize, JsonSchema)]
pub struct Traces {
    pub traces: Vec<Trace>,
    /// Snapshots that match (more than shown when the limit cut).
    pub matching: usize,
    pub last_seq: Option<u64>,
    pub ring: Ring,
    pub cleared: usize,
    /// With `group_by`: the groups (and `traces` is empty).
    #[serde(flatten)]
    pub grouped: Option<Grouped>,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct Trace {
    pub seq: u64,
    pub stop: String,
    pub thread: String,
    pub thread_name: String,
    pub location: String,
    pub callers: Vec<String>,
    pub locals: Vec<Local>,
    pub locals_note: Option<String>,
    pub details: Vec<Detail>,
    pub overridden: bool,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct Local {
    pub name: String,
    pub value: String,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct Detail {
    pub key: String,
    pub value: String,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct Grouped {
    pub group_by: Vec<String>,
    pub groups: Vec<TraceGroup>,
    pub distinct: usize,
    pub left_out: usize,
    pub without_keys: usize,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct TraceGroup {
    /// Key name to its value.
    pub values: Map<String, Value>,
    pub count: usize,
    pub first_seq: u64,
    pub last_seq: u64,
    /// The group's call (or monitor pair) durations, when they carry one.
    pub took: Option<Took>,
    pub example: Option<Trace>,
}

/// Durations of a group: how many carried one, and their spread.
#[derive(Debug, Serialize, JsonSchema)]
pub struct Took {
    pub timed: usize,
    pub p50_ms: f64,
    pub p99_ms: f64,
    pub max_ms: f64,
}
