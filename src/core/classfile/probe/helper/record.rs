//! The helper's record method, `rec(cols, duration, end)`: counts the
//! call in its thread's stripe, times one call in 1024 of each thread
//! (by that count: no random number, no shared write), filters by duration and condition
//! (counting the passes when something filters), reads the field paths
//! of its trace expressions (`paths.rs`), claims a ring slot,
//! writes the record, publishes it, and catches anything thrown, so
//! nothing reaches the application. An exit's `end` is its record's time;
//! a line, an entry or a field write reads the clock for a record only,
//! never for a call that finds the ring full.

use ristretto_classfile::MethodAccessFlags;
use ristretto_classfile::attributes::Instruction;

use super::builder::{ALA, Gen};
use super::counts;
use crate::classfile::probe::asm::{Asm, Label};
use crate::classfile::probe::plan::Plan;
use crate::classfile::probe::{
    CALLS_AT, Kind, PASSED_AT, ProbeSpec, Refusal, Site, Source, cond, field,
};

type I = Instruction;

pub fn rec_descriptor(plan: &Plan) -> String {
    let cols: String = plan
        .columns
        .iter()
        .map(|c| c.kind.param(&c.descriptor))
        .collect();
    format!("({cols}JJ)V")
}

/// The constants `rec` uses, added to the pool in one fixed order.
struct RecRefs {
    counts: u16,
    nano: u16,
    claim: u16,
    prims: u16,
    refs: u16,
    times: u16,
    durs: u16,
    threads: u16,
    who: u16,
    seq: u16,
    lazy: u16,
    current: u16,
    suspend: u16,
    trap: u16,
    cost_ns: u16,
    cost_samples: u16,
    cost_clock: u16,
    errors: u16,
    last_error: u16,
    f2i: u16,
    d2l: u16,
    min: u16,
    cap: u16,
}

/// The most one cost sample may add (20 µs). A sample that a thread spent
/// preempted (eight threads on two cores: milliseconds) is not the probe's
/// cost, and one in a few thousand made a never-true condition read as
/// 781 ns a call. Capped rather than left out, so a probe whose every call
/// costs more (a condition calling a slow method) is still charged at
/// least this much and paused by the guard.
pub const SAMPLE_CAP_NS: i64 = 20_000;

impl RecRefs {
    fn add(g: &mut Gen) -> Result<RecRefs, Refusal> {
        Ok(RecRefs {
            counts: g.own(field::COUNTS, "[J")?,
            nano: g.mref("java/lang/System", "nanoTime", "()J")?,
            claim: g.own_method("claim", "()J")?,
            prims: g.own(field::PRIMS, "[J")?,
            refs: g.own(field::REFS, "[Ljava/lang/Object;")?,
            times: g.own(field::TIMES, "[J")?,
            durs: g.own(field::DURS, "[J")?,
            threads: g.own(field::THREADS, "[Ljava/lang/Thread;")?,
            who: g.own(field::WHO, "[J")?,
            seq: g.own(field::SEQ, "Ljava/util/concurrent/atomic/AtomicLongArray;")?,
            lazy: g.mref(ALA, "lazySet", "(IJ)V")?,
            current: g.mref("java/lang/Thread", "currentThread", "()Ljava/lang/Thread;")?,
            suspend: g.own(field::SUSPEND, "Z")?,
            trap: g.own_method(crate::classfile::probe::TRAP, "()V")?,
            cost_ns: g.own(field::COST_NS, "J")?,
            cost_samples: g.own(field::COST_SAMPLES, "J")?,
            cost_clock: g.own(field::COST_CLOCK, "J")?,
            errors: g.own(field::ERRORS, "J")?,
            last_error: g.own(field::LAST_ERROR, "Ljava/lang/Throwable;")?,
            f2i: g.mref("java/lang/Float", "floatToRawIntBits", "(F)I")?,
            d2l: g.mref("java/lang/Double", "doubleToRawLongBits", "(D)J")?,
            min: g.mref("java/lang/Math", "min", "(JJ)J")?,
            cap: g.long_const(SAMPLE_CAP_NS)?,
        })
    }
}

/// `rec`'s locals after its parameters: the duration and end time
/// parameters, the sampled start time, the record number, its ring slot,
/// a caught exception, the thread's stripe of counts.
#[derive(Clone, Copy)]
struct RecLocals {
    dur: u16,
    end: u16,
    t: u16,
    n: u16,
    slot: u16,
    e: u16,
    stripe: u16,
}

/// The ring's shape: capacity, primitive and reference widths.
#[derive(Clone, Copy)]
struct Ring {
    cap: i32,
    pw: i32,
    rw: i32,
}

pub fn rec(
    g: &mut Gen,
    spec: &ProbeSpec,
    plan: &Plan,
    cap: i32,
    pw: i32,
    rw: i32,
) -> Result<(), Refusal> {
    let mut a = Asm::default();
    let p: u16 = plan.columns.iter().map(|c| c.kind.slots()).sum();
    let l = RecLocals {
        dur: p,
        end: p + 2,
        t: p + 4,
        n: p + 6,
        slot: p + 8,
        e: p + 9,
        stripe: p + 10,
    };
    let ring = Ring { cap, pw, rw };
    let r = RecRefs::add(g)?;
    let (no_sample, try_from, done, ret, handler) =
        (a.label(), a.label(), a.label(), a.label(), a.label());
    // Count the call; time one in 1024 of each thread that owns a stripe.
    counts::take(g, &mut a, l.stripe)?;
    counts::add(g, &mut a, l.stripe, CALLS_AT)?;
    a.op(I::Lconst_0);
    a.op(Kind::Long.store(l.t));
    a.op(Kind::Int.load(l.stripe));
    a.jump(I::Iflt, no_sample);
    a.op(I::Getstatic(r.counts));
    a.op(Kind::Int.load(l.stripe));
    a.op(I::Laload);
    g.long(&mut a, 1023)?;
    a.op(I::Land);
    a.op(I::Lconst_0);
    a.op(I::Lcmp);
    a.jump(I::Ifne, no_sample);
    a.op(I::Invokestatic(r.nano));
    a.op(Kind::Long.store(l.t));
    a.bind(no_sample);
    a.bind(try_from);
    if spec.site == Site::Exit && spec.min_duration_ns > 0 {
        a.op(Kind::Long.load(l.dur));
        g.long(
            &mut a,
            i64::try_from(spec.min_duration_ns).unwrap_or(i64::MAX),
        )?;
        a.op(I::Lcmp);
        a.jump(I::Iflt, done);
    }
    if let Some(c) = &spec.condition {
        let env = cond::Env::of(plan, 0);
        cond::compile(&mut a, &mut g.cp, c, &env, done)?;
    }
    if spec.filters() {
        counts::add(g, &mut a, l.stripe, PASSED_AT)?;
    }
    if spec.site == Site::Exit {
        // A call that began at a full ring was not timed: a drop.
        a.op(Kind::Long.load(l.dur));
        a.op(I::Lconst_0);
        a.op(I::Lcmp);
        a.jump(I::Iflt, done);
    }
    // Before the claim: a path that throws (a class redefined under it)
    // then costs a drop, never a slot claimed and not published.
    super::paths::compute(g, &mut a, spec, plan)?;
    a.op(I::Invokestatic(r.claim));
    a.op(Kind::Long.store(l.n));
    a.op(Kind::Long.load(l.n));
    a.op(I::Lconst_0);
    a.op(I::Lcmp);
    a.jump(I::Iflt, done);
    a.op(Kind::Long.load(l.n));
    g.long(&mut a, i64::from(ring.cap) - 1)?;
    a.op(I::Land);
    a.op(I::L2i);
    a.op(Kind::Int.store(l.slot));
    super::callers::take(g, &mut a, plan, spec.callers, l.stripe, l.stripe + 1)?;
    store_columns(g, &mut a, plan, &r, l, ring)?;
    publish(&mut a, &r, l, spec.site == Site::Exit, done);
    a.bind(done);
    cost_and_errors(&mut a, &r, l, [done, ret, handler]);
    a.handler(try_from, done, handler, 0);
    let desc = rec_descriptor(plan);
    g.method(
        "rec",
        &desc,
        MethodAccessFlags::PRIVATE | MethodAccessFlags::STATIC,
        a,
        16,
        l.stripe + 1 + super::callers::LOCALS,
    )
}

/// Each recorded column into its array at the claimed slot: references
/// as they are, primitives widened to a long (floats and doubles by
/// their bits). The record's thread is its stripe of counts, whose owner
/// the drain knows, so it takes no reference store; only a thread with
/// no stripe stores itself. References go first, right after the
/// claim's compare-and-set emptied the store buffer: G1's barrier on a
/// reference store fences, and a fence behind the stores to ring lines
/// other threads just wrote waits for every one of them.
fn store_columns(
    g: &mut Gen,
    a: &mut Asm,
    plan: &Plan,
    r: &RecRefs,
    l: RecLocals,
    ring: Ring,
) -> Result<(), Refusal> {
    let owned = a.label();
    a.op(Kind::Int.load(l.stripe));
    a.jump(I::Ifge, owned);
    a.op(I::Getstatic(r.threads));
    a.op(Kind::Int.load(l.slot));
    a.op(I::Invokestatic(r.current));
    a.op(I::Aastore);
    a.bind(owned);
    for refs in [true, false] {
        let (mut k, mut at) = (0i32, 0u16);
        for c in &plan.columns {
            let here = at;
            at += c.kind.slots();
            if !c.record || (c.kind == Kind::Ref) != refs {
                continue;
            }
            k += 1;
            let (array, width) = if refs {
                (r.refs, ring.rw)
            } else {
                (r.prims, ring.pw)
            };
            a.op(I::Getstatic(array));
            a.op(Kind::Int.load(l.slot));
            g.int(a, width)?;
            a.op(I::Imul);
            g.int(a, k - 1)?;
            a.op(I::Iadd);
            match &plan.old_static {
                Some((owner, name, descriptor)) if c.source == Source::Old => {
                    let class = super::builder::cpe(g.cp.add_class(owner.as_str()))?;
                    let field = super::builder::cpe(g.cp.add_field_ref(
                        class,
                        name.as_str(),
                        descriptor.as_str(),
                    ))?;
                    a.op(I::Getstatic(field));
                }
                _ => a.op(c.kind.load(here)),
            }
            match c.kind {
                Kind::Ref => {
                    a.op(I::Aastore);
                    continue;
                }
                Kind::Long => {}
                Kind::Float => {
                    a.op(I::Invokestatic(r.f2i));
                    a.op(I::I2l);
                }
                Kind::Double => a.op(I::Invokestatic(r.d2l)),
                _ => a.op(I::I2l),
            }
            a.op(I::Lastore);
        }
    }
    Ok(())
}

/// The record's time (an exit's end time, else the clock read now) and
/// duration, then its sequence number (which makes it visible to the
/// drain), then the trap when suspending.
fn publish(a: &mut Asm, r: &RecRefs, l: RecLocals, timed: bool, done: Label) {
    a.op(I::Getstatic(r.times));
    a.op(Kind::Int.load(l.slot));
    if timed {
        a.op(Kind::Long.load(l.end));
    } else {
        a.op(I::Invokestatic(r.nano));
    }
    a.op(I::Lastore);
    a.op(I::Getstatic(r.durs));
    a.op(Kind::Int.load(l.slot));
    a.op(Kind::Long.load(l.dur));
    a.op(I::Lastore);
    a.op(I::Getstatic(r.who));
    a.op(Kind::Int.load(l.slot));
    a.op(Kind::Int.load(l.stripe));
    a.op(I::I2l);
    a.op(I::Lastore);
    a.op(I::Getstatic(r.seq));
    a.op(Kind::Int.load(l.slot));
    a.op(Kind::Long.load(l.n));
    a.op(I::Lconst_1);
    a.op(I::Ladd);
    a.op(I::Invokevirtual(r.lazy));
    a.op(I::Getstatic(r.suspend));
    a.jump(I::Ifeq, done);
    a.op(I::Invokestatic(r.trap));
}

/// Outside the try: the sampled cost, the return, and the handler that
/// counts an error, keeps it and samples the call like any other (a
/// condition that throws costs what it ran before throwing). A sample is the time between two clock
/// reads, which holds one read; a third read right after the second
/// times that read, summed apart (`costClock`): the listing shows the
/// probe's own time, the overhead guard charges the whole sample. Each is
/// capped at [`SAMPLE_CAP_NS`].
fn cost_and_errors(a: &mut Asm, r: &RecRefs, l: RecLocals, [sample, ret, handler]: [Label; 3]) {
    a.op(Kind::Long.load(l.t));
    a.op(I::Lconst_0);
    a.op(I::Lcmp);
    a.jump(I::Ifeq, ret);
    // The record number's slot is free by now: the second read.
    a.op(I::Invokestatic(r.nano));
    a.op(Kind::Long.store(l.n));
    a.op(I::Getstatic(r.cost_ns));
    a.op(Kind::Long.load(l.n));
    a.op(Kind::Long.load(l.t));
    a.op(I::Lsub);
    a.op(I::Ldc2_w(r.cap));
    a.op(I::Invokestatic(r.min));
    a.op(I::Ladd);
    a.op(I::Putstatic(r.cost_ns));
    a.op(I::Getstatic(r.cost_clock));
    a.op(I::Invokestatic(r.nano));
    a.op(Kind::Long.load(l.n));
    a.op(I::Lsub);
    a.op(I::Ldc2_w(r.cap));
    a.op(I::Invokestatic(r.min));
    a.op(I::Ladd);
    a.op(I::Putstatic(r.cost_clock));
    a.op(I::Getstatic(r.cost_samples));
    a.op(I::Lconst_1);
    a.op(I::Ladd);
    a.op(I::Putstatic(r.cost_samples));
    a.bind(ret);
    a.op(I::Return);
    a.bind(handler);
    a.op(Kind::Ref.store(l.e));
    a.op(I::Getstatic(r.errors));
    a.op(I::Lconst_1);
    a.op(I::Ladd);
    a.op(I::Putstatic(r.errors));
    a.op(Kind::Ref.load(l.e));
    a.op(I::Putstatic(r.last_error));
    // A call whose condition threw cost what it ran: it is sampled too.
    a.jump(I::Goto, sample);
}
