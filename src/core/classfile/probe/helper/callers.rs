//! The caller frames of a recorded hit, taken by the helper's `rec` once
//! a ring slot is claimed (so a call that fails the condition, or finds
//! the ring full, pays nothing for them), and by a thread with a stripe
//! of counts at most once per [`CALLERS_GAP_NS`] (the time of its last
//! walk is in its stripe): `new Throwable()`'s stack trace,
//! past `rec`, the entry the site called and the probed method itself,
//! the next `frames` elements as one string, a `StackTraceElement` a line,
//! interned (a hot path's callers are one string the drain reads once).

use ristretto_classfile::attributes::Instruction;

use super::builder::{Gen, cpe};
use crate::classfile::probe::asm::Asm;
use crate::classfile::probe::plan::Plan;
use crate::classfile::probe::{CALLERS_GAP_NS, Kind, Refusal, Source, WALKED_AT, field};

type I = Instruction;

/// Frames on the stack above the first caller: `rec`, the helper's entry
/// point, and the probed method.
const OWN_FRAMES: i32 = 3;

/// Locals the callers code needs past `rec`'s own.
pub const LOCALS: u16 = 5;

/// Stores the callers string into the callers column's parameter slot of
/// `rec`, when the plan has one and the thread (its stripe of counts in
/// local `stripe`) did not walk its stack in the last
/// [`CALLERS_GAP_NS`]; `free` is `rec`'s first free local.
pub fn take(
    g: &mut Gen,
    a: &mut Asm,
    plan: &Plan,
    frames: u32,
    stripe: u16,
    free: u16,
) -> Result<(), Refusal> {
    let mut at = 0u16;
    let mut column = None;
    for c in &plan.columns {
        if c.source == Source::Callers {
            column = Some(at);
        }
        at += c.kind.slots();
    }
    let Some(column) = column else {
        return Ok(());
    };
    let (trace, text, i, end) = (free, free + 1, free + 2, free + 3);
    let throwable = cpe(g.cp.add_class("java/lang/Throwable"))?;
    let t_init = g.mref("java/lang/Throwable", "<init>", "()V")?;
    let get_trace = g.mref(
        "java/lang/Throwable",
        "getStackTrace",
        "()[Ljava/lang/StackTraceElement;",
    )?;
    let sb = cpe(g.cp.add_class("java/lang/StringBuilder"))?;
    let sb_init = g.mref("java/lang/StringBuilder", "<init>", "()V")?;
    let append_s = g.mref(
        "java/lang/StringBuilder",
        "append",
        "(Ljava/lang/String;)Ljava/lang/StringBuilder;",
    )?;
    let append_c = g.mref(
        "java/lang/StringBuilder",
        "append",
        "(C)Ljava/lang/StringBuilder;",
    )?;
    let to_string = g.mref(
        "java/lang/StringBuilder",
        "toString",
        "()Ljava/lang/String;",
    )?;
    let element = g.mref(
        "java/lang/StackTraceElement",
        "toString",
        "()Ljava/lang/String;",
    )?;
    let intern = g.mref("java/lang/String", "intern", "()Ljava/lang/String;")?;
    let min = g.mref("java/lang/Math", "min", "(II)I")?;
    let (top, done, walk, skip) = (a.label(), a.label(), a.label(), a.label());
    walked_lately(g, a, stripe, free, walk, skip)?;
    a.bind(walk);
    a.op(I::New(throwable));
    a.op(I::Dup);
    a.op(I::Invokespecial(t_init));
    a.op(I::Invokevirtual(get_trace));
    a.op(Kind::Ref.store(trace));
    a.op(I::New(sb));
    a.op(I::Dup);
    a.op(I::Invokespecial(sb_init));
    a.op(Kind::Ref.store(text));
    g.int(a, OWN_FRAMES)?;
    a.op(Kind::Int.store(i));
    a.op(Kind::Ref.load(trace));
    a.op(I::Arraylength);
    let last = i32::try_from(frames)
        .unwrap_or(i32::MAX)
        .saturating_add(OWN_FRAMES);
    g.int(a, last)?;
    a.op(I::Invokestatic(min));
    a.op(Kind::Int.store(end));
    a.bind(top);
    a.op(Kind::Int.load(i));
    a.op(Kind::Int.load(end));
    a.jump(I::If_icmpge, done);
    a.op(Kind::Ref.load(text));
    a.op(Kind::Ref.load(trace));
    a.op(Kind::Int.load(i));
    a.op(I::Aaload);
    a.op(I::Invokevirtual(element));
    a.op(I::Invokevirtual(append_s));
    g.int(a, i32::from(b'\n'))?;
    a.op(I::Invokevirtual(append_c));
    a.op(I::Pop);
    a.op(Kind::Int.load(i));
    a.op(I::Iconst_1);
    a.op(I::Iadd);
    a.op(Kind::Int.store(i));
    a.jump(I::Goto, top);
    a.bind(done);
    a.op(Kind::Ref.load(text));
    a.op(I::Invokevirtual(to_string));
    a.op(I::Invokevirtual(intern));
    a.op(Kind::Ref.store(column));
    a.bind(skip);
    Ok(())
}

/// Jumps to `skip` when the thread (its stripe of counts in local
/// `stripe`) walked its stack less than [`CALLERS_GAP_NS`] ago, else
/// notes the time of this walk and goes on to `walk`; a thread with no
/// stripe always walks. Uses the four slots from `free`.
fn walked_lately(
    g: &mut Gen,
    a: &mut Asm,
    stripe: u16,
    free: u16,
    walk: crate::classfile::probe::asm::Label,
    skip: crate::classfile::probe::asm::Label,
) -> Result<(), Refusal> {
    let counts = g.own(field::COUNTS, "[J")?;
    let nano = g.mref("java/lang/System", "nanoTime", "()J")?;
    // `now` and `last`, in the four slots the walk takes after.
    let (now, last) = (free, free + 2);
    a.op(Kind::Int.load(stripe));
    a.jump(I::Iflt, walk);
    a.op(I::Invokestatic(nano));
    a.op(Kind::Long.store(now));
    a.op(I::Getstatic(counts));
    a.op(Kind::Int.load(stripe));
    g.int(a, WALKED_AT)?;
    a.op(I::Iadd);
    a.op(I::Laload);
    a.op(Kind::Long.store(last));
    a.op(Kind::Long.load(last));
    a.op(I::Lconst_0);
    a.op(I::Lcmp);
    let record_walk = a.label();
    a.jump(I::Ifeq, record_walk);
    a.op(Kind::Long.load(now));
    a.op(Kind::Long.load(last));
    a.op(I::Lsub);
    g.long(a, CALLERS_GAP_NS)?;
    a.op(I::Lcmp);
    a.jump(I::Iflt, skip);
    a.bind(record_walk);
    a.op(I::Getstatic(counts));
    a.op(Kind::Int.load(stripe));
    g.int(a, WALKED_AT)?;
    a.op(I::Iadd);
    a.op(Kind::Long.load(now));
    a.op(I::Lastore);
    Ok(())
}
