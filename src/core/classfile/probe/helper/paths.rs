//! The helper reading a probe's field paths for a call that passed its
//! condition (never for one that fails it), right before the ring slot
//! is claimed, so a path that throws costs a drop and never a slot left
//! unpublished: each path from its head's column, a link at a time, each
//! link checked for null first. The value goes into the path's column of
//! `rec`'s parameters (the entries passed a zero there), and a null link
//! leaves it at zero and writes which step it stopped before into the
//! path's null column. The head arrives as an `Object`, so it is cast to
//! the class the first step reads through; later links have the types
//! their fields declare. Straight-line code with forward jumps only: the
//! helper is verified by type inference and needs no stack map.

use ristretto_classfile::attributes::Instruction;

use super::builder::{Gen, cpe};
use crate::classfile::probe::asm::Asm;
use crate::classfile::probe::plan::Plan;
use crate::classfile::probe::{Kind, ProbeSpec, Refusal, Source, StepRead};

type I = Instruction;

/// Fills every path column of `rec` (its parameters start at local 0).
pub fn compute(g: &mut Gen, a: &mut Asm, spec: &ProbeSpec, plan: &Plan) -> Result<(), Refusal> {
    let mut slots = Vec::with_capacity(plan.columns.len());
    let mut at = 0u16;
    for c in &plan.columns {
        slots.push(at);
        at += c.kind.slots();
    }
    let slot_of = |pred: &dyn Fn(&Source) -> bool| {
        plan.columns
            .iter()
            .position(|c| pred(&c.source))
            .map(|i| slots[i])
    };
    for (ci, c) in plan.columns.iter().enumerate() {
        let Source::Path { path, base, from } = &c.source else {
            continue;
        };
        let Some(p) = spec.paths.get(*path) else {
            continue;
        };
        let null_slot = slot_of(&|s| *s == Source::PathNull(*path));
        let done = a.label();
        let mut on_stack: Option<Kind> = None;
        let mut head = String::new();
        if let Some(b) = base {
            let col = plan
                .columns
                .iter()
                .position(|x| &x.name == b)
                .ok_or_else(|| Refusal::Unsupported(format!("no column {b} for a path")))?;
            let kind = plan.columns[col].kind;
            a.op(kind.load(slots[col]));
            on_stack = Some(kind);
            head = plan.columns[col].descriptor.clone();
        }
        let mut cast = true;
        for (k, step) in p.steps.iter().enumerate().skip(*from) {
            if on_stack.is_some() {
                // A null before this step: record where, keep the zero.
                let ok = a.label();
                a.op(I::Dup);
                a.jump(I::Ifnonnull, ok);
                a.op(I::Pop);
                g.int(a, i32::try_from(k + 1).map_err(|_| Refusal::TooLarge)?)?;
                a.op(Kind::Int.store(null_slot.unwrap_or(0)));
                a.jump(I::Goto, done);
                a.bind(ok);
            }
            match &step.read {
                StepRead::Field(f) if f.is_static() => {
                    if on_stack.is_some() {
                        a.op(I::Pop);
                    }
                    let r = field_ref(g, &f.class, &step.name, &f.descriptor)?;
                    a.op(I::Getstatic(r));
                }
                StepRead::Field(f) => {
                    if cast {
                        let class = cpe(g.cp.add_class(f.class.as_str()))?;
                        a.op(I::Checkcast(class));
                    }
                    let r = field_ref(g, &f.class, &step.name, &f.descriptor)?;
                    a.op(I::Getfield(r));
                }
                StepRead::Length => {
                    if cast {
                        // The head's column passes it as an Object: cast
                        // to the array type the head declares.
                        let class = cpe(g.cp.add_class(head.as_str()))?;
                        a.op(I::Checkcast(class));
                    }
                    a.op(I::Arraylength);
                }
                StepRead::Unresolved(_) => {
                    return Err(Refusal::Unsupported("an unresolved path step".into()));
                }
            }
            cast = false;
            on_stack = Some(match &step.read {
                StepRead::Field(f) => Kind::of(&f.descriptor),
                _ => Kind::Int,
            });
        }
        if on_stack.is_some() {
            a.op(c.kind.store(slots[ci]));
        }
        a.bind(done);
    }
    Ok(())
}

fn field_ref(g: &mut Gen, class: &str, name: &str, descriptor: &str) -> Result<u16, Refusal> {
    let c = cpe(g.cp.add_class(class))?;
    cpe(g.cp.add_field_ref(c, name, descriptor))
}
