//! The stop points the probe bench arms, one a phase, and what each must
//! keep of the unprobed program's throughput.

use std::time::Duration;

use anyhow::{Context, Result, bail};
use jvmscope::actors::Sampler;

use jvmscope::model::stop_point::{
    Engine as Via, FieldSpec, Filters, LineSpec, LocalsChoice, MethodExitSpec, Mode, StopPointSpec,
    Target, TraceSpec,
};

use super::{LOCALS, NEVER};

/// The program the probes go into, and how a phase is measured.
#[derive(Clone, Copy, Debug)]
pub struct Shape {
    pub name: &'static str,
    /// The fixture's third argument.
    pub arg: &'static str,
    pub class: &'static str,
    /// The marker of the probed line.
    pub hot: &'static str,
    /// The field every call writes.
    pub field: &'static str,
    /// Rounds of the hot method's loop.
    pub work: u32,
    pub settle: Duration,
    pub measure: Duration,
    /// A phase's rate is the median of the program's 100 ms ticks, else
    /// its calls over its time.
    pub median_ticks: bool,
    /// Each call returns and writes `(id << 48) | n`, which the bench
    /// checks in the recorded snapshots.
    pub named: bool,
}

impl Shape {
    /// The shape of the hidden check of issue #41: ~1 µs a call, a static
    /// field every thread writes, a value that names the call, windows of
    /// 2.4 s starting 2.5 s after arming or clearing, the median of the
    /// program's ticks.
    pub const NAMED: Shape = Shape {
        name: "named",
        arg: "named",
        class: "ProbeLoadBench$Named",
        hot: "// LINE: named-hot",
        field: "seen",
        work: 400,
        settle: Duration::from_millis(2500),
        measure: Duration::from_millis(2400),
        median_ticks: true,
        named: true,
    };
    /// Wave 3's shape: ~0.5 µs a call, an instance field of the thread's
    /// own object, windows of 2 s starting 1.5 s after, calls over time.
    pub const METER: Shape = Shape {
        name: "meter",
        arg: "meter",
        class: "ProbeLoadBench$Meter",
        hot: "// LINE: probe-hot",
        field: "last",
        work: 200,
        settle: Duration::from_millis(1500),
        measure: Duration::from_secs(2),
        median_ticks: false,
        named: false,
    };

    /// `NAMED`'s timing, its work done in a call (`Calls.mix`) and a
    /// second call after it, for the callees kind (#40).
    pub const CALLS: Shape = Shape {
        name: "calls",
        arg: "calls",
        class: "ProbeLoadBench$Calls",
        hot: "// LINE: calls-hot",
        field: "last",
        named: false,
        ..Shape::NAMED
    };

    pub fn parse(name: &str) -> Result<Shape> {
        match name {
            "named" => Ok(Shape::NAMED),
            "meter" => Ok(Shape::METER),
            "calls" => Ok(Shape::CALLS),
            other => bail!("--shape takes named, meter or calls, not {other:?}"),
        }
    }
}

/// What is armed in a phase.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Probe {
    NeverTrue,
    /// The never-true probe asking for 3 callers: they are taken for a
    /// recorded hit only, so this must cost what `NeverTrue` does.
    NeverCallers,
    Capture,
    /// The capture probe with 3 callers a record.
    CaptureCallers,
    Exit,
    FieldWrite,
    /// `Exit` as an agent gets it from `trace: true, trace_max_hits: 0`:
    /// every argument and 3 callers a record.
    ExitDefault,
    /// `FieldWrite` as an agent gets it: every local and 3 callers.
    FieldDefault,
    WireExit,
    WireField,
    /// `stats: true` on the method's exit (#40): calls, throws and a
    /// latency histogram kept in the JVM, no snapshot. The always-on mode:
    /// it must cost what `NeverTrue` does.
    Stats,
    /// A method-exit timing of the whole class, no method named, with a
    /// `min_duration_ms` no call reaches (#40's "which method is slow").
    ClassTiming,
    /// `callees: true` on the method's exit, with a `min_duration_ms` no
    /// call reaches: every call and each call it makes timed (#40's
    /// "where its time went"). Needs `--shape calls`.
    Callees,
    /// No stop point: a CPU profile of the whole JVM by its flight
    /// recorder across the phase (#40: ≤ 3% while it records).
    ProfileJfr,
    /// No stop point: the JDWP sampler's profile across the phase (#40:
    /// its hold per sample stated).
    ProfileJdwp,
}

impl Probe {
    pub const ALL: [Probe; 15] = [
        Probe::NeverTrue,
        Probe::NeverCallers,
        Probe::Capture,
        Probe::CaptureCallers,
        Probe::Exit,
        Probe::FieldWrite,
        Probe::ExitDefault,
        Probe::FieldDefault,
        Probe::WireExit,
        Probe::WireField,
        Probe::Stats,
        Probe::ClassTiming,
        Probe::Callees,
        Probe::ProfileJfr,
        Probe::ProfileJdwp,
    ];

    pub fn parse(name: &str) -> Result<Probe> {
        let all = [
            "never",
            "never-callers",
            "capture",
            "callers",
            "exit",
            "field",
            "exit-default",
            "field-default",
            "wire-exit",
            "wire-field",
            "stats",
            "class-timing",
            "callees",
            "profile-jfr",
            "profile-jdwp",
        ];
        let k = all.iter().position(|n| *n == name);
        k.map(|k| Probe::ALL[k])
            .with_context(|| format!("--only takes some of {}", all.join(",")))
    }

    pub fn name(self) -> &'static str {
        match self {
            Probe::NeverTrue => "line probe, condition never true",
            Probe::NeverCallers => "line probe, condition never true, 3 callers asked",
            Probe::Capture => "line probe, 3 primitive locals, every call",
            Probe::CaptureCallers => "line probe, 3 primitive locals and 3 callers, every call",
            Probe::Exit => "method-exit probe, every call",
            Probe::FieldWrite => "field-write probe, every write",
            Probe::ExitDefault => "method-exit probe, every call, trace defaults (3 callers)",
            Probe::FieldDefault => "field-write probe, every write, trace defaults (3 callers)",
            Probe::WireExit => "wire method-exit stop (suspension-free trace)",
            Probe::WireField => "wire field-write stop (suspension-free trace)",
            Probe::Stats => "method-exit statistics (stats: true)",
            Probe::ClassTiming => "class-wide timing, no method named, threshold never reached",
            Probe::Callees => {
                "method-exit timing of each call it makes (callees), threshold never reached"
            }
            Probe::ProfileJfr => "CPU profile by JFR (debug_profile), recording",
            Probe::ProfileJdwp => "CPU profile by the JDWP sampler (debug_profile), sampling",
        }
    }

    pub fn target(self) -> &'static str {
        match self {
            Probe::NeverTrue | Probe::NeverCallers => "≥ 97%, ≤ 10 ns",
            Probe::Capture => "≥ 150k snapshots/s",
            Probe::CaptureCallers => "(callers' cost)",
            Probe::Exit | Probe::FieldWrite | Probe::ExitDefault | Probe::FieldDefault => "≥ 90%",
            Probe::WireExit | Probe::WireField => "(the issue: 2–3%)",
            Probe::Stats => "≥ 97% (#40: as never-true)",
            Probe::ClassTiming | Probe::Callees | Probe::ProfileJdwp => "(#40: stated)",
            Probe::ProfileJfr => "≥ 97% (#40: ≤ 3%)",
        }
    }

    /// The share of the unprobed throughput this phase must keep.
    pub fn floor(self) -> Option<f64> {
        match self {
            Probe::NeverTrue | Probe::NeverCallers | Probe::Stats | Probe::ProfileJfr => Some(0.97),
            Probe::Exit | Probe::FieldWrite | Probe::ExitDefault | Probe::FieldDefault => {
                Some(0.90)
            }
            _ => None,
        }
    }

    /// Whether it records every call (its counters must add up).
    pub fn records(self) -> bool {
        self == Probe::Capture || self == Probe::CaptureCallers || self.records_values()
    }

    /// Whether each record holds the value the call wrote or returned.
    pub fn records_values(self) -> bool {
        matches!(
            self,
            Probe::Exit | Probe::FieldWrite | Probe::ExitDefault | Probe::FieldDefault
        )
    }

    /// The sampler of a profile phase, which arms no stop point.
    pub fn sampler(self) -> Option<Sampler> {
        match self {
            Probe::ProfileJfr => Some(Sampler::Jfr),
            Probe::ProfileJdwp => Some(Sampler::Jdwp),
            _ => None,
        }
    }

    /// The stop point this phase arms; `None` for a profile.
    pub fn spec(self, shape: &Shape, hot: u32) -> Option<StopPointSpec> {
        let line = Target::Line(LineSpec {
            class: shape.class.into(),
            method: None,
            line: Some(hot),
        });
        let exit = Target::MethodExit(MethodExitSpec {
            class_pattern: shape.class.into(),
            method: Some("step".into()),
            exclude: Vec::new(),
            min_duration_ms: None,
            stats: false,
            callees: false,
        });
        let field = Target::Field(FieldSpec {
            class: shape.class.into(),
            field: shape.field.into(),
            access: false,
            modify: true,
            writers: Vec::new(),
        });
        let (target, locals, condition, engine) = match self {
            Probe::NeverTrue | Probe::NeverCallers => {
                (line, locals(), Some(NEVER.to_string()), Via::Probe)
            }
            Probe::Capture | Probe::CaptureCallers => (line, locals(), None, Via::Probe),
            Probe::Exit => (exit, LocalsChoice::None, None, Via::Probe),
            Probe::FieldWrite => (field, LocalsChoice::None, None, Via::Probe),
            Probe::ExitDefault => (exit, LocalsChoice::All, None, Via::Probe),
            Probe::FieldDefault => (field, LocalsChoice::All, None, Via::Probe),
            Probe::WireExit => (exit, LocalsChoice::None, None, Via::Wire),
            Probe::WireField => (field, LocalsChoice::None, None, Via::Wire),
            Probe::Stats => (
                Target::MethodExit(MethodExitSpec {
                    class_pattern: shape.class.into(),
                    method: Some("step".into()),
                    exclude: Vec::new(),
                    min_duration_ms: None,
                    stats: true,
                    callees: false,
                }),
                LocalsChoice::None,
                None,
                Via::Probe,
            ),
            Probe::ClassTiming => (
                Target::MethodExit(MethodExitSpec {
                    class_pattern: shape.class.into(),
                    method: None,
                    exclude: Vec::new(),
                    min_duration_ms: Some(1_000),
                    stats: false,
                    callees: false,
                }),
                LocalsChoice::None,
                None,
                Via::Probe,
            ),
            Probe::Callees => (
                Target::MethodExit(MethodExitSpec {
                    class_pattern: shape.class.into(),
                    method: Some("step".into()),
                    exclude: Vec::new(),
                    min_duration_ms: Some(1_000),
                    stats: false,
                    callees: true,
                }),
                LocalsChoice::None,
                None,
                Via::Probe,
            ),
            Probe::ProfileJfr | Probe::ProfileJdwp => return None,
        };
        Some(StopPointSpec {
            target,
            mode: Mode::Trace(TraceSpec {
                frames: match self {
                    Probe::NeverCallers | Probe::CaptureCallers => 3,
                    Probe::ExitDefault | Probe::FieldDefault => TraceSpec::DEFAULT_FRAMES,
                    _ => 0,
                },
                locals,
                max_hits: 0,
                ..TraceSpec::default()
            }),
            filters: Filters {
                condition,
                // Measured at full rate: the wire's overhead guard is off.
                overhead_pct: Some(0),
                ..Filters::default()
            },
            engine,
        })
    }
}

fn locals() -> LocalsChoice {
    LocalsChoice::Only(LOCALS.map(String::from).to_vec())
}
