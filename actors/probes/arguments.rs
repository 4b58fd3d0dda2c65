//! The arguments of a timed class's records (an exit probe on every
//! method of a class): each record holds its method's arguments boxed in
//! an `Object[]`, shown as that method's own arguments, named as its
//! LocalVariableTable names them (`argN` without one), unboxed.

use std::collections::HashMap;
use std::sync::Arc;

use super::Live;
use crate::classfile::probe::{Kind, Source};
use crate::door::Jvm;
use crate::jdwp::Value;
use crate::jdwp::array_reference::{GetValues, Length};
use crate::jvm::eval::{EvalContext, to_val};
use crate::jvm::show::Budget;
use crate::model::shown::Shown;

/// How many argument arrays a round reads: past it a record shows none.
const ARRAYS_PER_ROUND: usize = 256;

/// Where the arguments are among a record's references.
pub fn args_at(probe: &Live) -> Option<usize> {
    probe
        .layout
        .columns
        .iter()
        .filter(|c| c.kind == Kind::Ref)
        .position(|c| c.source == Source::Args)
}

/// The arguments of every distinct array in a round's records, each
/// read once, without running any code in the JVM.
pub async fn read(session: &Jvm, probe: &Live, refs: &[Value]) -> HashMap<u64, Vec<Shown>> {
    let mut out = HashMap::new();
    let Some(at) = args_at(probe) else {
        return out;
    };
    let width = probe.layout.ref_width.max(1);
    let ctx = EvalContext::default();
    let budget = Budget {
        max_len: probe.max_length,
        ..Budget::default()
    };
    let reader = session.value_reader(&ctx, budget, None);
    let conn = session.connection();
    for v in refs.iter().skip(at).step_by(width) {
        let Value::Object { id, .. } = v else {
            continue;
        };
        if id.0 == 0 || out.contains_key(&id.0) || out.len() >= ARRAYS_PER_ROUND {
            continue;
        }
        let Ok(length) = conn.send(&Length { array: *id }).await else {
            continue;
        };
        let Ok(region) = conn
            .send(&GetValues {
                array: *id,
                first_index: 0,
                length,
            })
            .await
        else {
            continue;
        };
        let mut shown = Vec::with_capacity(region.values.len());
        for v in &region.values {
            shown.push(reader.short(&to_val(v)).await);
        }
        out.insert(id.0, shown);
    }
    out
}

/// One record's arguments, named for the method its `location`
/// (`Class.method:line`) names.
pub fn named(
    probe: &Live,
    row_refs: &[Value],
    read: &HashMap<u64, Vec<Shown>>,
    location: &str,
) -> Vec<(Arc<str>, Shown)> {
    let Some(Value::Object { id, .. }) = args_at(probe).and_then(|at| row_refs.get(at)) else {
        return Vec::new();
    };
    let Some(values) = read.get(&id.0) else {
        return Vec::new();
    };
    let method = location
        .rsplit_once(':')
        .map_or(location, |(m, _)| m)
        .rsplit_once('.')
        .map_or("", |(_, m)| m);
    let known = probe
        .layout
        .arguments
        .get(method)
        .filter(|n| n.len() == values.len());
    values
        .iter()
        .enumerate()
        .map(|(k, v)| {
            let argument = known.and_then(|n| n.get(k));
            let name = argument.map_or_else(|| format!("arg{k}"), |a| a.name.clone());
            // A box the site made for a primitive is the probe's own
            // object: the value is what the method took.
            let boxed_here = argument.is_none_or(|a| a.boxed);
            let shown = match v {
                Shown::Boxed { value, .. } if boxed_here => Shown::Scalar(*value),
                other => other.clone(),
            };
            (Arc::from(name.as_str()), shown)
        })
        .collect()
}
