//! Class lookups: the loaded-class listing, and those made before arming: expanding an exception
//! or field-watch wildcard into the loaded classes it matches (those
//! requests need a concrete type), and noticing a method-exit method the loaded class does
//! not have.

use std::collections::BTreeSet;

use crate::door::Jvm;
use crate::error::JdwpError;
use crate::jdwp::TypeTag;
use crate::jvm::classes::java_name;
use crate::model::classes::{LoadedClass, TypeKind};
use crate::stop_points::arm::classes_matching;

/// How many matching classes are checked for being exceptions.
const CHECK_AT_MOST: usize = 200;

/// The names of the loaded classes matching `glob`, each once.
async fn loaded_names(handle: &Jvm, glob: &str) -> Result<Vec<String>, WildcardError> {
    let matching = classes_matching(handle.connection(), glob)
        .await
        .map_err(WildcardError::Listing)?;
    let mut names: Vec<String> = matching.into_iter().map(|(n, _)| n).collect();
    names.dedup();
    Ok(names)
}

/// What a wildcard resolved to.
#[derive(Debug, Clone)]
pub struct Expanded {
    /// Classes to arm (for exceptions, none a subclass of another).
    pub classes: Vec<String>,
    /// Matches left out by `max_classes`.
    pub left_out: Vec<String>,
    /// Matches skipped: covered by a matched superclass (exceptions), or
    /// not declaring the field (field watches).
    pub skipped: usize,
}

/// Why a wildcard resolved to nothing.
#[derive(Debug, Clone, thiserror::Error)]
pub enum WildcardError {
    #[error("listing the loaded classes failed: {0}")]
    Listing(JdwpError),
    #[error("no loaded class matches {glob}")]
    NoClass { glob: String },
    #[error("no loaded exception class matches {glob} ({}{})", plural_classes(*matched), first_checked(*matched, *checked))]
    NoException {
        glob: String,
        /// Loaded classes the glob matched, and how many were checked.
        matched: usize,
        checked: usize,
    },
    #[error("no loaded class matching {glob} declares a field {field:?} ({}{})", plural_classes(*matched), first_checked(*matched, *checked))]
    NoField {
        glob: String,
        field: String,
        matched: usize,
        checked: usize,
    },
}

fn plural_classes(n: usize) -> String {
    if n == 1 {
        "1 loaded class matches".into()
    } else {
        format!("{n} loaded classes match")
    }
}

fn first_checked(matched: usize, checked: usize) -> String {
    if matched > checked {
        format!(", the first {checked} checked")
    } else {
        String::new()
    }
}

/// The loaded classes matching `glob` but none of `exclude`, up to
/// `max_classes` (a probe on every method of each: it goes into one
/// loaded class at a time). A probe's own helper is never among them.
pub async fn loaded_classes_matching(
    handle: &Jvm,
    glob: &str,
    exclude: &[String],
    max_classes: usize,
) -> Result<Expanded, WildcardError> {
    let mut classes = loaded_names(handle, glob).await?;
    classes.retain(|c| {
        !c.contains(crate::classfile::probe::HELPER_MARK)
            && !exclude
                .iter()
                .any(|x| crate::model::stop_point::glob_matches(x, c))
    });
    if classes.is_empty() {
        return Err(WildcardError::NoClass {
            glob: glob.to_string(),
        });
    }
    let left_out = if classes.len() > max_classes {
        classes.split_off(max_classes)
    } else {
        Vec::new()
    };
    Ok(Expanded {
        classes,
        left_out,
        skipped: 0,
    })
}

/// The loaded exception classes (subclasses of java.lang.Throwable) whose
/// name matches `glob`, keeping only the topmost of a matched hierarchy
/// (a request on a class reports its subclasses too); `Err` with the
/// reason when none matches.
pub async fn exception_classes(
    handle: &Jvm,
    glob: &str,
    max_classes: usize,
) -> Result<Expanded, WildcardError> {
    let names = loaded_names(handle, glob).await?;
    let checked = names.len().min(CHECK_AT_MOST);
    // (name, its superclass names) for every match that is a Throwable.
    let mut throwables: Vec<(String, Vec<String>)> = Vec::new();
    for name in names.iter().take(checked) {
        let Ok(copies) = handle.classes().by_name(name).await else {
            continue;
        };
        let Some(first) = copies.first() else {
            continue;
        };
        let Ok(chain) = handle.classes().hierarchy(first.id).await else {
            continue;
        };
        let mut supers = Vec::new();
        for id in chain.iter().skip(1) {
            if let Ok(info) = handle.classes().info(*id).await {
                supers.push(info.name.clone());
            }
        }
        if name == "java.lang.Throwable" || supers.iter().any(|s| s == "java.lang.Throwable") {
            throwables.push((name.clone(), supers));
        }
    }
    if throwables.is_empty() {
        return Err(WildcardError::NoException {
            glob: glob.to_string(),
            matched: names.len(),
            checked,
        });
    }
    let matched: BTreeSet<&str> = throwables.iter().map(|(n, _)| n.as_str()).collect();
    let mut top: Vec<String> = Vec::new();
    let mut covered = 0;
    for (name, supers) in &throwables {
        if supers.iter().any(|s| matched.contains(s.as_str())) {
            covered += 1;
        } else {
            top.push(name.clone());
        }
    }
    let left_out = if top.len() > max_classes {
        top.split_off(max_classes)
    } else {
        Vec::new()
    };
    Ok(Expanded {
        classes: top,
        left_out,
        skipped: covered,
    })
}

/// The loaded classes matching `glob` that declare `field` (a watch on a
/// class that inherits it would watch the declaring class again); `Err`
/// with the reason when none does.
pub async fn field_classes(
    handle: &Jvm,
    glob: &str,
    field: &str,
    max_classes: usize,
) -> Result<Expanded, WildcardError> {
    let names = loaded_names(handle, glob).await?;
    let checked = names.len().min(CHECK_AT_MOST);
    let mut with = Vec::new();
    for name in names.iter().take(checked) {
        let Ok(copies) = handle.classes().by_name(name).await else {
            continue;
        };
        for c in &copies {
            if let Ok(fields) = handle.classes().fields(c.id).await
                && fields.iter().any(|f| f.name == field)
            {
                with.push(name.clone());
                break;
            }
        }
    }
    if with.is_empty() {
        return Err(WildcardError::NoField {
            glob: glob.to_string(),
            field: field.to_string(),
            matched: names.len(),
            checked,
        });
    }
    let skipped = checked - with.len();
    let left_out = if with.len() > max_classes {
        with.split_off(max_classes)
    } else {
        Vec::new()
    };
    Ok(Expanded {
        classes: with,
        left_out,
        skipped,
    })
}

/// The methods a loaded class has when none is called `method` (a
/// misspelt method would report "exits discarded" for ever); `None` when
/// it has one or the class is not loaded yet.
pub async fn missing_method(handle: &Jvm, class: &str, method: &str) -> Option<Vec<String>> {
    let copies = handle.classes().by_name(class).await.ok()?;
    if copies.is_empty() {
        return None;
    }
    let mut names = BTreeSet::new();
    for c in &copies {
        for m in handle.classes().methods(c.id).await.ok()?.iter() {
            if m.name == method {
                return None;
            }
            names.insert(m.name.clone());
        }
    }
    Some(names.into_iter().take(20).collect())
}

/// Every loaded type, one entry per dotted name with the number of class
/// loaders holding a copy (one `VirtualMachine.AllClasses`).
pub async fn loaded_classes(handle: &Jvm) -> Result<Vec<LoadedClass>, JdwpError> {
    let all = handle
        .connection()
        .send(&crate::jdwp::virtual_machine::AllClasses)
        .await?;
    let mut by_name: std::collections::BTreeMap<String, LoadedClass> = Default::default();
    for c in all {
        let kind = match c.ref_type.tag {
            TypeTag::Interface => TypeKind::Interface,
            TypeTag::Array => TypeKind::Array,
            TypeTag::Class => TypeKind::Class,
        };
        let name = java_name(&c.signature);
        by_name
            .entry(name.clone())
            .and_modify(|e| e.copies += 1)
            .or_insert(LoadedClass {
                name,
                kind,
                copies: 1,
            });
    }
    Ok(by_name.into_values().collect())
}
