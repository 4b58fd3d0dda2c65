//! Putting a probe into the JVM: decide whether a probe can serve the stop
//! point, find the class's original bytes (class roots first, else through
//! its own loader) and check them against the loaded methods, have the
//! pure core write the helper and the instrumented class, define the
//! helper in the target's loader on a parked thread, start it, hand it the
//! original bytes (so a later jvmscope can restore them), and redefine.

use std::sync::Arc;
use std::time::{Duration, Instant};

use super::{Counted, HelperFields, Instrumented, Live, Probes, RING};
use crate::actors::error::{CallError, ProbeRefusal, SessionError};
use crate::actors::jvm::classes::MethodInfo;
use crate::actors::session::SessionHandle;
use crate::actors::session::call::{Caller, seat};
use crate::actors::session::code::{ClassSource, Pinned, loaded};
use crate::actors::stop_points::routes::Stats;
use crate::classfile::probe::{self as core, MethodRef, ProbeSpec, Site};
use crate::jdwp::FieldValue;
use crate::jdwp::array_reference::SetValues as SetArray;
use crate::jdwp::array_type::NewInstance as NewArray;
use crate::jdwp::class_type::SetValues as SetStatics;
use crate::jdwp::object_reference::DisableCollection;
use crate::jdwp::virtual_machine::{CapabilitiesNew, ClassDef, RedefineClasses};
use crate::jdwp::{ObjectId, ReferenceTypeId, Tag, Value};
use crate::model::classfile::{self, ClassShape};
use crate::model::stale::{self, Code};
use crate::model::stop_point::{Mode, StopPointSpec, Target};

/// How long the helper's set-up calls may take.
const SETUP_BUDGET: Duration = Duration::from_secs(5);

/// What a probe will watch, read off a stop point definition.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SiteChoice {
    pub class: String,
    pub method: Option<String>,
    pub site: Site,
}

/// Whether a probe can serve this definition at all (before anything is
/// read from the JVM), and where it would go.
pub fn probe_site(spec: &StopPointSpec) -> Result<SiteChoice, ProbeRefusal> {
    let shape = |shape| ProbeRefusal::Shape {
        what: "lines, method entries and exits, and field writes of one exact class",
        shape,
    };
    if let Mode::Trace(trace) = &spec.mode
        && !trace.exprs.is_empty()
    {
        return Err(shape("traced with trace_expr"));
    }
    let f = &spec.filters;
    if f.thread.is_some() || f.instance.is_some() || f.hit_count.is_some() {
        return Err(shape("filtered by thread, instance or hit count"));
    }
    match &spec.target {
        Target::Line(l) if l.class.contains('*') => Err(shape("a wildcard family")),
        Target::Line(l) => Ok(SiteChoice {
            class: l.class.clone(),
            method: l.method.clone(),
            site: match l.line {
                Some(line) => Site::Line { line },
                None => Site::Entry,
            },
        }),
        Target::MethodExit(m)
            if m.class_pattern.contains('*') || m.method.is_none() || !m.exclude.is_empty() =>
        {
            Err(shape("a class pattern or every method"))
        }
        Target::MethodExit(m) => Ok(SiteChoice {
            class: m.class_pattern.clone(),
            method: m.method.clone(),
            site: Site::Exit,
        }),
        Target::Field(fs) if fs.access || fs.class.contains('*') => {
            Err(shape("a field read or a wildcard"))
        }
        Target::Field(fs) => Ok(SiteChoice {
            class: fs.class.clone(),
            method: None,
            site: Site::FieldWrite {
                owner: fs.class.replace('.', "/"),
                name: fs.field.clone(),
                descriptor: String::new(),
            },
        }),
        Target::Exception(_) => Err(shape("an exception stop")),
        Target::Monitor(_) => Err(shape("a monitor stop")),
    }
}

/// A probe installed (the book holds it): the pause its redefinition cost.
pub struct Installed {
    pub pause: Duration,
}

/// Installs a probe for `spec` (checked by [`probe_site`]) whose records
/// carry `stop` and count into `stats`.
pub async fn install(
    session: &SessionHandle,
    probes: &Probes,
    stop: &str,
    spec: &StopPointSpec,
    stats: Arc<Stats>,
) -> Result<Installed, ProbeRefusal> {
    if session.read_only() {
        return Err(ProbeRefusal::ReadOnly { action: "a probe" });
    }
    let choice = probe_site(spec)?;
    let conn = session.connection();
    let caps = conn.send(&CapabilitiesNew).await?;
    if !caps.can_redefine_classes {
        return Err(ProbeRefusal::CannotRedefine);
    }
    let classes = session.classes();
    let (target, loader) = the_copy(session, &choice.class).await?;
    // Everything that can refuse without a parked thread is checked first:
    // parking one costs a step on a live thread, and up to a second when no
    // thread passes a line soon.
    let known = match probes.class(target) {
        // A class we instrumented already keeps its original in the book.
        Some(c) => Some(c.original),
        None => match bytes_from_roots(session, &choice.class, target).await {
            Some(bytes) => Some(Arc::new(
                verified(session, &choice.class, target, loader, bytes).await?,
            )),
            None => None,
        },
    };
    let planned = match &known {
        Some(original) => Some(plan(probes, spec, &choice, target, original)?),
        None => None,
    };
    let (seat, caller) = seated(session).await?;
    let result = async {
        let (original, (probe, helper, instrumented)) = match (known, planned) {
            (Some(original), Some(planned)) => (original, planned),
            _ => {
                let bytes = through_loader(session, &caller, &choice.class, loader).await?;
                let original =
                    Arc::new(verified(session, &choice.class, target, loader, bytes).await?);
                let planned = plan(probes, spec, &choice, target, &original)?;
                (original, planned)
            }
        };
        let helper_name = probe.helper.clone();
        let helper_type = define(session, &caller, loader, &helper_name, &helper.bytes).await?;
        let fields = helper_fields(session, helper_type).await?;
        start(&caller, helper_type).await?;
        keep_original(session, &caller, helper_type, &fields, &original).await?;
        Ok::<_, ProbeRefusal>((probe, helper, helper_type, fields, original, instrumented))
    }
    .await;
    seat.give_back(session, false).await;
    drop(caller);
    let (probe, helper, helper_type, fields, original, instrumented) = result?;
    let began = Instant::now();
    let sent = conn
        .send(&RedefineClasses {
            classes: vec![ClassDef {
                ref_type: target,
                classfile: instrumented,
            }],
        })
        .await;
    let pause = began.elapsed();
    classes.invalidate(target);
    if let Err(e) = sent {
        // The helper stays defined but idle: its lease lapses on its own.
        let _ = conn
            .send(&SetStatics {
                class: helper_type,
                values: vec![FieldValue {
                    field: fields.live,
                    value: Value::Boolean(false),
                }],
            })
            .await;
        return Err(match e.code() {
            Some(code) => ProbeRefusal::Redefine {
                class: choice.class,
                code: code.0,
                name: code.name(),
            },
            None => ProbeRefusal::Jdwp(e),
        });
    }
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
    let class = Instrumented {
        name: choice.class,
        loader,
        original,
        probes: Vec::new(),
    };
    probes.armed(stop, spec.clone(), live, class);
    Ok(Installed { pause })
}

/// The one loaded copy of `class` a probe can go into, and its loader.
async fn the_copy(
    session: &SessionHandle,
    class: &str,
) -> Result<(ReferenceTypeId, ObjectId), ProbeRefusal> {
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
    Ok(ProbeSpec {
        helper,
        method,
        site,
        // A suspending probe's records only give its condition the locals
        // in scope (the agent reads the held thread's frame itself).
        locals: match &trace.locals {
            _ if matches!(spec.mode, Mode::Suspend) => None,
            crate::model::stop_point::LocalsChoice::All => None,
            crate::model::stop_point::LocalsChoice::None => Some(Vec::new()),
            crate::model::stop_point::LocalsChoice::Only(n) => Some(n.clone()),
        },
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
        callers: trace.frames,
    })
}

/// Where a probe's records say they come from.
fn location_of(class: &str, probe: &ProbeSpec) -> Arc<str> {
    match (&probe.site, &probe.method) {
        (Site::Line { line }, Some(m)) => format!("{class}.{}:{line}", m.name),
        (Site::Entry, Some(m)) => format!("{class}.{} (entry)", m.name),
        (Site::Exit, Some(m)) => format!("{class}.{} (exit)", m.name),
        (Site::FieldWrite { name, .. }, _) => format!("{class}.{name} (write)"),
        _ => class.to_string(),
    }
    .into()
}

fn helper_name_of(p: &ProbeSpec) -> String {
    p.helper.replace('/', ".")
}

/// A parked thread and a caller on it, for the helper's set-up.
async fn seated(session: &SessionHandle) -> Result<(seat::Seat, Caller<'_>), ProbeRefusal> {
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
    session: &SessionHandle,
    class: &str,
    target: ReferenceTypeId,
) -> Option<Vec<u8>> {
    if let Some(b) = session.probes().reloaded_bytes(target) {
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
    session: &SessionHandle,
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
    let running = loaded::shape(session, &pinned, true).await?;
    let verdict = stale::compare(&running, &built);
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

/// The probe, its helper class and the instrumented class, planned from
/// the original bytes (pure: every refusal of the core comes from here).
fn plan(
    probes: &Probes,
    spec: &StopPointSpec,
    choice: &SiteChoice,
    target: ReferenceTypeId,
    original: &[u8],
) -> Result<(ProbeSpec, core::Helper, Vec<u8>), ProbeRefusal> {
    let shape = classfile::parse(original).map_err(|e| ProbeRefusal::NoBytes {
        class: choice.class.clone(),
        why: e.0,
    })?;
    if let Site::FieldWrite { name, .. } = &choice.site
        && spec.engine == crate::model::stop_point::Engine::Auto
    {
        // A probe sees the writes in the declaring class's own code; when
        // other classes may write the field, `auto` leaves it to the wire
        // (asked for by name, the probe goes in anyway).
        core::other_writers(original, name)?;
    }
    let method = pick_method(&shape, choice)?;
    let mut site = choice.site.clone();
    if let Site::FieldWrite { descriptor, .. } = &mut site {
        *descriptor = field_descriptor(&shape, choice)?;
    }
    let probe = probe_spec(spec, probes.helper_name(&choice.class), method, site)?;
    let helper = core::helper_class(original, &probe)?;
    let mut all = probes.specs_in(target, None);
    all.push(probe.clone());
    let instrumented = core::instrument(original, &all)?;
    Ok((probe, helper, instrumented))
}

/// Reads `class`'s class file through its loader, on the parked thread.
async fn through_loader(
    session: &SessionHandle,
    caller: &Caller<'_>,
    class: &str,
    loader: ObjectId,
) -> Result<Vec<u8>, ProbeRefusal> {
    let no = |why: String| ProbeRefusal::NoBytes {
        class: class.to_string(),
        why,
    };
    let classes = session.classes();
    let loader_type = classes.type_of(loader).await?.id;
    let (decl, get) = caller
        .find(
            loader_type,
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
    let stream_type = classes.type_of(stream).await?.id;
    let (decl, read_all) = caller
        .find(stream_type, "readAllBytes", "()[B")
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
    values
        .into_iter()
        .map(|v| match v {
            Value::Byte(b) => Ok(b as u8),
            _ => Err(no("the resource is not a byte array".into())),
        })
        .collect()
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
        .ok_or_else(|| ProbeRefusal::NoMethod {
            class: choice.class.clone(),
            method: name.clone(),
        })
}

/// A new `byte[]` in the JVM holding `bytes`, kept from collection until
/// the caller is done.
async fn byte_array(
    session: &SessionHandle,
    caller: &Caller<'_>,
    bytes: &[u8],
) -> Result<ObjectId, ProbeRefusal> {
    let conn = session.connection();
    let array_type = session
        .classes()
        .by_name("byte[]")
        .await?
        .first()
        .map(|c| c.id)
        .ok_or_else(|| ProbeRefusal::NoBytes {
            class: "byte[]".into(),
            why: "the JVM has no byte[] type loaded".into(),
        })?;
    let len = i32::try_from(bytes.len()).map_err(|_| ProbeRefusal::NoBytes {
        class: "helper".into(),
        why: "too large".into(),
    })?;
    let array = conn
        .send(&NewArray {
            array_type,
            length: len,
        })
        .await?
        .id;
    caller.pin(array).await?;
    conn.send(&DisableCollection { object: array }).await.ok();
    conn.send(&SetArray {
        array,
        first_index: 0,
        values: bytes.iter().map(|b| Value::Byte(*b as i8)).collect(),
    })
    .await?;
    Ok(array)
}

/// Defines the helper class in `loader` (`ClassLoader.defineClass`, which
/// JDWP may call although it is protected) and returns its type.
async fn define(
    session: &SessionHandle,
    caller: &Caller<'_>,
    loader: ObjectId,
    name: &str,
    bytes: &[u8],
) -> Result<ReferenceTypeId, ProbeRefusal> {
    let classes = session.classes();
    let loader_type = classes.type_of(loader).await?.id;
    let (decl, define) = caller
        .find(
            loader_type,
            "defineClass",
            "(Ljava/lang/String;[BII)Ljava/lang/Class;",
        )
        .await
        .map_err(define_failed)?;
    let array = byte_array(session, caller, bytes).await?;
    let binary = caller.string(&name.replace('/', ".")).await?;
    let class = caller
        .call(
            Some(loader),
            decl,
            &define,
            vec![
                binary,
                Value::Object {
                    tag: Tag::Array,
                    id: array,
                },
                Value::Int(0),
                Value::Int(bytes.len() as i32),
            ],
        )
        .await
        .map_err(define_failed)?;
    let Some(class) = Caller::object(&class) else {
        return Err(ProbeRefusal::Define {
            exception: "defineClass returned null".into(),
            message: None,
        });
    };
    // A class just defined is not linked: JDWP reads no member of it
    // until it is. `Class.forName(name, true, loader)` links and
    // initialises it (its only static initialiser is a constant).
    let class_type = classes
        .by_name("java.lang.Class")
        .await?
        .first()
        .map(|c| c.id)
        .ok_or_else(|| ProbeRefusal::Define {
            exception: "java.lang.Class is not loaded".into(),
            message: None,
        })?;
    let (decl, for_name) = caller
        .find(
            class_type,
            "forName",
            "(Ljava/lang/String;ZLjava/lang/ClassLoader;)Ljava/lang/Class;",
        )
        .await
        .map_err(define_failed)?;
    let binary = caller.string(&name.replace('/', ".")).await?;
    caller
        .call(
            None,
            decl,
            &for_name,
            vec![
                binary,
                Value::Boolean(true),
                Value::Object {
                    tag: Tag::ClassLoader,
                    id: loader,
                },
            ],
        )
        .await
        .map_err(define_failed)?;
    let t = session
        .connection()
        .send(&crate::jdwp::class_object_reference::ReflectedType {
            class_object: class,
        })
        .await?;
    Ok(t.id)
}

fn define_failed(e: SessionError) -> ProbeRefusal {
    match e {
        SessionError::Call(CallError::Threw {
            exception, message, ..
        }) => ProbeRefusal::Define { exception, message },
        other => ProbeRefusal::Define {
            exception: other.to_string(),
            message: None,
        },
    }
}

/// The helper's fields by the names the core gives them.
async fn helper_fields(
    session: &SessionHandle,
    helper: ReferenceTypeId,
) -> Result<HelperFields, ProbeRefusal> {
    use core::field;
    let fields = session.classes().fields(helper).await?;
    let id = |name: &str| -> Result<crate::jdwp::FieldId, ProbeRefusal> {
        fields
            .iter()
            .find(|f| f.name == name)
            .map(|f| f.id)
            .ok_or_else(|| ProbeRefusal::Define {
                exception: format!("the helper has no field {name}"),
                message: None,
            })
    };
    Ok(HelperFields {
        live: id(field::LIVE)?,
        renew: id(field::RENEW)?,
        head: id(field::HEAD)?,
        tail: id(field::TAIL)?,
        passed: id(field::PASSED)?,
        seq: id(field::SEQ)?,
        prims: id(field::PRIMS)?,
        refs: id(field::REFS)?,
        times: id(field::TIMES)?,
        durs: id(field::DURS)?,
        threads: id(field::THREADS)?,
        calls: id(field::CALLS)?,
        cost_ns: id(field::COST_NS)?,
        cost_samples: id(field::COST_SAMPLES)?,
        errors: id(field::ERRORS)?,
        original: id(field::ORIGINAL)?,
        restored: id(field::RESTORED)?,
    })
}

/// Runs the helper's `init()`: its ring, its live flag, its lease thread.
async fn start(caller: &Caller<'_>, helper: ReferenceTypeId) -> Result<(), ProbeRefusal> {
    let methods = caller.classes().methods(helper).await?;
    let init: MethodInfo = methods
        .iter()
        .find(|m| m.name == core::INIT && m.signature == "()V")
        .cloned()
        .ok_or_else(|| ProbeRefusal::Define {
            exception: "the helper has no init()".into(),
            message: None,
        })?;
    caller
        .call(None, helper, &init, Vec::new())
        .await
        .map_err(define_failed)?;
    Ok(())
}

/// Hands the helper the target's original bytes: a later jvmscope finds
/// them there if this one dies before restoring.
async fn keep_original(
    session: &SessionHandle,
    caller: &Caller<'_>,
    helper: ReferenceTypeId,
    fields: &HelperFields,
    original: &[u8],
) -> Result<(), ProbeRefusal> {
    let array = byte_array(session, caller, original).await?;
    session
        .connection()
        .send(&SetStatics {
            class: helper,
            values: vec![FieldValue {
                field: fields.original,
                value: Value::Object {
                    tag: Tag::Array,
                    id: array,
                },
            }],
        })
        .await?;
    // The static field holds it now.
    let _ = session
        .connection()
        .send(&crate::jdwp::object_reference::EnableCollection { object: array })
        .await;
    Ok(())
}
