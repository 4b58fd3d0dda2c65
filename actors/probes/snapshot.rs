//! What a probe's record shows beyond its columns' values, so that its
//! snapshot reads like a wire snapshot: the caller frames the helper took
//! for the record (one interned string of `StackTraceElement`s, read once
//! a round however many records share it, and labelled `Class.method:line`
//! as the wire labels frames), a field write's location (the site's own
//! `Class.method:line` string, as the wire locates a write), its
//! `field` and `change` (old → new) details, and the values of its trace
//! expressions' field paths as the wire's `expr[i]` details.

use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::Arc;

use super::Live;
use crate::classfile::probe::{Kind, Site, Source, paths};
use crate::connection::ConnectionHandle;
use crate::expr::eval::EvalError;
use crate::jdwp::string_reference::Value as StringValue;
use crate::jdwp::{ObjectId, Tag, Value};
use crate::model::label::{CodeLabel, LineAt};
use crate::model::prim::Prim;
use crate::model::shown::Scalar;
use crate::model::shown::{Detail, Shown};

/// The index of the callers column among a record's references.
fn callers_at(probe: &Live) -> Option<usize> {
    ref_at(probe, Source::Callers)
}

/// Where a write's `site` string is among a record's references.
fn site_at(probe: &Live) -> Option<usize> {
    ref_at(probe, Source::Where)
}

fn ref_at(probe: &Live, source: Source) -> Option<usize> {
    probe
        .layout
        .columns
        .iter()
        .filter(|c| c.kind == Kind::Ref)
        .position(|c| c.source == source)
}

/// The references a round shows as values: all but the callers and site
/// strings, which are read whole by [`callers`] and [`sites`].
pub fn shown_refs<'a>(probe: &Live, refs: &'a [Value]) -> Cow<'a, [Value]> {
    let texts: Vec<usize> = [
        callers_at(probe),
        site_at(probe),
        super::arguments::args_at(probe),
        ref_at(probe, Source::Callees),
    ]
    .into_iter()
    .flatten()
    .collect();
    if texts.is_empty() {
        return Cow::Borrowed(refs);
    }
    let width = probe.layout.ref_width.max(1);
    let null = Value::Object {
        tag: Tag::Object,
        id: ObjectId(0),
    };
    let mut out = refs.to_vec();
    for at in texts {
        for v in out.iter_mut().skip(at).step_by(width) {
            *v = null;
        }
    }
    Cow::Owned(out)
}

/// Every distinct site string of a round's write records, read once (a
/// write site's string is one interned constant).
pub async fn sites(
    conn: &ConnectionHandle,
    probe: &Live,
    refs: &[Value],
) -> HashMap<u64, Arc<str>> {
    strings(conn, probe, refs, site_at(probe))
        .await
        .into_iter()
        .map(|(id, text)| (id, Arc::from(text)))
        .collect()
}

/// The text of every distinct string in the reference column `at` of a
/// round's records, each read once.
async fn strings(
    conn: &ConnectionHandle,
    probe: &Live,
    refs: &[Value],
    at: Option<usize>,
) -> HashMap<u64, String> {
    let mut out = HashMap::new();
    let Some(at) = at else {
        return out;
    };
    let width = probe.layout.ref_width.max(1);
    for v in refs.iter().skip(at).step_by(width) {
        let Value::Object { id, .. } = v else {
            continue;
        };
        if id.0 == 0 || out.contains_key(&id.0) {
            continue;
        }
        if let Ok(text) = conn.send(&StringValue { string_object: *id }).await {
            out.insert(id.0, text);
        }
    }
    out
}

/// One write record's location: its site, else the probe's own. A write
/// in one class holds its site's number among its primitives.
pub fn site_of(
    probe: &Live,
    row_prims: &[Value],
    row_refs: &[Value],
    read: &HashMap<u64, Arc<str>>,
) -> Arc<str> {
    let columns = &probe.layout.columns;
    if let Some(at) = columns
        .iter()
        .filter(|c| c.kind != Kind::Ref)
        .position(|c| c.source == Source::Where)
    {
        return match row_prims.get(at) {
            Some(Value::Long(n)) => usize::try_from(*n)
                .ok()
                .and_then(|n| probe.layout.sites.get(n))
                .map(|s| Arc::from(s.as_str()))
                .unwrap_or_else(|| probe.location.clone()),
            _ => probe.location.clone(),
        };
    }
    match site_at(probe).and_then(|at| row_refs.get(at)) {
        Some(Value::Object { id, .. }) => read
            .get(&id.0)
            .cloned()
            .unwrap_or_else(|| probe.location.clone()),
        _ => probe.location.clone(),
    }
}

/// The callers of every distinct callers string in a round's references,
/// each read once (a hot path's callers are one interned string).
pub async fn callers(
    conn: &ConnectionHandle,
    probe: &Live,
    refs: &[Value],
) -> HashMap<u64, Vec<Arc<str>>> {
    strings(conn, probe, refs, callers_at(probe))
        .await
        .into_iter()
        .map(|(id, text)| (id, text.lines().map(label).collect()))
        .collect()
}

/// Why a record of a probe that takes callers has none: its thread had
/// walked its stack for another record less than
/// [`crate::classfile::probe::CALLERS_GAP_NS`] before.
pub fn callers_gap(probe: &Live, row_refs: &[Value]) -> Option<Detail> {
    let at = callers_at(probe)?;
    match row_refs.get(at) {
        Some(Value::Object { id, .. }) if id.0 != 0 => None,
        _ => Some(Detail::Text(format!(
            "not taken: this thread recorded another hit less than {} µs before, and a probe \
             walks a thread's stack at most once in that time",
            crate::classfile::probe::CALLERS_GAP_NS / 1000
        ))),
    }
}

/// One record's callers, nearest first.
pub fn callers_of(
    probe: &Live,
    row_refs: &[Value],
    read: &HashMap<u64, Vec<Arc<str>>>,
) -> Vec<Arc<str>> {
    match callers_at(probe).and_then(|at| row_refs.get(at)) {
        Some(Value::Object { id, .. }) => read.get(&id.0).cloned().unwrap_or_default(),
        _ => Vec::new(),
    }
}

/// The callees' text of every record of a round that has one (a call
/// the helper recorded as slow enough), each read once.
pub async fn callee_texts(
    conn: &ConnectionHandle,
    probe: &Live,
    refs: &[Value],
) -> HashMap<u64, String> {
    strings(conn, probe, refs, ref_at(probe, Source::Callees)).await
}

/// One record's callees, for a call of `total_ns`: `None` when the
/// probe times none, or the record has no text that reads.
pub fn callees_of(
    probe: &Live,
    row_refs: &[Value],
    read: &HashMap<u64, String>,
    total_ns: u64,
) -> Option<Detail> {
    let at = ref_at(probe, Source::Callees)?;
    let Some(Value::Object { id, .. }) = row_refs.get(at) else {
        return None;
    };
    let sites = crate::model::callees::parse(read.get(&id.0)?, &probe.layout.callees)?;
    Some(Detail::Callees(crate::model::callees::Callees {
        total_ns,
        sites,
    }))
}

/// `Class.method:line` (as the wire labels a frame) from a
/// `StackTraceElement`'s text: `[loader/][module/]Class.method(File:line)`,
/// with `(Native Method)` as `native` and an unknown line as `?`.
pub fn label(element: &str) -> Arc<str> {
    let (head, source) = element.split_once('(').unwrap_or((element, ""));
    let qualified = head.rsplit('/').next().unwrap_or(head);
    let source = source.trim_end_matches(')');
    let line = if source == "Native Method" {
        LineAt::Native
    } else {
        LineAt::known(
            source
                .rsplit_once(':')
                .and_then(|(_, n)| n.parse::<u32>().ok())
                .map(i64::from),
        )
    };
    CodeLabel::new(qualified, None, line).to_string().into()
}

/// A field write's details, as the wire's field-write snapshot has them:
/// the field, and its change from the old value to the new one.
pub fn write_details(probe: &Live, locals: &[(Arc<str>, Shown)]) -> Vec<(String, Detail)> {
    let Site::FieldWrite { name, .. } = &probe.spec.site else {
        return Vec::new();
    };
    let find = |n: &str| locals.iter().find(|(k, _)| &**k == n).map(|(_, v)| v);
    let Some(new) = find("newValue") else {
        return Vec::new();
    };
    vec![
        ("field".to_string(), Detail::Text(name.clone())),
        (
            "change".to_string(),
            Detail::Change {
                old: find(crate::classfile::probe::OLD_VALUE).cloned(),
                new: new.clone(),
            },
        ),
    ]
}

/// The values a probe read for its trace expressions, taken out of a
/// record's columns and named as the wire names them (`expr[i] <source>`):
/// the value, or where the path met a null, worded as the wire's
/// evaluator words it.
pub fn path_details(probe: &Live, locals: &mut Vec<(Arc<str>, Shown)>) -> Vec<(String, Detail)> {
    let mut out = Vec::with_capacity(probe.spec.paths.len());
    for p in &probe.spec.paths {
        let mut take = |name: String| {
            let at = locals.iter().position(|(n, _)| **n == *name)?;
            Some(locals.remove(at).1)
        };
        let name = paths::value_name(p);
        let value = take(name.clone());
        let null = match take(paths::null_name(p)) {
            Some(Shown::Scalar(Scalar::Prim(Prim::Int(k)))) if k > 0 => p.steps.get(k as usize - 1),
            _ => None,
        };
        let detail = match (null, value) {
            (Some(step), _) => {
                Detail::Failed(EvalError::null_before(step.null_at, &step.name).render(&p.source))
            }
            (None, Some(v)) => Detail::Value(v),
            (None, None) => continue,
        };
        out.push((name, detail));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::label;

    #[test]
    fn a_stack_trace_element_reads_as_the_wire_labels_a_frame() {
        assert_eq!(&*label("app//Shop$1.run(Shop.java:12)"), "Shop$1.run:12");
        assert_eq!(
            &*label("java.base/java.lang.Thread.run(Thread.java:840)"),
            "java.lang.Thread.run:840"
        );
        assert_eq!(
            &*label("com.foo@1.0/com.foo.A.b(A.java:3)"),
            "com.foo.A.b:3"
        );
        assert_eq!(&*label("a.B.c(Native Method)"), "a.B.c:native");
        assert_eq!(&*label("a.B.c(Unknown Source)"), "a.B.c:?");
        assert_eq!(&*label("a.B.c(B.java)"), "a.B.c:?");
    }
}
