//! The helper class a probe calls: class-file version 49 (verified by
//! type inference, so it needs no stack map), public, final, a `Runnable`
//! for its lease thread, and only java.base types besides itself.
//!
//! Entry points the sites call: `hit(cols)` (a line, an entry, a field
//! write), `exit(ret, t0, cols)` and `threw(exception, t0, cols)`. Each
//! returns at once unless `live`; otherwise `rec(cols, duration)` counts
//! the call, times about one call in 1024, evaluates the condition, claims
//! a ring slot (or counts a drop), writes the record, publishes it in
//! `seq`, and catches anything thrown: nothing reaches the application.

use ristretto_classfile::attributes::{ArrayType, Attribute, Instruction};
use ristretto_classfile::{
    ClassAccessFlags, ClassFile, ConstantPool, Field, FieldAccessFlags, FieldType, Method,
    MethodAccessFlags, Version,
};

use super::asm::Asm;
use super::edit::{Plan, exit_descriptor, hit_descriptor, threw_descriptor};
use super::{Kind, LEASE_TICK_MS, LEASE_TICKS, ProbeSpec, Refusal, Site, Source, cond, field};

type I = Instruction;

struct Gen {
    cp: ConstantPool<'static>,
    this: u16,
    name: String,
    fields: Vec<Field>,
    methods: Vec<Method>,
}

fn cpe<T>(r: ristretto_classfile::Result<T>) -> Result<T, Refusal> {
    r.map_err(|e| Refusal::Unsupported(e.to_string()))
}

impl Gen {
    fn field(&mut self, name: &str, descriptor: &str, volatile: bool) -> Result<(), Refusal> {
        let mut flags = FieldAccessFlags::PUBLIC | FieldAccessFlags::STATIC;
        if volatile {
            flags |= FieldAccessFlags::VOLATILE;
        }
        let f = Field {
            access_flags: flags,
            name_index: cpe(self.cp.add_utf8(name))?,
            descriptor_index: cpe(self.cp.add_utf8(descriptor))?,
            field_type: cpe(FieldType::parse(descriptor))?,
            attributes: Vec::new(),
        };
        self.fields.push(f);
        Ok(())
    }

    fn own(&mut self, name: &str, descriptor: &str) -> Result<u16, Refusal> {
        cpe(self.cp.add_field_ref(self.this, name, descriptor))
    }

    fn mref(&mut self, owner: &str, name: &str, descriptor: &str) -> Result<u16, Refusal> {
        let c = cpe(self.cp.add_class(owner))?;
        cpe(self.cp.add_method_ref(c, name, descriptor))
    }

    fn own_method(&mut self, name: &str, descriptor: &str) -> Result<u16, Refusal> {
        cpe(self.cp.add_method_ref(self.this, name, descriptor))
    }

    fn int(&mut self, asm: &mut Asm, v: i32) -> Result<(), Refusal> {
        if let Ok(b) = i8::try_from(v) {
            asm.op(I::Bipush(b));
        } else if let Ok(s) = i16::try_from(v) {
            asm.op(I::Sipush(s));
        } else {
            let i = cpe(self.cp.add_integer(v))?;
            asm.op(I::Ldc_w(i));
        }
        Ok(())
    }

    fn long(&mut self, asm: &mut Asm, v: i64) -> Result<(), Refusal> {
        let i = cpe(self.cp.add_long(v))?;
        asm.op(I::Ldc2_w(i));
        Ok(())
    }

    fn method(
        &mut self,
        name: &str,
        descriptor: &str,
        flags: MethodAccessFlags,
        asm: Asm,
        max_stack: u16,
        max_locals: u16,
    ) -> Result<(), Refusal> {
        let (code, exception_table) = asm
            .finish()
            .ok_or(Refusal::Unsupported("an unbound label".into()))?;
        let code_name = cpe(self.cp.add_utf8("Code"))?;
        self.methods.push(Method {
            access_flags: flags,
            name_index: cpe(self.cp.add_utf8(name))?,
            descriptor_index: cpe(self.cp.add_utf8(descriptor))?,
            attributes: vec![Attribute::Code {
                name_index: code_name,
                max_stack,
                max_locals,
                code,
                exception_table,
                attributes: Vec::new(),
            }],
        });
        Ok(())
    }
}

const AL: &str = "java/util/concurrent/atomic/AtomicLong";
const ALA: &str = "java/util/concurrent/atomic/AtomicLongArray";
const LA: &str = "java/util/concurrent/atomic/LongAdder";

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
        (
            field::DROPS,
            "Ljava/util/concurrent/atomic/AtomicLong;",
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
        (
            field::CALLS,
            "Ljava/util/concurrent/atomic/LongAdder;",
            false,
        ),
        (field::COST_NS, "J", false),
        (field::COST_SAMPLES, "J", false),
        (field::ERRORS, "J", false),
        (field::LAST_ERROR, "Ljava/lang/Throwable;", false),
        (field::SUSPEND, "Z", true),
        (field::ORIGINAL, "[B", false),
        (field::RESTORED, "Z", true),
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
    init(&mut g, cap_i, pw, rw)?;
    run(&mut g)?;
    trap(&mut g)?;
    claim(&mut g, cap_i)?;
    rec(&mut g, spec, plan, cap_i, pw, rw)?;
    entries(&mut g, plan)?;

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

fn init(g: &mut Gen, cap: i32, pw: i32, rw: i32) -> Result<(), Refusal> {
    let mut a = Asm::default();
    let head = g.own(field::HEAD, "Ljava/util/concurrent/atomic/AtomicLong;")?;
    let drops = g.own(field::DROPS, "Ljava/util/concurrent/atomic/AtomicLong;")?;
    let seq = g.own(field::SEQ, "Ljava/util/concurrent/atomic/AtomicLongArray;")?;
    let prims = g.own(field::PRIMS, "[J")?;
    let refs = g.own(field::REFS, "[Ljava/lang/Object;")?;
    let times = g.own(field::TIMES, "[J")?;
    let durs = g.own(field::DURS, "[J")?;
    let threads = g.own(field::THREADS, "[Ljava/lang/Thread;")?;
    let calls = g.own(field::CALLS, "Ljava/util/concurrent/atomic/LongAdder;")?;
    let live = g.own(field::LIVE, "Z")?;
    let renew = g.own(field::RENEW, "Z")?;
    let misses = g.own(field::MISSES, "I")?;
    let al = cpe(g.cp.add_class(AL))?;
    let ala = cpe(g.cp.add_class(ALA))?;
    let la = cpe(g.cp.add_class(LA))?;
    let obj = cpe(g.cp.add_class("java/lang/Object"))?;
    let thread_c = cpe(g.cp.add_class("java/lang/Thread"))?;
    let al_init = g.mref(AL, "<init>", "()V")?;
    let ala_init = g.mref(ALA, "<init>", "(I)V")?;
    let la_init = g.mref(LA, "<init>", "()V")?;
    let skip = a.label();
    a.op(I::Getstatic(head));
    a.jump(I::Ifnonnull, skip);
    for f in [head, drops] {
        a.op(I::New(al));
        a.op(I::Dup);
        a.op(I::Invokespecial(al_init));
        a.op(I::Putstatic(f));
    }
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
    for f in [times, durs] {
        g.int(&mut a, cap)?;
        a.op(I::Newarray(ArrayType::Long));
        a.op(I::Putstatic(f));
    }
    g.int(&mut a, cap)?;
    a.op(I::Anewarray(thread_c));
    a.op(I::Putstatic(threads));
    a.op(I::New(la));
    a.op(I::Dup);
    a.op(I::Invokespecial(la_init));
    a.op(I::Putstatic(calls));
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

/// `long claim()`: the next record number, or -1 (a drop counted) when
/// the ring is full.
fn claim(g: &mut Gen, cap: i32) -> Result<(), Refusal> {
    let mut a = Asm::default();
    let head = g.own(field::HEAD, "Ljava/util/concurrent/atomic/AtomicLong;")?;
    let tail = g.own(field::TAIL, "J")?;
    let drops = g.own(field::DROPS, "Ljava/util/concurrent/atomic/AtomicLong;")?;
    let get = g.mref(AL, "get", "()J")?;
    let cas = g.mref(AL, "compareAndSet", "(JJ)Z")?;
    let inc = g.mref(AL, "incrementAndGet", "()J")?;
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
    a.op(I::Getstatic(drops));
    a.op(I::Invokevirtual(inc));
    a.op(I::Pop2);
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

fn rec_descriptor(plan: &Plan) -> String {
    let cols: String = plan
        .columns
        .iter()
        .map(|c| c.kind.param(&c.descriptor))
        .collect();
    format!("({cols}J)V")
}

fn rec(
    g: &mut Gen,
    spec: &ProbeSpec,
    plan: &Plan,
    cap: i32,
    pw: i32,
    rw: i32,
) -> Result<(), Refusal> {
    let mut a = Asm::default();
    let p: u16 = plan.columns.iter().map(|c| c.kind.slots()).sum();
    let (dur, t, n, slot, e) = (p, p + 2, p + 4, p + 6, p + 7);
    let calls = g.own(field::CALLS, "Ljava/util/concurrent/atomic/LongAdder;")?;
    let increment = g.mref(LA, "increment", "()V")?;
    let tlr_current = g.mref(
        "java/util/concurrent/ThreadLocalRandom",
        "current",
        "()Ljava/util/concurrent/ThreadLocalRandom;",
    )?;
    let next_int = g.mref("java/util/concurrent/ThreadLocalRandom", "nextInt", "()I")?;
    let nano = g.mref("java/lang/System", "nanoTime", "()J")?;
    let claim = g.own_method("claim", "()J")?;
    let prims = g.own(field::PRIMS, "[J")?;
    let refs = g.own(field::REFS, "[Ljava/lang/Object;")?;
    let times = g.own(field::TIMES, "[J")?;
    let durs = g.own(field::DURS, "[J")?;
    let threads = g.own(field::THREADS, "[Ljava/lang/Thread;")?;
    let seq = g.own(field::SEQ, "Ljava/util/concurrent/atomic/AtomicLongArray;")?;
    let lazy = g.mref(ALA, "lazySet", "(IJ)V")?;
    let current = g.mref("java/lang/Thread", "currentThread", "()Ljava/lang/Thread;")?;
    let suspend = g.own(field::SUSPEND, "Z")?;
    let trap = g.own_method(super::TRAP, "()V")?;
    let cost_ns = g.own(field::COST_NS, "J")?;
    let cost_samples = g.own(field::COST_SAMPLES, "J")?;
    let errors = g.own(field::ERRORS, "J")?;
    let last_error = g.own(field::LAST_ERROR, "Ljava/lang/Throwable;")?;
    let f2i = g.mref("java/lang/Float", "floatToRawIntBits", "(F)I")?;
    let d2l = g.mref("java/lang/Double", "doubleToRawLongBits", "(D)J")?;

    let (no_sample, try_from, done, ret, handler) =
        (a.label(), a.label(), a.label(), a.label(), a.label());
    a.op(I::Getstatic(calls));
    a.op(I::Invokevirtual(increment));
    a.op(I::Lconst_0);
    a.op(Kind::Long.store(t));
    a.op(I::Invokestatic(tlr_current));
    a.op(I::Invokevirtual(next_int));
    g.int(&mut a, 1023)?;
    a.op(I::Iand);
    a.jump(I::Ifne, no_sample);
    a.op(I::Invokestatic(nano));
    a.op(Kind::Long.store(t));
    a.bind(no_sample);
    a.bind(try_from);
    if spec.site == Site::Exit && spec.min_duration_ns > 0 {
        a.op(Kind::Long.load(dur));
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
    a.op(I::Invokestatic(claim));
    a.op(Kind::Long.store(n));
    a.op(Kind::Long.load(n));
    a.op(I::Lconst_0);
    a.op(I::Lcmp);
    a.jump(I::Iflt, done);
    a.op(Kind::Long.load(n));
    g.long(&mut a, i64::from(cap) - 1)?;
    a.op(I::Land);
    a.op(I::L2i);
    a.op(Kind::Int.store(slot));
    let (mut k_p, mut k_r, mut at) = (0i32, 0i32, 0u16);
    for c in &plan.columns {
        let here = at;
        at += c.kind.slots();
        if !c.record {
            continue;
        }
        let (array, width, k) = if c.kind == Kind::Ref {
            k_r += 1;
            (refs, rw, k_r - 1)
        } else {
            k_p += 1;
            (prims, pw, k_p - 1)
        };
        a.op(I::Getstatic(array));
        a.op(Kind::Int.load(slot));
        g.int(&mut a, width)?;
        a.op(I::Imul);
        g.int(&mut a, k)?;
        a.op(I::Iadd);
        a.op(c.kind.load(here));
        match c.kind {
            Kind::Ref => {
                a.op(I::Aastore);
                continue;
            }
            Kind::Long => {}
            Kind::Float => {
                a.op(I::Invokestatic(f2i));
                a.op(I::I2l);
            }
            Kind::Double => a.op(I::Invokestatic(d2l)),
            _ => a.op(I::I2l),
        }
        a.op(I::Lastore);
    }
    a.op(I::Getstatic(times));
    a.op(Kind::Int.load(slot));
    a.op(I::Invokestatic(nano));
    a.op(I::Lastore);
    a.op(I::Getstatic(durs));
    a.op(Kind::Int.load(slot));
    a.op(Kind::Long.load(dur));
    a.op(I::Lastore);
    a.op(I::Getstatic(threads));
    a.op(Kind::Int.load(slot));
    a.op(I::Invokestatic(current));
    a.op(I::Aastore);
    a.op(I::Getstatic(seq));
    a.op(Kind::Int.load(slot));
    a.op(Kind::Long.load(n));
    a.op(I::Lconst_1);
    a.op(I::Ladd);
    a.op(I::Invokevirtual(lazy));
    a.op(I::Getstatic(suspend));
    a.jump(I::Ifeq, done);
    a.op(I::Invokestatic(trap));
    a.bind(done);
    // Outside the try: the sampled cost.
    a.op(Kind::Long.load(t));
    a.op(I::Lconst_0);
    a.op(I::Lcmp);
    a.jump(I::Ifeq, ret);
    a.op(I::Getstatic(cost_ns));
    a.op(I::Invokestatic(nano));
    a.op(Kind::Long.load(t));
    a.op(I::Lsub);
    a.op(I::Ladd);
    a.op(I::Putstatic(cost_ns));
    a.op(I::Getstatic(cost_samples));
    a.op(I::Lconst_1);
    a.op(I::Ladd);
    a.op(I::Putstatic(cost_samples));
    a.bind(ret);
    a.op(I::Return);
    a.bind(handler);
    a.op(Kind::Ref.store(e));
    a.op(I::Getstatic(errors));
    a.op(I::Lconst_1);
    a.op(I::Ladd);
    a.op(I::Putstatic(errors));
    a.op(Kind::Ref.load(e));
    a.op(I::Putstatic(last_error));
    a.jump(I::Goto, ret);
    a.handler(try_from, done, handler, 0);
    let desc = rec_descriptor(plan);
    g.method(
        "rec",
        &desc,
        MethodAccessFlags::PRIVATE | MethodAccessFlags::STATIC,
        a,
        16,
        e + 1,
    )
}

/// The methods the sites call.
fn entries(g: &mut Gen, plan: &Plan) -> Result<(), Refusal> {
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
            a.op(c.kind.load(at));
            at += c.kind.slots();
        }
        a.op(I::Lconst_0);
        a.op(I::Invokestatic(rec));
        a.op(I::Return);
        return g.method("hit", &hit_descriptor(plan), flags, a, p + 4, p);
    }
    let nano = g.mref("java/lang/System", "nanoTime", "()J")?;
    let ret_kind = (plan.returns != "V").then(|| Kind::of(&plan.returns));
    let others: Vec<_> = plan.pushed().into_iter().cloned().collect();
    for threw in [false, true] {
        let mut a = Asm::default();
        let go = a.label();
        a.op(I::Getstatic(live));
        a.jump(I::Ifne, go);
        a.op(I::Return);
        a.bind(go);
        // Parameters: the value (or exception), t0, then the others.
        let first_slots = if threw {
            1
        } else {
            ret_kind.map_or(0, Kind::slots)
        };
        let t0 = first_slots;
        let mut at = t0 + 2;
        for c in &others {
            a.op(c.kind.load(at));
            at += c.kind.slots();
        }
        if let Some(k) = ret_kind {
            if threw {
                a.op(match k {
                    Kind::Long => I::Lconst_0,
                    Kind::Float => I::Fconst_0,
                    Kind::Double => I::Dconst_0,
                    Kind::Ref => I::Aconst_null,
                    _ => I::Iconst_0,
                });
            } else {
                a.op(k.load(0));
            }
        }
        if threw {
            a.op(I::Aload_0);
        } else {
            a.op(I::Aconst_null);
        }
        a.op(I::Invokestatic(nano));
        a.op(Kind::Long.load(t0));
        a.op(I::Lsub);
        a.op(I::Invokestatic(rec));
        a.op(I::Return);
        let (name, desc) = if threw {
            ("threw", threw_descriptor(plan))
        } else {
            ("exit", exit_descriptor(plan))
        };
        g.method(name, &desc, flags, a, p + 6, at)?;
    }
    let _ = Source::Returned;
    Ok(())
}
