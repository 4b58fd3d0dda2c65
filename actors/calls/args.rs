//! Building an argument in the JVM from a typed value and the declared
//! parameter type: primitives as they are, strings created, boxes through
//! `valueOf`, enum constants read from their class, arrays created and
//! filled, Lists, Sets and Maps created and filled element by element
//! (element types from the generic signature), handles passed through.
//! `java.lang.Object` infers the type from the value.

use super::resolve::{ANY, LISTS, MAPS, SETS, unboxed};
use super::{Arg, CallError, Caller};
use crate::error::{ArgNeed, SessionError};
use crate::jdwp::array_reference::SetValues;
use crate::jdwp::array_type::NewInstance as NewArray;
use crate::jdwp::reference_type::GetValues as StaticValues;
use crate::jdwp::{ObjectId, Tag, Value};
use crate::model::signature::JType;

/// Builds argument `index` (`arg`) for a parameter of type `ty`.
pub(super) async fn build(
    caller: &Caller<'_>,
    index: usize,
    arg: &Arg,
    ty: &JType,
) -> Result<Value, SessionError> {
    Box::pin(value(caller, index, arg, ty)).await
}

fn null() -> Value {
    Value::Object {
        tag: Tag::Object,
        id: ObjectId(0),
    }
}

fn object(id: ObjectId) -> Value {
    Value::Object {
        tag: Tag::Object,
        id,
    }
}

async fn value(
    caller: &Caller<'_>,
    index: usize,
    arg: &Arg,
    ty: &JType,
) -> Result<Value, SessionError> {
    let mismatch = |needs: Option<ArgNeed>| -> SessionError {
        CallError::Argument {
            index,
            declared: ty.java(),
            given: arg.kind(),
            needs,
        }
        .into()
    };
    if let JType::Prim(p) = ty {
        return primitive(*p, arg).ok_or_else(|| mismatch(None));
    }
    match arg {
        Arg::Null => return Ok(null()),
        Arg::Handle(id) => return Ok(object(ObjectId(*id))),
        _ => {}
    }
    if let JType::Array(elem) = ty {
        let Arg::List(items) = arg else {
            return Err(mismatch(None));
        };
        return array(caller, index, ty, elem, items).await;
    }
    let class = ty.class_name().unwrap_or("java.lang.Object").to_string();
    if ANY.contains(&class.as_str()) || class == "java.lang.Number" {
        return inferred(caller, index, arg).await;
    }
    if let Some(p) = unboxed(&class) {
        let prim = primitive(p, arg).ok_or_else(|| mismatch(None))?;
        return boxed(caller, &class, p, prim).await;
    }
    match arg {
        Arg::Text(s) if class == "java.lang.String" || class == "java.lang.CharSequence" => {
            Ok(caller.string(s).await?)
        }
        Arg::Text(s) => enum_constant(caller, &class, s).await?.ok_or_else(|| {
            mismatch(Some(ArgNeed::EnumOrObject {
                class: class.clone(),
            }))
        }),
        Arg::List(items) if LISTS.contains(&class.as_str()) => {
            collection(caller, index, "java.util.ArrayList", &ty.arg(0), items).await
        }
        Arg::List(items) if SETS.contains(&class.as_str()) => {
            collection(caller, index, "java.util.LinkedHashSet", &ty.arg(0), items).await
        }
        Arg::Map(entries) if MAPS.contains(&class.as_str()) => {
            map(caller, index, &ty.arg(0), &ty.arg(1), entries).await
        }
        _ => Err(mismatch(Some(ArgNeed::Object { class }))),
    }
}

/// A primitive of JNI type `p` from `arg`, range-checked.
fn primitive(p: char, arg: &Arg) -> Option<Value> {
    Some(match (p, arg) {
        ('Z', Arg::Bool(b)) => Value::Boolean(*b),
        ('I', Arg::Int(x)) => Value::Int(i32::try_from(*x).ok()?),
        ('J', Arg::Int(x)) => Value::Long(*x),
        ('S', Arg::Int(x)) => Value::Short(i16::try_from(*x).ok()?),
        ('B', Arg::Int(x)) => Value::Byte(i8::try_from(*x).ok()?),
        ('C', Arg::Int(x)) => Value::Char(u16::try_from(*x).ok()?),
        ('C', Arg::Text(s)) if s.encode_utf16().count() == 1 => {
            Value::Char(s.encode_utf16().next()?)
        }
        ('F', Arg::Int(x)) => Value::Float(*x as f32),
        ('D', Arg::Int(x)) => Value::Double(*x as f64),
        ('F', Arg::Float(x)) => Value::Float(*x as f32),
        ('D', Arg::Float(x)) => Value::Double(*x),
        _ => return None,
    })
}

/// `Box.valueOf(prim)`.
async fn boxed(caller: &Caller<'_>, class: &str, p: char, v: Value) -> Result<Value, SessionError> {
    let id = caller.class(class).await?;
    let sig = format!("({p})L{};", class.replace('.', "/"));
    let (decl, m) = caller.find(id, "valueOf", &sig).await?;
    let out = caller.call(None, decl, &m, vec![v]).await?;
    if let Some(o) = Caller::object(&out) {
        caller.pin(o).await?;
    }
    Ok(out)
}

/// A value for a parameter of type `Object`: Integer (Long past its range),
/// Double, Boolean, String, ArrayList or LinkedHashMap.
async fn inferred(caller: &Caller<'_>, index: usize, arg: &Arg) -> Result<Value, SessionError> {
    match arg {
        Arg::Null => Ok(null()),
        Arg::Handle(id) => Ok(object(ObjectId(*id))),
        Arg::Bool(b) => boxed(caller, "java.lang.Boolean", 'Z', Value::Boolean(*b)).await,
        Arg::Int(x) => match i32::try_from(*x) {
            Ok(i) => boxed(caller, "java.lang.Integer", 'I', Value::Int(i)).await,
            Err(_) => boxed(caller, "java.lang.Long", 'J', Value::Long(*x)).await,
        },
        Arg::Float(x) => boxed(caller, "java.lang.Double", 'D', Value::Double(*x)).await,
        Arg::Text(s) => Ok(caller.string(s).await?),
        Arg::List(items) => {
            collection(
                caller,
                index,
                "java.util.ArrayList",
                &JType::object(),
                items,
            )
            .await
        }
        Arg::Map(entries) => {
            let string = JType::Class {
                name: "java.lang.String".into(),
                args: Vec::new(),
            };
            map(caller, index, &string, &JType::object(), entries).await
        }
    }
}

/// The constant `name` of the enum `class`, when it is one.
async fn enum_constant(
    caller: &Caller<'_>,
    class: &str,
    name: &str,
) -> Result<Option<Value>, SessionError> {
    let Ok(id) = caller.class(class).await else {
        return Ok(None);
    };
    let fields = caller.classes().fields(id).await?;
    let Some(f) = fields
        .iter()
        .find(|f| f.is_static() && f.modifiers & 0x4000 != 0 && f.name == name)
    else {
        return Ok(None);
    };
    let values = caller
        .session
        .connection()
        .send(&StaticValues {
            ref_type: id,
            fields: vec![f.id],
        })
        .await?;
    Ok(values.into_iter().next())
}

/// A new array of type `ty`, filled with `items` built as `elem`.
async fn array(
    caller: &Caller<'_>,
    index: usize,
    ty: &JType,
    elem: &JType,
    items: &[Arg],
) -> Result<Value, SessionError> {
    let name = crate::jvm::classes::java_name(&ty.jni());
    let array_type = caller.class(&name).await?;
    let created = caller
        .session
        .connection()
        .send(&NewArray {
            array_type,
            length: i32::try_from(items.len()).unwrap_or(i32::MAX),
        })
        .await?;
    caller.pin(created.id).await?;
    let mut values = Vec::with_capacity(items.len());
    for item in items {
        values.push(build(caller, index, item, elem).await?);
    }
    if !values.is_empty() {
        caller
            .session
            .connection()
            .send(&SetValues {
                array: created.id,
                first_index: 0,
                values,
            })
            .await?;
    }
    Ok(Value::Object {
        tag: Tag::Array,
        id: created.id,
    })
}

/// A new `class` (an ArrayList or LinkedHashSet) with `items` added.
async fn collection(
    caller: &Caller<'_>,
    index: usize,
    class: &str,
    elem: &JType,
    items: &[Arg],
) -> Result<Value, SessionError> {
    let id = caller.class(class).await?;
    let (_, ctor) = caller.find(id, "<init>", "()V").await?;
    let list = caller.construct(id, &ctor, Vec::new()).await?;
    let (decl, add) = caller.find(id, "add", "(Ljava/lang/Object;)Z").await?;
    for item in items {
        let v = build(caller, index, item, elem).await?;
        caller.call(Some(list), decl, &add, vec![v]).await?;
    }
    Ok(object(list))
}

/// A new LinkedHashMap with `entries` put in order (keys built from their text).
async fn map(
    caller: &Caller<'_>,
    index: usize,
    key: &JType,
    val: &JType,
    entries: &[(String, Arg)],
) -> Result<Value, SessionError> {
    let id = caller.class("java.util.LinkedHashMap").await?;
    let (_, ctor) = caller.find(id, "<init>", "()V").await?;
    let m = caller.construct(id, &ctor, Vec::new()).await?;
    let (decl, put) = caller
        .find(
            id,
            "put",
            "(Ljava/lang/Object;Ljava/lang/Object;)Ljava/lang/Object;",
        )
        .await?;
    for (k, v) in entries {
        let k = match k.parse::<i64>() {
            Ok(n) if key.class_name().and_then(unboxed).is_some() => Arg::Int(n),
            _ => Arg::Text(k.clone()),
        };
        let k = build(caller, index, &k, key).await?;
        let v = build(caller, index, v, val).await?;
        caller.call(Some(m), decl, &put, vec![k, v]).await?;
    }
    Ok(object(m))
}
