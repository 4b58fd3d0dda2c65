//! Changing a suspended program: set a local, a field (static or
//! instance) or an array element; force a method to return; pop frames.
//! Values come from the expression language and are coerced to the
//! declared type; a mismatch names both types. Every write is a mutating
//! JDWP command, so read-only mode refuses it at the Connection.

use crate::actors::error::{JdwpError, SessionError};
use crate::actors::session::SessionHandle;
use crate::actors::session::classes::java_name;
use crate::actors::session::eval::{self, EvalContext, to_val};
use crate::actors::session::inspect::{self, Locals};
use crate::expr::eval::Val;
use crate::expr::{Expr, ExprKind, Ident};
use crate::jdwp::array_reference::SetValues as ArraySet;
use crate::jdwp::class_type::SetValues as StaticSet;
use crate::jdwp::object_reference::SetValues as ObjectSet;
use crate::jdwp::stack_frame::{PopFrames, SetValues as FrameSet, SlotValue};
use crate::jdwp::thread_reference::{ForceEarlyReturn, FrameCount};
use crate::jdwp::virtual_machine::CreateString;
use crate::jdwp::{FieldValue, ObjectId, ReferenceTypeId, Tag, Value};

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

fn invalid(m: String) -> SessionError {
    SessionError::Invalid(m)
}

/// Coerces an evaluated value to a JNI type signature.
pub async fn coerce(
    session: &SessionHandle,
    v: &Val,
    signature: &str,
) -> Result<Value, SessionError> {
    let declared = java_name(signature);
    let mismatch = || {
        invalid(format!(
            "[TYPE_MISMATCH] cannot store a {} in a {declared}",
            v.kind()
        ))
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
        Val::Int(x) => int(i64::from(*x)),
        Val::Long(x) => int(*x),
        Val::Short(x) => int(i64::from(*x)),
        Val::Byte(x) => int(i64::from(*x)),
        Val::Char(x) if p == b'C' => Ok(Value::Char(*x)),
        Val::Char(x) => int(i64::from(*x)),
        Val::Float(x) => match p {
            b'F' => Ok(Value::Float(*x)),
            b'D' => Ok(Value::Double(f64::from(*x))),
            _ => Err(mismatch()),
        },
        Val::Double(x) => match p {
            b'D' => Ok(Value::Double(*x)),
            b'F' => Ok(Value::Float(*x as f32)),
            _ => Err(mismatch()),
        },
        Val::Bool(b) if p == b'Z' => Ok(Value::Boolean(*b)),
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
                    return Err(invalid(format!(
                        "[TYPE_MISMATCH] cannot store a {runtime} in a {declared}"
                    )));
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
        .map_err(|f| invalid(format!("[EVAL_FAILED] the value: {}", f.error.message)))?
        .value;
    let fail = |e: JdwpError| session.map_err(e);
    match &target.kind {
        ExprKind::Path(segments) if segments.len() == 1 => {
            let name = &segments[0].name;
            // A local first, as Java resolves names.
            if let (Some(thread), Some(frame)) = (ctx.thread, ctx.frame.as_ref())
                && let Locals::Known(locals) =
                    inspect::locals(classes, thread, frame, Some(std::slice::from_ref(name)))
                        .await
                        .map_err(fail)?
                && let Some(local) = locals.first()
            {
                let vars = classes
                    .variables(frame.location.class, frame.location.method)
                    .await
                    .map_err(fail)?;
                let slot = match vars.as_ref() {
                    crate::actors::session::classes::Variables::Known { vars, .. } => vars
                        .iter()
                        .find(|v| v.name == *name && v.live_at(frame.location.index as i64))
                        .map(|v| v.slot),
                    _ => None,
                };
                let Some(slot) = slot else {
                    return Err(invalid(format!("[NOT_WRITABLE] local {name} has no slot here")));
                };
                let value = coerce(session, &new, &local.signature).await?;
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
                    new,
                });
            }
            // Then a field of `this`, then a static of the frame's class.
            if ctx.this.0 != 0 {
                let holder = Val::Object {
                    id: ctx.this.0,
                    tag: Tag::Object,
                };
                if let Ok(w) = set_field(session, &holder, &segments[0], &new).await {
                    return Ok(w);
                }
            }
            if let Some(frame) = &ctx.frame {
                let holder = Val::Class {
                    id: frame.class.id.0,
                    name: frame.class.name.clone(),
                };
                return set_field(session, &holder, &segments[0], &new).await;
            }
            Err(invalid(format!(
                "[NO_TARGET] `{name}` is not a local, a field of this, or a static here"
            )))
        }
        ExprKind::Path(segments) => {
            let (last, head) = segments
                .split_last()
                .ok_or_else(|| invalid("empty target".into()))?;
            let holder_expr = Expr {
                id: target.id,
                span: target.span,
                kind: ExprKind::Path(head.to_vec()),
            };
            let holder = eval::evaluate(classes, ctx, &holder_expr)
                .await
                .map_err(|f| invalid(format!("[EVAL_FAILED] {}", f.error.message)))?
                .value;
            set_field(session, &holder, last, &new).await
        }
        ExprKind::Field { target: holder, name } => {
            let holder = eval::evaluate(classes, ctx, holder)
                .await
                .map_err(|f| invalid(format!("[EVAL_FAILED] {}", f.error.message)))?
                .value;
            set_field(session, &holder, name, &new).await
        }
        ExprKind::Index { target: array, index } => {
            let arr = eval::evaluate(classes, ctx, array)
                .await
                .map_err(|f| invalid(format!("[EVAL_FAILED] {}", f.error.message)))?
                .value;
            let idx = eval::evaluate(classes, ctx, index)
                .await
                .map_err(|f| invalid(format!("[EVAL_FAILED] {}", f.error.message)))?
                .value;
            set_element(session, ctx, &arr, &idx, &new).await
        }
        _ => Err(invalid(
            "[NOT_WRITABLE] set_value writes a local, a field (obj.f, Class.F), or an element (xs[i], m[\"k\"])"
                .into(),
        )),
    }
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
            return Err(invalid(format!(
                "[NOT_WRITABLE] a {} has no fields to set",
                other.kind()
            )));
        }
    };
    let type_name = classes.info(ty).await.map_err(fail)?.name.clone();
    let Some((decl, field)) = classes.find_field(ty, &name.name).await.map_err(fail)? else {
        return Err(invalid(format!(
            "[NO_TARGET] {type_name} has no field `{}`",
            name.name
        )));
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
            return Err(invalid(format!(
                "[NOT_WRITABLE] {}.{} is an instance field; name an object",
                type_name, name.name
            )));
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
        return Err(invalid(format!(
            "[NOT_WRITABLE] cannot set an element of a {}",
            holder.kind()
        )));
    };
    let t = session
        .classes()
        .type_of(ObjectId(*id))
        .await
        .map_err(fail)?;
    let info = classes.info(t.id).await.map_err(fail)?;
    if info.signature.starts_with('[') {
        let i = match index {
            Val::Int(i) => *i,
            _ => {
                return Err(invalid(
                    "[TYPE_MISMATCH] an array index must be an int".into(),
                ));
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
    let method = if matches!(index, Val::Int(_)) {
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
        Val::Int(i) => format!("element [{i}]"),
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
        parts.push(literal(a).ok_or_else(|| {
            invalid(format!(
                "[NOT_WRITABLE] cannot pass a {} to {method}()",
                a.kind()
            ))
        })?);
    }
    let Val::Object { id, .. } = target else {
        return Err(invalid("[NOT_WRITABLE] not an object".into()));
    };
    let src = format!("@{id:#x}.{method}({})", parts.join(", "));
    let parsed = crate::expr::parse(&src).map_err(|e| invalid(e.to_string()))?;
    eval::evaluate(session.classes(), ctx, &parsed.expr)
        .await
        .map(|o| o.value)
        .map_err(|f| invalid(format!("[EVAL_FAILED] {}", f.error.message)))
}

/// Source text that evaluates back to `v`.
fn literal(v: &Val) -> Option<String> {
    Some(match v {
        Val::Int(i) => i.to_string(),
        Val::Long(l) => format!("{l}L"),
        Val::Double(d) => format!("{d:?}"),
        Val::Float(f) => format!("{f:?}f"),
        Val::Bool(b) => b.to_string(),
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
        return Err(invalid(
            "[NO_THREAD] force_return needs a suspended thread".into(),
        ));
    };
    let method = frame
        .method
        .as_ref()
        .ok_or_else(|| invalid("[NOT_WRITABLE] the top frame's method is unknown".into()))?;
    if method.is_native() {
        return Err(invalid(format!(
            "[OPAQUE_FRAME] {} is a native method; JDWP cannot force it to return",
            frame.label()
        )));
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
            return Err(invalid(format!(
                "[BAD_ARGUMENT] {} returns {}; give the value to return",
                frame.label(),
                java_name(&ret)
            )));
        };
        let v = eval::evaluate(session.classes(), ctx, value)
            .await
            .map_err(|f| invalid(format!("[EVAL_FAILED] {}", f.error.message)))?
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
            Some(crate::jdwp::ErrorCode::OPAQUE_FRAME) => invalid(format!(
                "[OPAQUE_FRAME] the JVM refused: {} is not a Java frame it can return from",
                frame.label()
            )),
            Some(crate::jdwp::ErrorCode::TYPE_MISMATCH) => invalid(format!(
                "[TYPE_MISMATCH] {} returns {}",
                frame.label(),
                java_name(&ret)
            )),
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
        return Err(invalid(format!(
            "[BAD_FRAME] frame {index} is the outermost frame (the thread has {depth}); there is no caller to return to"
        )));
    }
    let frames = inspect::frames(classes, thread, 0, Some(index + 1))
        .await
        .map_err(fail)?;
    if let Some(native) = frames
        .iter()
        .find(|f| f.method.as_ref().is_some_and(|m| m.is_native()))
    {
        return Err(invalid(format!(
            "[OPAQUE_FRAME] frame #{} {} is native; JDWP cannot pop through it",
            native.index,
            native.label()
        )));
    }
    let Some(last) = frames.last() else {
        return Err(invalid(format!("[BAD_FRAME] no frame {index}")));
    };
    session
        .connection()
        .send(&PopFrames {
            thread,
            frame: last.id,
        })
        .await
        .map_err(|e| match e.code() {
            Some(crate::jdwp::ErrorCode::OPAQUE_FRAME) => invalid(
                "[OPAQUE_FRAME] the JVM refused to pop these frames (a native frame in between)"
                    .into(),
            ),
            _ => session.map_err(e),
        })?;
    Ok(frames.iter().map(|f| f.label()).collect())
}
