//! The code a probe puts at its sites, per site kind: a line, an entry or
//! a field write pushes its columns and calls the helper's `hit`; an exit
//! takes the helper's `start()` (the time, when a record may follow) at
//! entry into a new local, calls `exit` before every
//! return and, from a catch-all handler after the code, `threw` before
//! rethrowing. Where the blocks go into the method is [`super::rewrite`]'s
//! business.

use std::collections::BTreeMap;

use ristretto_classfile::ClassFile;
use ristretto_classfile::attributes::{Attribute, Instruction, VerificationType};

use super::callees;
use super::plan::{Plan, exit_descriptor, hit_descriptor, threw_descriptor};
use super::read::this_name;
use super::rewrite::{self, Block, Edit};
use super::{Column, Kind, ProbeSpec, Refusal, Site, Source, code_of, is_static};

/// Inserts `plan`'s site code for `spec` into `class`.
pub fn insert(class: &mut ClassFile<'_>, spec: &ProbeSpec, plan: &Plan) -> Result<(), Refusal> {
    let owner = this_name(class);
    for (&mi, at) in &plan.sites {
        let edit = match &plan.site {
            Site::Line { .. } | Site::Entry | Site::FieldWrite { .. } => {
                hit_sites(class, spec, plan, mi, at)?
            }
            Site::Exit => exit_sites(class, spec, plan, mi, at)?,
        };
        rewrite::rebuild(class, mi, &edit, &owner)?;
    }
    Ok(())
}

/// Pushes of every column the site reads itself, and the slots they take.
fn pushes(class: &mut ClassFile<'_>, plan: &Plan) -> Result<(Vec<Instruction>, u16), Refusal> {
    let pushed: Vec<Column> = plan.pushed().into_iter().cloned().collect();
    let mut code = Vec::new();
    for c in &pushed {
        code.extend(push(class, c)?);
    }
    Ok((code, pushed.iter().map(|c| c.kind.slots()).sum()))
}

/// A line, an entry or a field write: the columns (a written value
/// duplicated off the stack, then the field's value before the write),
/// then `hit`.
fn hit_sites(
    class: &mut ClassFile<'_>,
    spec: &ProbeSpec,
    plan: &Plan,
    mi: usize,
    at: &[u16],
) -> Result<Edit, Refusal> {
    let (_, push_slots) = pushes(class, plan)?;
    let call = method_ref(class, &spec.helper, "hit", &hit_descriptor(plan))?;
    let (writes, temp) = write_sites(class, mi, at)?;
    let is_static = is_static(class.methods[mi].access_flags);
    // The number of this method's first site among all of the plan's.
    let first: usize = plan.sites.range(..mi).map(|(_, v)| v.len()).sum();
    let mut blocks = BTreeMap::new();
    for (k, &i) in at.iter().enumerate() {
        let mut code = Vec::new();
        for c in &plan.columns {
            match c.source {
                // The helper reads the old value itself, for a record only.
                Source::Written if plan.old_static.is_some() => code.push(match c.kind.slots() {
                    2 => Instruction::Dup2,
                    _ => Instruction::Dup,
                }),
                Source::Written => code.extend(old_value(c.kind, writes.get(k), temp)),
                Source::Old | Source::Callers | Source::Path { .. } | Source::PathNull(_) => {}
                Source::Writer => code.push(match writes.get(k) {
                    Some(Write::Unread) => Instruction::Aconst_null,
                    _ if is_static => Instruction::Aconst_null,
                    _ => Instruction::Aload_0,
                }),
                Source::Where if c.kind == Kind::Int => code.push(int_constant(class, first + k)?),
                Source::Where => code.push(site_label(class, mi, i)?),
                _ => code.extend(push(class, c)?),
            }
        }
        code.push(Instruction::Invokestatic(call));
        let block = if plan.site == Site::Entry {
            Block {
                skipped: code,
                ..Block::default()
            }
        } else {
            Block::run(code)
        };
        blocks.insert(i, block);
    }
    let two_slots = plan
        .columns
        .iter()
        .any(|c| c.source == Source::Written && c.kind.slots() == 2);
    Ok(Edit {
        blocks,
        handler: None,
        locals: Vec::new(),
        extra_locals: if two_slots { 2 } else { 0 },
        extra_stack: 6 + push_slots,
    })
}

/// `ldc` of the site's `Class.method:line` (the line the instruction is
/// on, `?` without a line table).
fn site_label(class: &mut ClassFile<'_>, mi: usize, at: u16) -> Result<Instruction, Refusal> {
    let label = super::read::site_text(class, mi, at);
    let index = class
        .constant_pool
        .add_string(label.as_str())
        .map_err(|e| Refusal::Unsupported(e.to_string()))?;
    Ok(match u8::try_from(index) {
        Ok(small) => Instruction::Ldc(small),
        Err(_) => Instruction::Ldc_w(index),
    })
}

/// An `int` constant: a site's number.
fn int_constant(class: &mut ClassFile<'_>, n: usize) -> Result<Instruction, Refusal> {
    Ok(match n {
        0 => Instruction::Iconst_0,
        1 => Instruction::Iconst_1,
        2 => Instruction::Iconst_2,
        3 => Instruction::Iconst_3,
        4 => Instruction::Iconst_4,
        5 => Instruction::Iconst_5,
        n if n <= 127 => Instruction::Bipush(n as i8),
        n if n <= 32767 => Instruction::Sipush(n as i16),
        n => {
            let v = i32::try_from(n).map_err(|_| Refusal::TooLarge)?;
            let index = class
                .constant_pool
                .add_integer(v)
                .map_err(|e| Refusal::Unsupported(e.to_string()))?;
            Instruction::Ldc_w(index)
        }
    })
}

/// A field write's instruction at a site.
#[derive(Clone, Copy)]
enum Write {
    /// `putstatic`, with its field reference.
    Static(u16),
    /// `putfield` on an initialised object.
    Field(u16),
    /// `putfield` in a constructor before `super()`, where the object may
    /// not be read yet: its old value is the field's default.
    Unread,
}

/// The write at each site of method `mi` (none for other site kinds), and
/// the method's first free local (a temporary for a long or double).
fn write_sites(class: &ClassFile<'_>, mi: usize, at: &[u16]) -> Result<(Vec<Write>, u16), Refusal> {
    let m = &class.methods[mi];
    let Some(Attribute::Code {
        code, max_locals, ..
    }) = code_of(&m.attributes).map(|ci| &m.attributes[ci])
    else {
        return Err(Refusal::NoCode {
            method: String::new(),
        });
    };
    let is_init = super::read::utf8(class, m.name_index) == "<init>";
    let sup = if is_init {
        super::plan::super_call(class, code).unwrap_or(usize::MAX)
    } else {
        0
    };
    let writes = at
        .iter()
        .filter_map(|i| match code.get(usize::from(*i)) {
            Some(Instruction::Putstatic(r)) => Some(Write::Static(*r)),
            Some(Instruction::Putfield(_)) if is_init && usize::from(*i) <= sup => {
                Some(Write::Unread)
            }
            Some(Instruction::Putfield(r)) => Some(Write::Field(*r)),
            _ => None,
        })
        .collect();
    Ok((writes, *max_locals))
}

/// At a write, with `[object,] value` on the stack: pushes the value and
/// the field's value before the write, leaving the stack under them as it
/// was. `temp` is a free local, for a long or double.
fn old_value(kind: Kind, write: Option<&Write>, temp: u16) -> Vec<Instruction> {
    use Instruction as I;
    let wide = kind.slots() == 2;
    let dup = if wide { I::Dup2 } else { I::Dup };
    match (write, wide) {
        (Some(Write::Static(r)), _) => vec![dup, I::Getstatic(*r)],
        // [o, v] → [o, v, o, v] → [o, v, v, o] → [o, v, v, old]
        (Some(Write::Field(r)), false) => vec![I::Dup2, I::Swap, I::Getfield(*r)],
        // [o, vv] → [vv, o, vv] → [vv, o] → [o, vv, o] → [o, vv, old]; the
        // old value waits in `temp` while the value is duplicated.
        (Some(Write::Field(r)), true) => vec![
            I::Dup2_x1,
            I::Pop2,
            I::Dup_x2,
            I::Getfield(*r),
            kind.store(temp),
            I::Dup2,
            kind.load(temp),
        ],
        (Some(Write::Unread), _) | (None, _) => vec![dup, kind.zero()],
    }
}

/// An exit: the entry time in a new local `t0`, `exit` before every
/// return, and a catch-all handler calling `threw`; timing the method's
/// calls, their locals after `t0` and their code ([`super::callees`]).
fn exit_sites(
    class: &mut ClassFile<'_>,
    spec: &ProbeSpec,
    plan: &Plan,
    mi: usize,
    at: &[u16],
) -> Result<Edit, Refusal> {
    let (_, push_slots) = pushes(class, plan)?;
    let exit = method_ref(class, &spec.helper, "exit", &exit_descriptor(plan))?;
    let threw = method_ref(class, &spec.helper, "threw", &threw_descriptor(plan))?;
    let start = method_ref(class, &spec.helper, super::START, "()J")?;
    let nano = method_ref(class, "java/lang/System", "nanoTime", "()J")?;
    let Some(ci) = code_of(&class.methods[mi].attributes) else {
        return Err(Refusal::NoCode {
            method: String::new(),
        });
    };
    let Attribute::Code { max_locals, .. } = &class.methods[mi].attributes[ci] else {
        return Err(Refusal::NoCode {
            method: String::new(),
        });
    };
    let t0 = *max_locals;
    let callees =
        (!plan.callees.is_empty()).then(|| callees::Locals::new(t0 + 2, plan.callees.len()));
    let callee_pushes = callees.map(|l| l.pushes()).unwrap_or_default();
    let dup = match (plan.returns.as_str(), Kind::of(&plan.returns).slots()) {
        ("V", _) => None,
        (_, 2) => Some(Instruction::Dup2),
        _ => Some(Instruction::Dup),
    };
    let lload = Kind::Long.load(t0);
    let mut blocks = BTreeMap::new();
    for &i in at {
        let mut code = Vec::new();
        code.extend(dup.clone());
        code.push(lload.clone());
        code.extend(exit_pushes(class, plan, mi, i)?);
        code.extend(callee_pushes.iter().cloned());
        code.push(Instruction::Invokestatic(exit));
        blocks.insert(i, Block::run(code));
    }
    // Entry: take the start time (and zero the callees' locals); branches
    // back to the start skip it.
    let mut entry = vec![Instruction::Invokestatic(start), Kind::Long.store(t0)];
    let mut handler = vec![Instruction::Dup, lload];
    if let Some(l) = &callees {
        entry.extend(l.init());
        let handlers = callees::handlers(class, mi);
        callees::add_blocks(&mut blocks, &plan.calls, &handlers, l, nano);
        let mut first = l.caught(nano);
        first.append(&mut handler);
        handler = first;
    }
    blocks.entry(0).or_default().skipped = entry;
    handler.extend(exit_pushes(class, plan, mi, 0)?);
    handler.extend(callee_pushes.iter().cloned());
    handler.push(Instruction::Invokestatic(threw));
    handler.push(Instruction::Athrow);
    // Boxing an argument takes the array twice, an index and the value.
    let boxing = if plan.every_method() { 5 } else { 0 };
    let mut locals = vec![(t0, VerificationType::Long)];
    locals.extend(callees.map(|l| l.types()).unwrap_or_default());
    Ok(Edit {
        blocks,
        handler: Some(handler),
        locals,
        extra_locals: 2 + callees.map_or(0, |l| l.slots()),
        extra_stack: 4 + push_slots + boxing + callees.map_or(0, |l| l.stack()),
    })
}

/// What an exit site at instruction `at` of method `mi` pushes after the
/// start time: the columns in order, a timed method's arguments boxed and
/// its `Class.method:line`.
fn exit_pushes(
    class: &mut ClassFile<'_>,
    plan: &Plan,
    mi: usize,
    at: u16,
) -> Result<Vec<Instruction>, Refusal> {
    let mut code = Vec::new();
    for c in plan.pushed() {
        match c.source {
            Source::Args => code.extend(boxed_arguments(class, mi)?),
            Source::Where => code.push(site_label(class, mi, at)?),
            _ => code.extend(push(class, c)?),
        }
    }
    Ok(code)
}

/// A new `Object[]` holding method `mi`'s arguments, primitives boxed.
fn boxed_arguments(class: &mut ClassFile<'_>, mi: usize) -> Result<Vec<Instruction>, Refusal> {
    use Instruction as I;
    let m = &class.methods[mi];
    let descriptor = super::read::utf8(class, m.descriptor_index);
    let mut slot: u16 = if is_static(m.access_flags) { 0 } else { 1 };
    let (params, _) = crate::model::signature::split_method_descriptor(&descriptor)
        .ok_or_else(|| Refusal::Malformed("a method descriptor".into()))?;
    let unsupported = |e: ristretto_classfile::Error| Refusal::Unsupported(e.to_string());
    let object = class
        .constant_pool
        .add_class("java/lang/Object")
        .map_err(unsupported)?;
    let mut code = vec![int_const(params.len())?, I::Anewarray(object)];
    for (k, d) in params.iter().enumerate() {
        let kind = Kind::of(d);
        code.push(I::Dup);
        code.push(int_const(k)?);
        code.push(kind.load(slot));
        if let Some((wrapper, prim)) = wrapper(kind) {
            let c = class
                .constant_pool
                .add_class(wrapper)
                .map_err(unsupported)?;
            let r = class
                .constant_pool
                .add_method_ref(c, "valueOf", format!("({prim})L{wrapper};").as_str())
                .map_err(unsupported)?;
            code.push(I::Invokestatic(r));
        }
        code.push(I::Aastore);
        slot += kind.slots();
    }
    Ok(code)
}

/// The box of a primitive kind and its descriptor letter.
fn wrapper(kind: Kind) -> Option<(&'static str, char)> {
    Some(match kind {
        Kind::Boolean => ("java/lang/Boolean", 'Z'),
        Kind::Byte => ("java/lang/Byte", 'B'),
        Kind::Char => ("java/lang/Character", 'C'),
        Kind::Short => ("java/lang/Short", 'S'),
        Kind::Int => ("java/lang/Integer", 'I'),
        Kind::Long => ("java/lang/Long", 'J'),
        Kind::Float => ("java/lang/Float", 'F'),
        Kind::Double => ("java/lang/Double", 'D'),
        Kind::Ref => return None,
    })
}

/// An `int` constant (an argument count or index: at most 255).
fn int_const(n: usize) -> Result<Instruction, Refusal> {
    use Instruction as I;
    Ok(match n {
        0 => I::Iconst_0,
        1 => I::Iconst_1,
        2 => I::Iconst_2,
        3 => I::Iconst_3,
        4 => I::Iconst_4,
        5 => I::Iconst_5,
        _ => I::Sipush(i16::try_from(n).map_err(|_| Refusal::TooLarge)?),
    })
}

/// Instructions that push `c` at a site (not for stack-borne values).
fn push(class: &mut ClassFile<'_>, c: &Column) -> Result<Vec<Instruction>, Refusal> {
    Ok(match &c.source {
        Source::Local(slot) => vec![c.kind.load(*slot)],
        Source::Field { name, is_static } => {
            let owner = class.this_class;
            let r = class
                .constant_pool
                .add_field_ref(owner, name.as_str(), c.descriptor.as_str())
                .map_err(|e| Refusal::Unsupported(e.to_string()))?;
            if *is_static {
                vec![Instruction::Getstatic(r)]
            } else {
                vec![Instruction::Aload_0, Instruction::Getfield(r)]
            }
        }
        Source::Returned
        | Source::Thrown
        | Source::Written
        | Source::Old
        | Source::Callers
        | Source::Writer
        | Source::Args
        | Source::Callees
        | Source::Where
        | Source::Path { .. }
        | Source::PathNull(_) => Vec::new(),
    })
}

fn method_ref(
    class: &mut ClassFile<'_>,
    owner: &str,
    name: &str,
    descriptor: &str,
) -> Result<u16, Refusal> {
    let cp = &mut class.constant_pool;
    let c = cp
        .add_class(owner)
        .map_err(|e| Refusal::Unsupported(e.to_string()))?;
    cp.add_method_ref(c, name, descriptor)
        .map_err(|e| Refusal::Unsupported(e.to_string()))
}
