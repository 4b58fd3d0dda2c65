//! The helper class a probe calls: class-file version 49 (verified by
//! type inference, so it needs no stack map), public, final, a `Runnable`
//! for its lease thread, and only java.base types besides itself.
//!
//! Entry points the sites call: `hit(cols)` (a line, an entry, a field
//! write), `start()` at an exit site's entry, `exit(ret, t0, cols)` and
//! `threw(exception, t0, cols)`. Each returns at once unless `live`;
//! otherwise `rec(cols, duration, end)` counts the call, times about one
//! call in 1024, evaluates the condition, claims a ring slot (nothing
//! written at a full ring: the drop is counted by what is missing), writes
//! the record, publishes it in `seq`, and catches anything thrown: nothing
//! reaches the application.

mod builder;
mod callees;
mod callers;
mod counts;
mod paths;
mod record;
mod stats;

use ristretto_classfile::attributes::{ArrayType, Attribute, Instruction};
use ristretto_classfile::{
    ClassAccessFlags, ClassFile, ConstantPool, Field, FieldAccessFlags, FieldType,
    MethodAccessFlags, Version,
};

use self::builder::{AL, ALA, Gen, cpe};
use self::record::{rec, rec_descriptor};
use super::asm::{Asm, Label};
use super::plan::{Plan, exit_descriptor, hit_descriptor, threw_descriptor};
use super::{
    Kind, LEASE_TICK_MS, LEASE_TICKS, ProbeSpec, Refusal, SAMPLE_AT, START, STATS_SAMPLE, Site,
    Source, UNSAMPLED, UNTIMED, field,
};

type I = Instruction;

/// The helper's class file.
pub fn generate(target: &ClassFile<'_>, spec: &ProbeSpec, plan: &Plan) -> Result<Vec<u8>, Refusal> {
    let cap = spec.ring_capacity.max(1).next_power_of_two();
    let cap_i = i32::try_from(cap).map_err(|_| Refusal::TooLarge)?;
    let layout = plan.layout();
    let (pw, rw) = (layout.prim_width as i32, layout.ref_width as i32);
    let mut cp = ConstantPool::default();
    let this = cpe(cp.add_class(spec.helper.as_str()))?;
    let object = cpe(cp.add_class("java/lang/Object"))?;
    let runnable = cpe(cp.add_class("java/lang/Runnable"))?;
    let mut g = Gen {
        cp,
        this,
        name: spec.helper.clone(),
        fields: Vec::new(),
        methods: Vec::new(),
    };
    for (n, d, v) in [
        (field::LIVE, "Z", true),
        (field::RENEW, "Z", true),
        (field::MISSES, "I", false),
        (
            field::HEAD,
            "Ljava/util/concurrent/atomic/AtomicLong;",
            false,
        ),
        (field::TAIL, "J", true),
        (field::COUNTS, "[J", false),
        (
            field::OWNERS,
            "Ljava/util/concurrent/atomic/AtomicLongArray;",
            false,
        ),
        (
            field::OVER,
            "Ljava/util/concurrent/atomic/AtomicLongArray;",
            false,
        ),
        (
            field::SEQ,
            "Ljava/util/concurrent/atomic/AtomicLongArray;",
            false,
        ),
        (field::PRIMS, "[J", false),
        (field::REFS, "[Ljava/lang/Object;", false),
        (field::TIMES, "[J", false),
        (field::DURS, "[J", false),
        (field::THREADS, "[Ljava/lang/Thread;", false),
        (field::WHO, "[J", false),
        (field::STRIPE_THREADS, "[Ljava/lang/Thread;", false),
        (field::COST_NS, "J", false),
        (field::COST_SAMPLES, "J", false),
        (field::COST_CLOCK, "J", false),
        (field::ERRORS, "J", false),
        (field::LAST_ERROR, "Ljava/lang/Throwable;", false),
        (field::SUSPEND, "Z", true),
        (field::ORIGINAL, "[B", false),
        (field::OTHERS, "[Ljava/lang/Object;", false),
        (field::RESTORED, "Z", true),
        (field::HIST, "[J", false),
    ] {
        g.field(n, d, v)?;
    }
    // The target's name, as a constant a later jvmscope can read.
    let target_name = match target.constant_pool.get(target.this_class) {
        Some(ristretto_classfile::Constant::Class(n)) => target
            .constant_pool
            .try_get_utf8(*n)
            .map(|s| s.to_string())
            .unwrap_or_default(),
        _ => String::new(),
    };
    let cv = cpe(g.cp.add_string(target_name.as_str()))?;
    let cv_name = cpe(g.cp.add_utf8("ConstantValue"))?;
    g.fields.push(Field {
        access_flags: FieldAccessFlags::PUBLIC | FieldAccessFlags::STATIC | FieldAccessFlags::FINAL,
        name_index: cpe(g.cp.add_utf8(field::TARGET))?,
        descriptor_index: cpe(g.cp.add_utf8("Ljava/lang/String;"))?,
        field_type: cpe(FieldType::parse("Ljava/lang/String;"))?,
        attributes: vec![Attribute::ConstantValue {
            name_index: cv_name,
            constant_value_index: cv,
        }],
    });

    constructor(&mut g)?;
    init(&mut g, cap_i, pw, rw, spec.stats)?;
    class_init(&mut g)?;
    run(&mut g)?;
    trap(&mut g)?;
    counts::stripe(&mut g)?;
    claim(&mut g, cap_i)?;
    rec(&mut g, spec, plan, cap_i, pw, rw)?;
    entries(&mut g, spec, plan, cap_i)?;

    let Gen {
        cp,
        fields,
        methods,
        ..
    } = g;
    let class = ClassFile {
        version: Version::Java5 { minor: 0 },
        constant_pool: cp,
        access_flags: ClassAccessFlags::PUBLIC | ClassAccessFlags::FINAL | ClassAccessFlags::SUPER,
        this_class: this,
        super_class: object,
        interfaces: vec![runnable],
        fields,
        methods,
        attributes: Vec::new(),
        code_source_url: None,
    };
    super::write(&class)
}

fn constructor(g: &mut Gen) -> Result<(), Refusal> {
    let mut a = Asm::default();
    let sup = g.mref("java/lang/Object", "<init>", "()V")?;
    a.op(I::Aload_0);
    a.op(I::Invokespecial(sup));
    a.op(I::Return);
    g.method("<init>", "()V", MethodAccessFlags::PUBLIC, a, 1, 1)
}

/// The class initialiser runs `init()`, so the call that links and
/// initialises the helper once it is defined (`Class.forName(name, true,
/// loader)`) also starts it, with no invocation of its own.
fn class_init(g: &mut Gen) -> Result<(), Refusal> {
    let mut a = Asm::default();
    let init = g.own_method(super::INIT, "()V")?;
    a.op(I::Invokestatic(init));
    a.op(I::Return);
    g.method("<clinit>", "()V", MethodAccessFlags::STATIC, a, 0, 0)
}

fn init(g: &mut Gen, cap: i32, pw: i32, rw: i32, stats: bool) -> Result<(), Refusal> {
    let mut a = Asm::default();
    let head = g.own(field::HEAD, "Ljava/util/concurrent/atomic/AtomicLong;")?;
    let seq = g.own(field::SEQ, "Ljava/util/concurrent/atomic/AtomicLongArray;")?;
    let prims = g.own(field::PRIMS, "[J")?;
    let refs = g.own(field::REFS, "[Ljava/lang/Object;")?;
    let times = g.own(field::TIMES, "[J")?;
    let durs = g.own(field::DURS, "[J")?;
    let who = g.own(field::WHO, "[J")?;
    let threads = g.own(field::THREADS, "[Ljava/lang/Thread;")?;
    let live = g.own(field::LIVE, "Z")?;
    let renew = g.own(field::RENEW, "Z")?;
    let misses = g.own(field::MISSES, "I")?;
    let al = cpe(g.cp.add_class(AL))?;
    let ala = cpe(g.cp.add_class(ALA))?;
    let obj = cpe(g.cp.add_class("java/lang/Object"))?;
    let thread_c = cpe(g.cp.add_class("java/lang/Thread"))?;
    let al_init = g.mref(AL, "<init>", "()V")?;
    let ala_init = g.mref(ALA, "<init>", "(I)V")?;
    let skip = a.label();
    a.op(I::Getstatic(head));
    a.jump(I::Ifnonnull, skip);
    a.op(I::New(al));
    a.op(I::Dup);
    a.op(I::Invokespecial(al_init));
    a.op(I::Putstatic(head));
    a.op(I::New(ala));
    a.op(I::Dup);
    g.int(&mut a, cap)?;
    a.op(I::Invokespecial(ala_init));
    a.op(I::Putstatic(seq));
    g.int(&mut a, cap * pw)?;
    a.op(I::Newarray(ArrayType::Long));
    a.op(I::Putstatic(prims));
    g.int(&mut a, cap * rw)?;
    a.op(I::Anewarray(obj));
    a.op(I::Putstatic(refs));
    for f in [times, durs, who] {
        g.int(&mut a, cap)?;
        a.op(I::Newarray(ArrayType::Long));
        a.op(I::Putstatic(f));
    }
    g.int(&mut a, cap)?;
    a.op(I::Anewarray(thread_c));
    a.op(I::Putstatic(threads));
    counts::init(g, &mut a)?;
    if stats {
        let hist = g.own(field::HIST, "[J")?;
        g.int(&mut a, super::HIST_STRIPES * super::HIST_WIDTH)?;
        a.op(I::Newarray(ArrayType::Long));
        a.op(I::Putstatic(hist));
    }
    a.bind(skip);
    a.op(I::Iconst_1);
    a.op(I::Putstatic(renew));
    a.op(I::Iconst_0);
    a.op(I::Putstatic(misses));
    a.op(I::Iconst_1);
    a.op(I::Putstatic(live));
    // new Thread(new Helper(), "jvmscope-lease <name>"), daemon, started.
    let this = g.this;
    let ctor = g.own_method("<init>", "()V")?;
    let thread_init = g.mref(
        "java/lang/Thread",
        "<init>",
        "(Ljava/lang/Runnable;Ljava/lang/String;)V",
    )?;
    let set_daemon = g.mref("java/lang/Thread", "setDaemon", "(Z)V")?;
    let start = g.mref("java/lang/Thread", "start", "()V")?;
    let simple = g.name.rsplit('/').next().unwrap_or("probe").to_string();
    let tname = cpe(g.cp.add_string(format!("jvmscope-lease {simple}")))?;
    a.op(I::New(thread_c));
    a.op(I::Dup);
    a.op(I::New(this));
    a.op(I::Dup);
    a.op(I::Invokespecial(ctor));
    a.op(I::Ldc_w(tname));
    a.op(I::Invokespecial(thread_init));
    a.op(I::Astore_0);
    a.op(I::Aload_0);
    a.op(I::Iconst_1);
    a.op(I::Invokevirtual(set_daemon));
    a.op(I::Aload_0);
    a.op(I::Invokevirtual(start));
    a.op(I::Return);
    g.method(
        super::INIT,
        "()V",
        MethodAccessFlags::PUBLIC | MethodAccessFlags::STATIC,
        a,
        6,
        1,
    )
}

/// The lease: every tick, a renewal clears the miss count; after
/// `LEASE_TICKS` misses in a row the probe switches itself off.
fn run(g: &mut Gen) -> Result<(), Refusal> {
    let mut a = Asm::default();
    let live = g.own(field::LIVE, "Z")?;
    let renew = g.own(field::RENEW, "Z")?;
    let misses = g.own(field::MISSES, "I")?;
    let sleep = g.mref("java/lang/Thread", "sleep", "(J)V")?;
    let (top, end, miss, from, to, caught) = (
        a.label(),
        a.label(),
        a.label(),
        a.label(),
        a.label(),
        a.label(),
    );
    a.bind(top);
    a.op(I::Getstatic(live));
    a.jump(I::Ifeq, end);
    a.bind(from);
    g.long(&mut a, LEASE_TICK_MS)?;
    a.op(I::Invokestatic(sleep));
    a.bind(to);
    a.op(I::Getstatic(renew));
    a.jump(I::Ifeq, miss);
    a.op(I::Iconst_0);
    a.op(I::Putstatic(renew));
    a.op(I::Iconst_0);
    a.op(I::Putstatic(misses));
    a.jump(I::Goto, top);
    a.bind(miss);
    a.op(I::Getstatic(misses));
    a.op(I::Iconst_1);
    a.op(I::Iadd);
    a.op(I::Dup);
    a.op(I::Putstatic(misses));
    g.int(&mut a, LEASE_TICKS)?;
    a.jump(I::If_icmplt, top);
    a.op(I::Iconst_0);
    a.op(I::Putstatic(live));
    a.bind(end);
    a.op(I::Return);
    a.bind(caught);
    a.op(I::Pop);
    a.op(I::Return);
    a.handler(from, to, caught, 0);
    g.method("run", "()V", MethodAccessFlags::PUBLIC, a, 4, 1)
}

fn trap(g: &mut Gen) -> Result<(), Refusal> {
    let mut a = Asm::default();
    a.op(I::Return);
    g.method(
        super::TRAP,
        "()V",
        MethodAccessFlags::PUBLIC | MethodAccessFlags::STATIC,
        a,
        0,
        0,
    )
}

/// `long claim()`: the next record number, or -1 when the ring is full
/// (nothing written: a drop is a pass that claimed nothing).
fn claim(g: &mut Gen, cap: i32) -> Result<(), Refusal> {
    let mut a = Asm::default();
    let head = g.own(field::HEAD, "Ljava/util/concurrent/atomic/AtomicLong;")?;
    let tail = g.own(field::TAIL, "J")?;
    let get = g.mref(AL, "get", "()J")?;
    let cas = g.mref(AL, "compareAndSet", "(JJ)Z")?;
    let (top, room) = (a.label(), a.label());
    a.bind(top);
    a.op(I::Getstatic(head));
    a.op(I::Invokevirtual(get));
    a.op(I::Lstore_0);
    a.op(I::Lload_0);
    a.op(I::Getstatic(tail));
    a.op(I::Lsub);
    g.long(&mut a, i64::from(cap))?;
    a.op(I::Lcmp);
    a.jump(I::Iflt, room);
    g.long(&mut a, -1)?;
    a.op(I::Lreturn);
    a.bind(room);
    a.op(I::Getstatic(head));
    a.op(I::Lload_0);
    a.op(I::Lload_0);
    a.op(I::Lconst_1);
    a.op(I::Ladd);
    a.op(I::Invokevirtual(cas));
    a.jump(I::Ifeq, top);
    a.op(I::Lload_0);
    a.op(I::Lreturn);
    g.method(
        "claim",
        "()J",
        MethodAccessFlags::PRIVATE | MethodAccessFlags::STATIC,
        a,
        8,
        2,
    )
}

/// `long start()`, an exit site's entry: the time, or [`UNTIMED`] when
/// the probe is off or (with no `min_duration`, which needs every call
/// timed) the ring is full, as no record can follow. A statistics probe
/// answers [`UNSAMPLED`] for the calls it counts without timing.
fn start(g: &mut Gen, spec: &ProbeSpec, cap: i32) -> Result<(), Refusal> {
    let mut a = Asm::default();
    let live = g.own(field::LIVE, "Z")?;
    let head = g.own(field::HEAD, "Ljava/util/concurrent/atomic/AtomicLong;")?;
    let tail = g.own(field::TAIL, "J")?;
    let get = g.mref(AL, "get", "()J")?;
    let nano = g.mref("java/lang/System", "nanoTime", "()J")?;
    let (untimed, timed) = (a.label(), a.label());
    a.op(I::Getstatic(live));
    a.jump(I::Ifeq, untimed);
    if spec.stats {
        sampled(g, &mut a, timed)?;
        g.long(&mut a, UNSAMPLED)?;
        a.op(I::Lreturn);
    }
    if spec.min_duration_ns == 0 && !spec.stats {
        a.op(I::Getstatic(head));
        a.op(I::Invokevirtual(get));
        a.op(I::Getstatic(tail));
        a.op(I::Lsub);
        g.long(&mut a, i64::from(cap))?;
        a.op(I::Lcmp);
        a.jump(I::Iflt, timed);
        a.jump(I::Goto, untimed);
    }
    a.bind(timed);
    a.op(I::Invokestatic(nano));
    a.op(I::Lreturn);
    a.bind(untimed);
    g.long(&mut a, UNTIMED)?;
    a.op(I::Lreturn);
    g.method(
        START,
        "()J",
        MethodAccessFlags::PUBLIC | MethodAccessFlags::STATIC,
        a,
        6,
        1,
    )
}

/// Jumps to `timed` when the calling thread's call is one a statistics
/// probe times: it owns no stripe (rare, and counted in `over`), or the
/// next draw of its stripe's generator ([`SAMPLE_AT`]) has its top bits
/// clear, one time in [`STATS_SAMPLE`]. Uses local 0.
fn sampled(g: &mut Gen, a: &mut Asm, timed: Label) -> Result<(), Refusal> {
    // Knuth's MMIX constants: the top bits of an LCG are its best.
    const MUL: i64 = 6_364_136_223_846_793_005;
    const ADD: i64 = 1_442_695_040_888_963_407;
    let counts = g.own(field::COUNTS, "[J")?;
    counts::take(g, a, 0)?;
    a.op(I::Iload_0);
    a.jump(I::Iflt, timed);
    // x = counts[stripe + SAMPLE_AT] = x * MUL + ADD
    a.op(I::Getstatic(counts));
    a.op(I::Iload_0);
    g.int(a, SAMPLE_AT)?;
    a.op(I::Iadd);
    a.op(I::Dup2);
    a.op(I::Laload);
    g.long(a, MUL)?;
    a.op(I::Lmul);
    g.long(a, ADD)?;
    a.op(I::Ladd);
    a.op(I::Dup2_x2);
    a.op(I::Lastore);
    // timed when x >>> (64 - log2 STATS_SAMPLE) == 0
    g.int(a, 64 - STATS_SAMPLE.trailing_zeros() as i32)?;
    a.op(I::Lushr);
    a.op(I::L2i);
    a.jump(I::Ifeq, timed);
    Ok(())
}

/// The methods the sites call.
fn entries(g: &mut Gen, spec: &ProbeSpec, plan: &Plan, cap: i32) -> Result<(), Refusal> {
    let live = g.own(field::LIVE, "Z")?;
    let rec = g.own_method("rec", &rec_descriptor(plan))?;
    let flags = MethodAccessFlags::PUBLIC | MethodAccessFlags::STATIC;
    let p: u16 = plan.columns.iter().map(|c| c.kind.slots()).sum();
    if plan.site != Site::Exit {
        let mut a = Asm::default();
        let go = a.label();
        a.op(I::Getstatic(live));
        a.jump(I::Ifne, go);
        a.op(I::Return);
        a.bind(go);
        let mut at = 0;
        for c in &plan.columns {
            if c.source == Source::Callers {
                // `rec` takes the callers itself, for a record only.
                a.op(I::Aconst_null);
                continue;
            }
            if (c.source == Source::Old && plan.old_static.is_some())
                || matches!(c.source, Source::Path { .. } | Source::PathNull(_))
            {
                // So does it the old value of a static it may read, and
                // the paths' values.
                a.op(c.kind.zero());
                continue;
            }
            a.op(c.kind.load(at));
            at += c.kind.slots();
        }
        a.op(I::Lconst_0);
        a.op(I::Lconst_0);
        a.op(I::Invokestatic(rec));
        a.op(I::Return);
        return g.method("hit", &hit_descriptor(plan), flags, a, p + 4, p);
    }
    start(g, spec, cap)?;
    if spec.stats {
        return stats::entries(g, plan);
    }
    let nano = g.mref("java/lang/System", "nanoTime", "()J")?;
    let ret_kind = (plan.returns != "V").then(|| Kind::of(&plan.returns));
    let others: Vec<_> = plan.pushed().into_iter().cloned().collect();
    let tail = Tail {
        callees: !plan.callees.is_empty(),
        callers: plan.columns.iter().any(|c| c.source == Source::Callers),
        paths: plan
            .columns
            .iter()
            .filter(|c| matches!(c.source, Source::Path { .. } | Source::PathNull(_)))
            .map(|c| c.kind)
            .collect(),
    };
    // The callees' sums and counts, then the site that threw.
    let callee_slots = if tail.callees {
        3 * plan.callees.len() as u16 + 1
    } else {
        0
    };
    for threw in [false, true] {
        let mut a = Asm::default();
        let (go, timed) = (a.label(), a.label());
        a.op(I::Getstatic(live));
        a.jump(I::Ifne, go);
        a.op(I::Return);
        a.bind(go);
        // Parameters: the value (or exception), t0, the others, the
        // callees' sums.
        let first_slots = if threw {
            1
        } else {
            ret_kind.map_or(0, Kind::slots)
        };
        let t0 = first_slots;
        let others_slots: u16 = others.iter().map(|c| c.kind.slots()).sum();
        let sums = t0 + 2 + others_slots;
        let end = sums + callee_slots;
        let text = end + 2;
        // A call that began untimed passes duration -1 (no record).
        a.op(Kind::Long.load(t0));
        g.long(&mut a, UNTIMED)?;
        a.op(I::Lcmp);
        a.jump(I::Ifne, timed);
        exit_columns(&mut a, &others, t0, ret_kind, threw, &tail, None);
        g.long(&mut a, -1)?;
        a.op(I::Lconst_0);
        a.op(I::Invokestatic(rec));
        a.op(I::Return);
        // Timed: one clock read, the end time, which is also the record's.
        a.bind(timed);
        a.op(I::Invokestatic(nano));
        a.op(Kind::Long.store(end));
        if tail.callees {
            callees::text(g, &mut a, spec, plan.callees.len(), [t0, sums, end, text])?;
        }
        exit_columns(&mut a, &others, t0, ret_kind, threw, &tail, Some(text));
        a.op(Kind::Long.load(end));
        a.op(Kind::Long.load(t0));
        a.op(I::Lsub);
        a.op(Kind::Long.load(end));
        a.op(I::Invokestatic(rec));
        a.op(I::Return);
        let (name, desc) = if threw {
            ("threw", threw_descriptor(plan))
        } else {
            ("exit", exit_descriptor(plan))
        };
        g.method(name, &desc, flags, a, p + 8, text + 1)?;
    }
    Ok(())
}

/// The columns an exit's record ends with, which its entry does not
/// take as they are: the callees' text and the callers.
#[derive(Clone)]
struct Tail {
    callees: bool,
    callers: bool,
    /// The kinds of the path columns, last.
    paths: Vec<Kind>,
}

/// `rec`'s columns from an `exit`'s or `threw`'s parameters: the others,
/// then the returned value (a zero of its type on a throw), then the
/// exception (null on a return), then the callees' text (in local
/// `text`, null for an untimed call), then null for the callers `rec`
/// takes.
fn exit_columns(
    a: &mut Asm,
    others: &[super::Column],
    t0: u16,
    ret_kind: Option<Kind>,
    threw: bool,
    tail: &Tail,
    text: Option<u16>,
) {
    let mut at = t0 + 2;
    for c in others {
        a.op(c.kind.load(at));
        at += c.kind.slots();
    }
    if let Some(k) = ret_kind {
        if threw {
            a.op(k.zero());
        } else {
            a.op(k.load(0));
        }
    }
    if threw {
        a.op(I::Aload_0);
    } else {
        a.op(I::Aconst_null);
    }
    if tail.callees {
        a.op(match text {
            Some(t) => Kind::Ref.load(t),
            None => I::Aconst_null,
        });
    }
    if tail.callers {
        a.op(I::Aconst_null);
    }
    // The paths' values, which `rec` reads itself.
    for k in &tail.paths {
        a.op(k.zero());
    }
}
