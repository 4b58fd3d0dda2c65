//! Stop points as the agent defines them: what to watch (a line, an
//! exception, a field, method exits, monitors), whether a hit suspends or
//! is traced, and the filters that narrow it. Plain data: the registry
//! (actors/stop_points) turns a spec into JDWP requests and keeps the ids,
//! states and counters.

mod note;

pub use note::ArmNote;

use super::label::{CodeLabel, LineAt};
use crate::jdwp::SuspendPolicy;

/// The five kinds of stop point, each with its own id prefix.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum StopKind {
    Line,
    Exception,
    Field,
    MethodExit,
    Monitor,
}

impl StopKind {
    /// Every kind, in listing order.
    pub const ALL: [StopKind; 5] = [
        StopKind::Line,
        StopKind::Exception,
        StopKind::Field,
        StopKind::MethodExit,
        StopKind::Monitor,
    ];

    /// The prefix of this kind's ids (`bp_1`, `exc_1`, …).
    pub fn prefix(self) -> &'static str {
        match self {
            StopKind::Line => "bp",
            StopKind::Exception => "exc",
            StopKind::Field => "watch",
            StopKind::MethodExit => "mexit",
            StopKind::Monitor => "mon",
        }
    }

    /// The word listings use.
    pub fn label(self) -> &'static str {
        match self {
            StopKind::Line => "line",
            StopKind::Exception => "exception",
            StopKind::Field => "field",
            StopKind::MethodExit => "method-exit",
            StopKind::Monitor => "monitor",
        }
    }
}

/// Our id of a stop point (`bp_3`), never a JDWP request id.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct StopPointId(pub String);

impl StopPointId {
    pub fn new(kind: StopKind, n: u32) -> Self {
        StopPointId(format!("{}_{n}", kind.prefix()))
    }

    /// The kind and number of a well-formed id.
    pub fn parse(s: &str) -> Option<(StopKind, u32)> {
        let (prefix, n) = s.rsplit_once('_')?;
        let n = n.parse().ok()?;
        StopKind::ALL
            .into_iter()
            .find(|k| k.prefix() == prefix)
            .map(|k| (k, n))
    }
}

impl std::fmt::Display for StopPointId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// Our id of a wildcard family (`bpset_2`).
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct FamilyId(pub String);

impl FamilyId {
    pub const PREFIX: &'static str = "bpset";

    pub fn new(n: u32) -> Self {
        FamilyId(format!("{}_{n}", Self::PREFIX))
    }
}

impl std::fmt::Display for FamilyId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// A line stop: an exact class, and a line, a method's entry, or a line
/// inside one method.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LineSpec {
    pub class: String,
    pub method: Option<String>,
    pub line: Option<u32>,
}

/// An exception stop: a type and its subclasses (`None`: all), caught and/or uncaught.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExceptionSpec {
    pub class: Option<String>,
    pub caught: bool,
    pub uncaught: bool,
}

/// A field stop: reads and/or writes of one field of an exact class.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FieldSpec {
    pub class: String,
    pub field: String,
    pub access: bool,
    pub modify: bool,
    /// Classes whose writes a probe sees (binary names; empty: the declaring one; the wire: all).
    pub writers: Vec<String>,
}

/// A method-exit stop: exits of the classes a pattern matches, of one method or all.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MethodExitSpec {
    pub class_pattern: String,
    pub method: Option<String>,
    pub exclude: Vec<String>,
    /// Keep only calls at least this long (timed in the JVM: a probe).
    pub min_duration_ms: Option<u64>,
    /// Keep statistics only, no snapshots (one method: a probe).
    pub stats: bool,
    /// Time each call the method makes, by call site (one method: a probe).
    pub callees: bool,
}

/// The four monitor events, as two pairs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum MonitorKind {
    /// A thread starts waiting for a monitor another thread owns.
    Blocked,
    /// That thread got it.
    Acquired,
    /// A thread enters `Object.wait`.
    Wait,
    /// Its `wait` returned.
    Waited,
}

impl MonitorKind {
    pub fn label(self) -> &'static str {
        match self {
            MonitorKind::Blocked => "blocked",
            MonitorKind::Acquired => "acquired",
            MonitorKind::Wait => "wait",
            MonitorKind::Waited => "waited",
        }
    }

    pub fn parse(s: &str) -> Option<MonitorKind> {
        [
            MonitorKind::Blocked,
            MonitorKind::Acquired,
            MonitorKind::Wait,
            MonitorKind::Waited,
        ]
        .into_iter()
        .find(|k| k.label() == s)
    }

    /// The event that opens this kind's pair (`None` for an opening one).
    pub fn opener(self) -> Option<MonitorKind> {
        match self {
            MonitorKind::Acquired => Some(MonitorKind::Blocked),
            MonitorKind::Waited => Some(MonitorKind::Wait),
            _ => None,
        }
    }

    pub fn is_opening(self) -> bool {
        self.opener().is_none()
    }
}

/// A monitor stop.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MonitorSpec {
    pub kinds: Vec<MonitorKind>,
    pub min_duration_ms: Option<u64>,
    /// Only monitors of this class (the wait pair only; see the tool).
    pub monitor_class: Option<String>,
}

impl MonitorSpec {
    /// True when both halves of a pair are watched, so a duration exists.
    pub fn pairs(&self, closing: MonitorKind) -> bool {
        closing
            .opener()
            .is_some_and(|o| self.kinds.contains(&o) && self.kinds.contains(&closing))
    }
}

/// What a stop point watches.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Target {
    Line(LineSpec),
    Exception(ExceptionSpec),
    Field(FieldSpec),
    MethodExit(MethodExitSpec),
    Monitor(MonitorSpec),
}

impl Target {
    pub fn kind(&self) -> StopKind {
        match self {
            Target::Line(_) => StopKind::Line,
            Target::Exception(_) => StopKind::Exception,
            Target::Field(_) => StopKind::Field,
            Target::MethodExit(_) => StopKind::MethodExit,
            Target::Monitor(_) => StopKind::Monitor,
        }
    }

    /// The class name the registry must find loaded (or wait for), if any.
    pub fn class_name(&self) -> Option<&str> {
        match self {
            Target::Line(l) => Some(&l.class),
            Target::Exception(e) => e.class.as_deref(),
            Target::Field(f) => Some(&f.class),
            Target::MethodExit(_) | Target::Monitor(_) => None,
        }
    }

    /// A short human description: `Inventory:57`, `Inventory.process`, …
    pub fn describe(&self) -> String {
        match self {
            Target::Line(l) => match (&l.method, l.line) {
                (m, Some(line)) => {
                    CodeLabel::new(&l.class, m.as_deref(), LineAt::At(i64::from(line))).to_string()
                }
                (Some(m), None) => format!("{}.{m} (entry)", l.class),
                (None, None) => l.class.clone(),
            },
            Target::Exception(e) => {
                let which = match (e.caught, e.uncaught) {
                    (true, true) => "caught+uncaught",
                    (true, false) => "caught",
                    (false, true) => "uncaught",
                    (false, false) => "none",
                };
                format!(
                    "{} ({which})",
                    e.class.as_deref().unwrap_or("any exception")
                )
            }
            Target::Field(f) => {
                let which = match (f.access, f.modify) {
                    (true, true) => "read+write",
                    (true, false) => "read",
                    _ => "write",
                };
                let mut which = which.to_string();
                if !f.writers.is_empty() {
                    which.push_str(&format!(" in {}", f.writers.join(", ")));
                }
                format!("{}.{} ({which})", f.class, f.field)
            }
            Target::MethodExit(m) => {
                let mut s = match &m.method {
                    Some(name) if m.stats => format!("{}.{name} (statistics)", m.class_pattern),
                    Some(name) => format!("{}.{name} (exits)", m.class_pattern),
                    None => format!("{} (every method's exits)", m.class_pattern),
                };
                if let Some(d) = m.min_duration_ms {
                    s.push_str(&format!(" ≥{d}ms"));
                }
                s
            }
            Target::Monitor(m) => {
                let kinds: Vec<_> = m.kinds.iter().map(|k| k.label()).collect();
                let mut s = format!("monitors [{}]", kinds.join(","));
                if let Some(c) = &m.monitor_class {
                    s.push_str(&format!(" of {c}"));
                }
                if let Some(d) = m.min_duration_ms {
                    s.push_str(&format!(" ≥{d}ms"));
                }
                s
            }
        }
    }
}

/// Which locals a trace captures.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LocalsChoice {
    All,
    None,
    Only(Vec<String>),
}

impl LocalsChoice {
    pub fn describe(&self) -> String {
        match self {
            LocalsChoice::All => "all".into(),
            LocalsChoice::None => "none".into(),
            LocalsChoice::Only(names) => names.join(","),
        }
    }
}

/// How a traced hit is captured.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TraceSpec {
    /// Frames recorded: the hit frame plus its callers (0 = location only).
    pub frames: u32,
    pub locals: LocalsChoice,
    /// Captures allowed before the stop point disarms itself; 0 = no limit.
    pub max_hits: u32,
    /// Characters kept per captured value.
    pub max_length: usize,
    /// Expressions evaluated on every hit (at most four).
    pub exprs: Vec<String>,
}

impl TraceSpec {
    pub const DEFAULT_FRAMES: u32 = 3;
    pub const DEFAULT_MAX_HITS: u32 = 200;
    pub const DEFAULT_MAX_LENGTH: usize = 100;
    pub const MAX_LENGTH_CEILING: usize = 4000;
    pub const MAX_EXPRS: usize = 4;
}

impl Default for TraceSpec {
    fn default() -> Self {
        Self {
            frames: Self::DEFAULT_FRAMES,
            locals: LocalsChoice::All,
            max_hits: Self::DEFAULT_MAX_HITS,
            max_length: Self::DEFAULT_MAX_LENGTH,
            exprs: Vec::new(),
        }
    }
}

/// Suspend the JVM on a hit, or snapshot and resume.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Mode {
    Suspend,
    Trace(TraceSpec),
}

/// Whether a stop point's condition and trace expressions may run the
/// application's code at each hit: a method call, a constructor, a
/// value's `toString()`, a subscript on a collection that is read by
/// calling it. A call that never returns takes its thread until it is
/// cancelled, or for good when it cannot be, so it is allowed only when
/// asked for.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub enum Calls {
    /// Fields, locals and structurally read collections only.
    #[default]
    Refused,
    /// Calls run on the hit thread within their budget.
    Allowed,
}

/// Filters that narrow which hits count.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Filters {
    /// An expression evaluated on the hit thread; the hit counts when true.
    pub condition: Option<String>,
    /// Fire on the Nth hit only, then the stop point is spent.
    pub hit_count: Option<u32>,
    /// Only hits in this thread (a JDWP thread id).
    pub thread: Option<u64>,
    /// Only hits whose `this` is this object (a JDWP object id).
    pub instance: Option<u64>,
    /// Its overhead budget in percent of one thread's time (0 = no guard;
    /// `None` = the session's default).
    pub overhead_pct: Option<u32>,
    /// Whether the condition and trace expressions may call methods.
    pub calls: Calls,
}

/// Which engine watches a site: the JDWP wire (an event request, the
/// thread held while we read), a probe (the site's own bytecode, changed
/// through RedefineClasses, checks the condition and records into a ring in
/// the JVM), or the cheaper of the two where a probe can go.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub enum Engine {
    /// A probe where one can go, else the wire; the arming reply says which
    /// and why.
    #[default]
    Auto,
    Wire,
    Probe,
}

impl Engine {
    pub const ALL: [Engine; 3] = [Engine::Auto, Engine::Wire, Engine::Probe];

    /// The word the agent writes.
    pub fn label(self) -> &'static str {
        match self {
            Engine::Auto => "auto",
            Engine::Wire => "wire",
            Engine::Probe => "probe",
        }
    }

    pub fn parse(s: &str) -> Option<Engine> {
        Self::ALL.into_iter().find(|e| e.label() == s)
    }
}

/// A whole stop point definition: kept for its life, re-armed from on
/// toggle and redeploys.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StopPointSpec {
    pub target: Target,
    pub mode: Mode,
    pub filters: Filters,
    /// The engine asked for (what was picked is the registry's to say).
    pub engine: Engine,
}

impl StopPointSpec {
    pub fn trace(&self) -> Option<&TraceSpec> {
        match &self.mode {
            Mode::Trace(t) => Some(t),
            Mode::Suspend => None,
        }
    }

    /// A trace that needs nothing but what the event itself carries
    /// (thread, location, and the kind's own data): no frames, no locals,
    /// no expressions, no condition. It is armed with suspend policy NONE.
    pub fn suspension_free(&self) -> bool {
        match &self.mode {
            Mode::Trace(t) => {
                t.frames == 0
                    && t.locals == LocalsChoice::None
                    && t.exprs.is_empty()
                    && self.filters.condition.is_none()
            }
            Mode::Suspend => false,
        }
    }

    /// True when some hits are dropped here after the JVM reported them (a
    /// method-exit's method filter, a monitor's minimum duration): such a
    /// hit must not freeze the VM before we know it counts.
    pub fn filtered_here(&self) -> bool {
        match &self.target {
            Target::MethodExit(m) => m.method.is_some(),
            Target::Monitor(m) => m.min_duration_ms.is_some(),
            _ => false,
        }
    }

    /// The suspend policy of the stop point's hit requests, given whether
    /// the hit count is checked here (not by the JVM). A hit this side must
    /// inspect first is armed at EVENT_THREAD (only the hit thread is held)
    /// and escalated to a VM suspend only when it passes.
    pub fn policy(&self, count_here: bool) -> SuspendPolicy {
        match &self.mode {
            Mode::Trace(_) if self.suspension_free() => SuspendPolicy::None,
            Mode::Trace(_) => SuspendPolicy::EventThread,
            Mode::Suspend
                if self.filters.condition.is_some() || count_here || self.filtered_here() =>
            {
                SuspendPolicy::EventThread
            }
            Mode::Suspend => SuspendPolicy::All,
        }
    }
}

/// Where a stop point stands.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StopState {
    /// JDWP requests are in force.
    Armed,
    /// The class is not loaded; a class-prepare watch arms it on load.
    Deferred,
    /// Silenced by the agent; the definition is kept.
    Disabled,
    /// Finished by itself: the reason says whether the JVM's hit count
    /// fired or the trace budget ran out. Toggle re-arms it.
    Spent(String),
}

impl StopState {
    pub fn label(&self) -> &'static str {
        match self {
            StopState::Armed => "armed",
            StopState::Deferred => "deferred",
            StopState::Disabled => "disabled",
            StopState::Spent(_) => "spent",
        }
    }
}

/// Substrings of names that look alike, for "did you mean" answers: the
/// same simple name in another package, the same name in another case, or
/// a simple name at most two edits away.
pub fn similar_names<'a>(wanted: &str, candidates: impl Iterator<Item = &'a str>) -> Vec<String> {
    let simple = |s: &str| -> String {
        s.rsplit(['.', '$'])
            .next()
            .unwrap_or(s)
            .to_ascii_lowercase()
    };
    let want = simple(wanted);
    // Short names tolerate one edit, longer ones two; the JDK's own
    // classes are offered only for a name that looks like one.
    let budget = if want.chars().count() <= 5 { 1 } else { 2 };
    let jdk = |s: &str| {
        ["java.", "javax.", "jdk.", "sun.", "com.sun."]
            .iter()
            .any(|p| s.starts_with(p))
    };
    let wanted_jdk = jdk(wanted);
    let mut scored: Vec<(usize, String)> = candidates
        .filter(|c| *c != wanted)
        .filter(|c| wanted_jdk || !jdk(c))
        .filter_map(|c| {
            let s = simple(c);
            let d = if c.eq_ignore_ascii_case(wanted) || s == want {
                0
            } else {
                let d = edit_distance(&s, &want);
                if d > budget || want.len() < 3 {
                    return None;
                }
                d
            };
            Some((d, c.to_string()))
        })
        .collect();
    scored.sort();
    scored.dedup_by(|a, b| a.1 == b.1);
    scored.into_iter().take(5).map(|(_, c)| c).collect()
}

/// Levenshtein distance, bounded work for short names.
fn edit_distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    if a.len().abs_diff(b.len()) > 2 {
        return 3;
    }
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.iter().enumerate() {
        let mut cur = vec![i + 1; b.len() + 1];
        for (j, cb) in b.iter().enumerate() {
            let cost = usize::from(ca != cb);
            cur[j + 1] = (prev[j] + cost).min(prev[j + 1] + 1).min(cur[j] + 1);
        }
        prev = cur;
    }
    prev[b.len()]
}

/// True when `name` matches a glob with `*` wildcards anywhere.
pub fn glob_matches(pattern: &str, name: &str) -> bool {
    let parts: Vec<&str> = pattern.split('*').collect();
    if parts.len() == 1 {
        return pattern == name;
    }
    let mut rest = name;
    for (i, part) in parts.iter().enumerate() {
        if i == 0 {
            match rest.strip_prefix(part) {
                Some(r) => rest = r,
                None => return false,
            }
        } else if i == parts.len() - 1 {
            return rest.ends_with(part);
        } else {
            match rest.find(part) {
                Some(at) => rest = &rest[at + part.len()..],
                None => return false,
            }
        }
    }
    true
}

/// The pattern JDWP's `ClassMatch` can apply for a glob (one `*` at the
/// start or the end), or the widest such pattern that still covers it.
pub fn jdwp_class_pattern(glob: &str) -> String {
    let stars = glob.matches('*').count();
    if stars == 0 {
        return glob.to_string();
    }
    if stars == 1 && (glob.starts_with('*') || glob.ends_with('*')) {
        return glob.to_string();
    }
    // Keep the literal prefix up to the first star; JDWP matches the rest
    // as "anything", and the glob is applied here afterwards.
    let prefix = glob.split('*').next().unwrap_or("");
    if prefix.is_empty() {
        let suffix = glob.rsplit('*').next().unwrap_or("");
        if suffix.is_empty() {
            "*".into()
        } else {
            format!("*{suffix}")
        }
    } else {
        format!("{prefix}*")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_round_trip() {
        for kind in StopKind::ALL {
            let id = StopPointId::new(kind, 7);
            assert_eq!(StopPointId::parse(&id.0), Some((kind, 7)));
        }
        assert_eq!(StopPointId::parse("bp_x"), None);
        assert_eq!(StopPointId::parse("zz_1"), None);
        assert_eq!(FamilyId::new(2).0, "bpset_2");
    }

    #[test]
    fn policies_follow_what_a_hit_needs() {
        let line = Target::Line(LineSpec {
            class: "A".into(),
            method: None,
            line: Some(3),
        });
        let mut spec = StopPointSpec {
            engine: crate::model::stop_point::Engine::Wire,
            target: line,
            mode: Mode::Suspend,
            filters: Filters::default(),
        };
        assert_eq!(spec.policy(false), SuspendPolicy::All);
        assert_eq!(spec.policy(true), SuspendPolicy::EventThread);
        spec.filters.condition = Some("x > 1".into());
        assert_eq!(spec.policy(false), SuspendPolicy::EventThread);
        spec.filters.condition = None;
        spec.mode = Mode::Trace(TraceSpec::default());
        assert_eq!(spec.policy(false), SuspendPolicy::EventThread);
        spec.mode = Mode::Trace(TraceSpec {
            frames: 0,
            locals: LocalsChoice::None,
            ..TraceSpec::default()
        });
        assert!(spec.suspension_free());
        assert_eq!(spec.policy(false), SuspendPolicy::None);
    }

    #[test]
    fn globs_and_jdwp_patterns() {
        assert!(glob_matches("com.acme.*", "com.acme.Order"));
        assert!(glob_matches("*Order*", "com.acme.OrderService"));
        assert!(glob_matches("*.Repo", "a.b.Repo"));
        assert!(!glob_matches("*.Repo", "a.b.Repos"));
        assert!(glob_matches("a*b*c", "axxbyyc"));
        assert!(!glob_matches("a*b*c", "axxcyyb"));
        assert_eq!(jdwp_class_pattern("com.acme.*"), "com.acme.*");
        assert_eq!(jdwp_class_pattern("*.Repo"), "*.Repo");
        assert_eq!(jdwp_class_pattern("com.*.Repo"), "com.*");
        assert_eq!(jdwp_class_pattern("*Order*"), "*");
        assert_eq!(jdwp_class_pattern("*a*Repo"), "*Repo");
        assert_eq!(jdwp_class_pattern("Exact"), "Exact");
    }

    #[test]
    fn similar_names_find_typos_and_other_packages() {
        let loaded = [
            "com.acme.Inventory",
            "com.acme.Invoice",
            "org.x.Inventory",
            "Ticker",
        ];
        let got = similar_names("Inventroy", loaded.iter().copied());
        assert!(got.contains(&"com.acme.Inventory".to_string()), "{got:?}");
        let got = similar_names("Inventory", loaded.iter().copied());
        assert_eq!(got[..2], ["com.acme.Inventory", "org.x.Inventory"]);
        assert!(similar_names("Zzzzzz", loaded.iter().copied()).is_empty());
        let jdk = ["java.util.HashMap$Node", "jdk.internal.Type", "Nose"];
        assert_eq!(similar_names("Nope", jdk.iter().copied()), ["Nose"]);
        let got = similar_names("java.util.HashMop", ["java.util.HashMap"].iter().copied());
        assert_eq!(got, ["java.util.HashMap"]);
    }

    #[test]
    fn monitor_pairs() {
        let m = MonitorSpec {
            kinds: vec![MonitorKind::Blocked, MonitorKind::Acquired],
            min_duration_ms: None,
            monitor_class: None,
        };
        assert!(m.pairs(MonitorKind::Acquired));
        assert!(!m.pairs(MonitorKind::Waited));
        assert!(MonitorKind::Blocked.is_opening());
        assert_eq!(MonitorKind::parse("waited"), Some(MonitorKind::Waited));
    }
}
