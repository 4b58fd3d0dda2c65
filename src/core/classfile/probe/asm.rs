//! A small assembler for the code the probe engine writes: instructions
//! in order, branches to labels resolved to the instruction indices
//! `ristretto_classfile` keeps branch targets as, and exception ranges
//! between labels.

use ristretto_classfile::attributes::{ExceptionTableEntry, Instruction};

/// A place in the code, bound once.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Label(usize);

/// A branch waiting for its label: which instruction, which label.
#[derive(Debug, Clone, Copy)]
struct Fixup {
    at: usize,
    label: Label,
}

#[derive(Debug, Default)]
pub struct Asm {
    pub code: Vec<Instruction>,
    labels: Vec<Option<usize>>,
    fixups: Vec<Fixup>,
    handlers: Vec<(Label, Label, Label, u16)>,
}

/// A branch instruction with its target left for [`Asm::finish`].
pub type Branch = fn(u16) -> Instruction;

impl Asm {
    pub fn label(&mut self) -> Label {
        self.labels.push(None);
        Label(self.labels.len() - 1)
    }

    pub fn bind(&mut self, l: Label) {
        self.labels[l.0] = Some(self.code.len());
    }

    pub fn op(&mut self, i: Instruction) {
        self.code.push(i);
    }

    pub fn jump(&mut self, make: Branch, to: Label) {
        self.fixups.push(Fixup {
            at: self.code.len(),
            label: to,
        });
        self.code.push(make(0));
    }

    /// Catches `catch_type` (0: anything) thrown in `[from, to)` at `handler`.
    pub fn handler(&mut self, from: Label, to: Label, handler: Label, catch_type: u16) {
        self.handlers.push((from, to, handler, catch_type));
    }

    /// The instructions with every branch resolved, and the exception
    /// table; `None` when a label was never bound.
    pub fn finish(self) -> Option<(Vec<Instruction>, Vec<ExceptionTableEntry>)> {
        let Asm {
            mut code,
            labels,
            fixups,
            handlers,
        } = self;
        let at = |l: Label| -> Option<u16> { u16::try_from(labels.get(l.0).copied()??).ok() };
        for f in fixups {
            let target = at(f.label)?;
            retarget(code.get_mut(f.at)?, target);
        }
        let mut table = Vec::new();
        for (from, to, handler, catch_type) in handlers {
            table.push(ExceptionTableEntry {
                range_pc: at(from)?..at(to)?,
                handler_pc: at(handler)?,
                catch_type,
            });
        }
        Some((code, table))
    }
}

/// Every branch that carries a 16-bit instruction-index target, binding
/// it to `$t` (a pattern, usable wherever instructions are matched).
macro_rules! short_branch {
    ($t:pat) => {
        Instruction::Ifeq($t)
            | Instruction::Ifne($t)
            | Instruction::Iflt($t)
            | Instruction::Ifge($t)
            | Instruction::Ifgt($t)
            | Instruction::Ifle($t)
            | Instruction::If_icmpeq($t)
            | Instruction::If_icmpne($t)
            | Instruction::If_icmplt($t)
            | Instruction::If_icmpge($t)
            | Instruction::If_icmpgt($t)
            | Instruction::If_icmple($t)
            | Instruction::If_acmpeq($t)
            | Instruction::If_acmpne($t)
            | Instruction::Goto($t)
            | Instruction::Ifnull($t)
            | Instruction::Ifnonnull($t)
    };
}
pub(super) use short_branch;

/// Points a branch at instruction index `target`.
pub fn retarget(i: &mut Instruction, target: u16) {
    if let short_branch!(t) = i {
        *t = target;
    }
}
