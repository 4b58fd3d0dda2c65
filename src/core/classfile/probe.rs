//! A probe: a stop point compiled into the running method's bytecode.
//!
//! Two class files come out of one [`ProbeSpec`]. The **helper** is a new
//! class in the target's package (version 49, so it needs no stack map of
//! its own): it holds the probe's switch, lease and ring in static fields
//! (named in [`field`]), evaluates the condition, and records passing hits.
//! The **instrumented target** is the original class with, at each site, a
//! few straight-line instructions that push the values to record and call
//! the helper: nothing else of the method changes, so its line numbers and
//! local variables stay as they were, and the code at a site leaves the
//! operand stack as it found it.
//!
//! Sites: a line (its first instruction: branches to the line run the
//! probe), method entry (branches back to the start do not), every exit of
//! a method (each return with its value, and a catch-all handler that
//! records a throw and rethrows it; the call's duration comes from the
//! helper's `start()`, a `System.nanoTime()` kept in a new local, which
//! every stack map frame then carries), and every write of one field in
//! the class (the value written, and the field's value before it).
//!
//! An exit may also time each call its method makes (`callees`): the
//! clock read around every `invoke*` into new locals, summed per call
//! site, handed to the helper at every exit and made a record's text
//! only for a call slow enough to keep (`callees.rs` says how a
//! callee's throw keeps its time).
//!
//! A record may also hold what a wire snapshot shows besides the frame's
//! locals: an anonymous or local class's captured variables (its `val$x`
//! fields, read at the site like any field) and the caller frames, which
//! the helper takes (`new Throwable().getStackTrace()`) only for a hit
//! that is recorded, never on a call that fails the condition.
//!
//! What a call costs the application: a call counts itself with a plain
//! write to its thread's own stripe of a counter array ([`COUNT_STRIPES`];
//! no locked instruction, nothing another thread writes, nothing
//! allocated: a locked instruction right after the application's own
//! store to a shared field waits for that store, which costs a hot path
//! more than the rest of the probe); one that passes claims a ring slot
//! with one compare-and-set and reads the clock once for its record's
//! time (an exit's end time is that time); at a full ring it claims
//! nothing and writes nothing, and the drops are what passed less what
//! was claimed. An exit reads the
//! clock at entry only when a record may follow (the ring has room, or a
//! `min_duration` needs every call timed): a call that begins at a full
//! ring is not timed and counts as a drop if it passes.
//!
//! Pure: bytes in, bytes out. Restoring is redefining with the original
//! bytes, which the caller keeps.

mod asm;
mod callees;
mod cond;
mod every;
mod frames;
mod helper;
mod insert;
pub mod paths;
mod plan;
mod read;
mod remap;
mod rewrite;

pub use every::{ARGS, Argument, timed_methods};
pub use paths::{FieldAt, FieldPath, PathBase, PathStep, StepRead, Unresolved};
pub use plan::{OLD_VALUE, SITE, other_writers};

use ristretto_classfile::attributes::{Attribute, Instruction};
use ristretto_classfile::{ClassFile, MethodAccessFlags};

/// Where a probe goes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Site {
    /// The first instruction of each run of `line` in the method.
    Line { line: u32 },
    /// Method entry.
    Entry,
    /// Every return and every throw out of the method, timed.
    Exit,
    /// Every `putfield`/`putstatic` of the field in the class.
    FieldWrite {
        /// Internal name of the declaring class.
        owner: String,
        name: String,
        descriptor: String,
        /// Internal names of every class the probe goes into, when they
        /// are not the declaring class alone (empty: that class alone).
        /// One helper then serves them all, so a record holds only what
        /// every site has: the written value, the old one, and where the
        /// write is. A write in one of them may name the field through
        /// the writer itself (a subclass writing an inherited field).
        writers: Vec<String>,
    },
}

/// A method by name and descriptor.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MethodRef {
    pub name: String,
    pub descriptor: String,
}

/// What one probe watches and records.
#[derive(Debug, Clone)]
pub struct ProbeSpec {
    /// Internal name of the helper class, in the target's package.
    pub helper: String,
    /// The method (Line, Entry, Exit; optional narrowing for FieldWrite).
    /// An Exit with none times every method [`timed_methods`] lists, in
    /// one class file with one helper: each record holds the method's
    /// arguments ([`ARGS`]) and its `Class.method:line` ([`SITE`]).
    pub method: Option<MethodRef>,
    pub site: Site,
    /// `None`: every local in scope (Line) or every argument (Entry,
    /// Exit); `Some(names)`: those (and `this` when named).
    pub locals: Option<Vec<String>>,
    /// The site hands the helper only the locals the condition names,
    /// whatever `locals` says (a suspending probe: the agent reads the
    /// held frame itself, so nothing else is worth pushing on every call).
    pub only_condition: bool,
    /// Evaluated in the JVM; `None` always passes.
    pub condition: Option<crate::expr::Parsed>,
    /// Exit only: keep calls at least this long.
    pub min_duration_ns: u64,
    /// Records in the ring, a power of two.
    pub ring_capacity: u32,
    /// Caller frames a record lists (0: none), taken in the JVM for a
    /// recorded hit only.
    pub callers: u32,
    /// Exit only: keep statistics, never a record: calls and throws
    /// ([`field::COUNTS`]) and a latency histogram ([`field::HIST`]).
    pub stats: bool,
    /// Exit of one method only: time each call the method makes, by call
    /// site ([`RecordLayout::callees`]); a record holds the sums
    /// ([`Source::Callees`]).
    pub callees: bool,
    /// Trace expressions the helper reads for a record, each a field
    /// path resolved against the loaded classes ([`paths`]).
    pub paths: Vec<FieldPath>,
}

impl ProbeSpec {
    /// Whether the sites time the method's calls: an exit of one method
    /// that keeps records.
    pub fn times_callees(&self) -> bool {
        self.callees && self.site == Site::Exit && self.method.is_some() && !self.stats
    }

    /// Whether some calls may be filtered out before a record (a
    /// condition, or an exit's `min_duration`): then the helper counts
    /// the calls that pass (its `passed`); otherwise every call passes.
    /// Either way the drops are what passed less the records claimed.
    pub fn filters(&self) -> bool {
        self.condition.is_some()
            || (self.site == Site::Exit && (self.min_duration_ns > 0 || self.stats))
    }
}

/// How one recorded value is stored.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Boolean,
    Byte,
    Char,
    Short,
    Int,
    Long,
    Float,
    Double,
    /// A reference, in the `refs` array.
    Ref,
}

impl Kind {
    /// The kind of a field descriptor (`I`, `Ljava/lang/String;`, `[B`).
    pub fn of(descriptor: &str) -> Kind {
        match descriptor.as_bytes().first() {
            Some(b'Z') => Kind::Boolean,
            Some(b'B') => Kind::Byte,
            Some(b'C') => Kind::Char,
            Some(b'S') => Kind::Short,
            Some(b'I') => Kind::Int,
            Some(b'J') => Kind::Long,
            Some(b'F') => Kind::Float,
            Some(b'D') => Kind::Double,
            _ => Kind::Ref,
        }
    }

    /// Local variable slots it takes.
    pub fn slots(self) -> u16 {
        match self {
            Kind::Long | Kind::Double => 2,
            _ => 1,
        }
    }

    /// The descriptor the helper's methods take it as (references as
    /// `Object`, so the helper resolves no class of the application).
    pub fn param(self, descriptor: &str) -> String {
        match self {
            Kind::Ref => "Ljava/lang/Object;".into(),
            _ => descriptor[..1].to_string(),
        }
    }

    pub(crate) fn store(self, slot: u16) -> Instruction {
        let s = slot as u8;
        let wide = slot > 255;
        match (self, wide) {
            (Kind::Long, false) => Instruction::Lstore(s),
            (Kind::Long, true) => Instruction::Lstore_w(slot),
            (Kind::Float, false) => Instruction::Fstore(s),
            (Kind::Float, true) => Instruction::Fstore_w(slot),
            (Kind::Double, false) => Instruction::Dstore(s),
            (Kind::Double, true) => Instruction::Dstore_w(slot),
            (Kind::Ref, false) => Instruction::Astore(s),
            (Kind::Ref, true) => Instruction::Astore_w(slot),
            (_, false) => Instruction::Istore(s),
            (_, true) => Instruction::Istore_w(slot),
        }
    }

    /// Pushes the default value of the kind.
    pub(crate) fn zero(self) -> Instruction {
        match self {
            Kind::Long => Instruction::Lconst_0,
            Kind::Float => Instruction::Fconst_0,
            Kind::Double => Instruction::Dconst_0,
            Kind::Ref => Instruction::Aconst_null,
            _ => Instruction::Iconst_0,
        }
    }

    pub(crate) fn load(self, slot: u16) -> Instruction {
        let s = slot as u8;
        let wide = slot > 255;
        match (self, wide) {
            (Kind::Long, false) => Instruction::Lload(s),
            (Kind::Long, true) => Instruction::Lload_w(slot),
            (Kind::Float, false) => Instruction::Fload(s),
            (Kind::Float, true) => Instruction::Fload_w(slot),
            (Kind::Double, false) => Instruction::Dload(s),
            (Kind::Double, true) => Instruction::Dload_w(slot),
            (Kind::Ref, false) => Instruction::Aload(s),
            (Kind::Ref, true) => Instruction::Aload_w(slot),
            (_, false) => Instruction::Iload(s),
            (_, true) => Instruction::Iload_w(slot),
        }
    }
}

/// Where a column's value comes from at the site.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Source {
    /// A local variable (or argument) slot.
    Local(u16),
    /// A field of the target class: `this.f` or a static, read at the site
    /// (the helper could not read a private one).
    Field { name: String, is_static: bool },
    /// The value a method returns (Exit).
    Returned,
    /// The exception a method throws (Exit).
    Thrown,
    /// The value being written (FieldWrite).
    Written,
    /// The field's value before the write (FieldWrite), read at the site.
    Old,
    /// The writing code's `this` (a FieldWrite across writers, where each
    /// class's is its own type): null in a static method or before a
    /// constructor's `super()`.
    Writer,
    /// Where the site is, `Class.method:line`: a string constant per site
    /// (FieldWrite), which the record's snapshot takes as its location.
    Where,
    /// The caller frames, one `StackTraceElement` a line: filled in by the
    /// helper for a recorded hit only (the site passes nothing).
    Callers,
    /// The method's arguments, boxed into an `Object[]` at the site (an
    /// exit probe on every method of a class, whose methods take
    /// different arguments while one helper takes them all).
    Args,
    /// The time of each call the method made, by site: a string the
    /// helper writes for a record only, from the sums the exit passes
    /// ([`crate::model::callees::parse`] reads it).
    Callees,
    /// The value of path `path` of [`ProbeSpec::paths`], which the helper
    /// reads for a record only: from the column named `base` (none: the
    /// first step is a static) on, from step `from` (1: the site read
    /// the first, a private field of the class, into `base`).
    Path {
        path: usize,
        base: Option<String>,
        from: usize,
    },
    /// Which step of path `.0` met a null (1-based; 0: none did).
    PathNull(usize),
}

/// One value a record holds (or, when not `record`, one the condition
/// reads).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Column {
    pub name: String,
    pub kind: Kind,
    /// The JVM descriptor of its declared type.
    pub descriptor: String,
    /// The declared type in Java terms (`int`, `java.lang.String`).
    pub type_name: String,
    pub source: Source,
    pub record: bool,
}

/// How to read one record back.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RecordLayout {
    /// Recorded columns, in order; primitives fill `prims` and references
    /// `refs`, each in this order.
    pub columns: Vec<Column>,
    pub prim_width: usize,
    pub ref_width: usize,
    /// `durs` holds each call's duration (Exit).
    pub has_duration: bool,
    /// Every method timed: each method's argument names, by method name
    /// (none for overloads whose names differ).
    pub arguments: std::collections::BTreeMap<String, Vec<Argument>>,
    /// The calls the method makes, by site in code order, when its
    /// callees are timed.
    pub callees: Vec<crate::model::callees::CalleeSite>,
    /// A field write in one class: each site's `Class.method:line`, which
    /// a record names by its number in the [`Source::Where`] column (an
    /// int, not a string reference: a record of a hot write then stores
    /// one reference fewer, and G1 refines one card fewer).
    pub sites: Vec<String>,
}

/// A generated helper class.
#[derive(Debug, Clone)]
pub struct Helper {
    pub bytes: Vec<u8>,
    pub layout: RecordLayout,
}

/// Why a probe cannot go where it was asked.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Refusal {
    #[error("the class file cannot be read: {0}")]
    Malformed(String),
    #[error("the class has no method {name}{descriptor}")]
    NoMethod { name: String, descriptor: String },
    #[error("{method} has no bytecode (abstract or native)")]
    NoCode { method: String },
    #[error("{method} has no code at line {line}")]
    NoLine { method: String, line: u32 },
    #[error(
        "{method} has no LocalVariableTable (compiled without -g), so local {name:?} has no slot"
    )]
    NoLocalTable { method: String, name: String },
    #[error("{method} has no local {name:?} at the site (in scope: {})", in_scope.join(", "))]
    NoLocal {
        method: String,
        name: String,
        in_scope: Vec<String>,
    },
    #[error(
        "a constructor runs before super() returns, where `this` cannot be used: probe a line after super() instead"
    )]
    Constructor,
    #[error("a static initialiser runs once, as the class initialises: nothing to probe")]
    StaticInitializer,
    #[error("the instrumented method would exceed the JVM's code limits")]
    TooLarge,
    #[error("{class} never writes {owner}.{name}")]
    NoWrite {
        class: String,
        owner: String,
        name: String,
    },
    #[error("{owner} declares no field {name}")]
    NoField { owner: String, name: String },
    #[error(
        "a write probe sees only the writes in the classes it goes into, {class} by default, and {field} {why} (the wire's field watch sees every write; a probe sees them when the classes that write it are named as its writers)"
    )]
    OtherWriters {
        class: String,
        field: String,
        why: String,
    },
    #[error("{class} declares a field {field} of its own, which hides the one the probe watches")]
    Hides { class: String, field: String },
    #[error(
        "{class} has no method a probe can time (constructors, the static initialiser, abstract, native, bridge and synthetic methods are not timed)"
    )]
    NothingToTime { class: String },
    #[error("{method} makes no calls: there is nothing to time but its own code")]
    NoCalls { method: String },
    #[error("a condition needs a method: its names are that method's arguments")]
    ConditionOnEveryMethod,
    #[error("condition column {column}: {why}")]
    Condition { column: usize, why: String },
    #[error("trace_expr[{index}] {expr} column {column}: {why}")]
    TraceExpr {
        index: usize,
        expr: String,
        column: usize,
        why: String,
    },
    #[error("unsupported class file: {0}")]
    Unsupported(String),
}

/// The helper class's static fields, by the names the drain reads.
pub mod field {
    pub const LIVE: &str = "live";
    pub const RENEW: &str = "renew";
    pub const MISSES: &str = "misses";
    pub const HEAD: &str = "head";
    pub const TAIL: &str = "tail";
    /// The calls, the passes (when [`super::ProbeSpec::filters`]; the
    /// drops are these less `head`) and the throws (statistics) of each
    /// thread that owns a stripe: a `long[]` of [`super::COUNT_STRIPES`]
    /// stripes of [`super::COUNT_WIDTH`] longs after one stripe of
    /// padding, indexed by [`super::CALLS_AT`], [`super::PASSED_AT`] and
    /// [`super::THROWS_AT`].
    pub const COUNTS: &str = "counts";
    /// Each stripe's owner, the thread id that claimed it first (an
    /// `AtomicLongArray`; 0: free). Only the owner writes its stripe.
    pub const OWNERS: &str = "owners";
    /// The same three counts of the threads whose stripe another owns
    /// (an `AtomicLongArray` of 3, counted with atomic adds).
    pub const OVER: &str = "over";
    pub const SEQ: &str = "seq";
    pub const PRIMS: &str = "prims";
    pub const REFS: &str = "refs";
    pub const TIMES: &str = "times";
    pub const DURS: &str = "durs";
    /// Each record's thread, when it has no stripe of counts (null
    /// otherwise: see [`WHO`]).
    pub const THREADS: &str = "threads";
    /// Each record's stripe of counts, as its first index in [`COUNTS`]
    /// (a `long[]`; -1: its thread is in
    /// [`THREADS`]). A stripe's owner is in [`STRIPE_THREADS`], so a
    /// record stores no reference for its thread, and meets no barrier.
    pub const WHO: &str = "who";
    /// The thread that owns each stripe (a `Thread[]`), set once as it
    /// claims the stripe.
    pub const STRIPE_THREADS: &str = "stripeThreads";
    pub const COST_NS: &str = "costNs";
    pub const COST_SAMPLES: &str = "costSamples";
    /// The time one clock read took, summed over the samples: a sample's
    /// time less its clock read is the probe's own.
    pub const COST_CLOCK: &str = "costClock";
    pub const ERRORS: &str = "errors";
    pub const LAST_ERROR: &str = "lastError";
    pub const SUSPEND: &str = "suspend";
    /// The target's original class file (a `byte[]`).
    pub const ORIGINAL: &str = "original";
    /// A write probe's other classes' original class files (an
    /// `Object[]` of `byte[]`, each naming its class), or null.
    pub const OTHERS: &str = "others";
    pub const RESTORED: &str = "restored";
    pub const TARGET: &str = "TARGET";
    /// A statistics probe's latency histogram (a `long[]`; null
    /// otherwise): [`super::HIST_STRIPES`] stripes of
    /// [`super::HIST_WIDTH`] longs, each [`super::HIST_BUCKETS`] counts
    /// (bucket `b` holds durations in `[2^b, 2^(b+1))` ns, 0 and 1 in
    /// bucket 0), then the sum of durations, then the longest.
    pub const HIST: &str = "hist";
}

/// Stripes of [`field::COUNTS`]: a thread's id picks one, and the first
/// thread to pick it owns it for good, so each count is exact.
pub const COUNT_STRIPES: i32 = 64;
/// Longs a stripe of counts takes: two cache lines, so no two stripes
/// share one (or the pair the adjacent-line prefetch fetches together).
pub const COUNT_WIDTH: i32 = 16;
/// Where each count sits in a stripe.
pub const CALLS_AT: i32 = 0;
pub const PASSED_AT: i32 = 1;
pub const THROWS_AT: i32 = 2;
/// When the thread last walked its stack for a record's callers.
pub const WALKED_AT: i32 = 3;
/// A statistics probe's random state for the thread (a linear
/// congruential generator whose top bits draw the calls it times).
pub const SAMPLE_AT: i32 = 4;
/// A thread walks its stack for a record's callers at most once in this
/// long: a walk costs about a microsecond, and a probe recording every
/// call of a hot method would otherwise spend a core on them. A record in
/// between has none (the drain says why).
pub const CALLERS_GAP_NS: i64 = 100_000;

/// A thread adds to the stripe its id picks, with plain writes: no
/// cache line is fought over per call, and the rare lost update makes
/// the histogram an estimate (the calls and throws are exact).
pub const HIST_STRIPES: i32 = 16;
/// Buckets of a stripe: one per power of two of nanoseconds.
pub const HIST_BUCKETS: i32 = 64;
/// Longs per stripe: the buckets, the sum, the longest.
pub const HIST_WIDTH: i32 = HIST_BUCKETS + 2;

/// The helper's set-up method: ring, switch, lease thread.
pub const INIT: &str = "init";
/// The part of a helper's name that marks it as ours: a later attach
/// finds it by this, and a wildcard never instruments one.
pub const HELPER_MARK: &str = "$$jvmscope$";
/// The helper's method an exit site calls at entry: the start time, or
/// [`UNTIMED`].
pub const START: &str = "start";
/// The start time of a call that will not be recorded: the probe is off,
/// or the ring was full as the call began (and no `min_duration` asks
/// for every call's time).
pub const UNTIMED: i64 = i64::MIN;
/// The start value of a statistics probe's call that is counted but not
/// timed: [`STATS_SAMPLE`] says which calls are timed.
pub const UNSAMPLED: i64 = i64::MIN + 1;
/// A statistics probe times about one call in this many (a power of
/// two): two clock reads cost 40-odd ns, most of a never-true
/// condition's budget on a microsecond call. Calls and throws stay
/// exact. Which calls is drawn at random per thread ([`SAMPLE_AT`]), so
/// a program whose calls alternate in a pattern is not timed on one
/// kind only.
pub const STATS_SAMPLE: i32 = 8;
/// The helper's empty method a suspending probe breaks in.
pub const TRAP: &str = "trap";
/// How long a lease lasts without renewal: the lease thread's ticks.
pub const LEASE_TICK_MS: i64 = 500;
pub const LEASE_TICKS: i32 = 4;

/// The helper class for `spec` on `target`.
pub fn helper_class(target: &[u8], spec: &ProbeSpec) -> Result<Helper, Refusal> {
    let class = parse(target)?;
    let plan = plan::plan(&class, spec)?;
    let bytes = helper::generate(&class, spec, &plan)?;
    Ok(Helper {
        bytes,
        layout: plan.layout(),
    })
}

/// `original` with every probe in `probes` inserted.
///
/// No probes give back `original` itself, byte for byte (once it reads
/// as a class file), so taking out the last probe restores the class.
pub fn instrument(original: &[u8], probes: &[ProbeSpec]) -> Result<Vec<u8>, Refusal> {
    let mut class = parse(original)?;
    if probes.is_empty() {
        return Ok(original.to_vec());
    }
    for spec in probes {
        let plan = plan::plan(&class, spec)?;
        insert::insert(&mut class, spec, &plan)?;
    }
    write(&class)
}

pub(crate) fn parse(bytes: &[u8]) -> Result<ClassFile<'static>, Refusal> {
    ClassFile::from_bytes(bytes).map_err(|e| Refusal::Malformed(e.to_string()))
}

pub(crate) fn write(class: &ClassFile<'_>) -> Result<Vec<u8>, Refusal> {
    let mut out = Vec::new();
    class.to_bytes(&mut out).map_err(|e| match e {
        ristretto_classfile::Error::TryFromIntError(_) => Refusal::TooLarge,
        other => Refusal::Unsupported(other.to_string()),
    })?;
    Ok(out)
}

/// A method of `class` by name and descriptor, with its index.
pub(crate) fn find_method(class: &ClassFile<'_>, m: &MethodRef) -> Result<usize, Refusal> {
    class
        .methods
        .iter()
        .position(|x| {
            class
                .constant_pool
                .try_get_utf8(x.name_index)
                .ok()
                .map(|s| s.to_string())
                == Some(m.name.clone())
                && class
                    .constant_pool
                    .try_get_utf8(x.descriptor_index)
                    .ok()
                    .map(|s| s.to_string())
                    == Some(m.descriptor.clone())
        })
        .ok_or_else(|| Refusal::NoMethod {
            name: m.name.clone(),
            descriptor: m.descriptor.clone(),
        })
}

pub(crate) fn is_static(flags: MethodAccessFlags) -> bool {
    flags.contains(MethodAccessFlags::STATIC)
}

pub(crate) fn code_of(attrs: &[Attribute]) -> Option<usize> {
    attrs
        .iter()
        .position(|a| matches!(a, Attribute::Code { .. }))
}

#[cfg(test)]
mod tests;
