//! A statistics probe's `exit` and `threw`: no record, no ring, no
//! condition. Each call that began while the probe was live is counted
//! (calls, and throws for a throw, in its thread's stripe of counts:
//! exact). The duration of a timed one (see
//! [`crate::classfile::probe::STATS_SAMPLE`]) is added to the histogram
//! stripe its thread's id picks, with plain writes (see
//! [`crate::classfile::probe::HIST_STRIPES`]). Nothing
//! here allocates or can throw: the bucket index is `63 - nlz(d | 1)`,
//! always in 0..64.

use ristretto_classfile::MethodAccessFlags;
use ristretto_classfile::attributes::Instruction;

use super::builder::Gen;
use super::counts;
use crate::classfile::probe::asm::Asm;
use crate::classfile::probe::plan::{Plan, exit_descriptor, threw_descriptor};
use crate::classfile::probe::{
    CALLS_AT, HIST_BUCKETS, HIST_STRIPES, HIST_WIDTH, Kind, Refusal, THROWS_AT, UNSAMPLED, UNTIMED,
    field,
};

type I = Instruction;

/// The `exit` and `threw` the sites call, and the `stat` they share.
pub fn entries(g: &mut Gen, plan: &Plan) -> Result<(), Refusal> {
    stat(g)?;
    let live = g.own(field::LIVE, "Z")?;
    let nano = g.mref("java/lang/System", "nanoTime", "()J")?;
    let stat = g.own_method("stat", "(JZ)V")?;
    let flags = MethodAccessFlags::PUBLIC | MethodAccessFlags::STATIC;
    let ret_slots = (plan.returns != "V").then(|| Kind::of(&plan.returns).slots());
    let others: u16 = plan.pushed().iter().map(|c| c.kind.slots()).sum();
    for threw in [false, true] {
        let mut a = Asm::default();
        let (go, began, timed, call) = (a.label(), a.label(), a.label(), a.label());
        a.op(I::Getstatic(live));
        a.jump(I::Ifne, go);
        a.op(I::Return);
        a.bind(go);
        let t0 = if threw { 1 } else { ret_slots.unwrap_or(0) };
        // A call that began before the probe was live has no start time.
        a.op(Kind::Long.load(t0));
        g.long(&mut a, UNTIMED)?;
        a.op(I::Lcmp);
        a.jump(I::Ifne, began);
        a.op(I::Return);
        a.bind(began);
        // One counted but not timed passes duration -1.
        a.op(Kind::Long.load(t0));
        g.long(&mut a, UNSAMPLED)?;
        a.op(I::Lcmp);
        a.jump(I::Ifne, timed);
        g.long(&mut a, -1)?;
        a.jump(I::Goto, call);
        a.bind(timed);
        a.op(I::Invokestatic(nano));
        a.op(Kind::Long.load(t0));
        a.op(I::Lsub);
        a.bind(call);
        a.op(if threw { I::Iconst_1 } else { I::Iconst_0 });
        a.op(I::Invokestatic(stat));
        a.op(I::Return);
        let (name, desc) = if threw {
            ("threw", threw_descriptor(plan))
        } else {
            ("exit", exit_descriptor(plan))
        };
        g.method(name, &desc, flags, a, 6, t0 + 2 + others)?;
    }
    Ok(())
}

/// `stat(duration, threw)`: counts the call (and the throw), then adds
/// a duration that is not -1 (untimed) to its thread's stripe: its
/// bucket, the sum, the longest.
fn stat(g: &mut Gen) -> Result<(), Refusal> {
    let hist = g.own(field::HIST, "[J")?;
    let current = g.mref("java/lang/Thread", "currentThread", "()Ljava/lang/Thread;")?;
    let id = g.mref("java/lang/Thread", "getId", "()J")?;
    let nlz = g.mref("java/lang/Long", "numberOfLeadingZeros", "(J)I")?;
    // Locals: the duration (0-1), threw (2), the histogram (3), the
    // stripe's first index (4), the stripe of counts (5).
    let mut a = Asm::default();
    let (counted, ready, done) = (a.label(), a.label(), a.label());
    counts::take(g, &mut a, 5)?;
    counts::add(g, &mut a, 5, CALLS_AT)?;
    a.op(I::Iload_2);
    a.jump(I::Ifeq, counted);
    counts::add(g, &mut a, 5, THROWS_AT)?;
    a.bind(counted);
    a.op(I::Lload_0);
    a.op(I::Lconst_0);
    a.op(I::Lcmp);
    a.jump(I::Iflt, done);
    a.op(I::Getstatic(hist));
    a.op(I::Astore_3);
    a.op(I::Aload_3);
    a.jump(I::Ifnonnull, ready);
    a.op(I::Return);
    a.bind(ready);
    a.op(I::Invokestatic(current));
    a.op(I::Invokevirtual(id));
    a.op(I::L2i);
    g.int(&mut a, HIST_STRIPES - 1)?;
    a.op(I::Iand);
    g.int(&mut a, HIST_WIDTH)?;
    a.op(I::Imul);
    a.op(I::Istore(4));
    // hist[stripe + 63 - nlz(d | 1)] += 1
    a.op(I::Aload_3);
    a.op(I::Iload(4));
    g.int(&mut a, HIST_BUCKETS - 1)?;
    a.op(I::Lload_0);
    a.op(I::Lconst_1);
    a.op(I::Lor);
    a.op(I::Invokestatic(nlz));
    a.op(I::Isub);
    a.op(I::Iadd);
    a.op(I::Dup2);
    a.op(I::Laload);
    a.op(I::Lconst_1);
    a.op(I::Ladd);
    a.op(I::Lastore);
    // hist[stripe + 64] += d
    a.op(I::Aload_3);
    a.op(I::Iload(4));
    g.int(&mut a, HIST_BUCKETS)?;
    a.op(I::Iadd);
    a.op(I::Dup2);
    a.op(I::Laload);
    a.op(I::Lload_0);
    a.op(I::Ladd);
    a.op(I::Lastore);
    // hist[stripe + 65] = max(hist[stripe + 65], d)
    a.op(I::Aload_3);
    a.op(I::Iload(4));
    g.int(&mut a, HIST_BUCKETS + 1)?;
    a.op(I::Iadd);
    a.op(I::Laload);
    a.op(I::Lload_0);
    a.op(I::Lcmp);
    a.jump(I::Ifge, done);
    a.op(I::Aload_3);
    a.op(I::Iload(4));
    g.int(&mut a, HIST_BUCKETS + 1)?;
    a.op(I::Iadd);
    a.op(I::Lload_0);
    a.op(I::Lastore);
    a.bind(done);
    a.op(I::Return);
    g.method(
        "stat",
        "(JZ)V",
        MethodAccessFlags::PRIVATE | MethodAccessFlags::STATIC,
        a,
        8,
        6,
    )
}
