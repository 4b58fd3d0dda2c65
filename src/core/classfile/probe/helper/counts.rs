//! The helper's counts: calls, passes and throws, each thread in a stripe
//! of its own with plain writes.
//!
//! A thread's id picks a stripe; the first thread to pick it owns it (one
//! compare-and-set, once) and is the only one to write it, so the counts
//! are exact with no locked instruction on a call. A thread whose stripe
//! another thread owns counts in `over` with atomic adds instead: exact
//! too, only slower. The drain sums the stripes and `over`.

use ristretto_classfile::MethodAccessFlags;
use ristretto_classfile::attributes::{ArrayType, Instruction};

use super::builder::{ALA, Gen};
use crate::classfile::probe::asm::Asm;
use crate::classfile::probe::{COUNT_STRIPES, COUNT_WIDTH, Kind, Refusal, field};

type I = Instruction;

const ALA_DESC: &str = "Ljava/util/concurrent/atomic/AtomicLongArray;";

/// The method that gives the calling thread's stripe: `int stripe()`.
pub const STRIPE: &str = "stripe";

/// In `init`: the counts, the owners, the overflow.
pub fn init(g: &mut Gen, a: &mut Asm) -> Result<(), Refusal> {
    let counts = g.own(field::COUNTS, "[J")?;
    let owners = g.own(field::OWNERS, ALA_DESC)?;
    let over = g.own(field::OVER, ALA_DESC)?;
    let ala = super::builder::cpe(g.cp.add_class(ALA))?;
    let ala_init = g.mref(ALA, "<init>", "(I)V")?;
    let stripe_threads = g.own(field::STRIPE_THREADS, "[Ljava/lang/Thread;")?;
    let thread_c = super::builder::cpe(g.cp.add_class("java/lang/Thread"))?;
    g.int(a, COUNT_STRIPES)?;
    a.op(I::Anewarray(thread_c));
    a.op(I::Putstatic(stripe_threads));
    g.int(a, (COUNT_STRIPES + 1) * COUNT_WIDTH)?;
    a.op(I::Newarray(ArrayType::Long));
    a.op(I::Putstatic(counts));
    for (f, n) in [(owners, COUNT_STRIPES), (over, 3)] {
        a.op(I::New(ala));
        a.op(I::Dup);
        g.int(a, n)?;
        a.op(I::Invokespecial(ala_init));
        a.op(I::Putstatic(f));
    }
    Ok(())
}

/// `int stripe()`: the first index of the calling thread's stripe in
/// `counts`, or -1 when another thread owns the stripe its id picks. A
/// thread that claims a stripe puts itself in `stripeThreads`.
pub fn stripe(g: &mut Gen) -> Result<(), Refusal> {
    let owners = g.own(field::OWNERS, ALA_DESC)?;
    let stripe_threads = g.own(field::STRIPE_THREADS, "[Ljava/lang/Thread;")?;
    let current = g.mref("java/lang/Thread", "currentThread", "()Ljava/lang/Thread;")?;
    let id = g.mref("java/lang/Thread", "getId", "()J")?;
    let get = g.mref(ALA, "get", "(I)J")?;
    let cas = g.mref(ALA, "compareAndSet", "(IJJ)Z")?;
    // Locals: the thread id (0-1), its stripe (2), the owner (3-4).
    let mut a = Asm::default();
    let (own, none) = (a.label(), a.label());
    a.op(I::Invokestatic(current));
    a.op(I::Invokevirtual(id));
    a.op(I::Lstore_0);
    a.op(I::Lload_0);
    a.op(I::L2i);
    g.int(&mut a, COUNT_STRIPES - 1)?;
    a.op(I::Iand);
    a.op(I::Istore_2);
    a.op(I::Getstatic(owners));
    a.op(I::Iload_2);
    a.op(I::Invokevirtual(get));
    a.op(Kind::Long.store(3));
    a.op(Kind::Long.load(3));
    a.op(I::Lload_0);
    a.op(I::Lcmp);
    a.jump(I::Ifeq, own);
    a.op(Kind::Long.load(3));
    a.op(I::Lconst_0);
    a.op(I::Lcmp);
    a.jump(I::Ifne, none);
    a.op(I::Getstatic(owners));
    a.op(I::Iload_2);
    a.op(I::Lconst_0);
    a.op(I::Lload_0);
    a.op(I::Invokevirtual(cas));
    let claimed = a.label();
    a.jump(I::Ifne, claimed);
    a.bind(none);
    a.op(I::Iconst_m1);
    a.op(I::Ireturn);
    a.bind(claimed);
    a.op(I::Getstatic(stripe_threads));
    a.op(I::Iload_2);
    a.op(I::Invokestatic(current));
    a.op(I::Aastore);
    a.bind(own);
    a.op(I::Iload_2);
    a.op(I::Iconst_1);
    a.op(I::Iadd);
    g.int(&mut a, COUNT_WIDTH)?;
    a.op(I::Imul);
    a.op(I::Ireturn);
    g.method(
        STRIPE,
        "()I",
        MethodAccessFlags::PRIVATE | MethodAccessFlags::STATIC,
        a,
        6,
        5,
    )
}

/// Stores the calling thread's stripe (see [`stripe`]) in local `at`.
pub fn take(g: &mut Gen, a: &mut Asm, at: u16) -> Result<(), Refusal> {
    let stripe = g.own_method(STRIPE, "()I")?;
    a.op(I::Invokestatic(stripe));
    a.op(Kind::Int.store(at));
    Ok(())
}

/// Adds one to the count at `which` ([`crate::classfile::probe::CALLS_AT`]
/// and the others) of the stripe in local `at`: a plain add to its own
/// stripe, or an atomic one in `over` for a thread with none.
pub fn add(g: &mut Gen, a: &mut Asm, at: u16, which: i32) -> Result<(), Refusal> {
    let counts = g.own(field::COUNTS, "[J")?;
    let over = g.own(field::OVER, ALA_DESC)?;
    let inc = g.mref(ALA, "getAndIncrement", "(I)J")?;
    let (shared, done) = (a.label(), a.label());
    a.op(Kind::Int.load(at));
    a.jump(I::Iflt, shared);
    a.op(I::Getstatic(counts));
    a.op(Kind::Int.load(at));
    if which != 0 {
        g.int(a, which)?;
        a.op(I::Iadd);
    }
    a.op(I::Dup2);
    a.op(I::Laload);
    a.op(I::Lconst_1);
    a.op(I::Ladd);
    a.op(I::Lastore);
    a.jump(I::Goto, done);
    a.bind(shared);
    a.op(I::Getstatic(over));
    g.int(a, which)?;
    a.op(I::Invokevirtual(inc));
    a.op(I::Pop2);
    a.bind(done);
    Ok(())
}
