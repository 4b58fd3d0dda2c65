//! Rewriting one method's code with site blocks inserted: the instruction
//! list is rebuilt once, remembering for every old instruction where its
//! block starts and where the instruction itself now is ([`Moved`]);
//! branches, switch tables and the exception table are moved through that
//! map here, and the attributes that count bytes (lines, locals, stack map
//! frames) in [`super::remap`]. Nothing of the original method changes
//! meaning: a block only adds, and leaves the operand stack as it was.

use std::collections::BTreeMap;

use ristretto_classfile::ClassFile;
use ristretto_classfile::attributes::{
    Attribute, ExceptionTableEntry, Instruction, VerificationType,
};

use super::asm::{retarget, short_branch};
use super::read::byte_offsets;
use super::remap::{self, Tables};
use super::{Refusal, code_of};

/// Site code around one old instruction.
#[derive(Default)]
pub struct Block {
    /// Before the instruction, skipped by branches to it (method entry).
    pub skipped: Vec<Instruction>,
    /// Before the instruction, run by branches to it (a line, a return,
    /// a call's start time).
    pub code: Vec<Instruction>,
    /// Right after the instruction, as it falls through (a call's end
    /// time): branches to the next instruction do not run it.
    pub after: Vec<Instruction>,
}

impl Block {
    /// Code run by branches to the instruction.
    pub fn run(code: Vec<Instruction>) -> Block {
        Block {
            code,
            ..Block::default()
        }
    }
}

/// What one probe does to one method.
pub struct Edit {
    /// Per old instruction index, the block that goes before it.
    pub blocks: BTreeMap<u16, Block>,
    /// Exit: a catch-all handler put after the code, around all of it.
    pub handler: Option<Vec<Instruction>>,
    /// Exit: the new locals every frame carries (the entry time first),
    /// by slot.
    pub locals: Vec<(u16, VerificationType)>,
    pub extra_locals: u16,
    pub extra_stack: u16,
}

/// Where every old instruction went.
pub struct Moved {
    /// For each old index (and the end): where its block starts.
    pub start: Vec<u16>,
    /// For each old index (and the end): where branches to it land.
    pub mid: Vec<u16>,
    /// For each old index (and the end): where the instruction now is.
    pub at: Vec<u16>,
}

impl Moved {
    /// The old instruction count.
    pub fn len(&self) -> usize {
        self.start.len() - 1
    }

    /// Where a branch to old index `x` now lands: where its block starts,
    /// unless branches skip the block (entry).
    pub fn target(&self, x: u16) -> u16 {
        self.mid[usize::from(x).min(self.len())]
    }

    /// Where a range boundary at old index `x` now is (a block before it
    /// is inside the range it starts).
    pub fn block_start(&self, x: u16) -> u16 {
        self.start[usize::from(x).min(self.len())]
    }
}

/// Rebuilds method `mi` of `class` with `edit`.
pub fn rebuild(
    class: &mut ClassFile<'_>,
    mi: usize,
    edit: &Edit,
    owner: &str,
) -> Result<(), Refusal> {
    let tables = Tables::prepare(class, mi, owner, edit.handler.is_some())?;
    let m = &mut class.methods[mi];
    let Some(ci) = code_of(&m.attributes) else {
        return Err(Refusal::NoCode {
            method: String::new(),
        });
    };
    let Attribute::Code {
        max_stack,
        max_locals,
        code,
        exception_table,
        attributes,
        ..
    } = &mut m.attributes[ci]
    else {
        return Err(Refusal::NoCode {
            method: String::new(),
        });
    };
    let old = std::mem::take(code);
    let (mut new, moved) = relayout(&old, &edit.blocks)?;
    retarget_branches(&old, &mut new, &moved)?;
    // A range keeps the blocks inside it, but not the entry's: an exit's
    // entry block is where its time local is first stored, and a handler
    // whose frame carries that local must not cover code before it.
    for e in exception_table.iter_mut() {
        e.range_pc = moved.target(e.range_pc.start)..moved.block_start(e.range_pc.end);
        e.handler_pc = moved.block_start(e.handler_pc);
    }
    let end = u16::try_from(new.len()).map_err(|_| Refusal::TooLarge)?;
    if let Some(h) = &edit.handler {
        new.extend(h.iter().cloned());
        exception_table.push(ExceptionTableEntry {
            range_pc: moved.at[0]..end,
            handler_pc: end,
            catch_type: 0,
        });
    }
    let old_offsets = byte_offsets(&old)?;
    let new_offsets = byte_offsets(&new)?;
    if *new_offsets.last().unwrap_or(&0) > 65_535 {
        return Err(Refusal::TooLarge);
    }
    tables.apply(
        attributes,
        &remap::Offsets {
            moved: &moved,
            old: &old_offsets,
            new: &new_offsets,
            end,
            locals: &edit.locals,
        },
    )?;
    *code = new;
    *max_locals = max_locals.saturating_add(edit.extra_locals);
    *max_stack = max_stack.saturating_add(edit.extra_stack);
    Ok(())
}

/// The new instruction list: each old instruction after its block.
fn relayout(
    old: &[Instruction],
    blocks: &BTreeMap<u16, Block>,
) -> Result<(Vec<Instruction>, Moved), Refusal> {
    let n = old.len();
    let index = |v: &Vec<Instruction>| u16::try_from(v.len()).map_err(|_| Refusal::TooLarge);
    let mut start = vec![0u16; n + 1];
    let mut mid = vec![0u16; n + 1];
    let mut at = vec![0u16; n + 1];
    let mut new: Vec<Instruction> = Vec::with_capacity(n + blocks.len() * 8);
    for (k, ins) in old.iter().enumerate() {
        start[k] = index(&new)?;
        let b = blocks.get(&(k as u16));
        if let Some(b) = b {
            new.extend(b.skipped.iter().cloned());
        }
        mid[k] = index(&new)?;
        if let Some(b) = b {
            new.extend(b.code.iter().cloned());
        }
        at[k] = index(&new)?;
        new.push(ins.clone());
        if let Some(b) = b {
            new.extend(b.after.iter().cloned());
        }
    }
    start[n] = index(&new)?;
    mid[n] = start[n];
    at[n] = start[n];
    Ok((new, Moved { start, mid, at }))
}

/// Points every old branch and switch at where its target moved.
fn retarget_branches(
    old: &[Instruction],
    new: &mut [Instruction],
    moved: &Moved,
) -> Result<(), Refusal> {
    for (k, ins) in old.iter().enumerate() {
        let i = &mut new[usize::from(moved.at[k])];
        match ins {
            short_branch!(t) => retarget(i, moved.target(*t)),
            Instruction::Goto_w(t) => {
                let t = u16::try_from(*t).map_err(|_| Refusal::TooLarge)?;
                *i = Instruction::Goto_w(i32::from(moved.target(t)));
            }
            Instruction::Jsr(_)
            | Instruction::Jsr_w(_)
            | Instruction::Ret(_)
            | Instruction::Ret_w(_) => {
                return Err(Refusal::Unsupported(
                    "jsr/ret subroutines (pre-Java 6 code)".into(),
                ));
            }
            Instruction::Tableswitch(ts) => {
                let here = i64::from(moved.at[k]);
                let rel = |r: i32| {
                    let abs = moved.target((k as i64 + i64::from(r)) as u16);
                    (i64::from(abs) - here) as i32
                };
                let mut t = ts.clone();
                t.default = rel(ts.default);
                t.offsets = ts.offsets.iter().map(|o| rel(*o)).collect();
                *i = Instruction::Tableswitch(t);
            }
            Instruction::Lookupswitch(ls) => {
                let here = i64::from(moved.at[k]);
                let rel = |r: i32| {
                    let abs = moved.target((k as i64 + i64::from(r)) as u16);
                    (i64::from(abs) - here) as i32
                };
                let mut t = ls.clone();
                t.default = rel(ls.default);
                t.pairs = ls.pairs.iter().map(|(m, o)| (*m, rel(*o))).collect();
                *i = Instruction::Lookupswitch(t);
            }
            _ => {}
        }
    }
    Ok(())
}
