//! Choosing the method: by name among the class and its superclasses
//! (an override hides what it overrides), by arity, by the declared
//! parameter types the agent named, then by whether the arguments can be
//! built for each parameter. Two that remain are an ambiguity naming both.

use super::{Arg, CallError, Caller, MethodShape, Param, declaration, erased_name, types_of};
use crate::error::SessionError;
use crate::jdwp::ReferenceTypeId;
use crate::jvm::classes::{ClassCache, MethodInfo, Variables};
use crate::model::signature::JType;

/// How well an argument fits a parameter.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Fit {
    No,
    /// Possible (a string for an enum or an unknown class, a narrowing).
    Loose,
    /// Through a box, as Java's second phase.
    Boxed,
    /// A primitive widened, as Java's first phase.
    Widened,
    Exact,
}

/// The methods named `name` of `class` and its superclasses, most derived first.
async fn named(
    classes: &ClassCache,
    class: ReferenceTypeId,
    name: &str,
) -> Result<Vec<(ReferenceTypeId, MethodInfo)>, SessionError> {
    let mut out: Vec<(ReferenceTypeId, MethodInfo)> = Vec::new();
    for t in classes.hierarchy(class).await? {
        for m in classes.methods(t).await?.iter() {
            if m.name == name && !out.iter().any(|(_, o)| o.signature == m.signature) {
                out.push((t, m.clone()));
            }
        }
    }
    Ok(out)
}

/// The shape of `m`: declaration, parameter names and types, enum constants.
async fn shape(
    classes: &ClassCache,
    decl: ReferenceTypeId,
    m: &MethodInfo,
) -> Result<MethodShape, SessionError> {
    let (types, returns) = types_of(m);
    let names = match &*classes.variables(decl, m.id).await? {
        Variables::Known { vars, arg_count } => {
            let mut args: Vec<_> = vars
                .iter()
                .filter(|v| v.slot < *arg_count && (v.slot != 0 || m.is_static()))
                .collect();
            args.sort_by_key(|v| v.slot);
            args.iter().map(|v| v.name.clone()).collect::<Vec<_>>()
        }
        Variables::Absent => Vec::new(),
    };
    let mut params = Vec::with_capacity(types.len());
    for (i, ty) in types.iter().enumerate() {
        let name = names
            .get(i)
            .filter(|_| names.len() == types.len())
            .cloned()
            .unwrap_or_else(|| format!("arg{i}"));
        params.push(Param {
            name,
            ty: ty.clone(),
            enum_constants: enum_constants(classes, ty).await,
        });
    }
    Ok(MethodShape {
        class: classes.info(decl).await?.name.clone(),
        declaration: declaration(&m.name, &types),
        is_static: m.is_static(),
        params,
        returns,
    })
}

/// The constants of `ty` when it is a loaded enum (static fields flagged ENUM).
async fn enum_constants(classes: &ClassCache, ty: &JType) -> Vec<String> {
    let Some(name) = ty.class_name() else {
        return Vec::new();
    };
    let Ok(copies) = classes.by_name(name).await else {
        return Vec::new();
    };
    let Some(c) = copies.first() else {
        return Vec::new();
    };
    match classes.fields(c.id).await {
        Ok(fields) => fields
            .iter()
            .filter(|f| f.is_static() && f.modifiers & 0x4000 != 0)
            .map(|f| f.name.clone())
            .collect(),
        Err(_) => Vec::new(),
    }
}

/// Every method `name` of `class`, shaped for a template.
pub(super) async fn shapes(
    classes: &ClassCache,
    class: ReferenceTypeId,
    name: &str,
) -> Result<Vec<MethodShape>, SessionError> {
    let mut out = Vec::new();
    for (decl, m) in named(classes, class, name).await? {
        out.push(shape(classes, decl, &m).await?);
    }
    if out.is_empty() {
        return Err(CallError::NoSuchMethod {
            class: classes.info(class).await?.name.clone(),
            method: name.into(),
            overloads: Vec::new(),
        }
        .into());
    }
    Ok(out)
}

/// Whether a declared type matches what the agent wrote for it: the full
/// name (`java.lang.String`, `int[]`), the simple name, or the generic form.
fn names_type(written: &str, ty: &JType) -> bool {
    let written = written.trim();
    let erased = erased_name(ty);
    let simple = erased.rsplit(['.', '$']).next().unwrap_or(&erased);
    written == erased || written == simple || written == ty.java()
}

/// Chooses the method to call (see the module doc).
pub(super) async fn choose(
    caller: &Caller<'_>,
    class: ReferenceTypeId,
    has_object: bool,
    name: &str,
    param_types: Option<&[String]>,
    args: &[Arg],
) -> Result<(ReferenceTypeId, MethodInfo, MethodShape), SessionError> {
    let classes = caller.classes();
    let all = named(classes, class, name).await?;
    let class_name = classes.info(class).await?.name.clone();
    let decls = |ms: &[(ReferenceTypeId, MethodInfo)]| -> Vec<String> {
        ms.iter()
            .map(|(_, m)| declaration(&m.name, &types_of(m).0))
            .collect()
    };
    let mut fitting: Vec<(Fit, ReferenceTypeId, MethodInfo)> = Vec::new();
    for (decl, m) in &all {
        let (types, _) = types_of(m);
        if types.len() != args.len() {
            continue;
        }
        if let Some(want) = param_types
            && (want.len() != types.len()
                || !want.iter().zip(&types).all(|(w, t)| names_type(w, t)))
        {
            continue;
        }
        let mut worst = Fit::Exact;
        for (a, t) in args.iter().zip(&types) {
            worst = worst.min(fit(a, t));
        }
        if worst > Fit::No {
            fitting.push((worst, *decl, m.clone()));
        }
    }
    let best = fitting.iter().map(|(f, _, _)| *f).max();
    fitting.retain(|(f, _, _)| Some(*f) == best);
    match fitting.len() {
        0 => Err(CallError::NoSuchMethod {
            class: class_name,
            method: format!(
                "{name} taking ({})",
                args.iter().map(Arg::kind).collect::<Vec<_>>().join(", ")
            ),
            overloads: decls(&all),
        }
        .into()),
        1 => {
            let (_, decl, m) = fitting.remove(0);
            if !has_object && !m.is_static() {
                return Err(CallError::NeedsInstance {
                    method: format!("{class_name}.{}", declaration(&m.name, &types_of(&m).0)),
                }
                .into());
            }
            let shape = shape(classes, decl, &m).await?;
            Ok((decl, m, shape))
        }
        _ => Err(CallError::Ambiguous {
            class: class_name,
            method: name.into(),
            candidates: fitting
                .iter()
                .map(|(_, _, m)| declaration(&m.name, &types_of(m).0))
                .collect(),
        }
        .into()),
    }
}

/// The boxes and what they hold.
const BOXES: &[(&str, char)] = &[
    ("java.lang.Integer", 'I'),
    ("java.lang.Long", 'J'),
    ("java.lang.Short", 'S'),
    ("java.lang.Byte", 'B'),
    ("java.lang.Character", 'C'),
    ("java.lang.Boolean", 'Z'),
    ("java.lang.Float", 'F'),
    ("java.lang.Double", 'D'),
];

/// The primitive a box class holds.
pub(super) fn unboxed(class: &str) -> Option<char> {
    BOXES.iter().find(|(b, _)| *b == class).map(|(_, p)| *p)
}

/// Interfaces and classes a JSON array becomes.
pub(super) const LISTS: &[&str] = &[
    "java.util.List",
    "java.util.Collection",
    "java.lang.Iterable",
    "java.util.ArrayList",
    "java.util.AbstractList",
];
/// … and a JSON array for a set.
pub(super) const SETS: &[&str] = &[
    "java.util.Set",
    "java.util.HashSet",
    "java.util.LinkedHashSet",
];
/// Interfaces and classes a JSON object becomes.
pub(super) const MAPS: &[&str] = &[
    "java.util.Map",
    "java.util.HashMap",
    "java.util.LinkedHashMap",
    "java.util.AbstractMap",
];
/// Types any JSON value can be built for (inferred from the value).
pub(super) const ANY: &[&str] = &["java.lang.Object", "java.io.Serializable"];

fn fit(arg: &Arg, ty: &JType) -> Fit {
    let prim = match ty {
        JType::Prim(c) => Some(*c),
        _ => ty.class_name().and_then(unboxed),
    };
    let class = ty.class_name().unwrap_or("");
    let any = ANY.contains(&class);
    match arg {
        Arg::Null => match ty {
            JType::Prim(_) => Fit::No,
            _ => Fit::Exact,
        },
        Arg::Handle(_) => match ty {
            JType::Prim(_) => Fit::No,
            _ => Fit::Loose,
        },
        Arg::Bool(_) => match prim {
            Some('Z') if matches!(ty, JType::Class { .. }) => Fit::Boxed,
            Some('Z') => Fit::Exact,
            _ if any => Fit::Loose,
            _ => Fit::No,
        },
        Arg::Int(_) if matches!(ty, JType::Class { .. }) && prim.is_some() => match prim {
            Some('I') => Fit::Boxed,
            Some('Z' | 'C') => Fit::No,
            _ => Fit::Loose,
        },
        Arg::Int(_) => match prim {
            Some('I') => Fit::Exact,
            Some('J' | 'F' | 'D') => Fit::Widened,
            Some('S' | 'B') => Fit::Loose,
            _ if any || class == "java.lang.Number" => Fit::Loose,
            _ => Fit::No,
        },
        Arg::Float(_) if matches!(ty, JType::Class { .. }) && prim.is_some() => match prim {
            Some('D') => Fit::Boxed,
            Some('F') => Fit::Loose,
            _ => Fit::No,
        },
        Arg::Float(_) => match prim {
            Some('D') => Fit::Exact,
            Some('F') => Fit::Loose,
            _ if any || class == "java.lang.Number" => Fit::Loose,
            _ => Fit::No,
        },
        Arg::Text(s) => match (prim, ty) {
            (Some('C'), _) if s.chars().count() == 1 => Fit::Loose,
            (Some(_), _) => Fit::No,
            (None, JType::Array(_)) => Fit::No,
            _ if class == "java.lang.String" => Fit::Exact,
            _ if class == "java.lang.CharSequence" || any => Fit::Loose,
            _ if LISTS.contains(&class) || SETS.contains(&class) || MAPS.contains(&class) => {
                Fit::No
            }
            // An enum constant, or a class built from its text.
            _ => Fit::Loose,
        },
        Arg::List(_) => match ty {
            JType::Array(_) => Fit::Exact,
            _ if LISTS.contains(&class) || SETS.contains(&class) => Fit::Exact,
            _ if any => Fit::Loose,
            _ => Fit::No,
        },
        Arg::Map(_) => match ty {
            _ if MAPS.contains(&class) => Fit::Exact,
            _ if any => Fit::Loose,
            _ => Fit::No,
        },
    }
}
