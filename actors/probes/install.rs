//! Putting a probe into the JVM: decide whether a probe can serve the stop
//! point, find the class's original bytes (class roots first, else through
//! its own loader) and check them against the loaded methods, have the
//! pure core write the helper and the instrumented class, define the
//! helper in the target's loader on a parked thread, start it, hand it the
//! original bytes (so a later jvmscope can restore them), and redefine.

use std::sync::Arc;
use std::time::{Duration, Instant};

use super::helper::{define, helper_fields, keep_original};
use super::{Counted, Instrumented, Live, ProbesHandle, RING};
use crate::calls::{Caller, seat};
use crate::classfile::probe::{self as core, MethodRef, ProbeSpec, Site};
use crate::code::{ClassSource, Pinned, loaded};
use crate::door::Jvm;
use crate::error::ProbeRefusal;
use crate::jdwp::virtual_machine::{CapabilitiesNew, ClassDef, RedefineClasses};
use crate::jdwp::{ObjectId, ReferenceTypeId, Value};
use crate::model::classfile::{self, ClassShape};
use crate::model::label::{CodeLabel, LineAt};
use crate::model::stale::Code;
use crate::model::stop_point::{Mode, StopPointSpec, Target};
use crate::stop_points::routes::Stats;

/// How long the helper's set-up calls may take.
const SETUP_BUDGET: Duration = Duration::from_secs(5);

/// What a probe will watch, read off a stop point definition.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SiteChoice {
    /// The class the helper goes beside (its loader and package).
    pub class: String,
    pub method: Option<String>,
    pub site: Site,
    /// The other classes the probe goes into (a write probe's chosen
    /// writers besides `class`).
    pub others: Vec<String>,
}

/// Whether a probe can serve this definition at all (before anything is
/// read from the JVM), and where it would go.
pub fn probe_site(spec: &StopPointSpec) -> Result<SiteChoice, ProbeRefusal> {
    let shape = |shape| ProbeRefusal::Shape {
        what: "lines, method entries and exits, and field writes of one exact class",
        shape,
    };
    let f = &spec.filters;
    if f.thread.is_some() || f.instance.is_some() || f.hit_count.is_some() {
        return Err(shape("filtered by thread, instance or hit count"));
    }
    let choice = site_of(spec)?;
    // A trace expression that is no field path is refused here, before
    // anything is read from the JVM.
    for (i, e) in spec
        .trace()
        .map(|t| t.exprs.as_slice())
        .unwrap_or_default()
        .iter()
        .enumerate()
    {
        core::paths::shape(i, e)?;
    }
    Ok(choice)
}

/// Where a probe would go, by the stop point's target alone.
fn site_of(spec: &StopPointSpec) -> Result<SiteChoice, ProbeRefusal> {
    let shape = |shape| ProbeRefusal::Shape {
        what: "lines, method entries and exits, and field writes of one exact class",
        shape,
    };
    match &spec.target {
        Target::Line(l) if l.class.contains('*') => Err(shape("a wildcard family")),
        Target::Line(l) => Ok(SiteChoice {
            others: Vec::new(),
            class: l.class.clone(),
            method: l.method.clone(),
            site: match l.line {
                Some(line) => Site::Line { line },
                None => Site::Entry,
            },
        }),
        Target::MethodExit(m) if m.class_pattern.contains('*') => Err(ProbeRefusal::Pattern {
            pattern: m.class_pattern.clone(),
        }),
        // Every method of the class, timed: only a duration is worth a
        // record of every call of every method.
        Target::MethodExit(m) if m.method.is_none() && m.stats => {
            Err(shape("statistics of every method of a class"))
        }
        Target::MethodExit(m) if m.method.is_none() && m.min_duration_ms.is_none() => {
            Err(shape("every method of a class without min_duration_ms"))
        }
        Target::MethodExit(m) => Ok(SiteChoice {
            others: Vec::new(),
            class: m.class_pattern.clone(),
            method: m.method.clone(),
            site: Site::Exit,
        }),
        Target::Field(fs) if fs.access || fs.class.contains('*') => {
            Err(shape("a field read or a wildcard"))
        }
        Target::Field(fs) if fs.writers.iter().any(|w| w.contains('*')) => {
            Err(shape("written by a wildcard family"))
        }
        Target::Field(fs) => Ok(field_choice(fs)),
        Target::Exception(_) => Err(shape("an exception stop")),
        Target::Monitor(_) => Err(shape("a monitor stop")),
    }
}

/// A write probe's classes: the chosen writers (the declaring class
/// first when it is one of them), or the declaring class alone.
fn field_choice(fs: &crate::model::stop_point::FieldSpec) -> SiteChoice {
    let mut chosen: Vec<String> = Vec::new();
    for w in std::iter::once(&fs.class)
        .filter(|c| fs.writers.contains(c))
        .chain(&fs.writers)
    {
        if !chosen.contains(w) {
            chosen.push(w.clone());
        }
    }
    let alone = chosen.is_empty() || chosen == [fs.class.clone()];
    let site = |writers: Vec<String>| Site::FieldWrite {
        owner: fs.class.replace('.', "/"),
        name: fs.field.clone(),
        descriptor: String::new(),
        writers,
    };
    if alone {
        return SiteChoice {
            class: fs.class.clone(),
            method: None,
            site: site(Vec::new()),
            others: Vec::new(),
        };
    }
    SiteChoice {
        class: chosen[0].clone(),
        method: None,
        site: site(chosen.iter().map(|c| c.replace('.', "/")).collect()),
        others: chosen[1..].to_vec(),
    }
}

/// A probe installed (the book holds it): the pause its redefinition cost.
pub struct Installed {
    pub pause: Duration,
}

/// Installs a probe for `spec` (checked by [`probe_site`]) whose records
/// carry `stop` and count into `stats`.
pub async fn install(
    session: &Jvm,
    probes: &ProbesHandle,
    stop: &str,
    spec: &StopPointSpec,
    stats: Arc<Stats>,
) -> Result<Installed, ProbeRefusal> {
    if session.read_only() {
        return Err(ProbeRefusal::ReadOnly { action: "a probe" });
    }
    let mut choice = probe_site(spec)?;
    let conn = session.connection();
    let caps = conn.send(&CapabilitiesNew).await?;
    if !caps.can_redefine_classes {
        return Err(ProbeRefusal::CannotRedefine);
    }
    let (target, loader) = the_copy(session, &choice.class).await?;
    // Everything that can refuse without a parked thread is checked first:
    // parking one costs a step on a live thread, and up to a second when no
    // thread passes a line soon.
    let mut targets = going(session, probes, &mut choice, target, loader).await?;
    let planned = match targets.iter().all(|t| t.original.is_some()) {
        true => {
            let asked = Asked::of(probes, &choice, &targets).await?;
            Some(plan(session, loader, &asked, spec, &choice, &targets).await?)
        }
        false => None,
    };
    let (seat, caller) = seated(session).await?;
    let result = async {
        let (probe, helper, instrumented) = match planned {
            Some(planned) => planned,
            None => {
                for t in targets.iter_mut().filter(|t| t.original.is_none()) {
                    let (bytes, array) = through_loader(&caller, &t.name, loader).await?;
                    t.original = Some(Arc::new(
                        verified(session, &t.name, t.id, loader, bytes).await?,
                    ));
                    t.in_jvm = Some(array);
                }
                let asked = Asked::of(probes, &choice, &targets).await?;
                plan(session, loader, &asked, spec, &choice, &targets).await?
            }
        };
        let helper_name = probe.helper.clone();
        let helper_type = define(session, &caller, loader, &helper_name, &helper.bytes).await?;
        let fields = helper_fields(session, helper_type).await?;
        let originals: Vec<(&[u8], Option<ObjectId>)> = targets
            .iter()
            .filter_map(|t| Some((t.original.as_deref()?.as_slice(), t.in_jvm)))
            .collect();
        keep_original(session, &caller, helper_type, &fields, &originals).await?;
        Ok::<_, ProbeRefusal>((probe, helper, helper_type, fields, instrumented))
    }
    .await;
    seat.give_back(session, false).await;
    drop(caller);
    let (probe, helper, helper_type, fields, instrumented) = result?;
    let pause = put_in(session, &targets, instrumented, helper_type, &fields).await?;
    stats.probe.pause_us.store(
        pause.as_micros() as u64,
        std::sync::atomic::Ordering::Relaxed,
    );
    let location = location_of(&choice.class, &probe);
    let trace = spec.trace().cloned().unwrap_or_default();
    let suspends = matches!(spec.mode, Mode::Suspend);
    let live = Live {
        helper: helper_type,
        helper_name: helper_name_of(&probe),
        fields,
        target,
        others: targets[1..].iter().map(|t| t.id).collect(),
        spec: probe,
        layout: helper.layout,
        location,
        base: Counted::from(&stats),
        stats,
        // A suspending one has no trace budget to spend.
        max_hits: trace.max_hits * u32::from(!suspends),
        max_length: trace.max_length,
        suspends,
    };
    let book = targets
        .into_iter()
        .map(|t| {
            let class = Instrumented {
                name: t.name,
                loader,
                original: t.original.unwrap_or_default(),
                probes: Vec::new(),
            };
            (t.id, class)
        })
        .collect();
    probes.armed(stop, spec.clone(), live, book).await?;
    Ok(Installed { pause })
}

/// Redefines every class the probe goes into at once (a write is never
/// seen in one writer and missed in another); the pause it cost. When the
/// JVM refuses, the helper is switched off and claims nothing.
async fn put_in(
    session: &Jvm,
    targets: &[Going],
    instrumented: Vec<Vec<u8>>,
    helper_type: ReferenceTypeId,
    fields: &super::HelperFields,
) -> Result<Duration, ProbeRefusal> {
    let conn = session.connection();
    let began = Instant::now();
    let sent = conn
        .send(&RedefineClasses {
            classes: targets
                .iter()
                .zip(instrumented)
                .map(|(t, classfile)| ClassDef {
                    ref_type: t.id,
                    classfile,
                })
                .collect(),
        })
        .await;
    let pause = began.elapsed();
    for t in targets {
        session.classes().invalidate(t.id);
    }
    let Err(e) = sent else {
        // The lease ran from the helper's `init`; the drain renews it once
        // the probe is in the book.
        let _ = super::helper::renew(conn, helper_type, fields).await;
        return Ok(pause);
    };
    // Refused, nothing changed: the helper claims nothing a later attach
    // could restore. Without an answer the class may have changed, so
    // the helper keeps its claim (a restore checks the code first).
    super::helper::disclaim(conn, helper_type, fields, e.code().is_some()).await;
    Err(match e.code() {
        Some(code) => ProbeRefusal::Redefine {
            class: targets
                .iter()
                .map(|t| t.name.as_str())
                .collect::<Vec<_>>()
                .join(", "),
            code: code.0,
            name: code.name(),
        },
        None => ProbeRefusal::Jdwp(e),
    })
}

/// The classes a probe goes into (its helper's first), each of them
/// loaded once, by `loader`, with its original bytes where they are at
/// hand without a thread (the book's, a reload's, the class roots').
async fn going(
    session: &Jvm,
    probes: &ProbesHandle,
    choice: &mut SiteChoice,
    target: ReferenceTypeId,
    loader: ObjectId,
) -> Result<Vec<Going>, ProbeRefusal> {
    let mut targets = vec![Going {
        name: choice.class.clone(),
        id: target,
        original: None,
        in_jvm: None,
    }];
    let module_of = |id| async move {
        // A JVM before 9 has no modules: every class is in the same none.
        session
            .connection()
            .send(&crate::jdwp::reference_type::Module { ref_type: id })
            .await
            .ok()
    };
    let module = module_of(target).await;
    for name in &choice.others {
        let (id, other_loader) = the_copy(session, name).await?;
        if other_loader != loader {
            return Err(ProbeRefusal::OtherLoader {
                class: name.clone(),
                first: choice.class.clone(),
            });
        }
        // A class of another module reads the helper only if its module
        // reads the helper's and the package is exported to it, which is
        // not checked: a call it may not make would throw.
        if module_of(id).await != module {
            return Err(ProbeRefusal::OtherModule {
                class: name.clone(),
                first: choice.class.clone(),
            });
        }
        targets.push(Going {
            name: name.clone(),
            id,
            original: None,
            in_jvm: None,
        });
    }
    if matches!(&choice.site, Site::FieldWrite { writers, .. } if !writers.is_empty()) {
        declared_descriptor(session, choice).await?;
    }
    for t in &mut targets {
        t.original = match probes.class(t.id).await {
            // A class we instrumented already keeps its original in the book.
            Some(c) => Some(c.original),
            None => match bytes_from_roots(session, probes, &t.name, t.id).await {
                Some(bytes) => Some(Arc::new(
                    verified(session, &t.name, t.id, loader, bytes).await?,
                )),
                None => None,
            },
        };
    }
    Ok(targets)
}

/// One class a probe goes into, and its original bytes once found.
struct Going {
    name: String,
    id: ReferenceTypeId,
    original: Option<Arc<Vec<u8>>>,
    /// The JVM's own `byte[]` of `original`, when it was read through the
    /// loader (pinned by the caller).
    in_jvm: Option<ObjectId>,
}

/// A write probe whose helper goes beside a writer: the field's
/// descriptor, read from the loaded declaring class.
async fn declared_descriptor(session: &Jvm, choice: &mut SiteChoice) -> Result<(), ProbeRefusal> {
    let Site::FieldWrite {
        owner,
        name,
        descriptor,
        ..
    } = &mut choice.site
    else {
        return Ok(());
    };
    let declaring = owner.replace('/', ".");
    let classes = session.classes();
    for copy in classes.by_name(&declaring).await? {
        if let Some(f) = classes
            .fields(copy.id)
            .await?
            .iter()
            .find(|f| &f.name == name)
        {
            *descriptor = f.signature.clone();
            return Ok(());
        }
    }
    Err(ProbeRefusal::Site(core::Refusal::NoField {
        owner: declaring,
        name: name.clone(),
    }))
}

/// The one loaded copy of `class` a probe can go into, and its loader.
async fn the_copy(session: &Jvm, class: &str) -> Result<(ReferenceTypeId, ObjectId), ProbeRefusal> {
    let classes = session.classes();
    let copies = classes.by_name(class).await?;
    let copy = match copies.as_slice() {
        [] => {
            return Err(ProbeRefusal::NotLoaded {
                class: class.to_string(),
            });
        }
        [one] => one.clone(),
        many => {
            return Err(ProbeRefusal::SeveralCopies {
                class: class.to_string(),
                copies: many.len(),
            });
        }
    };
    let loader = classes.loader(copy.id).await?;
    if loader.0 == 0 {
        return Err(ProbeRefusal::BootLoader {
            class: class.to_string(),
        });
    }
    Ok((copy.id, loader))
}

/// What the core instruments, from the stop point's definition.
fn probe_spec(
    spec: &StopPointSpec,
    helper: String,
    method: Option<MethodRef>,
    site: Site,
) -> Result<ProbeSpec, ProbeRefusal> {
    let trace = spec.trace().cloned().unwrap_or_default();
    // Statistics keep no record, so the sites push nothing.
    let stats = matches!(&spec.target, Target::MethodExit(m) if m.stats);
    Ok(ProbeSpec {
        helper,
        method,
        site,
        locals: match &trace.locals {
            _ if stats => Some(Vec::new()),
            crate::model::stop_point::LocalsChoice::All => None,
            crate::model::stop_point::LocalsChoice::None => Some(Vec::new()),
            crate::model::stop_point::LocalsChoice::Only(n) => Some(n.clone()),
        },
        // A suspending probe's sites push only what its condition reads:
        // the agent reads the held thread's frame itself.
        only_condition: matches!(spec.mode, Mode::Suspend),
        condition: match &spec.filters.condition {
            Some(c) => {
                Some(
                    crate::expr::parse_checked(c).map_err(|e| ProbeRefusal::Condition {
                        message: e.to_string(),
                    })?,
                )
            }
            None => None,
        },
        min_duration_ns: match &spec.target {
            Target::MethodExit(m) => m.min_duration_ms.unwrap_or(0).saturating_mul(1_000_000),
            _ => 0,
        },
        ring_capacity: RING,
        // Like a wire snapshot: the hit frame's callers, `frames` of them.
        callers: if stats { 0 } else { trace.frames },
        stats,
        callees: matches!(&spec.target, Target::MethodExit(m) if m.callees),
        paths: Vec::new(),
    })
}

/// Where a probe's records say they come from.
fn location_of(class: &str, probe: &ProbeSpec) -> Arc<str> {
    match (&probe.site, &probe.method) {
        (Site::Line { line }, Some(m)) => {
            CodeLabel::new(class, Some(&m.name), LineAt::At(i64::from(*line))).to_string()
        }
        (Site::Entry, Some(m)) => format!("{class}.{} (entry)", m.name),
        (Site::Exit, Some(m)) => format!("{class}.{} (exit)", m.name),
        (Site::Exit, None) => format!("{class}.* (exit)"),
        (Site::FieldWrite { owner, name, .. }, _) => {
            format!("{}.{name} (write)", owner.replace('/', "."))
        }
        _ => class.to_string(),
    }
    .into()
}

fn helper_name_of(p: &ProbeSpec) -> String {
    p.helper.replace('/', ".")
}

/// A parked thread and a caller on it, for the helper's set-up.
async fn seated(session: &Jvm) -> Result<(seat::Seat, Caller<'_>), ProbeRefusal> {
    let seat = seat::take(session, None)
        .await
        .map_err(|e| ProbeRefusal::NoThread(e.to_string()))?;
    let caller = Caller::new(session, seat.thread, SETUP_BUDGET, false);
    Ok((seat, caller))
}

/// The class file of `class` from this session's own sources, with no
/// thread needed: a reload's bytes first (the class roots may hold an older
/// build), else the class roots. `None`: read it through its loader.
async fn bytes_from_roots(
    session: &Jvm,
    probes: &ProbesHandle,
    class: &str,
    target: ReferenceTypeId,
) -> Option<Vec<u8>> {
    if let Some(b) = probes.reloaded_bytes(target).await {
        return Some(b.as_ref().clone());
    }
    session
        .read_build(
            class,
            &ClassSource {
                class_file: None,
                roots: None,
            },
        )
        .await
        .ok()
        .map(|b| b.bytes)
}

/// `bytes` when they are the class file the JVM loaded for `class`,
/// checked method by method against the loaded bytecodes.
async fn verified(
    session: &Jvm,
    class: &str,
    target: ReferenceTypeId,
    loader: ObjectId,
    bytes: Vec<u8>,
) -> Result<Vec<u8>, ProbeRefusal> {
    let built = classfile::parse(&bytes).map_err(|e| ProbeRefusal::NoBytes {
        class: class.to_string(),
        why: e.0,
    })?;
    let pinned = Pinned {
        name: class.to_string(),
        type_id: target.0,
        loader: loader.0,
        others: Vec::new(),
    };
    let verdict = loaded::compare(session, &pinned, &built, true).await?;
    if let Some(m) = verdict.methods.iter().find(|m| m.code == Code::Differs) {
        return Err(ProbeRefusal::BytesDiffer {
            class: class.to_string(),
            method: m.name.clone(),
        });
    }
    if let Some(c) = verdict.changes.first() {
        return Err(ProbeRefusal::BytesDiffer {
            class: class.to_string(),
            method: format!("{c:?}"),
        });
    }
    Ok(bytes)
}

/// What a plan needs of the book: a fresh helper name, and the probes
/// already in each target (in the order of `targets`).
struct Asked {
    helper_name: String,
    specs: Vec<Vec<ProbeSpec>>,
}

impl Asked {
    async fn of(
        probes: &ProbesHandle,
        choice: &SiteChoice,
        targets: &[Going],
    ) -> Result<Asked, ProbeRefusal> {
        let helper_name = probes.helper_name(&choice.class).await?;
        let mut specs = Vec::with_capacity(targets.len());
        for t in targets {
            specs.push(probes.specs_in(t.id, None).await);
        }
        Ok(Asked { helper_name, specs })
    }
}

/// The probe, its helper class and each class instrumented (in the
/// order of `targets`, the helper's beside the first), planned from the
/// original bytes (every refusal of the core comes from here), its trace
/// expressions' field paths resolved against the loaded classes.
async fn plan(
    session: &Jvm,
    loader: ObjectId,
    asked: &Asked,
    spec: &StopPointSpec,
    choice: &SiteChoice,
    targets: &[Going],
) -> Result<(ProbeSpec, core::Helper, Vec<Vec<u8>>), ProbeRefusal> {
    let original = |t: &Going| t.original.clone().unwrap_or_default();
    let first = original(&targets[0]);
    let shape = classfile::parse(&first).map_err(|e| ProbeRefusal::NoBytes {
        class: choice.class.clone(),
        why: e.0,
    })?;
    if let (Site::FieldWrite { name, .. }, Target::Field(fs)) = (&choice.site, &spec.target)
        && spec.engine == crate::model::stop_point::Engine::Auto
        && fs.writers.is_empty()
    {
        // A probe sees the writes in the declaring class's own code; when
        // other classes may write the field and none were chosen, `auto`
        // leaves it to the wire (asked for by name, the probe goes in).
        core::other_writers(&first, name)?;
    }
    let method = pick_method(&shape, choice)?;
    let mut site = choice.site.clone();
    if let Site::FieldWrite { descriptor, .. } = &mut site
        && descriptor.is_empty()
    {
        *descriptor = field_descriptor(&shape, choice)?;
    }
    let mut probe = probe_spec(spec, asked.helper_name.clone(), method, site)?;
    if let Some(t) = spec.trace().filter(|_| !probe.stats) {
        let target = (choice.class.as_str(), first.as_slice());
        probe.paths = super::paths::resolve(session, loader, target, &probe, &t.exprs).await?;
    }
    let helper = core::helper_class(&first, &probe)?;
    let mut instrumented = Vec::new();
    for (t, specs) in targets.iter().zip(&asked.specs) {
        let mut all = specs.clone();
        all.push(probe.clone());
        instrumented.push(core::instrument(&original(t), &all)?);
    }
    Ok((probe, helper, instrumented))
}

/// Reads `class`'s class file through its loader, on the parked thread:
/// its bytes, and the `byte[]` that holds them in the JVM (pinned by
/// `caller`).
async fn through_loader(
    caller: &Caller<'_>,
    class: &str,
    loader: ObjectId,
) -> Result<(Vec<u8>, ObjectId), ProbeRefusal> {
    let no = |why: String| ProbeRefusal::NoBytes {
        class: class.to_string(),
        why,
    };
    let (decl, get) = caller
        .find_declared(
            "java.lang.ClassLoader",
            "getResourceAsStream",
            "(Ljava/lang/String;)Ljava/io/InputStream;",
        )
        .await
        .map_err(|e| no(e.to_string()))?;
    let name = caller
        .string(&format!("{}.class", class.replace('.', "/")))
        .await?;
    let stream = caller
        .call(Some(loader), decl, &get, vec![name])
        .await
        .map_err(|e| no(e.to_string()))?;
    let Some(stream) = Caller::object(&stream) else {
        return Err(no("its loader has no such resource".into()));
    };
    caller.pin(stream).await?;
    let (decl, read_all) = caller
        .find_declared("java.io.InputStream", "readAllBytes", "()[B")
        .await
        .map_err(|e| no(e.to_string()))?;
    let array = caller
        .call(Some(stream), decl, &read_all, Vec::new())
        .await
        .map_err(|e| no(e.to_string()))?;
    let Some(array) = Caller::object(&array) else {
        return Err(no("readAllBytes returned null".into()));
    };
    caller.pin(array).await?;
    let values = caller.elements(array, usize::MAX).await?;
    let bytes = values
        .into_iter()
        .map(|v| match v {
            Value::Byte(b) => Ok(b as u8),
            _ => Err(no("the resource is not a byte array".into())),
        })
        .collect::<Result<Vec<u8>, _>>()?;
    Ok((bytes, array))
}

/// The method the site is in: by name (one, not overloaded), or for a
/// line, the method whose line table holds it.
fn pick_method(shape: &ClassShape, choice: &SiteChoice) -> Result<Option<MethodRef>, ProbeRefusal> {
    let class = choice.class.clone();
    let named: Vec<_> = match &choice.method {
        Some(m) => shape.methods.iter().filter(|x| &x.name == m).collect(),
        None => shape.methods.iter().collect(),
    };
    let pick = match &choice.site {
        Site::FieldWrite { .. } => return Ok(None),
        Site::Line { line } => {
            let holding: Vec<_> = named
                .into_iter()
                .filter(|m| {
                    m.lines
                        .as_ref()
                        .is_some_and(|l| l.iter().any(|(_, n)| u32::from(*n) == *line))
                })
                .collect();
            match holding.as_slice() {
                [] => {
                    return Err(ProbeRefusal::NoLine { class, line: *line });
                }
                // A line in a lambda is also in no other method; several
                // holders (a field initialiser copied into every
                // constructor) need the wire.
                [one] => *one,
                many => {
                    return Err(ProbeRefusal::Overloaded {
                        class,
                        method: many[0].name.clone(),
                        count: many.len(),
                    });
                }
            }
        }
        // Every method of the class, timed.
        Site::Exit if choice.method.is_none() => return Ok(None),
        Site::Entry | Site::Exit => {
            let method = choice.method.clone().unwrap_or_default();
            match named.as_slice() {
                [] => return Err(ProbeRefusal::NoMethod { class, method }),
                [one] => *one,
                many => {
                    return Err(ProbeRefusal::Overloaded {
                        class,
                        method,
                        count: many.len(),
                    });
                }
            }
        }
    };
    Ok(Some(MethodRef {
        name: pick.name.clone(),
        descriptor: pick.descriptor.clone(),
    }))
}

fn field_descriptor(shape: &ClassShape, choice: &SiteChoice) -> Result<String, ProbeRefusal> {
    let Site::FieldWrite { name, .. } = &choice.site else {
        return Ok(String::new());
    };
    shape
        .fields
        .iter()
        .find(|f| &f.name == name)
        .map(|f| f.descriptor.clone())
        .ok_or_else(|| {
            ProbeRefusal::Site(core::Refusal::NoField {
                owner: choice.class.clone(),
                name: name.clone(),
            })
        })
}
