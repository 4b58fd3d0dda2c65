//! An exit's callees, as a record holds them: for a call that lasted at
//! least the probe's `min_duration`, the sums and counts its site passed
//! become one string, `cut;sum,count;…` (read by
//! [`crate::model::callees::parse`]); a faster call builds nothing.

use ristretto_classfile::attributes::Instruction;

use super::builder::{Gen, cpe};
use crate::classfile::probe::asm::Asm;
use crate::classfile::probe::{Kind, ProbeSpec, Refusal};

type I = Instruction;

const SB: &str = "java/lang/StringBuilder";

/// Stores the text into local `text`, or null for a call shorter than
/// the minimum; `t0` is the start time, `sums` the first sum parameter
/// (each site a long and an int, then the site that threw), `end` the
/// end time.
pub fn text(
    g: &mut Gen,
    a: &mut Asm,
    spec: &ProbeSpec,
    sites: usize,
    [t0, sums, end, text]: [u16; 4],
) -> Result<(), Refusal> {
    let sb = cpe(g.cp.add_class(SB))?;
    let init = g.mref(SB, "<init>", "()V")?;
    let append = |g: &mut Gen, d: &str| g.mref(SB, "append", &format!("({d})L{SB};"));
    let (append_i, append_j, append_c) = (append(g, "I")?, append(g, "J")?, append(g, "C")?);
    let to_string = g.mref(SB, "toString", "()Ljava/lang/String;")?;
    let (short, done) = (a.label(), a.label());
    let (from, to, caught) = (a.label(), a.label(), a.label());
    a.op(Kind::Long.load(end));
    a.op(Kind::Long.load(t0));
    a.op(I::Lsub);
    g.long(a, i64::try_from(spec.min_duration_ns).unwrap_or(i64::MAX))?;
    a.op(I::Lcmp);
    a.jump(I::Iflt, short);
    a.bind(from);
    a.op(I::New(sb));
    a.op(I::Dup);
    a.op(I::Invokespecial(init));
    let cut = sums + 3 * sites as u16;
    a.op(Kind::Int.load(cut));
    a.op(I::Invokevirtual(append_i));
    for k in 0..sites {
        let sum = sums + 3 * k as u16;
        g.int(a, i32::from(b';'))?;
        a.op(I::Invokevirtual(append_c));
        a.op(Kind::Long.load(sum));
        a.op(I::Invokevirtual(append_j));
        g.int(a, i32::from(b','))?;
        a.op(I::Invokevirtual(append_c));
        a.op(Kind::Int.load(sum + 2));
        a.op(I::Invokevirtual(append_i));
    }
    a.op(I::Invokevirtual(to_string));
    a.op(Kind::Ref.store(text));
    a.bind(to);
    a.jump(I::Goto, done);
    // Nothing thrown here reaches the application: the record goes
    // without its callees.
    a.bind(caught);
    a.handler(from, to, caught, 0);
    a.op(I::Pop);
    a.bind(short);
    a.op(I::Aconst_null);
    a.op(Kind::Ref.store(text));
    a.bind(done);
    Ok(())
}
