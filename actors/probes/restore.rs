//! Taking probes out: one (its helper switched off, its class
//! re-instrumented without it, or given its original bytes back when it
//! was the last), or all of them when the session leaves. Only the
//! connection is needed, so a dying session can still do it.

use super::{Instrumented, Live, ProbesHandle};
use crate::classfile::probe as core;
use crate::connection::ConnectionHandle;
use crate::error::ProbeRefusal;
use crate::jdwp::FieldValue;
use crate::jdwp::class_type::SetValues as SetStatics;
use crate::jdwp::method::Bytecodes;
use crate::jdwp::reference_type::ConstantPool;
use crate::jdwp::virtual_machine::{ClassDef, RedefineClasses};
use crate::jdwp::{ReferenceTypeId, Value};
use crate::jvm::classes::ClassCache;
use crate::model::stale;

/// What taking one probe out did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Removed {
    /// The book knew the stop point as a probe.
    pub known: bool,
    /// Classes that changed since the probe went in (their code no longer
    /// calls its helper: a reload, another tool) and were left as they
    /// run now, rather than given back code that would undo that change.
    pub left_alone: Vec<String>,
}

/// Removes the probe of stop point `id` from the JVM. `keep` keeps its
/// definition in the book (a toggle off).
pub async fn remove(
    conn: &ConnectionHandle,
    classes: &ClassCache,
    probes: &ProbesHandle,
    id: &str,
    keep: bool,
) -> Result<Removed, ProbeRefusal> {
    let point = probes.point(id).await;
    let known = point.is_some();
    let live = match point.and_then(|p| p.live) {
        Some(l) if probes.class(l.target).await.is_some() => Some(l),
        _ => None,
    };
    let Some(live) = live else {
        // Known but not armed (toggled off): only the book changes.
        if !keep {
            probes.disarmed(id, false).await;
        }
        return Ok(Removed {
            known,
            left_alone: Vec::new(),
        });
    };
    switch_off(conn, &live, false).await;
    // Every class it is in goes back in one redefinition: without it, or
    // to its original bytes where it was the last probe; a class whose
    // code no longer calls the helper keeps what it runs.
    let helper = [live.helper_name.replace('.', "/")];
    let mut defs = Vec::new();
    let mut left_alone = Vec::new();
    for target in live.classes() {
        let Some(class) = probes.class(target).await else {
            continue;
        };
        if still_probed(conn, classes, target, &helper).await == Some(false) {
            left_alone.push(class.name.clone());
            continue;
        }
        let rest = probes.specs_in(target, Some(id)).await;
        let classfile = if rest.is_empty() {
            class.original.as_ref().clone()
        } else {
            core::instrument(&class.original, &rest)?
        };
        defs.push(ClassDef {
            ref_type: target,
            classfile,
        });
    }
    let sent = match defs.is_empty() {
        true => Ok(()),
        false => conn
            .send(&RedefineClasses { classes: defs })
            .await
            .map(|_| ())
            .map_err(ProbeRefusal::Jdwp),
    };
    for target in live.classes() {
        classes.invalidate(target);
    }
    probes.disarmed(id, keep).await;
    sent?;
    // Its class runs without it now; where other probes stay, their
    // helpers hold the same original bytes, so this one claims nothing.
    mark_restored(conn, &live).await;
    Ok(Removed {
        known: true,
        left_alone,
    })
}

/// Puts every instrumented class back and switches every helper off
/// (leaving the JVM). Returns the classes restored and the failures.
pub async fn restore_all(
    conn: &ConnectionHandle,
    classes: &ClassCache,
    probes: &ProbesHandle,
) -> (Vec<String>, Vec<(String, String)>) {
    let (lives, instrumented) = probes.forget_all().await;
    for live in &lives {
        switch_off(conn, live, true).await;
    }
    let mut done = Vec::new();
    let mut failed = Vec::new();
    for (target, Instrumented { name, original, .. }) in instrumented {
        // A class changed since its probes went in (another tool
        // redefined it) keeps what it runs now.
        let helpers: Vec<String> = lives
            .iter()
            .filter(|l| l.covers(target))
            .map(|l| l.helper_name.replace('.', "/"))
            .collect();
        if still_probed(conn, classes, target, &helpers).await == Some(false) {
            failed.push((
                name.clone(),
                ProbeRefusal::ChangedSince { class: name }.to_string(),
            ));
            continue;
        }
        match redefine(conn, target, original.as_ref().clone()).await {
            Ok(()) => done.push(name),
            Err(e) => failed.push((name, e.to_string())),
        }
        classes.invalidate(target);
    }
    (done, failed)
}

/// Turns a helper off (and, when its class is restored, marks it so a
/// later attach leaves it alone).
async fn switch_off(conn: &ConnectionHandle, live: &Live, restored: bool) {
    let mut values = vec![FieldValue {
        field: live.fields.live,
        value: Value::Boolean(false),
    }];
    if restored {
        values.push(FieldValue {
            field: live.fields.restored,
            value: Value::Boolean(true),
        });
    }
    // The helper class stays loaded: its ring must not hold the
    // application's objects (or threads) alive after it.
    for field in [live.fields.refs, live.fields.threads] {
        values.push(FieldValue {
            field,
            value: Value::Object {
                tag: crate::jdwp::Tag::Array,
                id: crate::jdwp::ObjectId(0),
            },
        });
    }
    let _ = conn
        .send(&SetStatics {
            class: live.helper,
            values,
        })
        .await;
}

/// Whether the code the JVM runs for `target` calls one of `helpers`
/// (internal names): what the probes installed is still what runs, so
/// giving the class its original bytes loses nothing. `None` when the
/// JVM cannot say (its bytecodes or constant pool cannot be read).
pub(super) async fn still_probed(
    conn: &ConnectionHandle,
    classes: &ClassCache,
    target: ReferenceTypeId,
    helpers: &[String],
) -> Option<bool> {
    let pool = conn.send(&ConstantPool { ref_type: target }).await.ok()?;
    let pool = stale::pool_text_of_jdwp(pool.count, &pool.bytes)?;
    let methods = classes.methods(target).await.ok()?;
    let codes = futures::future::join_all(
        methods
            .iter()
            .filter(|m| !m.is_native() && !m.is_abstract())
            .map(|m| {
                conn.send(&Bytecodes {
                    ref_type: target,
                    method: m.id,
                })
            }),
    )
    .await;
    for code in codes {
        let code = code.ok()?;
        for helper in helpers {
            if stale::names_class(&code, &pool, helper)? {
                return Some(true);
            }
        }
    }
    Some(false)
}

async fn mark_restored(conn: &ConnectionHandle, live: &Live) {
    let _ = conn
        .send(&SetStatics {
            class: live.helper,
            values: vec![FieldValue {
                field: live.fields.restored,
                value: Value::Boolean(true),
            }],
        })
        .await;
}

pub(super) async fn redefine(
    conn: &ConnectionHandle,
    target: ReferenceTypeId,
    bytes: Vec<u8>,
) -> Result<(), ProbeRefusal> {
    conn.send(&RedefineClasses {
        classes: vec![ClassDef {
            ref_type: target,
            classfile: bytes,
        }],
    })
    .await
    .map_err(ProbeRefusal::Jdwp)
}
