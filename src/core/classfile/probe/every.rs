//! An exit probe with no method: every method of the class timed in one
//! class file with one helper. The methods take different arguments, so
//! each site boxes its method's into an `Object[]` ([`ARGS`]) and passes
//! its own `Class.method:line` ([`super::SITE`]); the drain names the
//! arguments from [`argument_names`].

use std::collections::BTreeMap;

use ristretto_classfile::ClassFile;

use super::plan::{Sites, arguments, column, is_return};
use super::read::{this_name, utf8, view};
use super::{Kind, ProbeSpec, Refusal, SITE, Source, code_of};
use crate::model::signature::split_method_descriptor;

/// The methods an exit probe with no method times, by index: every one
/// with bytecode but the static initialiser, the constructors (an exit
/// probe cannot go into one), bridges and synthetic methods (a lambda's
/// body, an accessor: the method that calls them is timed).
pub fn timed_methods(class: &ClassFile<'_>) -> Vec<usize> {
    use ristretto_classfile::MethodAccessFlags as F;
    class
        .methods
        .iter()
        .enumerate()
        .filter(|(_, m)| {
            let name = utf8(class, m.name_index);
            name != "<init>"
                && name != "<clinit>"
                && !m.access_flags.intersects(F::BRIDGE | F::SYNTHETIC)
                && code_of(&m.attributes).is_some()
        })
        .map(|(i, _)| i)
        .collect()
}

/// Every return of every method [`timed_methods`] lists; a record holds
/// the method's arguments (boxed, as their count and types differ) and
/// its `Class.method:line`.
pub(super) fn every_exit(class: &ClassFile<'_>, spec: &ProbeSpec) -> Result<Sites, Refusal> {
    if spec.condition.is_some() {
        return Err(Refusal::ConditionOnEveryMethod);
    }
    let mut sites = BTreeMap::new();
    for mi in timed_methods(class) {
        let v = view(class, mi)?;
        let at: Vec<u16> = (0..v.code.len())
            .filter(|k| is_return(&v.code[*k]))
            .map(|k| k as u16)
            .collect();
        sites.insert(mi, at);
    }
    if sites.is_empty() {
        return Err(Refusal::NothingToTime {
            class: this_name(class).replace('/', "."),
        });
    }
    Ok(Sites {
        sites,
        columns: vec![
            column(ARGS, "[Ljava/lang/Object;", Source::Args, true),
            column(SITE, "Ljava/lang/String;", Source::Where, true),
        ],
        returns: "V".into(),
    })
}

/// The column that holds a timed method's arguments.
pub const ARGS: &str = "args";

/// One argument of a timed method, as a record holds it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Argument {
    /// As the LocalVariableTable names it, `argN` without one.
    pub name: String,
    /// A primitive the site boxed: its box is the probe's, not the
    /// program's, so only the value is worth showing.
    pub boxed: bool,
}

/// Each timed method's arguments, by method name; overloads whose
/// arguments differ give none, so theirs go by position.
pub fn argument_names(class: &ClassFile<'_>) -> BTreeMap<String, Vec<Argument>> {
    let mut out: BTreeMap<String, Vec<Argument>> = BTreeMap::new();
    for mi in timed_methods(class) {
        let Ok(v) = view(class, mi) else {
            continue;
        };
        let Some((params, _)) = split_method_descriptor(&v.descriptor) else {
            continue;
        };
        let names: Vec<Argument> = arguments(&v, &params)
            .into_iter()
            .map(|(name, descriptor, _)| Argument {
                name,
                boxed: Kind::of(&descriptor) != Kind::Ref,
            })
            .collect();
        match out.get(&v.name) {
            Some(known) if *known != names => {
                out.insert(v.name.clone(), Vec::new());
            }
            Some(_) => {}
            None => {
                out.insert(v.name.clone(), names);
            }
        }
    }
    out
}
