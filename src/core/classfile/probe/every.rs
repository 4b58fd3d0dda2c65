//! An exit probe with no method: every method of the class timed in one
//! class file with one helper. The methods take different arguments, so
//! each site boxes its method's into an `Object[]` ([`ARGS`]) and passes
//! its own `Class.method:line` ([`super::SITE`]); the drain names the
//! arguments from [`argument_names`].

use std::collections::BTreeMap;

use ristretto_classfile::ClassFile;

use super::plan::{Sites, arguments, column, is_return};
use super::read::{this_name, utf8, view};
use super::{ProbeSpec, Refusal, SITE, Source, code_of};
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

/// Each timed method's argument names (as its LocalVariableTable names
/// them, `argN` without one), by method name; overloads whose names
/// differ give none, so their arguments go by position.
pub fn argument_names(class: &ClassFile<'_>) -> BTreeMap<String, Vec<String>> {
    let mut out: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for mi in timed_methods(class) {
        let Ok(v) = view(class, mi) else {
            continue;
        };
        let Some((params, _)) = split_method_descriptor(&v.descriptor) else {
            continue;
        };
        let names: Vec<String> = arguments(&v, &params).into_iter().map(|a| a.0).collect();
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
