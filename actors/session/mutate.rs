//! Changing a suspended program: set a local, a field (static or
//! instance) or an array element; force a method to return; pop frames.
//! Values come from the expression language and are coerced to the
//! declared type; a mismatch names both types. Every write is a mutating
//! JDWP command, so read-only mode refuses it at the Connection.

use crate::error::{FrameAction, JdwpError, NotWritable, SessionError, ThreadUse};
use crate::expr::eval::Val;
use crate::expr::{Expr, ExprKind, Ident};
use crate::jdwp::array_reference::SetValues as ArraySet;
use crate::jdwp::class_type::SetValues as StaticSet;
use crate::jdwp::object_reference::SetValues as ObjectSet;
use crate::jdwp::stack_frame::{PopFrames, SetValues as FrameSet, SlotValue};
use crate::jdwp::thread_reference::{ForceEarlyReturn, FrameCount};
use crate::jdwp::virtual_machine::CreateString;
use crate::jdwp::{FieldValue, ObjectId, ReferenceTypeId, Tag, Value};
use crate::jvm::classes::java_name;
use crate::jvm::eval::{self, EvalContext, to_val};
use crate::jvm::inspect::{self, Locals};
use crate::model::Prim;
use crate::session::SessionHandle;

/// What a write replaced.
#[derive(Debug, Clone)]
pub struct Written {
    /// What was written, e.g. `local qty` or `field Order.total`.
    pub target: String,
    /// The declared type written to.
    pub declared: String,
    pub old: Val,
    pub new: Val,
}

fn eval_failed(part: Option<&'static str>) -> impl Fn(eval::Failure) -> SessionError {
    move |f| SessionError::EvalFailed {
        part,
        message: f.error.message,
    }
}

/// Coerces an evaluated value to a JNI type signature.
pub async fn coerce(
    session: &SessionHandle,
    v: &Val,
    signature: &str,
) -> Result<Value, SessionError> {
    let declared = java_name(signature);
    let mismatch = || SessionError::TypeMismatch {
        value: v.kind().to_string(),
        declared: declared.clone(),
    };
    let p = signature.as_bytes().first().copied().unwrap_or(b'V');
    let int = |x: i64| -> Result<Value, SessionError> {
        Ok(match p {
            b'I' => Value::Int(i32::try_from(x).map_err(|_| mismatch())?),
            b'J' => Value::Long(x),
            b'S' => Value::Short(i16::try_from(x).map_err(|_| mismatch())?),
            b'B' => Value::Byte(i8::try_from(x).map_err(|_| mismatch())?),
            b'C' => Value::Char(u16::try_from(x).map_err(|_| mismatch())?),
            b'F' => Value::Float(x as f32),
            b'D' => Value::Double(x as f64),
            _ => return Err(mismatch()),
        })
    };
    match v {
        Val::Prim(Prim::Int(x)) => int(i64::from(*x)),
        Val::Prim(Prim::Long(x)) => int(*x),
        Val::Prim(Prim::Short(x)) => int(i64::from(*x)),
        Val::Prim(Prim::Byte(x)) => int(i64::from(*x)),
        Val::Prim(Prim::Char(x)) if p == b'C' => Ok(Value::Char(*x)),
        Val::Prim(Prim::Char(x)) => int(i64::from(*x)),
        Val::Prim(Prim::Float(x)) => match p {
            b'F' => Ok(Value::Float(*x)),
            b'D' => Ok(Value::Double(f64::from(*x))),
            _ => Err(mismatch()),
        },
        Val::Prim(Prim::Double(x)) => match p {
            b'D' => Ok(Value::Double(*x)),
            b'F' => Ok(Value::Float(*x as f32)),
            _ => Err(mismatch()),
        },
        Val::Prim(Prim::Bool(b)) if p == b'Z' => Ok(Value::Boolean(*b)),
        Val::Null if matches!(p, b'L' | b'[') => Ok(Value::Object {
            tag: if p == b'[' { Tag::Array } else { Tag::Object },
            id: ObjectId(0),
        }),
        Val::Text(s)
            if matches!(
                signature,
                "Ljava/lang/String;" | "Ljava/lang/Object;" | "Ljava/lang/CharSequence;"
            ) =>
        {
            let id = session
                .connection()
                .send(&CreateString { utf: s.clone() })
                .await
                .map_err(|e| session.map_err(e))?;
            Ok(Value::Object {
                tag: Tag::String,
                id,
            })
        }
        Val::Object { id, tag } if matches!(p, b'L' | b'[') => {
            // Check the runtime type against the declared one along the
            // superclass chain; interfaces are accepted when the class
            // chain does not decide (JDWP has no cheap instanceof).
            let classes = session.classes();
            let t = session
                .classes()
                .type_of(ObjectId(*id))
                .await
                .map_err(|e| session.map_err(e))?;
            let runtime = classes
                .info(t.id)
                .await
                .map_err(|e| session.map_err(e))?
                .name
                .clone();
            if declared != "java.lang.Object" && runtime != declared {
                let chain = classes
                    .hierarchy(t.id)
                    .await
                    .map_err(|e| session.map_err(e))?;
                let mut names = Vec::new();
                for c in chain {
                    names.push(
                        classes
                            .info(c)
                            .await
                            .map_err(|e| session.map_err(e))?
                            .name
                            .clone(),
                    );
                }
                let declared_is_class = !classes
                    .by_name(&declared)
                    .await
                    .map_err(|e| session.map_err(e))?
                    .iter()
                    .any(|c| c.tag == crate::jdwp::TypeTag::Interface);
                if declared_is_class && !names.contains(&declared) {
                    return Err(SessionError::TypeMismatch {
                        value: runtime,
                        declared,
                    });
                }
            }
            Ok(Value::Object {
                tag: *tag,
                id: ObjectId(*id),
            })
        }
        _ => Err(mismatch()),
    }
}

/// Evaluates `value` and stores it into `target` (a local, a field, a
/// static, an array element).
pub async fn set_value(
    session: &SessionHandle,
    ctx: &EvalContext,
    target: &Expr,
    value: &Expr,
) -> Result<Written, SessionError> {
    let classes = session.classes();
    let new = eval::evaluate(classes, ctx, value)
        .await
        .map_err(eval_failed(Some("the value")))?
        .value;
    match &target.kind {
        ExprKind::Path(segments) if segments.len() == 1 => {
            set_name(session, ctx, &segments[0], &new).await
        }
        ExprKind::Path(segments) => {
            let (last, head) = segments
                .split_last()
                .ok_or(NotWritable::UnsupportedTarget)?;
            let holder_expr = Expr {
                id: target.id,
                span: target.span,
                kind: ExprKind::Path(head.to_vec()),
            };
            let holder = eval::evaluate(classes, ctx, &holder_expr)
                .await
                .map_err(eval_failed(None))?
                .value;
            set_field(session, &holder, last, &new).await
        }
        ExprKind::Field {
            target: holder,
            name,
        } => {
            let holder = eval::evaluate(classes, ctx, holder)
                .await
                .map_err(eval_failed(None))?
                .value;
            set_field(session, &holder, name, &new).await
        }
        ExprKind::Index {
            target: array,
            index,
        } => {
            let arr = eval::evaluate(classes, ctx, array)
                .await
                .map_err(eval_failed(None))?
                .value;
            let idx = eval::evaluate(classes, ctx, index)
                .await
                .map_err(eval_failed(None))?
                .value;
            set_element(session, ctx, &arr, &idx, &new).await
        }
        _ => Err(NotWritable::UnsupportedTarget.into()),
    }
}

/// Stores `new` into a bare name: a local first, as Java resolves names,
/// then a field of `this`, then a static of the frame's class. All of them
/// need a frame.
async fn set_name(
    session: &SessionHandle,
    ctx: &EvalContext,
    ident: &Ident,
    new: &Val,
) -> Result<Written, SessionError> {
    if ctx.frame.is_none() {
        return Err(SessionError::NoThreadSuspended {
            purpose: ThreadUse::Write,
        });
    }
    let classes = session.classes();
    let fail = |e: JdwpError| session.map_err(e);
    let name = &ident.name;
    // A local first, as Java resolves names.
    if let (Some(thread), Some(frame)) = (ctx.thread, ctx.frame.as_ref())
        && let Locals::Known(locals) = inspect::locals(
            classes,
            thread,
            frame,
            Some(std::slice::from_ref(&ident.name)),
        )
        .await
        .map_err(fail)?
        && let Some(local) = locals.first()
    {
        let vars = classes
            .variables(frame.location.class, frame.location.method)
            .await
            .map_err(fail)?;
        let slot = match vars.as_ref() {
            crate::jvm::classes::Variables::Known { vars, .. } => vars
                .iter()
                .find(|v| v.name == *name && v.live_at(frame.location.index as i64))
                .map(|v| v.slot),
            _ => None,
        };
        let Some(slot) = slot else {
            return Err(NotWritable::NoSlot { name: name.clone() }.into());
        };
        let value = coerce(session, new, &local.signature).await?;
        session
            .connection()
            .send(&FrameSet {
                thread,
                frame: frame.id,
                slot_values: vec![SlotValue { slot, value }],
            })
            .await
            .map_err(fail)?;
        return Ok(Written {
            target: format!("local {name}"),
            declared: java_name(&local.signature),
            old: to_val(&local.value),
            new: new.clone(),
        });
    }
    // Then a field of `this`, then a static of the frame's class.
    if ctx.this.0 != 0 {
        let holder = Val::Object {
            id: ctx.this.0,
            tag: Tag::Object,
        };
        if let Ok(w) = set_field(session, &holder, ident, new).await {
            return Ok(w);
        }
    }
    if let Some(frame) = &ctx.frame {
        let holder = Val::Class {
            id: frame.class.id.0,
            name: frame.class.name.clone(),
        };
        return set_field(session, &holder, ident, new).await;
    }
    Err(SessionError::NotInScope { name: name.clone() })
}

async fn set_field(
    session: &SessionHandle,
    holder: &Val,
    name: &Ident,
    new: &Val,
) -> Result<Written, SessionError> {
    let classes = session.classes();
    let fail = |e: JdwpError| session.map_err(e);
    let (ty, object) = match holder {
        Val::Object { id, .. } => {
            let t = session
                .classes()
                .type_of(ObjectId(*id))
                .await
                .map_err(fail)?;
            (t.id, Some(ObjectId(*id)))
        }
        Val::Class { id, .. } => (ReferenceTypeId(*id), None),
        other => {
            return Err(NotWritable::NoFields { kind: other.kind() }.into());
        }
    };
    let type_name = classes.info(ty).await.map_err(fail)?.name.clone();
    let Some((decl, field)) = classes.find_field(ty, &name.name).await.map_err(fail)? else {
        return Err(SessionError::NoSuchField {
            class: type_name,
            field: name.name.clone(),
        });
    };
    let value = coerce(session, new, &field.signature).await?;
    let conn = session.connection();
    let old = if field.is_static() {
        conn.send(&crate::jdwp::reference_type::GetValues {
            ref_type: decl,
            fields: vec![field.id],
        })
        .await
    } else {
        let Some(object) = object else {
            return Err(NotWritable::InstanceFieldWithoutObject {
                class: type_name,
                field: name.name.clone(),
            }
            .into());
        };
        conn.send(&crate::jdwp::object_reference::GetValues {
            object,
            fields: vec![field.id],
        })
        .await
    }
    .map_err(fail)?;
    let fv = vec![FieldValue {
        field: field.id,
        value,
    }];
    match (field.is_static(), object) {
        (false, Some(object)) => conn.send(&ObjectSet { object, values: fv }).await,
        _ => {
            conn.send(&StaticSet {
                class: decl,
                values: fv,
            })
            .await
        }
    }
    .map_err(fail)?;
    Ok(Written {
        target: format!(
            "{}field {}.{}",
            if field.is_static() { "static " } else { "" },
            type_name,
            name.name
        ),
        declared: java_name(&field.signature),
        old: old.first().map(to_val).unwrap_or(Val::Null),
        new: new.clone(),
    })
}

async fn set_element(
    session: &SessionHandle,
    ctx: &EvalContext,
    holder: &Val,
    index: &Val,
    new: &Val,
) -> Result<Written, SessionError> {
    let classes = session.classes();
    let fail = |e: JdwpError| session.map_err(e);
    let Val::Object { id, .. } = holder else {
        return Err(NotWritable::NoElements {
            kind: holder.kind(),
        }
        .into());
    };
    let t = session
        .classes()
        .type_of(ObjectId(*id))
        .await
        .map_err(fail)?;
    let info = classes.info(t.id).await.map_err(fail)?;
    if info.signature.starts_with('[') {
        let i = match index {
            Val::Prim(Prim::Int(i)) => *i,
            _ => {
                return Err(SessionError::IndexNotInt);
            }
        };
        let component = &info.signature[1..];
        let value = coerce(session, new, component).await?;
        let old = session
            .connection()
            .send(&crate::jdwp::array_reference::GetValues {
                array: ObjectId(*id),
                first_index: i,
                length: 1,
            })
            .await
            .map_err(fail)?;
        session
            .connection()
            .send(&ArraySet {
                array: ObjectId(*id),
                first_index: i,
                values: vec![value],
            })
            .await
            .map_err(fail)?;
        return Ok(Written {
            target: format!("element [{i}] of {} @{id:#x}", info.name),
            declared: java_name(component),
            old: old.values.first().map(to_val).unwrap_or(Val::Null),
            new: new.clone(),
        });
    }
    // A List or Map element: set(int, Object) or put(Object, Object),
    // which runs the collection's own code on the event thread.
    let method = if matches!(index, Val::Prim(Prim::Int(_))) {
        "set"
    } else {
        "put"
    };
    let target = Val::Object {
        id: *id,
        tag: Tag::Object,
    };
    let old = invoke_simple(session, ctx, &target, method, &[index.clone(), new.clone()]).await?;
    Ok(Written {
        target: format!(
            "{} of {} @{id:#x} via {method}()",
            describe_key(index),
            info.name
        ),
        declared: "java.lang.Object".into(),
        old,
        new: new.clone(),
    })
}

fn describe_key(k: &Val) -> String {
    match k {
        Val::Prim(Prim::Int(i)) => format!("element [{i}]"),
        Val::Text(s) => format!("entry {s:?}"),
        other => format!("entry {}", other.kind()),
    }
}

/// Calls `target.method(args)` through the evaluator (so overloads,
/// boxing rules and the invoke budget are the same as debug_evaluate's).
async fn invoke_simple(
    session: &SessionHandle,
    ctx: &EvalContext,
    target: &Val,
    method: &str,
    args: &[Val],
) -> Result<Val, SessionError> {
    // Build `@target.method(a, b)` with the arguments bound as handles or
    // literals the parser reads back.
    let mut parts = Vec::new();
    for a in args {
        parts.push(literal(a).ok_or_else(|| NotWritable::Unpassable {
            kind: a.kind(),
            method: method.to_string(),
        })?);
    }
    let Val::Object { id, .. } = target else {
        return Err(NotWritable::NotAnObject.into());
    };
    let src = format!("@{id:#x}.{method}({})", parts.join(", "));
    let parsed = crate::expr::parse(&src).map_err(|e| SessionError::EvalFailed {
        part: None,
        message: e.to_string(),
    })?;
    eval::evaluate(session.classes(), ctx, &parsed.expr)
        .await
        .map(|o| o.value)
        .map_err(eval_failed(None))
}

/// Source text that evaluates back to `v`.
fn literal(v: &Val) -> Option<String> {
    Some(match v {
        Val::Prim(Prim::Int(i)) => i.to_string(),
        Val::Prim(Prim::Long(l)) => format!("{l}L"),
        Val::Prim(Prim::Double(d)) => format!("{d:?}"),
        Val::Prim(Prim::Float(f)) => format!("{f:?}f"),
        Val::Prim(Prim::Bool(b)) => b.to_string(),
        Val::Null => "null".into(),
        Val::Text(s) => format!("{s:?}"),
        Val::Object { id, .. } => format!("@{id:#x}"),
        _ => return None,
    })
}

/// Makes the top frame's method return `value` now.
pub async fn force_return(
    session: &SessionHandle,
    ctx: &EvalContext,
    value: Option<&Expr>,
) -> Result<(String, Val), SessionError> {
    let (Some(thread), Some(frame)) = (ctx.thread, ctx.frame.as_ref()) else {
        return Err(SessionError::NoThreadSuspended {
            purpose: ThreadUse::Write,
        });
    };
    let method = frame.method.as_ref().ok_or(NotWritable::UnknownMethod)?;
    if method.is_native() {
        return Err(SessionError::NativeFrame {
            frame: frame.label(),
            action: FrameAction::Return,
        });
    }
    let ret = method
        .signature
        .rsplit(')')
        .next()
        .unwrap_or("V")
        .to_string();
    let (jdwp_value, val) = if ret == "V" {
        (Value::Void, Val::Null)
    } else {
        let Some(value) = value else {
            return Err(SessionError::MissingReturnValue {
                frame: frame.label(),
                returns: java_name(&ret),
            });
        };
        let v = eval::evaluate(session.classes(), ctx, value)
            .await
            .map_err(eval_failed(None))?
            .value;
        (coerce(session, &v, &ret).await?, v)
    };
    session
        .connection()
        .send(&ForceEarlyReturn {
            thread,
            value: jdwp_value,
        })
        .await
        .map_err(|e| match e.code() {
            Some(crate::jdwp::ErrorCode::OPAQUE_FRAME) => SessionError::FrameRefused {
                frame: frame.label(),
                action: FrameAction::Return,
            },
            Some(crate::jdwp::ErrorCode::TYPE_MISMATCH) => SessionError::ReturnTypeMismatch {
                frame: frame.label(),
                returns: java_name(&ret),
            },
            _ => session.map_err(e),
        })?;
    Ok((frame.label(), val))
}

/// Pops frames 0..=`index` so the frame below re-runs its call.
pub async fn pop_frame(
    session: &SessionHandle,
    thread: crate::jdwp::ThreadId,
    index: usize,
) -> Result<Vec<String>, SessionError> {
    let classes = session.classes();
    let fail = |e: JdwpError| session.map_err(e);
    let depth = session
        .connection()
        .send(&FrameCount { thread })
        .await
        .map_err(fail)?
        .max(0) as usize;
    if index + 1 >= depth {
        return Err(SessionError::OutermostFrame { index, depth });
    }
    let frames = inspect::frames(classes, thread, 0, Some(index + 1))
        .await
        .map_err(fail)?;
    if let Some(native) = frames
        .iter()
        .find(|f| f.method.as_ref().is_some_and(|m| m.is_native()))
    {
        return Err(SessionError::NativeFrame {
            frame: format!("frame #{} {}", native.index, native.label()),
            action: FrameAction::Pop,
        });
    }
    let Some(last) = frames.last() else {
        return Err(SessionError::NoFrame { index });
    };
    session
        .connection()
        .send(&PopFrames {
            thread,
            frame: last.id,
        })
        .await
        .map_err(|e| match e.code() {
            Some(crate::jdwp::ErrorCode::OPAQUE_FRAME) => SessionError::FrameRefused {
                frame: last.label(),
                action: FrameAction::Pop,
            },
            _ => session.map_err(e),
        })?;
    Ok(frames.iter().map(|f| f.label()).collect())
}
