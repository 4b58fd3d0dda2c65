//! Planning a probe on a class (which method, which instructions, which
//! values) and inserting its site code. Insertion rebuilds the method's
//! instruction list once, remembering for every old instruction where its
//! block starts and where it now is; branch targets, switch tables, the
//! exception table, line numbers, stack map frames and local variable
//! ranges are then moved through that map, so nothing of the original
//! method changes meaning.

use std::collections::BTreeMap;
use std::io::Cursor;

use ristretto_classfile::attributes::{
    Attribute, ExceptionTableEntry, Instruction, LocalVariableTable, VerificationType,
};
use ristretto_classfile::{ClassFile, Constant};

use super::asm::retarget;
use super::frames::{self, Frame};
use super::{
    Column, Kind, ProbeSpec, RecordLayout, Refusal, Site, Source, code_of, cond, find_method,
    is_static, java_type, split_descriptor,
};

/// Where one probe's code goes and what it pushes.
#[derive(Debug, Clone)]
pub struct Plan {
    /// Per method index: the old instruction indices that get a block.
    pub sites: BTreeMap<usize, Vec<u16>>,
    /// Every value the helper's record method takes, in order: recorded
    /// ones and the condition's extra reads. For Exit, the returned value
    /// and the exception come last.
    pub columns: Vec<Column>,
    pub site: Site,
    /// Exit: the method's return descriptor.
    pub returns: String,
}

impl Plan {
    pub fn layout(&self) -> RecordLayout {
        let columns: Vec<Column> = self.columns.iter().filter(|c| c.record).cloned().collect();
        RecordLayout {
            prim_width: columns.iter().filter(|c| c.kind != Kind::Ref).count(),
            ref_width: columns.iter().filter(|c| c.kind == Kind::Ref).count(),
            columns,
            has_duration: self.site == Site::Exit,
        }
    }

    /// The columns the site pushes itself (for Exit: all but the
    /// returned value and the exception, which the site has on its stack).
    pub fn pushed(&self) -> Vec<&Column> {
        self.columns
            .iter()
            .filter(|c| {
                !matches!(
                    c.source,
                    Source::Returned | Source::Thrown | Source::Written
                )
            })
            .collect()
    }
}

fn utf8(class: &ClassFile<'_>, index: u16) -> String {
    class
        .constant_pool
        .try_get_utf8(index)
        .map(|s| s.to_string())
        .unwrap_or_default()
}

fn this_name(class: &ClassFile<'_>) -> String {
    match class.constant_pool.get(class.this_class) {
        Some(Constant::Class(n)) => utf8(class, *n),
        _ => String::new(),
    }
}

/// Owner, name and descriptor of a field reference.
fn field_ref(class: &ClassFile<'_>, index: u16) -> Option<(String, String, String)> {
    let Some(Constant::FieldRef {
        class_index,
        name_and_type_index,
    }) = class.constant_pool.get(index)
    else {
        return None;
    };
    let Some(Constant::Class(owner)) = class.constant_pool.get(*class_index) else {
        return None;
    };
    let Some(Constant::NameAndType {
        name_index,
        descriptor_index,
    }) = class.constant_pool.get(*name_and_type_index)
    else {
        return None;
    };
    Some((
        utf8(class, *owner),
        utf8(class, *name_index),
        utf8(class, *descriptor_index),
    ))
}

/// Byte offset of every instruction, and of the end (one more entry).
pub fn byte_offsets(code: &[Instruction]) -> Result<Vec<u32>, Refusal> {
    let mut cursor = Cursor::new(Vec::new());
    let mut out = Vec::with_capacity(code.len() + 1);
    for i in code {
        out.push(cursor.position() as u32);
        i.to_bytes(&mut cursor)
            .map_err(|e| Refusal::Unsupported(e.to_string()))?;
    }
    out.push(cursor.position() as u32);
    Ok(out)
}

/// The instruction index at byte offset `b` (the end maps to the length).
fn index_at(offsets: &[u32], b: u32) -> Option<u16> {
    offsets
        .binary_search(&b)
        .ok()
        .and_then(|i| u16::try_from(i).ok())
}

struct MethodView {
    name: String,
    descriptor: String,
    is_static: bool,
    code: Vec<Instruction>,
    lines: Vec<(u16, u16)>,
    /// The LocalVariableTable, if the method has one.
    locals: Option<Vec<LocalEntry>>,
}

/// One LocalVariableTable row: a name in a slot over a range of bytes.
struct LocalEntry {
    start: u32,
    length: u32,
    name: String,
    descriptor: String,
    slot: u16,
}

fn view(class: &ClassFile<'_>, index: usize) -> Result<MethodView, Refusal> {
    let m = &class.methods[index];
    let name = utf8(class, m.name_index);
    let descriptor = utf8(class, m.descriptor_index);
    let Some(ci) = code_of(&m.attributes) else {
        return Err(Refusal::NoCode {
            method: format!("{name}{descriptor}"),
        });
    };
    let Attribute::Code {
        code, attributes, ..
    } = &m.attributes[ci]
    else {
        return Err(Refusal::NoCode { method: name });
    };
    let mut lines = Vec::new();
    let mut locals: Option<Vec<_>> = None;
    for a in attributes {
        match a {
            Attribute::LineNumberTable { line_numbers, .. } => {
                lines.extend(line_numbers.iter().map(|l| (l.start_pc, l.line_number)));
            }
            Attribute::LocalVariableTable { variables, .. } => {
                let list = locals.get_or_insert_with(Vec::new);
                for v in variables {
                    list.push(LocalEntry {
                        start: u32::from(v.start_pc),
                        length: u32::from(v.length),
                        name: utf8(class, v.name_index),
                        descriptor: utf8(class, v.descriptor_index),
                        slot: v.index,
                    });
                }
            }
            _ => {}
        }
    }
    Ok(MethodView {
        name,
        descriptor,
        is_static: is_static(m.access_flags),
        code: code.clone(),
        lines,
        locals,
    })
}

fn column(name: &str, descriptor: &str, source: Source, record: bool) -> Column {
    Column {
        name: name.to_string(),
        kind: Kind::of(descriptor),
        descriptor: descriptor.to_string(),
        type_name: java_type(descriptor),
        source,
        record,
    }
}

/// Plans `spec` on `class`.
pub fn plan(class: &ClassFile<'_>, spec: &ProbeSpec) -> Result<Plan, Refusal> {
    let owner = this_name(class);
    let mut sites: BTreeMap<usize, Vec<u16>> = BTreeMap::new();
    let mut columns = Vec::new();
    let mut returns = String::from("V");
    match &spec.site {
        Site::FieldWrite {
            owner: f_owner,
            name,
            descriptor,
        } => {
            let only = match &spec.method {
                Some(m) => Some(find_method(class, m)?),
                None => None,
            };
            for (i, m) in class.methods.iter().enumerate() {
                if only.is_some_and(|o| o != i) {
                    continue;
                }
                let Some(ci) = code_of(&m.attributes) else {
                    continue;
                };
                let Attribute::Code { code, .. } = &m.attributes[ci] else {
                    continue;
                };
                for (k, ins) in code.iter().enumerate() {
                    if let Instruction::Putfield(r) | Instruction::Putstatic(r) = ins
                        && field_ref(class, *r).is_some_and(|(o, n, d)| {
                            &o == f_owner && &n == name && &d == descriptor
                        })
                    {
                        sites.entry(i).or_default().push(k as u16);
                    }
                }
            }
            if sites.is_empty() {
                return Err(Refusal::NoWrite {
                    owner: f_owner.replace('/', "."),
                    name: name.clone(),
                });
            }
            columns.push(column(name, descriptor, Source::Written, true));
        }
        Site::Line { line } => {
            let Some(mref) = &spec.method else {
                return Err(Refusal::NoMethod {
                    name: String::new(),
                    descriptor: String::new(),
                });
            };
            let mi = find_method(class, mref)?;
            let v = view(class, mi)?;
            if v.name == "<clinit>" {
                return Err(Refusal::StaticInitializer);
            }
            let label = format!("{}{}", v.name, v.descriptor);
            let mut starts: Vec<u16> = v
                .lines
                .iter()
                .filter(|(_, l)| u32::from(*l) == *line)
                .map(|(pc, _)| *pc)
                .collect();
            starts.sort_unstable();
            starts.dedup();
            if starts.is_empty() {
                return Err(Refusal::NoLine {
                    method: label,
                    line: *line,
                });
            }
            if v.name == "<init>" {
                let sup = v
                    .code
                    .iter()
                    .position(|i| matches!(i, Instruction::Invokespecial(_)))
                    .unwrap_or(usize::MAX);
                starts.retain(|s| usize::from(*s) > sup);
                if starts.is_empty() {
                    return Err(Refusal::Constructor);
                }
            }
            let offsets = byte_offsets(&v.code)?;
            let in_scope = |at: u16| -> Vec<(String, String, u16)> {
                let pc = offsets[usize::from(at)];
                let mut out: Vec<(String, String, u16)> = v
                    .locals
                    .iter()
                    .flatten()
                    .filter(|l| l.start <= pc && pc < l.start + l.length)
                    .map(|l| (l.name.clone(), l.descriptor.clone(), l.slot))
                    .collect();
                out.sort_by_key(|x| x.2);
                out
            };
            let first = in_scope(starts[0]);
            let wanted: Vec<(String, String, u16)> = match &spec.locals {
                None => first
                    .iter()
                    .filter(|(n, ..)| v.is_static || n != "this")
                    .cloned()
                    .collect(),
                Some(names) => {
                    let mut out = Vec::new();
                    for n in names.iter().filter(|n| *n != "this") {
                        if v.locals.is_none() {
                            return Err(Refusal::NoLocalTable {
                                method: label,
                                name: n.clone(),
                            });
                        }
                        match first.iter().find(|(x, ..)| x == n) {
                            Some(l) => out.push(l.clone()),
                            None => {
                                return Err(Refusal::NoLocal {
                                    method: label,
                                    name: n.clone(),
                                    in_scope: first.iter().map(|x| x.0.clone()).collect(),
                                });
                            }
                        }
                    }
                    out
                }
            };
            // Another run of the line gets the probe only where the same
            // locals are in the same slots.
            starts.retain(|s| {
                let here = in_scope(*s);
                wanted.iter().all(|w| here.contains(w))
            });
            sites.insert(mi, starts);
            let want_this = !v.is_static
                && spec
                    .locals
                    .as_ref()
                    .is_none_or(|n| n.iter().any(|x| x == "this"));
            if want_this {
                columns.push(column(
                    "this",
                    &format!("L{owner};"),
                    Source::Local(0),
                    true,
                ));
            }
            for (n, d, slot) in wanted {
                columns.push(column(&n, &d, Source::Local(slot), true));
            }
        }
        Site::Entry | Site::Exit => {
            let Some(mref) = &spec.method else {
                return Err(Refusal::NoMethod {
                    name: String::new(),
                    descriptor: String::new(),
                });
            };
            let mi = find_method(class, mref)?;
            let v = view(class, mi)?;
            match v.name.as_str() {
                "<init>" => return Err(Refusal::Constructor),
                "<clinit>" => return Err(Refusal::StaticInitializer),
                _ => {}
            }
            let (params, ret) = split_descriptor(&v.descriptor)
                .ok_or_else(|| Refusal::Malformed("a method descriptor".into()))?;
            returns = ret;
            let mut slot: u16 = if v.is_static { 0 } else { 1 };
            let mut args = Vec::new();
            for (k, d) in params.iter().enumerate() {
                let name = v
                    .locals
                    .iter()
                    .flatten()
                    .find(|l| l.start == 0 && l.slot == slot)
                    .map(|l| l.name.clone())
                    .unwrap_or_else(|| format!("arg{k}"));
                args.push((name, d.clone(), slot));
                slot += Kind::of(d).slots();
            }
            let want = |n: &str| {
                spec.locals
                    .as_ref()
                    .is_none_or(|l| l.iter().any(|x| x == n))
            };
            if !v.is_static
                && spec
                    .locals
                    .as_ref()
                    .is_some_and(|l| l.iter().any(|x| x == "this"))
            {
                columns.push(column(
                    "this",
                    &format!("L{owner};"),
                    Source::Local(0),
                    true,
                ));
            }
            for (n, d, s) in &args {
                if want(n) {
                    columns.push(column(n, d, Source::Local(*s), true));
                }
            }
            if let Some(names) = &spec.locals {
                for n in names.iter().filter(|n| *n != "this") {
                    if !args.iter().any(|a| &a.0 == n) {
                        return Err(Refusal::NoLocal {
                            method: format!("{}{}", v.name, v.descriptor),
                            name: n.clone(),
                            in_scope: args.iter().map(|a| a.0.clone()).collect(),
                        });
                    }
                }
            }
            let mut at = Vec::new();
            if spec.site == Site::Entry {
                at.push(0);
            } else {
                for (k, i) in v.code.iter().enumerate() {
                    if is_return(i) {
                        at.push(k as u16);
                    }
                }
            }
            sites.insert(mi, at);
        }
    }
    // The condition's names: columns first, then fields of the class,
    // read at the site.
    if let Some(c) = &spec.condition {
        for (name, column_at) in cond::names(c) {
            if columns.iter().any(|c| c.name == name) || bound(&spec.site, &name) {
                continue;
            }
            let Some(f) = class
                .fields
                .iter()
                .find(|f| utf8(class, f.name_index) == name)
            else {
                return Err(Refusal::Condition {
                    column: column_at,
                    why: format!("{name:?} is neither a recorded local nor a field of this class"),
                });
            };
            let is_static = f
                .access_flags
                .contains(ristretto_classfile::FieldAccessFlags::STATIC);
            let in_static_site = sites.keys().any(|m| is_static_method(class, *m));
            if !is_static && in_static_site {
                return Err(Refusal::Condition {
                    column: column_at,
                    why: format!(
                        "{name:?} is an instance field, and the site is in a static method"
                    ),
                });
            }
            let d = utf8(class, f.descriptor_index);
            columns.push(column(
                &name,
                &d,
                Source::Field {
                    name: name.clone(),
                    is_static,
                },
                false,
            ));
        }
    }
    if spec.site == Site::Exit {
        if returns != "V" {
            columns.push(column("returnValue", &returns, Source::Returned, true));
        }
        columns.push(column(
            "exception",
            "Ljava/lang/Throwable;",
            Source::Thrown,
            true,
        ));
    }
    if let Site::FieldWrite { .. } = spec.site
        && sites.keys().all(|m| {
            !is_static_method(class, *m) && utf8(class, class.methods[*m].name_index) != "<init>"
        })
    {
        columns.push(column(
            "this",
            &format!("L{owner};"),
            Source::Local(0),
            true,
        ));
    }
    let plan = Plan {
        sites,
        columns,
        site: spec.site.clone(),
        returns,
    };
    if let Some(c) = &spec.condition {
        cond::check(c, &plan)?;
    }
    Ok(plan)
}

/// Names an event binds (the condition reads them from the site's stack).
fn bound(site: &Site, name: &str) -> bool {
    matches!(
        (site, name),
        (Site::Exit, "returnValue" | "exception") | (Site::FieldWrite { .. }, "newValue")
    )
}

fn is_static_method(class: &ClassFile<'_>, index: usize) -> bool {
    is_static(class.methods[index].access_flags)
}

fn is_return(i: &Instruction) -> bool {
    matches!(
        i,
        Instruction::Ireturn
            | Instruction::Lreturn
            | Instruction::Freturn
            | Instruction::Dreturn
            | Instruction::Areturn
            | Instruction::Return
    )
}

/// The helper's methods a site calls, and their descriptors.
pub fn hit_descriptor(plan: &Plan) -> String {
    let args: String = plan
        .pushed_all()
        .iter()
        .map(|c| c.kind.param(&c.descriptor))
        .collect();
    format!("({args})V")
}

pub fn exit_descriptor(plan: &Plan) -> String {
    let ret = if plan.returns == "V" {
        String::new()
    } else {
        Kind::of(&plan.returns).param(&plan.returns)
    };
    let others: String = plan
        .pushed()
        .iter()
        .map(|c| c.kind.param(&c.descriptor))
        .collect();
    format!("({ret}J{others})V")
}

pub fn threw_descriptor(plan: &Plan) -> String {
    let others: String = plan
        .pushed()
        .iter()
        .map(|c| c.kind.param(&c.descriptor))
        .collect();
    format!("(Ljava/lang/Object;J{others})V")
}

impl Plan {
    /// Line, Entry and FieldWrite sites push every column, in order (a
    /// written value is already on the stack, duplicated, first).
    pub fn pushed_all(&self) -> Vec<&Column> {
        self.columns.iter().collect()
    }
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
        Source::Returned | Source::Thrown | Source::Written => Vec::new(),
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

/// One block of site code to put before an old instruction.
struct Block {
    code: Vec<Instruction>,
    /// Branches to the instruction skip it (method entry), instead of
    /// running it (a line, a return).
    skipped: bool,
}

/// Inserts `plan`'s site code for `spec` into `class`.
pub fn insert(class: &mut ClassFile<'_>, spec: &ProbeSpec, plan: &Plan) -> Result<(), Refusal> {
    let owner = this_name(class);
    for (&mi, at) in &plan.sites {
        let mut blocks: BTreeMap<u16, Block> = BTreeMap::new();
        let mut extra_locals = 0u16;
        let extra_stack;
        let pushed: Vec<Column> = plan.pushed().into_iter().cloned().collect();
        let mut pushes = Vec::new();
        for c in &pushed {
            pushes.extend(push(class, c)?);
        }
        let push_slots: u16 = pushed.iter().map(|c| c.kind.slots()).sum();
        let mut handler = None;
        let mut t0 = 0u16;
        match &plan.site {
            Site::Line { .. } | Site::Entry | Site::FieldWrite { .. } => {
                let call = method_ref(class, &spec.helper, "hit", &hit_descriptor(plan))?;
                let mut code = Vec::new();
                for c in &plan.columns {
                    match c.source {
                        Source::Written if c.kind.slots() == 2 => code.push(Instruction::Dup2),
                        Source::Written => code.push(Instruction::Dup),
                        _ => code.extend(push(class, c)?),
                    }
                }
                code.push(Instruction::Invokestatic(call));
                extra_stack = 2 + push_slots;
                for &i in at {
                    blocks.insert(
                        i,
                        Block {
                            code: code.clone(),
                            skipped: plan.site == Site::Entry,
                        },
                    );
                }
            }
            Site::Exit => {
                let exit = method_ref(class, &spec.helper, "exit", &exit_descriptor(plan))?;
                let threw = method_ref(class, &spec.helper, "threw", &threw_descriptor(plan))?;
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
                t0 = *max_locals;
                extra_locals = 2;
                let ret_kind = Kind::of(&plan.returns);
                let dup = match (plan.returns.as_str(), ret_kind.slots()) {
                    ("V", _) => None,
                    (_, 2) => Some(Instruction::Dup2),
                    _ => Some(Instruction::Dup),
                };
                let lload = Kind::Long.load(t0);
                let mut ret_block = Vec::new();
                ret_block.extend(dup.clone());
                ret_block.push(lload.clone());
                ret_block.extend(pushes.clone());
                ret_block.push(Instruction::Invokestatic(exit));
                for &i in at {
                    blocks.insert(
                        i,
                        Block {
                            code: ret_block.clone(),
                            skipped: false,
                        },
                    );
                }
                let store = if t0 > 255 {
                    Instruction::Lstore_w(t0)
                } else {
                    Instruction::Lstore(t0 as u8)
                };
                // Entry: take the time; branches back to the start skip it.
                let first = blocks.remove(&0);
                let mut entry = vec![Instruction::Invokestatic(nano), store];
                let mut joined_first = None;
                if let Some(b) = first {
                    // A method whose first instruction returns.
                    joined_first = Some(b.code);
                }
                if let Some(j) = joined_first {
                    entry.extend(j);
                }
                blocks.insert(
                    0,
                    Block {
                        code: entry,
                        skipped: true,
                    },
                );
                let mut h = vec![Instruction::Dup, lload];
                h.extend(pushes.clone());
                h.push(Instruction::Invokestatic(threw));
                h.push(Instruction::Athrow);
                handler = Some(h);
                extra_stack = 4 + push_slots;
            }
        }
        rebuild(
            class,
            mi,
            &blocks,
            handler,
            t0,
            extra_locals,
            extra_stack,
            &owner,
        )?;
    }
    Ok(())
}

/// Rebuilds method `mi` with `blocks` before their instructions and, for
/// Exit, `handler` after the code around all of it.
#[allow(clippy::too_many_arguments)]
fn rebuild(
    class: &mut ClassFile<'_>,
    mi: usize,
    blocks: &BTreeMap<u16, Block>,
    handler: Option<Vec<Instruction>>,
    t0: u16,
    extra_locals: u16,
    extra_stack: u16,
    owner: &str,
) -> Result<(), Refusal> {
    let initial = initial_frame(class, mi, owner)?;
    let throwable = class
        .constant_pool
        .add_class("java/lang/Throwable")
        .map_err(|e| Refusal::Unsupported(e.to_string()))?;
    // Version 50 and later verify by stack maps: a handler needs a frame
    // even in a method that had none.
    let needs_frames = class.version.major() >= 50;
    let table_name = if needs_frames && handler.is_some() {
        Some(
            class
                .constant_pool
                .add_utf8("StackMapTable")
                .map_err(|e| Refusal::Unsupported(e.to_string()))?,
        )
    } else {
        None
    };
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
    let old_offsets = byte_offsets(&old)?;
    let n = old.len();
    // For each old index (and the end): where its block starts, and where
    // it is now.
    let mut start = vec![0u16; n + 1];
    let mut at = vec![0u16; n + 1];
    let mut new: Vec<Instruction> = Vec::with_capacity(n + blocks.len() * 8);
    for (k, ins) in old.iter().enumerate() {
        start[k] = u16::try_from(new.len()).map_err(|_| Refusal::TooLarge)?;
        if let Some(b) = blocks.get(&(k as u16)) {
            new.extend(b.code.iter().cloned());
        }
        at[k] = u16::try_from(new.len()).map_err(|_| Refusal::TooLarge)?;
        new.push(ins.clone());
    }
    start[n] = u16::try_from(new.len()).map_err(|_| Refusal::TooLarge)?;
    at[n] = start[n];
    // A branch lands where the old instruction's block starts, unless the
    // block is skipped by branches (entry).
    let target = |x: u16| -> u16 {
        let x = usize::from(x).min(n);
        match blocks.get(&(x as u16)) {
            Some(b) if b.skipped => at[x],
            _ => start[x],
        }
    };
    for (k, ins) in old.iter().enumerate() {
        let i = &mut new[usize::from(at[k])];
        match ins {
            Instruction::Ifeq(t)
            | Instruction::Ifne(t)
            | Instruction::Iflt(t)
            | Instruction::Ifge(t)
            | Instruction::Ifgt(t)
            | Instruction::Ifle(t)
            | Instruction::If_icmpeq(t)
            | Instruction::If_icmpne(t)
            | Instruction::If_icmplt(t)
            | Instruction::If_icmpge(t)
            | Instruction::If_icmpgt(t)
            | Instruction::If_icmple(t)
            | Instruction::If_acmpeq(t)
            | Instruction::If_acmpne(t)
            | Instruction::Goto(t)
            | Instruction::Ifnull(t)
            | Instruction::Ifnonnull(t) => retarget(i, target(*t)),
            Instruction::Goto_w(t) => {
                *i = Instruction::Goto_w(i32::from(target(
                    u16::try_from(*t).map_err(|_| Refusal::TooLarge)?,
                )));
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
                let here = i64::from(at[k]);
                let abs = |rel: i32| target((k as i64 + i64::from(rel)) as u16);
                let mut t = ts.clone();
                t.default = (i64::from(abs(ts.default)) - here) as i32;
                t.offsets = ts
                    .offsets
                    .iter()
                    .map(|o| (i64::from(abs(*o)) - here) as i32)
                    .collect();
                *i = Instruction::Tableswitch(t);
            }
            Instruction::Lookupswitch(ls) => {
                let here = i64::from(at[k]);
                let abs = |rel: i32| target((k as i64 + i64::from(rel)) as u16);
                let mut t = ls.clone();
                t.default = (i64::from(abs(ls.default)) - here) as i32;
                t.pairs = ls
                    .pairs
                    .iter()
                    .map(|(m, o)| (*m, (i64::from(abs(*o)) - here) as i32))
                    .collect();
                *i = Instruction::Lookupswitch(t);
            }
            _ => {}
        }
    }
    for e in exception_table.iter_mut() {
        e.range_pc =
            start[usize::from(e.range_pc.start).min(n)]..start[usize::from(e.range_pc.end).min(n)];
        e.handler_pc = start[usize::from(e.handler_pc).min(n)];
    }
    let end = u16::try_from(new.len()).map_err(|_| Refusal::TooLarge)?;
    let body_start = match blocks.get(&0) {
        Some(b) if b.skipped => at[0],
        _ => 0,
    };
    if let Some(h) = &handler {
        new.extend(h.iter().cloned());
        exception_table.push(ExceptionTableEntry {
            range_pc: at[0]..end,
            handler_pc: end,
            catch_type: 0,
        });
    }
    let new_offsets = byte_offsets(&new)?;
    if *new_offsets.last().unwrap_or(&0) > 65_535 {
        return Err(Refusal::TooLarge);
    }
    // Old byte offsets to new ones, through instruction indices.
    let to_new_byte = |old_byte: u32, is_start: bool| -> Option<u32> {
        let k = index_at(&old_offsets, old_byte)?;
        let idx = if is_start && k == 0 {
            0
        } else {
            start[usize::from(k)]
        };
        new_offsets.get(usize::from(idx)).copied()
    };
    let mut has_frames = false;
    for a in attributes.iter_mut() {
        match a {
            Attribute::LineNumberTable { line_numbers, .. } => {
                for l in line_numbers.iter_mut() {
                    l.start_pc = start[usize::from(l.start_pc).min(n)];
                }
            }
            Attribute::LocalVariableTable { variables, .. } => {
                move_ranges(variables, &to_new_byte, body_start, &new_offsets)?;
            }
            Attribute::LocalVariableTypeTable { variable_types, .. } => {
                for v in variable_types.iter_mut() {
                    let (s, e) = (
                        u32::from(v.start_pc),
                        u32::from(v.start_pc) + u32::from(v.length),
                    );
                    let ns = to_new_byte(s, true)
                        .ok_or(Refusal::Unsupported("a local variable range".into()))?;
                    let ne = to_new_byte(e, false)
                        .ok_or(Refusal::Unsupported("a local variable range".into()))?;
                    v.start_pc = u16::try_from(ns).map_err(|_| Refusal::TooLarge)?;
                    v.length = u16::try_from(ne - ns).map_err(|_| Refusal::TooLarge)?;
                }
            }
            Attribute::StackMapTable { frames: table, .. } => {
                has_frames = true;
                let mut decoded = frames::decode(table, &initial)?;
                for f in decoded.iter_mut() {
                    f.at = target(f.at);
                    for t in f.locals.iter_mut().chain(f.stack.iter_mut()) {
                        remap_uninitialized(t, &old_offsets, &at, &new_offsets)?;
                    }
                    if handler.is_some() {
                        f.locals = frames::with_local_at(
                            &f.locals,
                            usize::from(t0),
                            VerificationType::Long,
                        );
                    }
                }
                if handler.is_some() {
                    decoded.push(Frame {
                        at: end,
                        locals: frames::with_local_at(
                            &initial,
                            usize::from(t0),
                            VerificationType::Long,
                        ),
                        stack: vec![VerificationType::Object {
                            cpool_index: throwable,
                        }],
                    });
                }
                if decoded.first().is_some_and(|f| f.at == 0) {
                    return Err(Refusal::Unsupported(
                        "a stack map frame at the first instruction".into(),
                    ));
                }
                *table = frames::encode(decoded)?;
            }
            Attribute::RuntimeVisibleTypeAnnotations { .. }
            | Attribute::RuntimeInvisibleTypeAnnotations { .. } => {
                return Err(Refusal::Unsupported("type annotations on code".into()));
            }
            _ => {}
        }
    }
    if !has_frames && let Some(name_index) = table_name {
        attributes.push(Attribute::StackMapTable {
            name_index,
            frames: frames::encode(vec![Frame {
                at: end,
                locals: frames::with_local_at(&initial, usize::from(t0), VerificationType::Long),
                stack: vec![VerificationType::Object {
                    cpool_index: throwable,
                }],
            }])?,
        });
    }
    *code = new;
    *max_locals = max_locals.saturating_add(extra_locals);
    *max_stack = max_stack.saturating_add(extra_stack);
    Ok(())
}

fn move_ranges(
    variables: &mut [LocalVariableTable],
    to_new_byte: &dyn Fn(u32, bool) -> Option<u32>,
    _body_start: u16,
    _new_offsets: &[u32],
) -> Result<(), Refusal> {
    for v in variables.iter_mut() {
        let (s, e) = (
            u32::from(v.start_pc),
            u32::from(v.start_pc) + u32::from(v.length),
        );
        let ns =
            to_new_byte(s, true).ok_or(Refusal::Unsupported("a local variable range".into()))?;
        let ne =
            to_new_byte(e, false).ok_or(Refusal::Unsupported("a local variable range".into()))?;
        v.start_pc = u16::try_from(ns).map_err(|_| Refusal::TooLarge)?;
        v.length = u16::try_from(ne.saturating_sub(ns)).map_err(|_| Refusal::TooLarge)?;
    }
    Ok(())
}

/// An `Uninitialized` type names the byte offset of its `new`: moved too.
fn remap_uninitialized(
    t: &mut VerificationType,
    old_offsets: &[u32],
    at: &[u16],
    new_offsets: &[u32],
) -> Result<(), Refusal> {
    if let VerificationType::Uninitialized { offset } = t {
        let k = index_at(old_offsets, u32::from(*offset)).ok_or(Refusal::Unsupported(
            "an uninitialized type's offset".into(),
        ))?;
        let b = new_offsets
            .get(usize::from(at[usize::from(k)]))
            .copied()
            .ok_or(Refusal::TooLarge)?;
        *offset = u16::try_from(b).map_err(|_| Refusal::TooLarge)?;
    }
    Ok(())
}

/// The frame a method starts with: `this` and its parameters.
fn initial_frame(
    class: &mut ClassFile<'_>,
    mi: usize,
    owner: &str,
) -> Result<Vec<VerificationType>, Refusal> {
    let m = &class.methods[mi];
    let descriptor = utf8(class, m.descriptor_index);
    let name = utf8(class, m.name_index);
    let is_static = is_static(m.access_flags);
    let (params, _) = split_descriptor(&descriptor)
        .ok_or_else(|| Refusal::Malformed("a method descriptor".into()))?;
    let mut out = Vec::new();
    if !is_static {
        if name == "<init>" {
            out.push(VerificationType::UninitializedThis);
        } else {
            let c = class
                .constant_pool
                .add_class(owner)
                .map_err(|e| Refusal::Unsupported(e.to_string()))?;
            out.push(VerificationType::Object { cpool_index: c });
        }
    }
    for p in params {
        out.push(match p.as_bytes()[0] {
            b'Z' | b'B' | b'C' | b'S' | b'I' => VerificationType::Integer,
            b'J' => VerificationType::Long,
            b'F' => VerificationType::Float,
            b'D' => VerificationType::Double,
            b'[' => {
                let c = class
                    .constant_pool
                    .add_class(p.as_str())
                    .map_err(|e| Refusal::Unsupported(e.to_string()))?;
                VerificationType::Object { cpool_index: c }
            }
            _ => {
                let c = class
                    .constant_pool
                    .add_class(&p[1..p.len() - 1])
                    .map_err(|e| Refusal::Unsupported(e.to_string()))?;
                VerificationType::Object { cpool_index: c }
            }
        });
    }
    Ok(out)
}
