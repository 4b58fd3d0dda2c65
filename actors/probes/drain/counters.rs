//! The helper's slower counters, read every half second of drain: calls and
//! passes (`LongAdder`s), sampled cost, errors, and the drops they imply;
//! and the small object reads the drain needs (an `AtomicLong`'s value,
//! an `AtomicLongArray`'s inner array).

use std::sync::atomic::Ordering;

use super::Cursor;
use crate::classfile::probe::{HIST_STRIPES, HIST_WIDTH};
use crate::door::Jvm;
use crate::error::JdwpError;
use crate::jdwp::array_reference::GetValues as GetArray;
use crate::jdwp::object_reference::GetValues as GetFields;
use crate::jdwp::reference_type::GetValues as GetStatics;
use crate::jdwp::{FieldId, ObjectId, Value};
use crate::model::latency::{Latency, Reading};
use crate::probes::Live;
use std::time::Instant;

/// The value of an `AtomicLong`, through its `value` field (its id kept
/// in `field` after the first read).
pub(super) async fn atomic_long(
    session: &Jvm,
    object: ObjectId,
    field: &mut Option<FieldId>,
) -> Result<u64, JdwpError> {
    let f = match field {
        Some(f) => *f,
        None => match field_named(session, object, "value").await? {
            Some(f) => *field.insert(f),
            None => return Ok(0),
        },
    };
    Ok(match field_value(session, object, f).await? {
        Some(Value::Long(n)) => n as u64,
        _ => 0,
    })
}

/// The `long[]` inside an `AtomicLongArray`.
pub(super) async fn inner_array(session: &Jvm, object: ObjectId) -> Result<ObjectId, JdwpError> {
    let Some(f) = field_named(session, object, "array").await? else {
        return Ok(ObjectId(0));
    };
    Ok(match field_value(session, object, f).await? {
        Some(Value::Object { id, .. }) => id,
        _ => ObjectId(0),
    })
}

/// The id of the field `name` declared by `object`'s class.
async fn field_named(
    session: &Jvm,
    object: ObjectId,
    name: &str,
) -> Result<Option<FieldId>, JdwpError> {
    let t = session.classes().type_of(object).await?.id;
    let fields = session.classes().fields(t).await?;
    Ok(fields.iter().find(|f| f.name == name).map(|f| f.id))
}

/// One field of one object.
async fn field_value(
    session: &Jvm,
    object: ObjectId,
    field: FieldId,
) -> Result<Option<Value>, JdwpError> {
    let v = session
        .connection()
        .send(&GetFields {
            object,
            fields: vec![field],
        })
        .await?;
    Ok(v.first().copied())
}

/// Reads the helper's calls and passes (`LongAdder`s: their base and
/// cells), sampled cost and errors into the stop point's meter. The drops
/// are the passes (every call, with no filter) less the records claimed
/// (`head`, read last, so a call in flight never shows as a drop). True
/// when its condition keeps failing: the drain takes the probe out.
pub(super) async fn counters(session: &Jvm, probe: &Live, cursor: &mut Cursor) -> bool {
    let conn = session.connection();
    let f = &probe.fields;
    let Ok(v) = conn
        .send(&GetStatics {
            ref_type: probe.helper,
            fields: vec![
                f.calls,
                f.passed,
                f.cost_ns,
                f.cost_samples,
                f.errors,
                f.head,
                f.last_error,
            ],
        })
        .await
    else {
        return false;
    };
    let long = |i: usize| match v.get(i) {
        Some(Value::Long(n)) => *n as u64,
        _ => 0,
    };
    let obj = |i: usize| match v.get(i) {
        Some(Value::Object { id, .. }) if id.0 != 0 => Some(*id),
        _ => None,
    };
    let meter = &probe.stats.probe;
    meter.cost_ns.store(long(2), Ordering::Relaxed);
    meter.cost_samples.store(long(3), Ordering::Relaxed);
    let base = probe.base;
    let errors = base.errors + long(4);
    let new_errors =
        errors.saturating_sub(probe.stats.condition_errors.swap(errors, Ordering::Relaxed));
    if new_errors > 0
        && let Some(thrown) = obj(6)
        && let Some(text) = describe_thrown(session, thrown).await
    {
        probe.stats.note_error(text);
    }
    // Passes first, then calls: a call is counted before its pass, so
    // read in this order the passes never outnumber the calls.
    let passed = match obj(1) {
        Some(a) if probe.spec.filters() => long_adder(session, a).await,
        _ => None,
    };
    let Some(calls) = (match obj(0) {
        Some(a) => long_adder(session, a).await,
        None => None,
    }) else {
        return false;
    };
    let passed = if probe.spec.filters() {
        passed
    } else {
        Some(calls)
    };
    let new_calls = (base.calls + calls)
        .saturating_sub(meter.calls.swap(base.calls + calls, Ordering::Relaxed));
    let failing =
        probe.spec.condition.is_some() && probe.stats.probe_condition_failed(new_errors, new_calls);
    if probe.spec.stats {
        statistics(session, probe, calls, cursor).await;
    }
    if let Some(p) = passed {
        meter.passes.store(base.passes + p, Ordering::Relaxed);
    }
    probe.stats.hits.store(base.hits + calls, Ordering::Relaxed);
    let claimed = match obj(5) {
        Some(h) => atomic_long(session, h, &mut cursor.atomic_value).await.ok(),
        None => None,
    };
    if let (Some(passed), Some(claimed)) = (passed, claimed) {
        meter.drops.store(
            base.drops + passed.saturating_sub(claimed),
            Ordering::Relaxed,
        );
    }
    failing
}

/// What a condition threw, as `type: message`, read from the object.
async fn describe_thrown(session: &Jvm, thrown: ObjectId) -> Option<String> {
    let classes = session.classes();
    let conn = session.connection();
    let t = classes.type_of(thrown).await.ok()?.id;
    let name = classes.info(t).await.ok()?.name.clone();
    let throwable = classes.by_name("java.lang.Throwable").await.ok()?;
    let fields = classes.fields(throwable.first()?.id).await.ok()?;
    let message = fields.iter().find(|f| f.name == "detailMessage")?.id;
    let text = match field_value(session, thrown, message).await.ok()? {
        Some(Value::Object { id, .. }) if id.0 != 0 => conn
            .send(&crate::jdwp::string_reference::Value { string_object: id })
            .await
            .ok(),
        _ => None,
    };
    Some(match text {
        Some(m) => format!("{name}: {m}"),
        None => name,
    })
}

/// The sum of a `LongAdder`: its `base` plus each cell's `value`.
async fn long_adder(session: &Jvm, adder: ObjectId) -> Option<u64> {
    let classes = session.classes();
    let conn = session.connection();
    let mut ty = classes.type_of(adder).await.ok()?.id;
    // base and cells are declared by Striped64, LongAdder's superclass.
    let mut base = None;
    let mut cells = None;
    for _ in 0..3 {
        let fields = classes.fields(ty).await.ok()?;
        base = base.or_else(|| fields.iter().find(|f| f.name == "base").map(|f| f.id));
        cells = cells.or_else(|| fields.iter().find(|f| f.name == "cells").map(|f| f.id));
        if base.is_some() && cells.is_some() {
            break;
        }
        ty = classes.superclass(ty).await.ok()??;
    }
    let (base, cells) = (base?, cells?);
    let v = conn
        .send(&GetFields {
            object: adder,
            fields: vec![base, cells],
        })
        .await
        .ok()?;
    let mut sum = match v.first() {
        Some(Value::Long(n)) => *n as u64,
        _ => 0,
    };
    if let Some(Value::Object { id, .. }) = v.get(1)
        && id.0 != 0
    {
        let len = conn
            .send(&crate::jdwp::array_reference::Length { array: *id })
            .await
            .ok()?;
        let cells = conn
            .send(&GetArray {
                array: *id,
                first_index: 0,
                length: len,
            })
            .await
            .ok()?;
        for c in cells.values {
            let Value::Object { id: cell, .. } = c else {
                continue;
            };
            if cell.0 == 0 {
                continue;
            }
            let t = classes.type_of(cell).await.ok()?.id;
            let fields = classes.fields(t).await.ok()?;
            let f = fields.iter().find(|f| f.name == "value")?.id;
            if let Ok(v) = conn
                .send(&GetFields {
                    object: cell,
                    fields: vec![f],
                })
                .await
                && let Some(Value::Long(n)) = v.first()
            {
                sum = sum.wrapping_add(*n as u64);
            }
        }
    }
    Some(sum)
}

/// A statistics probe's throws and histogram, read into its meter's
/// latency history (ms since the drain first read it).
async fn statistics(session: &Jvm, probe: &Live, calls: u64, cursor: &mut Cursor) {
    let conn = session.connection();
    let f = &probe.fields;
    let Ok(v) = conn
        .send(&GetStatics {
            ref_type: probe.helper,
            fields: vec![f.throws, f.hist],
        })
        .await
    else {
        return;
    };
    let (Some(Value::Object { id: throws, .. }), Some(Value::Object { id: hist, .. })) =
        (v.first(), v.get(1))
    else {
        return;
    };
    if throws.0 == 0 || hist.0 == 0 {
        return;
    }
    let Some(throws) = long_adder(session, *throws).await else {
        return;
    };
    let length = HIST_STRIPES * HIST_WIDTH;
    let Ok(region) = conn
        .send(&GetArray {
            array: *hist,
            first_index: 0,
            length,
        })
        .await
    else {
        return;
    };
    let longs: Vec<i64> = region
        .values
        .iter()
        .map(|v| match v {
            Value::Long(n) => *n,
            _ => 0,
        })
        .collect();
    let epoch = *cursor.stats_epoch.get_or_insert_with(Instant::now);
    let at_ms = epoch.elapsed().as_millis() as u64;
    let reading = Reading::from_stripes(at_ms, calls, throws, &longs);
    if let Ok(mut l) = probe.stats.probe.latency.lock() {
        if at_ms == 0 || l.view().is_none() {
            *l = Latency::armed(0);
        }
        l.read(reading);
    }
}
