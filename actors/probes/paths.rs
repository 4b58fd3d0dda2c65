//! The field paths of a probe's trace expressions, resolved against the
//! loaded classes: each expression's shape and head come from the pure
//! core (the head's declared type from the class file's local variable
//! table), then every step is looked up in the JVM, through the class the
//! value before it declares and up its superclasses, with the declaring
//! class, the field's descriptor and modifiers, and whether each class
//! shares the probed class's loader. The core decides what the helper may
//! read and refuses the rest; this room only gathers the facts.

use crate::classfile::probe::paths::{self as core_paths, PathShape};
use crate::classfile::probe::{
    FieldAt, FieldPath, PathBase, PathStep, ProbeSpec, StepRead, Unresolved,
};
use crate::door::Jvm;
use crate::error::ProbeRefusal;
use crate::expr::Span;
use crate::jdwp::{ObjectId, ReferenceTypeId};
use crate::model::signature::{class_internal_name, java_name, jni_signature};

/// `ACC_PUBLIC` and `ACC_PROTECTED` of a class's modifiers: a protected
/// nested class is public in its class file, which is what the JVM checks.
const PUBLIC_OR_PROTECTED: i32 = 0x1 | 0x4;

/// The paths of `exprs` for `probe` in `target` (the class file of
/// `class`, a Java name), whose loader is `loader`.
pub async fn resolve(
    session: &Jvm,
    loader: ObjectId,
    (class, target): (&str, &[u8]),
    probe: &ProbeSpec,
    exprs: &[String],
) -> Result<Vec<FieldPath>, ProbeRefusal> {
    let owner = class.replace('.', "/");
    let this = jni_signature(class);
    let mut out = Vec::with_capacity(exprs.len());
    for (index, source) in exprs.iter().enumerate() {
        let PathShape { head, steps } = core_paths::shape(index, source)?;
        let mut names = steps;
        let mut bare = false;
        let (base, start) = match head {
            None => (PathBase::This, this.clone()),
            Some((h, column)) => match core_paths::head(target, probe, &h)? {
                Some(descriptor) if h == "this" => (PathBase::This, descriptor),
                Some(descriptor) => (
                    PathBase::Named {
                        name: h,
                        descriptor: descriptor.clone(),
                    },
                    descriptor,
                ),
                // A bare name: a field of the class (`this` is never null,
                // so no null is reported before it).
                None => {
                    bare = true;
                    let at = Span::new(0, h.len());
                    names.insert(0, (h, column, at));
                    (PathBase::This, this.clone())
                }
            },
        };
        let mut descriptor = start;
        let mut resolved = Vec::with_capacity(names.len());
        for (k, (name, column, null_at)) in names.into_iter().enumerate() {
            let mut read = step(session, loader, &descriptor, &name).await?;
            if k == 0
                && bare
                && let StepRead::Unresolved(Unresolved::NoField { .. }) = read
            {
                read = StepRead::Unresolved(Unresolved::NoHead {
                    class: owner.clone(),
                });
            }
            let next = match &read {
                StepRead::Field(f) => Some(f.descriptor.clone()),
                StepRead::Length => Some("I".to_string()),
                StepRead::Unresolved(_) => None,
            };
            resolved.push(PathStep {
                name,
                column,
                null_at,
                read,
            });
            match next {
                Some(d) => descriptor = d,
                // The core refuses it, naming the step.
                None => break,
            }
        }
        out.push(FieldPath {
            index,
            source: source.clone(),
            base,
            steps: resolved,
        });
    }
    Ok(out)
}

/// What `.name` reads on a value declared as `descriptor`.
async fn step(
    session: &Jvm,
    loader: ObjectId,
    descriptor: &str,
    name: &str,
) -> Result<StepRead, ProbeRefusal> {
    if descriptor.starts_with('[') && name == "length" {
        return Ok(StepRead::Length);
    }
    let Some(internal) = class_internal_name(descriptor) else {
        return Ok(StepRead::Unresolved(Unresolved::NotAnObject {
            descriptor: descriptor.to_string(),
        }));
    };
    let classes = session.classes();
    let Some((class, class_loader)) = the_class(session, loader, descriptor).await? else {
        return Ok(StepRead::Unresolved(Unresolved::NotLoaded {
            class: internal.to_string(),
        }));
    };
    for declaring in classes.hierarchy(class).await? {
        let fields = classes.fields(declaring).await?;
        let Some(f) = fields.iter().find(|f| f.name == name) else {
            continue;
        };
        let modifiers = session
            .connection()
            .send(&crate::jdwp::reference_type::Modifiers { ref_type: class })
            .await?;
        let info = classes.info(declaring).await?;
        let declaring_name = class_internal_name(&info.signature)
            .unwrap_or_default()
            .to_string();
        return Ok(StepRead::Field(FieldAt {
            class: internal.to_string(),
            declaring: declaring_name,
            descriptor: f.signature.clone(),
            modifiers: (f.modifiers & 0xffff) as u16,
            class_public: modifiers & PUBLIC_OR_PROTECTED != 0,
            class_in_loader: class_loader == loader,
            declaring_in_loader: classes.loader(declaring).await? == loader,
        }));
    }
    Ok(StepRead::Unresolved(Unresolved::NoField {
        class: internal.to_string(),
    }))
}

/// The loaded copy of the class `descriptor` names that the probed
/// class's loader sees (its own, else the bootstrap loader's, else the
/// only one), and that copy's loader; `None` when none is loaded.
async fn the_class(
    session: &Jvm,
    loader: ObjectId,
    descriptor: &str,
) -> Result<Option<(ReferenceTypeId, ObjectId)>, ProbeRefusal> {
    let classes = session.classes();
    let mut copies = Vec::new();
    for c in classes.by_name(&java_name(descriptor)).await? {
        copies.push((c.id, classes.loader(c.id).await?));
    }
    let pick = copies
        .iter()
        .find(|(_, l)| *l == loader)
        .or_else(|| copies.iter().find(|(_, l)| l.0 == 0))
        .or(if copies.len() == 1 {
            copies.first()
        } else {
            None
        });
    Ok(pick.copied())
}
