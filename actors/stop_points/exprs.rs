//! A stop point's condition and trace expressions, parsed and checked once
//! when its route is built (`registry.rs` builds one per definition) and
//! shared with every hit through the route table, so a hit only evaluates.
//! The names an event binds are marked here and answered with the event's
//! values at each hit (`crate::expr::compiled`); nothing on the hit path
//! parses.

use crate::expr::{Compiled, ParseError};
use crate::model::stop_point::StopPointSpec;

/// One expression as armed: ready to evaluate, or the error every hit
/// reports (the MCP layer refuses a malformed expression before arming, so
/// only a definition built some other way gets one).
#[derive(Debug)]
pub enum Program {
    Ready(Compiled),
    Refused { source: String, error: ParseError },
}

impl Program {
    pub fn new(src: &str) -> Self {
        match Compiled::new(src) {
            Ok(c) => Program::Ready(c),
            Err(e) => Program::Refused {
                source: src.to_string(),
                error: e,
            },
        }
    }

    /// The source as written.
    pub fn source(&self) -> &str {
        match self {
            Program::Ready(c) => c.source(),
            Program::Refused { source, .. } => source,
        }
    }
}

/// Every expression a stop point's hits evaluate.
#[derive(Debug, Default)]
pub struct StopExprs {
    pub condition: Option<Program>,
    /// The condition's operands read back when it is false, so a diagnosis
    /// can show why it never holds (`crate::expr::operands`).
    pub operands: Vec<Program>,
    /// The trace expressions, in order.
    pub trace: Vec<Program>,
}

impl StopExprs {
    pub fn of(spec: &StopPointSpec) -> Self {
        let condition = spec.filters.condition.as_deref().map(Program::new);
        // Each operand is compiled from its own text, so an error in one
        // points into that text, as the diagnosis shows it.
        let operands = match &condition {
            Some(Program::Ready(c)) => crate::expr::operands::of(c.expr(), c.source()),
            _ => Vec::new(),
        };
        Self {
            condition,
            operands: operands.iter().map(|o| Program::new(o)).collect(),
            trace: spec
                .trace()
                .map(|t| t.exprs.iter().map(|e| Program::new(e)).collect())
                .unwrap_or_default(),
        }
    }
}
