//! Field paths a probe reads for its trace expressions (`o.kind`,
//! `li.item.category`, `this.cfg.mode`, a bare `cfg.mode`): what a path
//! looks like ([`shape`]), what its head names at the site ([`head`]), and
//! how the plan carries it. The caller resolves every step against the
//! loaded classes (declaring class, descriptor, modifiers, loaders) and
//! hands the resolved chain in as a [`FieldPath`]; the plan checks that
//! the helper may read each field, adds the columns the site passes (the
//! head, when no column holds it yet) and one value column per path,
//! which the helper fills for a record only, a link at a time with a null
//! check each (`helper/paths.rs`). A probe computes nothing else: a call,
//! arithmetic, indexing or a field the helper may not read is refused with
//! its column.
//!
//! Pure: the loaded classes come in as data.

use ristretto_classfile::ClassFile;

use super::plan::{Local, column};
use super::read::{this_name, utf8};
use super::{Column, ProbeSpec, Refusal, Site, Source};
use crate::expr::{Expr, ExprKind, Span};

/// A trace expression a probe reads: a field path from a local, an
/// argument, a value the site binds, `this`, or a field of the class.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FieldPath {
    /// Its place among the stop point's trace expressions.
    pub index: usize,
    /// As the agent wrote it.
    pub source: String,
    pub base: PathBase,
    pub steps: Vec<PathStep>,
}

/// Where a path starts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PathBase {
    /// A local, an argument, or a value the site binds (`returnValue`,
    /// `exception`, `newValue`, `oldValue`), with its declared type.
    Named { name: String, descriptor: String },
    /// `this`; a bare field name starts here too, its first step that
    /// field (an instance field of `this` or a static of the class).
    This,
}

/// One `.name` of a path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PathStep {
    pub name: String,
    /// 1-based column of the name in the source.
    pub column: usize,
    /// Where a null before this step is reported: the `.` and the name,
    /// as the wire's evaluator reports it.
    pub null_at: Span,
    pub read: StepRead,
}

/// What one step reads, as the loaded classes say.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StepRead {
    Field(FieldAt),
    /// An array's `length`.
    Length,
    /// The step names nothing a probe can read.
    Unresolved(Unresolved),
}

/// A field as the JVM declares it, and where it stands for the helper
/// (a runtime package is a package name and a class loader).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FieldAt {
    /// The class the step reads through (internal name): the declared
    /// type of the value before it.
    pub class: String,
    /// The class that declares the field (internal name).
    pub declaring: String,
    /// The field's descriptor: the declared type of the step's value.
    pub descriptor: String,
    /// The field's access flags (`ACC_PUBLIC` 0x1, `ACC_PRIVATE` 0x2,
    /// `ACC_PROTECTED` 0x4, `ACC_STATIC` 0x8).
    pub modifiers: u16,
    /// `class` is public (a protected nested class is, in its class file).
    pub class_public: bool,
    /// `class`, and the declaring class, were defined by the probed
    /// class's loader.
    pub class_in_loader: bool,
    pub declaring_in_loader: bool,
}

impl FieldAt {
    pub fn is_static(&self) -> bool {
        self.modifiers & 0x8 != 0
    }
    fn is_private(&self) -> bool {
        self.modifiers & 0x2 != 0
    }
}

/// Why a step names nothing a probe can read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Unresolved {
    /// The class the step reads through is not loaded.
    NotLoaded { class: String },
    /// Neither the class nor a superclass declares the field.
    NoField { class: String },
    /// The value before the step is a primitive or an array (descriptor).
    NotAnObject { descriptor: String },
    /// A bare head that is neither a local in scope nor a field.
    NoHead { class: String },
}

/// A path as written: its head (`None`: `this`) and the names after it,
/// each with its column and where a null before it is reported.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PathShape {
    pub head: Option<(String, usize)>,
    pub steps: Vec<(String, usize, Span)>,
}

/// The path trace expression `index` is, or why a probe cannot read it.
pub fn shape(index: usize, source: &str) -> Result<PathShape, Refusal> {
    let refuse = |column: usize, why: &str| Refusal::TraceExpr {
        index,
        expr: source.to_string(),
        column,
        why: why.to_string(),
    };
    let parsed = crate::expr::parse_checked(source)
        .map_err(|e| refuse(e.column, &format!("it does not parse: {e}")))?;
    if parsed.charset.is_some() {
        return Err(refuse(
            source.find('#').map_or(1, |i| i + 1),
            "a charset is not compiled into a probe",
        ));
    }
    let mut steps = Vec::new();
    let mut e: &Expr = &parsed.expr;
    loop {
        match &e.kind {
            ExprKind::Field { target, name } => {
                let dot = Span::new(name.span.start.saturating_sub(1), name.span.end);
                steps.push((name.name.clone(), name.span.column(source), dot));
                e = target;
            }
            ExprKind::This => break,
            ExprKind::Path(ids) => {
                for id in ids[1..].iter().rev() {
                    let dot = Span::new(id.span.start.saturating_sub(1), id.span.end);
                    steps.push((id.name.clone(), id.span.column(source), dot));
                }
                steps.reverse();
                let head = &ids[0];
                return Ok(PathShape {
                    head: Some((head.name.clone(), head.span.column(source))),
                    steps,
                });
            }
            // A call is refused at its method's name.
            ExprKind::Call { name, .. } => {
                return Err(refuse(name.span.column(source), not_a_path(&e.kind)));
            }
            other => return Err(refuse(e.span.column(source), not_a_path(other))),
        }
    }
    steps.reverse();
    Ok(PathShape { head: None, steps })
}

/// Why an expression that is no field path is not compiled.
fn not_a_path(kind: &ExprKind) -> &'static str {
    match kind {
        ExprKind::Call { .. } | ExprKind::New { .. } => {
            "a method call is not compiled into a probe (a probe reads fields only)"
        }
        ExprKind::Index { .. } | ExprKind::Slice { .. } => {
            "indexing is not compiled into a probe (a probe reads fields only)"
        }
        ExprKind::Binary { .. } | ExprKind::Unary { .. } => {
            "a probe records a local, this or a field path as it is: arithmetic and comparisons are not compiled"
        }
        _ => "this form is not compiled into a probe (a probe reads fields only)",
    }
}

/// What `head` names at the site of `spec` in `target`: its declared
/// type when it is `this`, a local or an argument in scope, a captured
/// variable or a value the site binds; `None` when it is none of these
/// (then it can only be a field of the class).
pub fn head(target: &[u8], spec: &ProbeSpec, head: &str) -> Result<Option<String>, Refusal> {
    let class = super::parse(target)?;
    let bare = ProbeSpec {
        locals: None,
        only_condition: false,
        condition: None,
        callers: 0,
        stats: false,
        callees: false,
        paths: Vec::new(),
        ..spec.clone()
    };
    let plan = super::plan::plan(&class, &bare)?;
    if head == "this" {
        return Ok(Some(format!("L{};", this_name(&class))));
    }
    let bound = match (&spec.site, head) {
        (Site::Exit, "returnValue") => Some(Source::Returned),
        (Site::Exit, "exception") => Some(Source::Thrown),
        (Site::FieldWrite { .. }, "newValue") => Some(Source::Written),
        (Site::FieldWrite { .. }, super::OLD_VALUE) => Some(Source::Old),
        _ => None,
    };
    Ok(plan
        .columns
        .iter()
        .find(|c| match &bound {
            Some(s) => c.source == *s,
            None => c.name == head && matches!(c.source, Source::Local(_) | Source::Field { .. }),
        })
        .filter(|c| bound.is_some() || !is_field_of_class(&class, c))
        .map(|c| c.descriptor.clone()))
}

/// A column that reads a field of the class by its own name (not a
/// captured variable, which goes by the name of the local it was).
fn is_field_of_class(class: &ClassFile<'_>, c: &Column) -> bool {
    matches!(&c.source, Source::Field { name, .. } if *name == c.name)
        && class
            .fields
            .iter()
            .any(|f| utf8(class, f.name_index) == c.name)
}

/// The name of a path's value column: as the wire names a trace
/// expression's detail.
pub fn value_name(p: &FieldPath) -> String {
    format!("expr[{}] {}", p.index, p.source)
}

/// The name of the column saying which step of a path met a null.
pub fn null_name(p: &FieldPath) -> String {
    format!("expr[{}]?", p.index)
}

/// The locals among `scope` that paths start from and `wanted` lacks:
/// the site passes them too, unrecorded.
pub(super) fn locals(spec: &ProbeSpec, scope: &[Local], wanted: &[Local]) -> Vec<Local> {
    scope
        .iter()
        .filter(|l| !wanted.iter().any(|w| w.0 == l.0) && named(spec, &l.0))
        .cloned()
        .collect()
}

/// Whether a path starts from the local, argument or bound value `name`.
pub(super) fn named(spec: &ProbeSpec, name: &str) -> bool {
    spec.paths
        .iter()
        .any(|p| matches!(&p.base, PathBase::Named { name: n, .. } if n == name))
}

/// Whether the helper reads the path's first step itself, or the site
/// reads it into a column (`None`): a private field of the class, which
/// only the class's own code may read, from `this` or a static.
fn site_reads_first(class: &ClassFile<'_>, p: &FieldPath) -> Option<(String, bool)> {
    let (
        PathBase::This,
        Some(PathStep {
            name,
            read: StepRead::Field(f),
            ..
        }),
    ) = (&p.base, p.steps.first())
    else {
        return None;
    };
    (f.is_private() && f.declaring == this_name(class)).then(|| (name.clone(), f.is_static()))
}

/// The columns the site passes for the paths' heads: `this`, or a
/// private field of the class the site reads for the helper. Each path
/// is checked first: every step resolved, every field one the helper (or,
/// for the first, the site) may read.
pub(super) fn bases(
    class: &ClassFile<'_>,
    spec: &ProbeSpec,
    sites: &std::collections::BTreeMap<usize, Vec<u16>>,
    columns: &mut Vec<Column>,
) -> Result<(), Refusal> {
    let in_static = sites
        .keys()
        .any(|m| super::is_static(class.methods[*m].access_flags));
    if !spec.paths.is_empty() && spec.method.is_none() && spec.site == Site::Exit {
        let p = &spec.paths[0];
        return Err(refuse(
            p,
            1,
            "a probe on every method of a class records no trace_expr",
        ));
    }
    let owner = this_name(class);
    let helper_package = package(&spec.helper);
    for p in &spec.paths {
        check(
            p,
            &owner,
            helper_package,
            site_reads_first(class, p).is_some(),
        )?;
        if p.base != PathBase::This {
            continue;
        }
        let first_static = matches!(p.steps.first(), Some(PathStep { read: StepRead::Field(f), .. }) if f.is_static());
        if let Some((name, is_static)) = site_reads_first(class, p) {
            let n = format!("this.{name}");
            if !columns.iter().any(|c| c.name == n) {
                let d = match &p.steps[0].read {
                    StepRead::Field(f) => f.descriptor.clone(),
                    _ => String::new(),
                };
                columns.push(column(&n, &d, Source::Field { name, is_static }, false));
            }
            if !is_static && (in_static || super::plan::before_super(class, sites)) {
                return Err(refuse(
                    p,
                    p.steps[0].column,
                    "an instance field, and a site is in a static method or before super()",
                ));
            }
            continue;
        }
        if first_static {
            continue;
        }
        if in_static {
            let at = p.steps.first().map_or(1, |s| s.column);
            return Err(refuse(
                p,
                at,
                "the site is in a static method, which has no this",
            ));
        }
        if !has_this(columns) {
            // A write probe adds its `this` later, where it has one
            // ([`values`] checks).
            if matches!(spec.site, Site::FieldWrite { .. }) {
                continue;
            }
            columns.push(column(
                "this",
                &format!("L{owner};"),
                Source::Local(0),
                false,
            ));
        }
    }
    Ok(())
}

/// Each path's value column, and the column saying which link was null,
/// last in the record (the helper fills both, for a record only).
pub(super) fn values(
    class: &ClassFile<'_>,
    spec: &ProbeSpec,
    columns: &mut Vec<Column>,
) -> Result<(), Refusal> {
    for (k, p) in spec.paths.iter().enumerate() {
        let (base, from) = match &p.base {
            PathBase::Named { name, .. } => (Some(base_column(p, name, &spec.site, columns)?), 0),
            PathBase::This => match site_reads_first(class, p) {
                Some((name, _)) => (Some(format!("this.{name}")), 1),
                None if matches!(p.steps.first(), Some(PathStep { read: StepRead::Field(f), .. }) if f.is_static()) => {
                    (None, 0)
                }
                None if has_this(columns) => (Some("this".to_string()), 0),
                None => {
                    let at = p.steps.first().map_or(1, |s| s.column);
                    return Err(refuse(
                        p,
                        at,
                        "a write probe has this only when every write is in an instance method, after super(), in one class",
                    ));
                }
            },
        };
        let descriptor = match (p.steps.last(), &p.base) {
            (
                Some(PathStep {
                    read: StepRead::Field(f),
                    ..
                }),
                _,
            ) => f.descriptor.clone(),
            (Some(_), _) => "I".to_string(),
            (None, PathBase::Named { descriptor, .. }) => descriptor.clone(),
            (None, PathBase::This) => format!("L{};", this_name(class)),
        };
        columns.push(column(
            &value_name(p),
            &descriptor,
            Source::Path {
                path: k,
                base,
                from,
            },
            true,
        ));
        if !p.steps.is_empty() {
            columns.push(column(&null_name(p), "I", Source::PathNull(k), true));
        }
    }
    Ok(())
}

/// Whether the site passes `this`.
fn has_this(columns: &[Column]) -> bool {
    columns
        .iter()
        .any(|c| c.name == "this" && c.source == Source::Local(0))
}

/// The column a named head is in (a bound value by its source: the
/// written value's column goes by the field's name).
fn base_column(
    p: &FieldPath,
    name: &str,
    site: &Site,
    columns: &[Column],
) -> Result<String, Refusal> {
    let bound = match (site, name) {
        (Site::Exit, "returnValue") => Some(Source::Returned),
        (Site::Exit, "exception") => Some(Source::Thrown),
        (Site::FieldWrite { .. }, "newValue") => Some(Source::Written),
        (Site::FieldWrite { .. }, super::OLD_VALUE) => Some(Source::Old),
        _ => None,
    };
    columns
        .iter()
        .find(|c| match &bound {
            Some(s) => c.source == *s,
            None => c.name == name && matches!(c.source, Source::Local(_) | Source::Field { .. }),
        })
        .map(|c| c.name.clone())
        .ok_or_else(|| refuse(p, 1, &format!("{name:?} is not in scope at the site")))
}

/// Every step resolved, each field one the helper may read (the first
/// one the site reads when `site_first`).
fn check(
    p: &FieldPath,
    owner: &str,
    helper_package: &str,
    site_first: bool,
) -> Result<(), Refusal> {
    let mut before = match &p.base {
        PathBase::Named { name, .. } => name.clone(),
        PathBase::This => "this".to_string(),
    };
    for (i, s) in p.steps.iter().enumerate() {
        match &s.read {
            StepRead::Length => {}
            StepRead::Unresolved(u) => {
                return Err(refuse(p, s.column, &unresolved(u, &before, &s.name, owner)));
            }
            StepRead::Field(_) if i == 0 && site_first => {}
            StepRead::Field(f) => {
                if let Err(why) = readable(f, &s.name, helper_package) {
                    return Err(refuse(p, s.column, &why));
                }
            }
        }
        before = format!("{before}.{}", s.name);
    }
    Ok(())
}

fn unresolved(u: &Unresolved, before: &str, name: &str, owner: &str) -> String {
    match u {
        Unresolved::NotLoaded { class } => {
            format!("{} is not loaded, so its fields are unknown", java(class))
        }
        Unresolved::NoField { class } => format!(
            "{} declares no field {name} (nor does a superclass): a probe reads fields of the declared type, the wire those of the object's class",
            java(class)
        ),
        Unresolved::NotAnObject { descriptor } => format!(
            "{before} is a {}, which has no field {name}",
            crate::model::signature::java_name(descriptor)
        ),
        Unresolved::NoHead { class } => format!(
            "{name:?} is neither a local in scope nor a field of {}",
            java(if class.is_empty() { owner } else { class })
        ),
    }
}

/// Whether the helper, a class of `helper_package` in the probed
/// class's loader, may read `f`: the class it reads through must be
/// public or in its runtime package, and the field public, or package
/// or protected in a class of its runtime package (the helper is no
/// subclass); a private field only its own class reads.
pub fn readable(f: &FieldAt, name: &str, helper_package: &str) -> Result<(), String> {
    let same = |class: &str, in_loader: bool| in_loader && package(class) == helper_package;
    let field = format!("{}.{name}", java(&f.declaring));
    if f.is_private() {
        return Err(format!(
            "{field} is private: only {} itself reads it",
            java(&f.declaring)
        ));
    }
    if !f.class_public && !same(&f.class, f.class_in_loader) {
        return Err(format!(
            "{} is not public and not in the probe's runtime package ({})",
            java(&f.class),
            shown_package(helper_package)
        ));
    }
    if f.modifiers & 0x1 != 0 || same(&f.declaring, f.declaring_in_loader) {
        return Ok(());
    }
    let kind = if f.modifiers & 0x4 != 0 {
        "protected"
    } else {
        "package-private"
    };
    Err(format!(
        "{field} is {kind} in {}, another runtime package than the probe's ({})",
        shown_package(package(&f.declaring)),
        shown_package(helper_package)
    ))
}

fn refuse(p: &FieldPath, column: usize, why: &str) -> Refusal {
    Refusal::TraceExpr {
        index: p.index,
        expr: p.source.clone(),
        column,
        why: why.to_string(),
    }
}

/// The package part of an internal name (`""`: the unnamed package).
fn package(internal: &str) -> &str {
    internal.rsplit_once('/').map_or("", |(p, _)| p)
}

fn shown_package(p: &str) -> String {
    if p.is_empty() {
        "the unnamed package".into()
    } else {
        p.replace('/', ".")
    }
}

fn java(internal: &str) -> String {
    internal.replace('/', ".")
}
