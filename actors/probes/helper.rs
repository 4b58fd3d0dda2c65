//! The probe's helper class in the JVM: defined in the target's loader
//! (on a parked thread, through `ClassLoader.defineClass`) and started by
//! its own initialisation (ring, switch, lease thread), its static fields
//! looked up by the names the core gives them, and handed the original
//! bytes of every class the probe goes into, where a later jvmscope finds
//! them.

use super::HelperFields;
use crate::calls::Caller;
use crate::classfile::probe as core;
use crate::door::Jvm;
use crate::error::{CallError, ProbeRefusal, SessionError};
use crate::jdwp::FieldValue;
use crate::jdwp::array_reference::SetValues as SetArray;
use crate::jdwp::array_type::NewInstance as NewArray;
use crate::jdwp::class_type::SetValues as SetStatics;
use crate::jdwp::object_reference::DisableCollection;
use crate::jdwp::{ObjectId, ReferenceTypeId, Tag, Value};
use crate::jvm::classes::MethodInfo;

/// A new array of `array_type` (a Java type name) in the JVM holding
/// `values`, kept from collection until the caller is done.
async fn new_array(
    session: &Jvm,
    caller: &Caller<'_>,
    array_type: &str,
    values: Vec<Value>,
) -> Result<ObjectId, ProbeRefusal> {
    let conn = session.connection();
    let type_id = session
        .classes()
        .by_name(array_type)
        .await?
        .first()
        .map(|c| c.id)
        .ok_or_else(|| ProbeRefusal::NoBytes {
            class: array_type.into(),
            why: format!("the JVM has no {array_type} type loaded"),
        })?;
    let len = i32::try_from(values.len()).map_err(|_| ProbeRefusal::NoBytes {
        class: "helper".into(),
        why: "too large".into(),
    })?;
    let array = conn
        .send(&NewArray {
            array_type: type_id,
            length: len,
        })
        .await?
        .id;
    caller.pin(array).await?;
    conn.send(&DisableCollection { object: array }).await.ok();
    conn.send(&SetArray {
        array,
        first_index: 0,
        values,
    })
    .await?;
    Ok(array)
}

/// A new `byte[]` in the JVM holding `bytes`.
async fn byte_array(
    session: &Jvm,
    caller: &Caller<'_>,
    bytes: &[u8],
) -> Result<ObjectId, ProbeRefusal> {
    let values = bytes.iter().map(|b| Value::Byte(*b as i8)).collect();
    new_array(session, caller, "byte[]", values).await
}

/// A new `Object[]` in the JVM holding the arrays `items`.
async fn object_array(
    session: &Jvm,
    caller: &Caller<'_>,
    items: &[ObjectId],
) -> Result<ObjectId, ProbeRefusal> {
    let values = items
        .iter()
        .map(|id| Value::Object {
            tag: Tag::Array,
            id: *id,
        })
        .collect();
    new_array(session, caller, "java.lang.Object[]", values).await
}

/// Defines the helper class in `loader` (`ClassLoader.defineClass`, which
/// JDWP may call although it is protected) and returns its type.
pub(super) async fn define(
    session: &Jvm,
    caller: &Caller<'_>,
    loader: ObjectId,
    name: &str,
    bytes: &[u8],
) -> Result<ReferenceTypeId, ProbeRefusal> {
    let classes = session.classes();
    let (decl, define) = caller
        .find_declared(
            "java.lang.ClassLoader",
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
    // initialises it, and its static initialiser runs `init()`: the ring,
    // the live flag, the lease thread.
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
pub(super) async fn helper_fields(
    session: &Jvm,
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
        counts: id(field::COUNTS)?,
        over: id(field::OVER)?,
        seq: id(field::SEQ)?,
        prims: id(field::PRIMS)?,
        refs: id(field::REFS)?,
        times: id(field::TIMES)?,
        durs: id(field::DURS)?,
        threads: id(field::THREADS)?,
        who: id(field::WHO)?,
        stripe_threads: id(field::STRIPE_THREADS)?,
        cost_ns: id(field::COST_NS)?,
        cost_samples: id(field::COST_SAMPLES)?,
        cost_clock: id(field::COST_CLOCK)?,
        errors: id(field::ERRORS)?,
        last_error: id(field::LAST_ERROR)?,
        original: id(field::ORIGINAL)?,
        others: id(field::OTHERS)?,
        restored: id(field::RESTORED)?,
        hist: id(field::HIST)?,
    })
}

/// Runs the helper's `init()` again: its ring, its live flag, a new lease
/// thread (its class initialiser ran it the first time).
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

/// Hands the helper the original bytes of every class the probe goes
/// into (the first in `original`, the rest in `others`): a later
/// jvmscope finds them there if this one dies before restoring. Bytes the
/// JVM already holds as a `byte[]` (read through the class's loader, and
/// pinned by `caller`) are handed over as they are, not sent back.
pub(super) async fn keep_original(
    session: &Jvm,
    caller: &Caller<'_>,
    helper: ReferenceTypeId,
    fields: &HelperFields,
    originals: &[(&[u8], Option<ObjectId>)],
) -> Result<(), ProbeRefusal> {
    let conn = session.connection();
    let mut arrays = Vec::new();
    let mut made = Vec::new();
    for (bytes, in_jvm) in originals {
        arrays.push(match in_jvm {
            Some(array) => *array,
            None => {
                let array = byte_array(session, caller, bytes).await?;
                made.push(array);
                array
            }
        });
    }
    let mut values = vec![FieldValue {
        field: fields.original,
        value: Value::Object {
            tag: Tag::Array,
            id: arrays[0],
        },
    }];
    if arrays.len() > 1 {
        let others = object_array(session, caller, &arrays[1..]).await?;
        values.push(FieldValue {
            field: fields.others,
            value: Value::Object {
                tag: Tag::Array,
                id: others,
            },
        });
    }
    conn.send(&SetStatics {
        class: helper,
        values,
    })
    .await?;
    // The static fields hold them now.
    for array in made {
        let _ = conn
            .send(&crate::jdwp::object_reference::EnableCollection { object: array })
            .await;
    }
    Ok(())
}

/// Renews a helper's lease (its lease thread counts a miss for each tick
/// without a renewal): what the drain does each round, done also while a
/// probe is being armed, so an arming slower than the lease on a busy
/// host does not find its probe off.
pub(super) async fn renew(
    conn: &crate::connection::ConnectionHandle,
    helper: ReferenceTypeId,
    fields: &HelperFields,
) -> Result<(), crate::error::JdwpError> {
    conn.send(&SetStatics {
        class: helper,
        values: vec![FieldValue {
            field: fields.renew,
            value: Value::Boolean(true),
        }],
    })
    .await
}

/// Switches a helper off, which ends its lease thread; `refused` (the
/// JVM answered that it changed nothing) also drops the original bytes it
/// holds and marks it restored, so no later attach puts them back.
pub(super) async fn disclaim(
    conn: &crate::connection::ConnectionHandle,
    helper: ReferenceTypeId,
    fields: &HelperFields,
    refused: bool,
) {
    let null = Value::Object {
        tag: Tag::Array,
        id: ObjectId(0),
    };
    let mut values = vec![FieldValue {
        field: fields.live,
        value: Value::Boolean(false),
    }];
    if refused {
        values.extend([
            FieldValue {
                field: fields.restored,
                value: Value::Boolean(true),
            },
            FieldValue {
                field: fields.original,
                value: null,
            },
            FieldValue {
                field: fields.others,
                value: null,
            },
        ]);
    }
    let _ = conn
        .send(&SetStatics {
            class: helper,
            values,
        })
        .await;
}

/// Runs a helper's `init()` again on a parked thread, after its lease
/// lapsed while this jvmscope was away (stopped, or too slow to renew):
/// live again, its lease renewed, a new lease thread.
pub(super) async fn rearm(session: &Jvm, helper: ReferenceTypeId) -> Result<(), ProbeRefusal> {
    let seat = crate::calls::seat::take_parked(session)
        .await
        .map_err(|e| ProbeRefusal::NoThread(e.to_string()))?;
    let caller = Caller::new(
        session,
        seat.thread,
        std::time::Duration::from_secs(5),
        false,
    );
    let result = start(&caller, helper).await;
    seat.give_back(session, false).await;
    drop(caller);
    result
}
