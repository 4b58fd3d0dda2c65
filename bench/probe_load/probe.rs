//! The stop points the probe bench arms, one a phase, and what each must
//! keep of the unprobed program's throughput.

use anyhow::{Context, Result};

use jvmscope::model::stop_point::{
    Engine as Via, FieldSpec, Filters, LineSpec, LocalsChoice, MethodExitSpec, Mode, StopPointSpec,
    Target, TraceSpec,
};

use super::{LOCALS, METER, NEVER};

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
    WireExit,
    WireField,
}

impl Probe {
    pub const ALL: [Probe; 8] = [
        Probe::NeverTrue,
        Probe::NeverCallers,
        Probe::Capture,
        Probe::CaptureCallers,
        Probe::Exit,
        Probe::FieldWrite,
        Probe::WireExit,
        Probe::WireField,
    ];

    pub fn parse(name: &str) -> Result<Probe> {
        let all = [
            "never",
            "never-callers",
            "capture",
            "callers",
            "exit",
            "field",
            "wire-exit",
            "wire-field",
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
            Probe::WireExit => "wire method-exit stop (suspension-free trace)",
            Probe::WireField => "wire field-write stop (suspension-free trace)",
        }
    }

    pub fn target(self) -> &'static str {
        match self {
            Probe::NeverTrue | Probe::NeverCallers => "≥ 95%",
            Probe::Capture => "≥ 100k snapshots/s",
            Probe::CaptureCallers => "(callers' cost)",
            Probe::Exit | Probe::FieldWrite => "≥ 85%",
            Probe::WireExit | Probe::WireField => "(the issue: 2–3%)",
        }
    }

    /// The share of the unprobed throughput this phase must keep.
    pub fn floor(self) -> Option<f64> {
        match self {
            Probe::NeverTrue | Probe::NeverCallers => Some(0.95),
            Probe::Exit | Probe::FieldWrite => Some(0.85),
            _ => None,
        }
    }

    pub fn spec(self, hot: u32) -> StopPointSpec {
        let line = Target::Line(LineSpec {
            class: METER.into(),
            method: None,
            line: Some(hot),
        });
        let exit = Target::MethodExit(MethodExitSpec {
            class_pattern: METER.into(),
            method: Some("step".into()),
            exclude: Vec::new(),
            min_duration_ms: None,
            stats: false,
            callees: false,
        });
        let field = Target::Field(FieldSpec {
            class: METER.into(),
            field: "last".into(),
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
            Probe::WireExit => (exit, LocalsChoice::None, None, Via::Wire),
            Probe::WireField => (field, LocalsChoice::None, None, Via::Wire),
        };
        StopPointSpec {
            target,
            mode: Mode::Trace(TraceSpec {
                frames: match self {
                    Probe::NeverCallers | Probe::CaptureCallers => 3,
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
        }
    }
}

fn locals() -> LocalsChoice {
    LocalsChoice::Only(LOCALS.map(String::from).to_vec())
}
