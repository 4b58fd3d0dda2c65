//! The helper's slower counters, read every half second of drain: calls,
//! passes and throws (each thread's stripe of `counts`, and `over`),
//! sampled cost, errors, and the drops they imply;
//! and the small object reads the drain needs (an `AtomicLong`'s value,
//! an `AtomicLongArray`'s inner array).

use std::sync::atomic::Ordering;

use super::Cursor;
use crate::classfile::probe::{
    CALLS_AT, COUNT_STRIPES, COUNT_WIDTH, HIST_STRIPES, HIST_WIDTH, PASSED_AT, THROWS_AT,
};
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

/// Reads the helper's calls and passes (its counts), sampled cost and
/// errors into the stop point's meter. The drops
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
                f.counts,
                f.over,
                f.cost_ns,
                f.cost_samples,
                f.cost_clock,
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
    meter.clock_ns.store(long(4), Ordering::Relaxed);
    let base = probe.base;
    let errors = base.errors + long(5);
    let new_errors =
        errors.saturating_sub(probe.stats.condition_errors.swap(errors, Ordering::Relaxed));
    if new_errors > 0
        && let Some(thrown) = obj(7)
        && let Some(text) = describe_thrown(session, thrown).await
    {
        probe.stats.note_error(text);
    }
    let Some(counts) = (match (obj(0), obj(1)) {
        (Some(c), Some(o)) => read_counts(session, c, o).await,
        _ => None,
    }) else {
        return false;
    };
    let calls = counts.calls;
    // A pass is counted after its call, which a read may have missed.
    let passed = Some(if probe.spec.filters() {
        counts.passed.min(calls)
    } else {
        calls
    });
    let new_calls = (base.calls + calls)
        .saturating_sub(meter.calls.swap(base.calls + calls, Ordering::Relaxed));
    let failing =
        probe.spec.condition.is_some() && probe.stats.probe_condition_failed(new_errors, new_calls);
    if probe.spec.stats {
        statistics(session, probe, calls, counts.throws.min(calls), cursor).await;
    }
    if let Some(p) = passed {
        meter.passes.store(base.passes + p, Ordering::Relaxed);
    }
    probe.stats.hits.store(base.hits + calls, Ordering::Relaxed);
    let claimed = match obj(6) {
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

/// A helper's three counts, summed over its stripes and `over`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(super) struct Counts {
    pub calls: u64,
    pub passed: u64,
    pub throws: u64,
}

/// Reads `counts` (a `long[]` of stripes) and `over` (an
/// `AtomicLongArray` of the same three counts) in two array reads.
async fn read_counts(session: &Jvm, counts: ObjectId, over: ObjectId) -> Option<Counts> {
    let conn = session.connection();
    let longs = |values: Vec<Value>| -> Vec<u64> {
        values
            .into_iter()
            .map(|v| match v {
                Value::Long(n) => n as u64,
                _ => 0,
            })
            .collect()
    };
    let stripes = conn
        .send(&GetArray {
            array: counts,
            first_index: 0,
            length: (COUNT_STRIPES + 1) * COUNT_WIDTH,
        })
        .await
        .ok()?;
    let inner = inner_array(session, over).await.ok()?;
    let over = match inner.0 {
        0 => Vec::new(),
        _ => longs(
            conn.send(&GetArray {
                array: inner,
                first_index: 0,
                length: 3,
            })
            .await
            .ok()?
            .values,
        ),
    };
    Some(sum_counts(&longs(stripes.values), &over))
}

/// The three counts from the stripes' longs and `over`'s.
pub(super) fn sum_counts(stripes: &[u64], over: &[u64]) -> Counts {
    let at = |k: i32| -> u64 {
        let from_stripes = stripes
            .chunks(COUNT_WIDTH as usize)
            .skip(1)
            .filter_map(|s| s.get(k as usize))
            .fold(0u64, |a, b| a.wrapping_add(*b));
        from_stripes.wrapping_add(over.get(k as usize).copied().unwrap_or(0))
    };
    Counts {
        calls: at(CALLS_AT),
        passed: at(PASSED_AT),
        throws: at(THROWS_AT),
    }
}

/// A statistics probe's histogram, read into its meter's latency history
/// with its calls and throws (ms since the drain first read it).
async fn statistics(session: &Jvm, probe: &Live, calls: u64, throws: u64, cursor: &mut Cursor) {
    let conn = session.connection();
    let f = &probe.fields;
    let Ok(v) = conn
        .send(&GetStatics {
            ref_type: probe.helper,
            fields: vec![f.hist],
        })
        .await
    else {
        return;
    };
    let Some(Value::Object { id: hist, .. }) = v.first() else {
        return;
    };
    if hist.0 == 0 {
        return;
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    /// The stripes after the first (padding) and `over` add up, each
    /// count from its own place in a stripe.
    #[test]
    fn counts_add_the_stripes_and_the_overflow() {
        let w = COUNT_WIDTH as usize;
        let mut stripes = vec![0u64; (COUNT_STRIPES as usize + 1) * w];
        // The padding stripe is never counted.
        stripes[CALLS_AT as usize] = 1_000;
        for (s, (calls, passed, throws)) in [(1, (10, 4, 1)), (7, (5, 5, 0)), (64, (3, 0, 2))] {
            stripes[s * w + CALLS_AT as usize] = calls;
            stripes[s * w + PASSED_AT as usize] = passed;
            stripes[s * w + THROWS_AT as usize] = throws;
            // When the thread last walked its stack: not a count.
            stripes[s * w + crate::classfile::probe::WALKED_AT as usize] = 123_456_789;
        }
        let c = sum_counts(&stripes, &[2, 1, 1]);
        assert_eq!(
            c,
            Counts {
                calls: 20,
                passed: 10,
                throws: 4
            }
        );
        // A short read (or none of `over`) counts what it has.
        assert_eq!(sum_counts(&stripes[..2 * w], &[]).calls, 10);
    }
}
