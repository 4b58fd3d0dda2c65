//! Draining the probes' rings: every [`DRAIN_EVERY`], for each armed
//! probe, read how far its ring has been written (`head`), which slots
//! are published (`seq`), read those records' columns in one region read
//! per array, turn them into trace snapshots, and tell the helper how far
//! it may write again (`tail`) while renewing its lease, in one write.
//! Nothing is suspended: these are reads of arrays and static fields.

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use super::{DRAIN_EVERY, Live, Probes};
use crate::actors::connection::ConnectionHandle;
use crate::actors::error::JdwpError;
use crate::actors::events::log::TraceRecord;
use crate::actors::session::SessionHandle;
use crate::classfile::probe::{Kind, Source};
use crate::jdwp::FieldValue;
use crate::jdwp::array_reference::{GetValues as GetArray, SetValues as SetArray};
use crate::jdwp::class_type::SetValues as SetStatics;
use crate::jdwp::object_reference::GetValues as GetFields;
use crate::jdwp::reference_type::GetValues as GetStatics;
use crate::jdwp::{FieldId, ObjectId, Tag, ThreadId, Value};
use crate::model::prim::Prim;
use crate::model::shown::{Detail, Scalar, Shown};
use crate::model::stop_point::StopState;

/// How often (in drain rounds) the slower counters are read.
const COUNTERS_EVERY: u32 = 25;

/// What the drain keeps per probe between rounds.
#[derive(Debug, Default)]
struct Cursor {
    /// Next record number to read.
    tail: u64,
    /// The `value` field of `java.util.concurrent.atomic.AtomicLong`.
    atomic_value: Option<FieldId>,
    /// The `array` field of `AtomicLongArray`, and the array it holds.
    seq_array: Option<ObjectId>,
    round: u32,
    spent: bool,
}

/// Starts the drain of `session`'s probes; it ends with the session.
pub fn spawn_drain(session: SessionHandle, probes: Arc<Probes>) {
    tokio::spawn(async move {
        let mut cursors: HashMap<String, Cursor> = HashMap::new();
        let mut names: HashMap<u64, Arc<str>> = HashMap::new();
        let mut tick = tokio::time::interval(DRAIN_EVERY);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            tick.tick().await;
            if session.check_alive().is_err() {
                break;
            }
            let live = probes.live();
            cursors.retain(|id, _| live.iter().any(|(l, _)| l == id));
            for (id, probe) in live {
                let cursor = cursors.entry(id.clone()).or_default();
                if cursor.spent {
                    continue;
                }
                match drain_one(&session, &id, &probe, cursor, &mut names).await {
                    Ok(Spent::No) => {}
                    Ok(Spent::Yes) => {
                        cursor.spent = true;
                        let _ = super::remove(
                            session.connection(),
                            session.classes(),
                            &probes,
                            &id,
                            true,
                        )
                        .await;
                        session
                            .stop_points()
                            .mark(&id, StopState::Spent("trace budget used".into()))
                            .await;
                    }
                    Err(e) if e.is_gone() => return,
                    Err(e) => {
                        // Counted where the listing shows it, and logged:
                        // a drain that keeps failing is otherwise silent.
                        tracing::warn!(probe = %id, error = %e, "a probe's drain round failed");
                        probe
                            .stats
                            .probe
                            .drain_failures
                            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    }
                }
            }
        }
    });
}

enum Spent {
    No,
    Yes,
}

async fn drain_one(
    session: &SessionHandle,
    id: &str,
    probe: &Live,
    cursor: &mut Cursor,
    names: &mut HashMap<u64, Arc<str>>,
) -> Result<Spent, JdwpError> {
    let conn = session.connection();
    let f = &probe.fields;
    let statics = conn
        .send(&GetStatics {
            ref_type: probe.helper,
            fields: vec![
                f.head, f.seq, f.prims, f.refs, f.times, f.durs, f.threads, f.live,
            ],
        })
        .await?;
    let obj = |i: usize| match statics.get(i) {
        Some(Value::Object { id, .. }) => *id,
        _ => ObjectId(0),
    };
    let (head_obj, seq_obj) = (obj(0), obj(1));
    let (prims, refs, times, durs, threads) = (obj(2), obj(3), obj(4), obj(5), obj(6));
    let alive = matches!(statics.get(7), Some(Value::Boolean(true)));
    if head_obj.0 == 0 || seq_obj.0 == 0 {
        return Ok(Spent::No);
    }
    let head = atomic_long(session, head_obj, &mut cursor.atomic_value).await?;
    cursor.round = cursor.round.wrapping_add(1);
    if cursor.round % COUNTERS_EVERY == 1 {
        counters(session, probe, cursor).await;
    }
    let cap = u64::from(probe.spec.ring_capacity);
    let mut ready = 0u64;
    let mut records = Vec::new();
    if head > cursor.tail {
        let pending = (head - cursor.tail).min(cap);
        let seq_array = match cursor.seq_array {
            Some(a) => a,
            None => {
                let a = inner_array(session, seq_obj).await?;
                cursor.seq_array = Some(a);
                a
            }
        };
        let seqs = region(conn, seq_array, cursor.tail, pending, 1, cap).await?;
        for (k, v) in seqs.iter().enumerate() {
            let n = cursor.tail + k as u64;
            if !matches!(v, Value::Long(s) if *s as u64 == n + 1) {
                break;
            }
            ready += 1;
        }
        if ready > 0 {
            let ring = Ring {
                prims,
                refs,
                times,
                durs,
                threads,
                cap,
            };
            records = read_records(session, id, probe, &ring, cursor.tail, ready, names).await?;
        }
    }
    hand_on(session, probe, records, ready, cursor, alive).await
}

/// The arrays of a probe's ring, as the helper's statics name them.
struct Ring {
    prims: ObjectId,
    refs: ObjectId,
    times: ObjectId,
    durs: ObjectId,
    threads: ObjectId,
    cap: u64,
}

/// Reads the `ready` records published from `from` on (every array in
/// one burst), turns them into snapshots, and frees their slots' object
/// references.
async fn read_records(
    session: &SessionHandle,
    id: &str,
    probe: &Live,
    ring: &Ring,
    from: u64,
    ready: u64,
    names: &mut HashMap<u64, Arc<str>>,
) -> Result<Vec<TraceRecord>, JdwpError> {
    let conn = session.connection();
    let Ring {
        prims,
        refs,
        times,
        durs,
        threads,
        cap,
    } = *ring;
    let mut records = Vec::with_capacity(ready as usize);
    let layout = &probe.layout;
    let (pw, rw) = (layout.prim_width as u64, layout.ref_width as u64);
    let (p, r, t, d, th) = futures::join!(
        region(conn, prims, from, ready, pw, cap),
        region(conn, refs, from, ready, rw, cap),
        region(conn, times, from, ready, 1, cap),
        region(conn, durs, from, ready, 1, cap),
        region(conn, threads, from, ready, 1, cap),
    );
    let (p, r, t, d, th) = (p?, r?, t?, d?, th?);
    let now = Instant::now();
    let newest = t
        .iter()
        .filter_map(|v| match v {
            Value::Long(x) => Some(*x),
            _ => None,
        })
        .max()
        .unwrap_or(0);
    let shown = show_objects(session, probe, &super::snapshot::shown_refs(probe, &r)).await;
    let callers = super::snapshot::callers(conn, probe, &r).await;
    let labels = column_names(probe);
    for k in 0..ready as usize {
        let thread = match th.get(k) {
            Some(Value::Object { id, .. }) => id.0,
            _ => 0,
        };
        let thread_name = thread_name(session, thread, names).await;
        let stamp = match t.get(k) {
            Some(Value::Long(x)) => *x,
            _ => newest,
        };
        let ago = Duration::from_nanos(newest.saturating_sub(stamp).max(0) as u64);
        let row_p = &p[(k * pw as usize).min(p.len())..((k + 1) * pw as usize).min(p.len())];
        let row_r = &r[(k * rw as usize).min(r.len())..((k + 1) * rw as usize).min(r.len())];
        let mut details = Vec::new();
        if layout.has_duration
            && let Some(Value::Long(ns)) = d.get(k)
        {
            details.push((
                "duration".to_string(),
                Detail::CallTime((*ns).max(0) as u64),
            ));
        }
        let locals = columns(probe, &labels, row_p, row_r, &shown);
        details.extend(super::snapshot::write_details(probe, &locals));
        records.push(TraceRecord {
            seq: 0,
            at: now.checked_sub(ago).unwrap_or(now),
            stop: id.into(),
            thread: ThreadId(thread),
            thread_name,
            location: probe.location.clone(),
            callers: super::snapshot::callers_of(probe, row_r, &callers),
            locals,
            locals_note: None,
            details,
            overridden: false,
        });
    }
    // The ring must not keep the application's objects alive:
    // what was read lets go (the slots are free only once `tail`
    // moves on, below, so no new record is in them); records whose
    // references were all null (an exit that returned) need no write.
    if let Some((first, last)) = held(&r, rw) {
        forget(conn, refs, from + first, last + 1 - first, rw, cap).await?;
    }
    forget(conn, threads, from, ready, 1, cap).await?;
    Ok(records)
}

/// The first and last record (from 0) of `refs`, `width` references a
/// record, that holds an object; `None` when every one is null.
fn held(refs: &[Value], width: u64) -> Option<(u64, u64)> {
    let object = |v: &Value| matches!(v, Value::Object { id, .. } if id.0 != 0);
    let first = refs.iter().position(object)?;
    let last = refs.iter().rposition(object)?;
    let w = width.max(1) as usize;
    Some(((first / w) as u64, (last / w) as u64))
}

/// Logs the records (up to the trace budget), moves `tail` on and renews
/// the lease in one write; says whether the budget is used up.
async fn hand_on(
    session: &SessionHandle,
    probe: &Live,
    records: Vec<TraceRecord>,
    ready: u64,
    cursor: &mut Cursor,
    alive: bool,
) -> Result<Spent, JdwpError> {
    let conn = session.connection();
    let budget = u64::from(probe.max_hits);
    let captured = probe.stats.captured.load(Ordering::Relaxed);
    let mut spent = Spent::No;
    if probe.suspends {
        // Its hits reach the agent through the trap; a record only counts.
        let passed = records.len() as u64;
        probe
            .stats
            .condition_passed
            .fetch_add(passed, Ordering::Relaxed);
    }
    for rec in records.into_iter().filter(|_| !probe.suspends) {
        if budget > 0 && probe.stats.captured.load(Ordering::Relaxed) >= budget {
            spent = Spent::Yes;
            break;
        }
        session.events().push_trace(rec);
        probe.stats.captured.fetch_add(1, Ordering::Relaxed);
        probe.stats.charged.fetch_add(1, Ordering::Relaxed);
        probe.stats.condition_passed.fetch_add(1, Ordering::Relaxed);
    }
    if budget > 0 && captured + ready >= budget {
        spent = Spent::Yes;
    }
    cursor.tail += ready;
    let mut values = vec![FieldValue {
        field: probe.fields.renew,
        value: Value::Boolean(true),
    }];
    if ready > 0 {
        values.push(FieldValue {
            field: probe.fields.tail,
            value: Value::Long(cursor.tail as i64),
        });
    }
    if !alive {
        // The lease lapsed (we were late): count it; the helper re-arms
        // when its `init` runs again, which the next arm does.
        probe.stats.probe.lapses.fetch_add(1, Ordering::Relaxed);
    }
    conn.send(&SetStatics {
        class: probe.helper,
        values,
    })
    .await?;
    Ok(spent)
}

/// How many distinct objects a drain round reads (type, string text):
/// the ring holds references only, so these are the reads a round costs.
/// Past the budget a record shows the declared type, so a flood of hits
/// never turns into a flood of round trips.
const READS_PER_ROUND: usize = 512;

/// The objects a round's records hold, each read once (an object in
/// every record, such as `this`, costs one read a round), all at once.
async fn show_objects(
    session: &SessionHandle,
    probe: &Live,
    refs: &[Value],
) -> HashMap<u64, Shown> {
    let mut seen = std::collections::HashSet::new();
    let distinct: Vec<Value> = refs
        .iter()
        .filter(|v| matches!(v, Value::Object { id, .. } if id.0 != 0 && seen.insert(id.0)))
        .take(READS_PER_ROUND)
        .copied()
        .collect();
    if distinct.is_empty() {
        return HashMap::new();
    }
    let shown = session.show_values(&distinct, probe.max_length).await;
    distinct
        .iter()
        .zip(shown)
        .filter_map(|(v, s)| match v {
            Value::Object { id, .. } => Some((id.0, s)),
            _ => None,
        })
        .collect()
}

/// The names of a probe's columns, once a round: the written value goes
/// by the name conditions know it by.
fn column_names(probe: &Live) -> Vec<Arc<str>> {
    probe
        .layout
        .columns
        .iter()
        .map(|c| match c.source {
            Source::Written => Arc::from("newValue"),
            _ => Arc::from(c.name.as_str()),
        })
        .collect()
}

/// The values of one record, named as the layout names its columns.
/// Primitives come from the bits the helper stored; object values from
/// what the round read of them, with no code run in the JVM.
fn columns(
    probe: &Live,
    names: &[Arc<str>],
    prims: &[Value],
    refs: &[Value],
    shown: &HashMap<u64, Shown>,
) -> Vec<(Arc<str>, Shown)> {
    let (mut pi, mut ri) = (0usize, 0usize);
    let mut out = Vec::with_capacity(probe.layout.columns.len());
    for (c, name) in probe.layout.columns.iter().zip(names) {
        let shown = match c.kind {
            // The record's callers, not a value.
            Kind::Ref if c.source == Source::Callers => {
                ri += 1;
                continue;
            }
            Kind::Ref => {
                let v = refs.get(ri);
                ri += 1;
                match v {
                    Some(Value::Object { id, .. }) if id.0 != 0 => {
                        shown.get(&id.0).cloned().unwrap_or_else(|| Shown::Object {
                            type_name: c.type_name.clone(),
                            id: id.0,
                            to_string: None,
                        })
                    }
                    _ => Shown::Scalar(Scalar::Null),
                }
            }
            prim => {
                let bits = match prims.get(pi) {
                    Some(Value::Long(b)) => *b,
                    _ => 0,
                };
                pi += 1;
                Shown::Scalar(Scalar::Prim(decode(prim, bits)))
            }
        };
        out.push((name.clone(), shown));
    }
    out
}

/// A primitive from the 64 bits the helper stored it in.
pub fn decode(kind: Kind, bits: i64) -> Prim {
    match kind {
        Kind::Boolean => Prim::Bool(bits != 0),
        Kind::Byte => Prim::Byte(bits as i8),
        Kind::Char => Prim::Char(bits as u16),
        Kind::Short => Prim::Short(bits as i16),
        Kind::Int => Prim::Int(bits as i32),
        Kind::Long | Kind::Ref => Prim::Long(bits),
        Kind::Float => Prim::Float(f32::from_bits(bits as u32)),
        Kind::Double => Prim::Double(f64::from_bits(bits as u64)),
    }
}

async fn thread_name(
    session: &SessionHandle,
    thread: u64,
    names: &mut HashMap<u64, Arc<str>>,
) -> Arc<str> {
    if let Some(n) = names.get(&thread) {
        return n.clone();
    }
    let name: Arc<str> = session
        .thread_names(&[ThreadId(thread)])
        .await
        .pop()
        .flatten()
        .unwrap_or_default()
        .into();
    if names.len() > 4096 {
        names.clear();
    }
    names.insert(thread, name.clone());
    name
}

/// `count` records of `width` values each from record number `from`, in
/// a ring of `cap` records (two reads when it wraps).
async fn region(
    conn: &ConnectionHandle,
    array: ObjectId,
    from: u64,
    count: u64,
    width: u64,
    cap: u64,
) -> Result<Vec<Value>, JdwpError> {
    if count == 0 || width == 0 || array.0 == 0 {
        return Ok(Vec::new());
    }
    let mut values = Vec::new();
    for (slot, n) in runs(from, count, cap) {
        let read = GetArray {
            array,
            first_index: (slot * width) as i32,
            length: (n * width) as i32,
        };
        values.extend(conn.send(&read).await?.values);
    }
    Ok(values)
}

/// Records `from..from + count` of a ring of `cap` records as at most two
/// runs of slots, `(first slot, records)`: the ring wraps once at most.
fn runs(from: u64, count: u64, cap: u64) -> impl Iterator<Item = (u64, u64)> {
    let start = from % cap;
    let first = count.min(cap - start);
    [(start, first), (0, count - first)]
        .into_iter()
        .filter(|&(_, n)| n > 0)
}

/// Sets the reference slots of records `from..from + count` to null.
pub(super) async fn forget(
    conn: &ConnectionHandle,
    array: ObjectId,
    from: u64,
    count: u64,
    width: u64,
    cap: u64,
) -> Result<(), JdwpError> {
    if count == 0 || width == 0 || array.0 == 0 {
        return Ok(());
    }
    let null = Value::Object {
        tag: Tag::Object,
        id: ObjectId(0),
    };
    for (slot, n) in runs(from, count, cap) {
        let clear = SetArray {
            array,
            first_index: (slot * width) as i32,
            values: vec![null; (n * width) as usize],
        };
        conn.send(&clear).await?;
    }
    Ok(())
}

/// The value of an `AtomicLong`, through its `value` field (its id kept
/// in `field` after the first read).
async fn atomic_long(
    session: &SessionHandle,
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
async fn inner_array(session: &SessionHandle, object: ObjectId) -> Result<ObjectId, JdwpError> {
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
    session: &SessionHandle,
    object: ObjectId,
    name: &str,
) -> Result<Option<FieldId>, JdwpError> {
    let t = session.classes().type_of(object).await?.id;
    let fields = session.classes().fields(t).await?;
    Ok(fields.iter().find(|f| f.name == name).map(|f| f.id))
}

/// One field of one object.
async fn field_value(
    session: &SessionHandle,
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
/// (`head`, read last, so a call in flight never shows as a drop).
async fn counters(session: &SessionHandle, probe: &Live, cursor: &mut Cursor) {
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
            ],
        })
        .await
    else {
        return;
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
    probe
        .stats
        .condition_errors
        .store(base.errors + long(4), Ordering::Relaxed);
    let Some(calls) = (match obj(0) {
        Some(a) => long_adder(session, a).await,
        None => None,
    }) else {
        return;
    };
    meter.calls.store(base.calls + calls, Ordering::Relaxed);
    probe
        .stats
        .hits
        .store(base.calls + calls, Ordering::Relaxed);
    let passed = if probe.spec.filters() {
        match obj(1) {
            Some(a) => long_adder(session, a).await,
            None => None,
        }
    } else {
        Some(calls)
    };
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
}

/// The sum of a `LongAdder`: its `base` plus each cell's `value`.
async fn long_adder(session: &SessionHandle, adder: ObjectId) -> Option<u64> {
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

#[cfg(test)]
mod tests {
    use super::runs;

    #[test]
    fn only_records_holding_an_object_are_cleared() {
        use super::held;
        use crate::jdwp::{ObjectId, Tag, Value};
        let o = |id| Value::Object {
            tag: Tag::Object,
            id: ObjectId(id),
        };
        assert_eq!(held(&[o(0), o(0), o(0)], 1), None);
        assert_eq!(held(&[o(0), o(7), o(0), o(9), o(0)], 1), Some((1, 3)));
        // Two references a record: records 1 and 2 hold objects.
        assert_eq!(held(&[o(0), o(0), o(0), o(5), o(6), o(0)], 2), Some((1, 2)));
        assert_eq!(held(&[], 2), None);
    }

    #[test]
    fn a_read_that_wraps_is_two_runs_and_one_that_does_not_is_one() {
        assert_eq!(runs(3, 4, 8).collect::<Vec<_>>(), [(3, 4)]);
        assert_eq!(runs(14, 5, 8).collect::<Vec<_>>(), [(6, 2), (0, 3)]);
        assert_eq!(runs(8, 8, 8).collect::<Vec<_>>(), [(0, 8)]);
        assert_eq!(runs(5, 0, 8).count(), 0);
    }
}
