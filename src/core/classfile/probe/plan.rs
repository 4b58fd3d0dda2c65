//! Planning a probe on a class: which method, which instructions get site
//! code (per site kind: a line's runs, a method's entry or returns, every
//! write of a field), and which values the site hands the helper (the
//! recorded locals or arguments, the fields the condition reads, and what
//! an exit or a write has on its stack). Planning changes nothing; the
//! helper is generated from the same plan that [`super::insert`] follows.

use std::collections::BTreeMap;

use ristretto_classfile::ClassFile;
use ristretto_classfile::attributes::{Attribute, Instruction};

use super::read::{MethodView, byte_offsets, field_ref, method_name, this_name, utf8, view};
use super::{
    Column, Kind, ProbeSpec, RecordLayout, Refusal, Site, Source, code_of, cond, find_method,
    is_static,
};
use crate::model::signature::{java_name, split_method_descriptor};

mod writers;
use writers::old_static;
pub use writers::other_writers;

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
    /// Every method timed (an Exit with no method): each method's
    /// argument names, by method name.
    pub arguments: BTreeMap<String, Vec<super::every::Argument>>,
    /// An exit timing its method's calls: the call sites, in code order.
    pub calls: Vec<super::callees::Call>,
    /// The sums they add to, as the record names them.
    pub callees: Vec<crate::model::callees::CalleeSite>,
    /// A field write in one class: each site's `Class.method:line`, in
    /// the order of `sites` (the number a record holds).
    pub site_labels: Vec<String>,
    /// A write of a static field the helper may read (not `private`,
    /// declared by the class itself), whose old value no condition reads:
    /// the helper reads the old value for a record only, once its slot is
    /// claimed. The site would otherwise read it on every call, and the
    /// line of a field other threads write misses each time.
    pub old_static: Option<(String, String, String)>,
}

impl Plan {
    pub fn layout(&self) -> RecordLayout {
        let columns: Vec<Column> = self.columns.iter().filter(|c| c.record).cloned().collect();
        RecordLayout {
            prim_width: columns.iter().filter(|c| c.kind != Kind::Ref).count(),
            ref_width: columns.iter().filter(|c| c.kind == Kind::Ref).count(),
            columns,
            has_duration: self.site == Site::Exit,
            arguments: self.arguments.clone(),
            callees: self.callees.clone(),
            sites: self.site_labels.clone(),
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
                    Source::Returned
                        | Source::Thrown
                        | Source::Written
                        | Source::Old
                        | Source::Callers
                        | Source::Callees
                        | Source::Path { .. }
                        | Source::PathNull(_)
                )
            })
            .collect()
    }

    /// Whether the probe times every method of the class (an exit with
    /// no method): the sites push per method what [`Source::Args`] and
    /// [`Source::Where`] are.
    pub fn every_method(&self) -> bool {
        self.columns.iter().any(|c| c.source == Source::Args)
    }

    /// Line, Entry and FieldWrite sites push every column, in order (a
    /// written value is already on the stack, duplicated, first, and the
    /// old value read right after it), but the callers, which the helper
    /// takes itself.
    pub fn pushed_all(&self) -> Vec<&Column> {
        self.columns
            .iter()
            .filter(|c| match c.source {
                Source::Callers | Source::Path { .. } | Source::PathNull(_) => false,
                Source::Old => self.old_static.is_none(),
                _ => true,
            })
            .collect()
    }
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
    format!("({ret}J{others}{})V", callee_params(plan))
}

/// An exit's parameters for its callees' sums, after the others.
fn callee_params(plan: &Plan) -> String {
    if plan.callees.is_empty() {
        String::new()
    } else {
        super::callees::params(plan.callees.len())
    }
}

pub fn threw_descriptor(plan: &Plan) -> String {
    let others: String = plan
        .pushed()
        .iter()
        .map(|c| c.kind.param(&c.descriptor))
        .collect();
    format!("(Ljava/lang/Object;J{others}{})V", callee_params(plan))
}

pub(super) fn column(name: &str, descriptor: &str, source: Source, record: bool) -> Column {
    Column {
        name: name.to_string(),
        kind: Kind::of(descriptor),
        descriptor: descriptor.to_string(),
        type_name: java_name(descriptor),
        source,
        record,
    }
}

fn this_column(owner: &str) -> Column {
    column("this", &format!("L{owner};"), Source::Local(0), true)
}

/// What planning one site kind yields, before the condition's fields and
/// the values the site has on its stack are added.
pub(super) struct Sites {
    pub(super) sites: BTreeMap<usize, Vec<u16>>,
    pub(super) columns: Vec<Column>,
    pub(super) returns: String,
}

/// Plans `spec` on `class`.
pub fn plan(class: &ClassFile<'_>, spec: &ProbeSpec) -> Result<Plan, Refusal> {
    let narrowed;
    let spec = if spec.only_condition {
        narrowed = ProbeSpec {
            locals: Some(match &spec.condition {
                Some(c) => cond::names(c).into_iter().map(|(n, _)| n).collect(),
                None => Vec::new(),
            }),
            ..spec.clone()
        };
        &narrowed
    } else {
        spec
    };
    let owner = this_name(class);
    let Sites {
        sites,
        mut columns,
        returns,
    } = match &spec.site {
        Site::FieldWrite {
            owner: f_owner,
            name,
            descriptor,
            writers,
        } => field_writes(class, spec, f_owner, name, descriptor, writers)?,
        Site::Line { line } => line_runs(class, spec, *line, &owner)?,
        Site::Exit if spec.method.is_none() => super::every::every_exit(class, spec)?,
        Site::Entry | Site::Exit => entry_or_exit(class, spec, &owner)?,
    };
    if let Some(c) = &spec.condition {
        condition_fields(class, spec, c, &sites, &mut columns)?;
    }
    super::paths::bases(class, spec, &sites, &mut columns)?;
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
    if let Site::FieldWrite { writers, .. } = &spec.site {
        // Across writers each class's `this` is its own type, and the
        // helper takes one descriptor: it goes as an Object, null where
        // a site has none.
        if !writers.is_empty() {
            columns.push(column("this", "Ljava/lang/Object;", Source::Writer, true));
        } else if sites.keys().all(|m| {
            !is_static_method(class, *m) && utf8(class, class.methods[*m].name_index) != "<init>"
        }) {
            columns.push(this_column(&owner));
        }
        columns.push(match writers.is_empty() {
            true => column(SITE, "I", Source::Where, true),
            false => column(SITE, "Ljava/lang/String;", Source::Where, true),
        });
    }
    let site_labels = match &spec.site {
        Site::FieldWrite { writers, .. } if writers.is_empty() => sites
            .iter()
            .flat_map(|(&mi, at)| {
                at.iter()
                    .map(move |&i| super::read::site_text(class, mi, i))
            })
            .collect(),
        _ => Vec::new(),
    };
    let (calls, callees) = if spec.times_callees() {
        let mi = sites.keys().next().copied().unwrap_or_default();
        columns.push(column(
            "callees",
            "Ljava/lang/String;",
            Source::Callees,
            true,
        ));
        super::callees::calls(class, mi)?
    } else {
        (Vec::new(), Vec::new())
    };
    if spec.callers > 0 {
        // Last but the paths', so the sites' and the helper's entries
        // pass it as null.
        columns.push(column(
            "callers",
            "Ljava/lang/String;",
            Source::Callers,
            true,
        ));
    }
    super::paths::values(class, spec, &mut columns)?;
    let plan = Plan {
        sites,
        columns,
        site: spec.site.clone(),
        returns,
        arguments: match (&spec.site, &spec.method) {
            (Site::Exit, None) => super::every::argument_names(class),
            _ => BTreeMap::new(),
        },
        calls,
        callees,
        site_labels,
        old_static: old_static(class, spec),
    };
    // A helper method takes at most 255 parameter slots.
    let exit_slots: usize = split_method_descriptor(&exit_descriptor(&plan))
        .map(|(ps, _)| ps.iter().map(|d| usize::from(Kind::of(d).slots())).sum())
        .unwrap_or(0);
    if plan.site == Site::Exit && exit_slots > 255 {
        return Err(Refusal::TooLarge);
    }
    if let Some(c) = &spec.condition {
        cond::check(c, &plan)?;
    }
    Ok(plan)
}

/// Every `putfield`/`putstatic` of the field, in every method with code
/// (or only the one the spec names).
fn field_writes(
    class: &ClassFile<'_>,
    spec: &ProbeSpec,
    f_owner: &str,
    name: &str,
    descriptor: &str,
    writers: &[String],
) -> Result<Sites, Refusal> {
    let this = this_name(class);
    if this != f_owner && declares(class, name) {
        return Err(Refusal::Hides {
            class: this.replace('/', "."),
            field: name.to_string(),
        });
    }
    // The field as this class's code names it: through its declaring
    // class, or (an inherited field) through one of the chosen writers,
    // which declares no field of that name.
    let names_it = |o: &str| o == f_owner || writers.iter().any(|w| w == o);
    let only = match &spec.method {
        Some(m) => Some(find_method(class, m)?),
        None => None,
    };
    let mut sites: BTreeMap<usize, Vec<u16>> = BTreeMap::new();
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
                && field_ref(class, *r)
                    .is_some_and(|(o, n, d)| names_it(&o) && n == name && d == descriptor)
            {
                sites.entry(i).or_default().push(k as u16);
            }
        }
    }
    if sites.is_empty() {
        return Err(Refusal::NoWrite {
            class: this.replace('/', "."),
            owner: f_owner.replace('/', "."),
            name: name.to_string(),
        });
    }
    Ok(Sites {
        sites,
        columns: vec![
            column(name, descriptor, Source::Written, true),
            column(OLD_VALUE, descriptor, Source::Old, true),
        ],
        returns: "V".into(),
    })
}

/// Whether `class` declares a field named `name`.
fn declares(class: &ClassFile<'_>, name: &str) -> bool {
    class
        .fields
        .iter()
        .any(|f| utf8(class, f.name_index) == name)
}

/// The method a Line, Entry or Exit probe names.
fn named_method(class: &ClassFile<'_>, spec: &ProbeSpec) -> Result<(usize, MethodView), Refusal> {
    let Some(mref) = &spec.method else {
        return Err(Refusal::NoMethod {
            name: String::new(),
            descriptor: String::new(),
        });
    };
    let mi = find_method(class, mref)?;
    Ok((mi, view(class, mi)?))
}

/// A local in scope at a site: name, descriptor, slot.
pub(super) type Local = (String, String, u16);

/// The first instruction of each run of `line`, and the locals to record
/// there.
fn line_runs(
    class: &ClassFile<'_>,
    spec: &ProbeSpec,
    line: u32,
    owner: &str,
) -> Result<Sites, Refusal> {
    let (mi, v) = named_method(class, spec)?;
    if v.name == "<clinit>" {
        return Err(Refusal::StaticInitializer);
    }
    let label = v.label();
    let mut starts: Vec<u16> = v
        .lines
        .iter()
        .filter(|(_, l)| u32::from(*l) == line)
        .map(|(pc, _)| *pc)
        .collect();
    starts.sort_unstable();
    starts.dedup();
    if starts.is_empty() {
        return Err(Refusal::NoLine {
            method: label,
            line,
        });
    }
    if v.name == "<init>" {
        let sup = super_call(class, &v.code).unwrap_or(usize::MAX);
        starts.retain(|s| usize::from(*s) > sup);
        if starts.is_empty() {
            return Err(Refusal::Constructor);
        }
    }
    let offsets = byte_offsets(&v.code)?;
    let in_scope = |at: u16| -> Vec<Local> {
        let pc = offsets[usize::from(at)];
        let mut out: Vec<Local> = v
            .locals
            .iter()
            .flatten()
            .filter(|l| l.start <= pc && pc < l.start + l.length)
            .map(|l| (l.name.clone(), l.descriptor.clone(), l.slot))
            .collect();
        out.sort_by_key(|x| x.2);
        out
    };
    let outer = captured_columns(class, spec, v.is_static);
    let wanted = wanted_locals(spec, &v, &in_scope(starts[0]), &outer)?;
    let heads = super::paths::locals(spec, &in_scope(starts[0]), &wanted);
    // Another run of the line gets the probe only where the same
    // locals are in the same slots.
    starts.retain(|s| {
        let here = in_scope(*s);
        wanted.iter().chain(&heads).all(|w| here.contains(w))
    });
    let mut columns = Vec::new();
    let want_this = !v.is_static
        && spec
            .locals
            .as_ref()
            .is_none_or(|n| n.iter().any(|x| x == "this"));
    if want_this {
        columns.push(this_column(owner));
    }
    for (n, d, slot) in wanted {
        columns.push(column(&n, &d, Source::Local(slot), true));
    }
    for (n, d, slot) in heads {
        columns.push(column(&n, &d, Source::Local(slot), false));
    }
    columns.extend(outer);
    Ok(Sites {
        sites: BTreeMap::from([(mi, starts)]),
        columns,
        returns: "V".into(),
    })
}

/// The locals a line probe records: every one in scope at the line's
/// first run (but `this`), or those the spec names, each refused when
/// the method has no table or no such local there.
fn wanted_locals(
    spec: &ProbeSpec,
    v: &MethodView,
    first: &[Local],
    outer: &[Column],
) -> Result<Vec<Local>, Refusal> {
    let Some(names) = &spec.locals else {
        return Ok(first
            .iter()
            .filter(|(n, ..)| v.is_static || n != "this")
            .cloned()
            .collect());
    };
    let mut out = Vec::new();
    let local = |n: &&String| *n != "this" && !outer.iter().any(|c| &c.name == *n);
    for n in names.iter().filter(local) {
        // A name the condition reads that is no local here is left to
        // the condition's own lookup (a field), which refuses it if not.
        let in_scope = first.iter().any(|(x, ..)| x == n);
        if spec.only_condition && !in_scope {
            continue;
        }
        if v.locals.is_none() {
            return Err(Refusal::NoLocalTable {
                method: v.label(),
                name: n.clone(),
            });
        }
        match first.iter().find(|(x, ..)| x == n) {
            Some(l) => out.push(l.clone()),
            None => {
                return Err(Refusal::NoLocal {
                    method: v.label(),
                    name: n.clone(),
                    in_scope: first.iter().map(|x| x.0.clone()).collect(),
                });
            }
        }
    }
    Ok(out)
}

/// Method entry (the first instruction) or every return, and the
/// arguments to record.
fn entry_or_exit(class: &ClassFile<'_>, spec: &ProbeSpec, owner: &str) -> Result<Sites, Refusal> {
    let (mi, v) = named_method(class, spec)?;
    match v.name.as_str() {
        "<init>" => return Err(Refusal::Constructor),
        "<clinit>" => return Err(Refusal::StaticInitializer),
        _ => {}
    }
    let (params, returns) = split_method_descriptor(&v.descriptor)
        .ok_or_else(|| Refusal::Malformed("a method descriptor".into()))?;
    let args = arguments(&v, &params);
    let mut columns = Vec::new();
    if !v.is_static
        && spec
            .locals
            .as_ref()
            .is_some_and(|l| l.iter().any(|x| x == "this"))
    {
        columns.push(this_column(owner));
    }
    let want = |n: &str| {
        spec.locals
            .as_ref()
            .is_none_or(|l| l.iter().any(|x| x == n))
    };
    for (n, d, s) in &args {
        if want(n) || super::paths::named(spec, n) {
            columns.push(column(n, d, Source::Local(*s), want(n)));
        }
    }
    let outer = captured_columns(class, spec, v.is_static);
    // A name only the condition reads is left to its own lookup.
    if let Some(names) = spec.locals.as_ref().filter(|_| !spec.only_condition) {
        for n in names.iter().filter(|n| *n != "this") {
            if !args.iter().any(|a| &a.0 == n) && !outer.iter().any(|c| &c.name == n) {
                return Err(Refusal::NoLocal {
                    method: v.label(),
                    name: n.clone(),
                    in_scope: args.iter().map(|a| a.0.clone()).collect(),
                });
            }
        }
    }
    columns.extend(outer);
    let at = if spec.site == Site::Entry {
        vec![0]
    } else {
        (0..v.code.len())
            .filter(|k| is_return(&v.code[*k]))
            .map(|k| k as u16)
            .collect()
    };
    Ok(Sites {
        sites: BTreeMap::from([(mi, at)]),
        columns,
        returns,
    })
}

/// A method's arguments: the name the local table gives each (`argN`
/// without one), its descriptor and its slot.
pub(super) fn arguments(v: &MethodView, params: &[String]) -> Vec<Local> {
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
    args
}

/// The condition's names that are no column yet: fields of the class,
/// read at the site.
fn condition_fields(
    class: &ClassFile<'_>,
    spec: &ProbeSpec,
    c: &crate::expr::Parsed,
    sites: &BTreeMap<usize, Vec<u16>>,
    columns: &mut Vec<Column>,
) -> Result<(), Refusal> {
    for (name, column_at) in cond::names(c) {
        if columns.iter().any(|c| c.name == name) || bound(&spec.site, &name) {
            continue;
        }
        if let Site::FieldWrite {
            name: field,
            writers,
            ..
        } = &spec.site
            && !writers.is_empty()
        {
            return Err(Refusal::Condition {
                column: column_at,
                why: format!(
                    "a write probe in several classes reads no fields at its sites: name newValue, oldValue or {field}"
                ),
            });
        }
        // A captured variable goes by its own name (`x` for `val$x`).
        let outer = format!("val${name}");
        let Some(f) = class
            .fields
            .iter()
            .find(|f| utf8(class, f.name_index) == name)
            .or_else(|| {
                class
                    .fields
                    .iter()
                    .find(|f| utf8(class, f.name_index) == outer)
            })
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
                why: format!("{name:?} is an instance field, and the site is in a static method"),
            });
        }
        if !is_static && before_super(class, sites) {
            return Err(Refusal::Condition {
                column: column_at,
                why: format!(
                    "{name:?} is an instance field, and a site runs in a constructor before super() returns"
                ),
            });
        }
        let d = utf8(class, f.descriptor_index);
        columns.push(column(
            &name,
            &d,
            Source::Field {
                name: utf8(class, f.name_index),
                is_static,
            },
            false,
        ));
    }
    Ok(())
}

/// Names an event binds (the condition reads them from the site's stack).
fn bound(site: &Site, name: &str) -> bool {
    matches!(
        (site, name),
        (Site::Exit, "returnValue" | "exception")
            | (Site::FieldWrite { .. }, "newValue" | OLD_VALUE)
    )
}

/// The column that holds where a write is (`Class.method:line`).
pub const SITE: &str = "site";

/// The name a write's old value goes by (as the wire's change shows it).
pub const OLD_VALUE: &str = "oldValue";

/// The variables an anonymous or local class captured from its enclosing
/// method (its instance `val$x` fields), as `(x, field name, descriptor)`.
pub fn captured(class: &ClassFile<'_>) -> Vec<(String, String, String)> {
    class
        .fields
        .iter()
        .filter(|f| {
            !f.access_flags
                .contains(ristretto_classfile::FieldAccessFlags::STATIC)
        })
        .filter_map(|f| {
            let field = utf8(class, f.name_index);
            let name = field.strip_prefix("val$")?.to_string();
            Some((name, field, utf8(class, f.descriptor_index)))
        })
        .collect()
}

/// The captured variables a probe in an instance method records: every
/// one when the spec asks for every local, else those it names.
fn captured_columns(class: &ClassFile<'_>, spec: &ProbeSpec, is_static: bool) -> Vec<Column> {
    if is_static {
        return Vec::new();
    }
    captured(class)
        .into_iter()
        .map(|(n, field, d)| {
            let wanted = spec.locals.as_ref().is_none_or(|l| l.contains(&n));
            let source = Source::Field {
                name: field,
                is_static: false,
            };
            (wanted, column(&n, &d, source, wanted))
        })
        .filter(|(wanted, c)| *wanted || super::paths::named(spec, &c.name))
        .map(|(_, c)| c)
        .collect()
}

/// The index of a constructor's own `super(…)` or `this(…)` call: the
/// first `invokespecial <init>` that no earlier `new` is waiting for (an
/// argument such as `new StringBuilder(…)` is constructed first).
pub fn super_call(class: &ClassFile<'_>, code: &[Instruction]) -> Option<usize> {
    let mut pending = 0usize;
    for (k, i) in code.iter().enumerate() {
        match i {
            Instruction::New(_) => pending += 1,
            Instruction::Invokespecial(r)
                if method_name(class, *r).as_deref() == Some("<init>") =>
            {
                if pending == 0 {
                    return Some(k);
                }
                pending -= 1;
            }
            _ => {}
        }
    }
    None
}

/// Whether a site is in a constructor at or before its `super()` call,
/// where `this` may not be read.
pub(super) fn before_super(class: &ClassFile<'_>, sites: &BTreeMap<usize, Vec<u16>>) -> bool {
    sites.iter().any(|(m, at)| {
        utf8(class, class.methods[*m].name_index) == "<init>"
            && code_of(&class.methods[*m].attributes)
                .and_then(|ci| match &class.methods[*m].attributes[ci] {
                    Attribute::Code { code, .. } => {
                        Some(super_call(class, code).unwrap_or(usize::MAX))
                    }
                    _ => None,
                })
                .is_some_and(|sup| at.iter().any(|k| usize::from(*k) <= sup))
    })
}

fn is_static_method(class: &ClassFile<'_>, index: usize) -> bool {
    is_static(class.methods[index].access_flags)
}

pub fn is_return(i: &Instruction) -> bool {
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
