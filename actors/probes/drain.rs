//! Draining the probes' rings: for each armed probe, when its turn comes
//! (every [`DRAIN_EVERY`], slower while its ring overflows: see [`pace`]),
//! read how far its ring has been written (`head`), which slots are
//! published (`seq`), read the newest of those records that the trace log
//! can hold (one region read per array; the older ones would be evicted
//! by the same round, so they count as captured and evicted unread), turn
//! them into trace snapshots, let go of the objects the consumed slots
//! held, and tell the helper how far it may write again (`tail`) while
//! renewing its lease, in one write. Nothing is suspended: these are
//! reads and writes of arrays and static fields.

mod counters;
mod pace;

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use self::counters::{atomic_long, counters, inner_array};
use self::pace::{Pace, Take, take};
use super::{DRAIN_EVERY, Live, ProbesHandle};
use crate::classfile::probe::{Kind, Source};
use crate::connection::ConnectionHandle;
use crate::door::Jvm;
use crate::error::JdwpError;
use crate::events::log::TraceRecord;
use crate::jdwp::FieldValue;
use crate::jdwp::array_reference::{GetValues as GetArray, SetValues as SetArray};
use crate::jdwp::class_type::SetValues as SetStatics;
use crate::jdwp::reference_type::GetValues as GetStatics;
use crate::jdwp::{FieldId, ObjectId, ReferenceTypeId, Tag, ThreadId, Value};
use crate::model::prim::Prim;
use crate::model::shown::{Detail, Scalar, Shown};
use crate::model::stop_point::StopState;

/// How often the slower counters are read (the listing's calls, passes,
/// drops, cost) while no record comes; a round that takes records reads
/// them too.
const COUNTERS_EVERY: Duration = Duration::from_millis(500);

/// What the drain keeps per probe between rounds.
#[derive(Debug)]
struct Cursor {
    /// The helper it drains (a toggle or an update installs a new one,
    /// whose ring starts again at 0).
    helper: ReferenceTypeId,
    /// Next record number to read.
    tail: u64,
    /// The `value` field of `java.util.concurrent.atomic.AtomicLong`.
    atomic_value: Option<FieldId>,
    /// The `array` field of `AtomicLongArray`, and the array it holds.
    seq_array: Option<ObjectId>,
    /// When the counters were last read (`None`: not yet).
    counted: Option<Instant>,
    /// When a statistics probe's histogram was first read: its readings'
    /// times count from here.
    stats_epoch: Option<Instant>,
    spent: bool,
    /// Its helper was found switched off by its lease (we were away).
    lapsed: bool,
    pace: Pace,
    /// When its next round is due.
    due: Instant,
}

impl Cursor {
    fn new(helper: ReferenceTypeId) -> Cursor {
        Cursor {
            helper,
            tail: 0,
            atomic_value: None,
            seq_array: None,
            counted: None,
            stats_epoch: None,
            spent: false,
            lapsed: false,
            pace: Pace::new(DRAIN_EVERY),
            due: Instant::now(),
        }
    }
}

/// Starts the drain of `session`'s probes; it ends with the session.
pub fn spawn_drain(session: Jvm, probes: ProbesHandle) {
    tokio::spawn(async move {
        let mut cursors: HashMap<String, Cursor> = HashMap::new();
        let mut tick = tokio::time::interval(DRAIN_EVERY);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            tick.tick().await;
            if session.check_alive().is_err() {
                break;
            }
            // One question to the book per round, answered with copies.
            let live = probes.live().await;
            cursors.retain(|id, c| live.iter().any(|(l, p)| l == id && p.helper == c.helper));
            for (id, probe) in live {
                if id.starts_with(super::PENDING) {
                    // Not adopted yet: its records wait for its id, but its
                    // lease is renewed (an arming can outlast it on a busy
                    // host).
                    let conn = session.connection();
                    let _ = super::helper::renew(conn, probe.helper, &probe.fields).await;
                    continue;
                }
                let cursor = cursors
                    .entry(id.clone())
                    .or_insert_with(|| Cursor::new(probe.helper));
                if cursor.spent || cursor.due > Instant::now() {
                    continue;
                }
                let result = drain_one(&session, &id, &probe, cursor).await;
                // Paced from the round's end, less a tick's slack.
                cursor.due = Instant::now() + cursor.pace.period.saturating_sub(DRAIN_EVERY / 2);
                if std::mem::take(&mut cursor.lapsed) {
                    cursor.lapsed = !super::lease::lapsed(&session, &probes, &id, &probe).await;
                }
                match result {
                    Ok(Spent::No) => {}
                    Ok(Spent::Yes) => {
                        cursor.spent = true;
                        spent(&session, &probes, &id).await;
                    }
                    Ok(Spent::Failing) => {
                        cursor.spent = true;
                        failing(&session, &probes, &id).await;
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
                            .fetch_add(1, Ordering::Relaxed);
                    }
                }
            }
        }
    });
}

/// Takes out a probe whose trace budget is used up.
async fn spent(session: &Jvm, probes: &ProbesHandle, id: &str) {
    let _ = super::remove(session.connection(), session.classes(), probes, id, true).await;
    session
        .stop_points()
        .mark(id, StopState::Spent("trace budget used".into()))
        .await;
}

/// Takes out a probe whose condition keeps failing, as the wire disables
/// a stop point (its definition and its last error are kept).
async fn failing(session: &Jvm, probes: &ProbesHandle, id: &str) {
    let _ = super::remove(session.connection(), session.classes(), probes, id, true).await;
    session.stop_points().mark(id, StopState::Disabled).await;
}

enum Spent {
    No,
    Yes,
    /// Its condition failed too many times in a row.
    Failing,
}

async fn drain_one(
    session: &Jvm,
    id: &str,
    probe: &Live,
    cursor: &mut Cursor,
) -> Result<Spent, JdwpError> {
    let conn = session.connection();
    let f = &probe.fields;
    let statics = conn
        .send(&GetStatics {
            ref_type: probe.helper,
            fields: vec![
                f.head,
                f.seq,
                f.prims,
                f.refs,
                f.times,
                f.durs,
                f.threads,
                f.live,
                f.who,
                f.stripe_threads,
            ],
        })
        .await?;
    let obj = |i: usize| match statics.get(i) {
        Some(Value::Object { id, .. }) => *id,
        _ => ObjectId(0),
    };
    let (head_obj, seq_obj) = (obj(0), obj(1));
    let alive = matches!(statics.get(7), Some(Value::Boolean(true)));
    cursor.lapsed = !alive;
    if head_obj.0 == 0 || seq_obj.0 == 0 {
        return Ok(Spent::No);
    }
    let cap = u64::from(probe.spec.ring_capacity);
    let ring = Ring {
        prims: obj(2),
        refs: obj(3),
        times: obj(4),
        durs: obj(5),
        threads: obj(6),
        who: obj(8),
        stripe_threads: obj(9),
        cap,
    };
    let head = atomic_long(session, head_obj, &mut cursor.atomic_value).await?;
    // A round that takes records reads the counters after `head`, so the
    // snapshots it counts were all passed and called by then.
    if head > cursor.tail
        || cursor
            .counted
            .is_none_or(|at| at.elapsed() >= COUNTERS_EVERY)
    {
        cursor.counted = Some(Instant::now());
        if counters(session, probe, cursor).await {
            return Ok(Spent::Failing);
        }
    }
    let pending = head.saturating_sub(cursor.tail).min(cap);
    cursor.pace.after(head.saturating_sub(cursor.tail), cap);
    let ready = published(session, seq_obj, cursor, pending, cap).await?;
    let budget = u64::from(probe.max_hits);
    // The budget's use as the listing shows it: snapshots since the arm.
    let captured = probe.stats.budget_used();
    let remaining = (budget > 0).then(|| budget.saturating_sub(captured));
    // A suspending probe's hits reach the agent through its trap: its
    // records are only counted, never read.
    let keep = if probe.suspends {
        0
    } else {
        session.events().ring().capacity as u64
    };
    let t = take(cursor.tail, ready, remaining, keep);
    let (records, held) = if t.read > 0 {
        read_records(session, id, probe, &ring, t.from, t.read).await?
    } else {
        (Vec::new(), None)
    };
    release(conn, &ring, probe, cursor.tail, ready, &t, held).await?;
    count(session, id, probe, records, &t);
    let spent = budget > 0 && captured + ready >= budget;
    cursor.tail += ready;
    hand_on(session, probe, ready, cursor.tail, alive).await?;
    Ok(if spent { Spent::Yes } else { Spent::No })
}

/// How many of the `pending` records from the cursor's `tail` on are
/// published, in order (a record claimed but not yet written stops the
/// count; the next round takes it).
async fn published(
    session: &Jvm,
    seq_obj: ObjectId,
    cursor: &mut Cursor,
    pending: u64,
    cap: u64,
) -> Result<u64, JdwpError> {
    if pending == 0 {
        return Ok(0);
    }
    let seq_array = match cursor.seq_array {
        Some(a) => a,
        None => {
            let a = inner_array(session, seq_obj).await?;
            cursor.seq_array = Some(a);
            a
        }
    };
    let seqs = region(
        session.connection(),
        seq_array,
        cursor.tail,
        pending,
        1,
        cap,
    )
    .await?;
    let tail = cursor.tail;
    Ok(seqs
        .iter()
        .enumerate()
        .take_while(|(k, v)| matches!(v, Value::Long(s) if *s as u64 == tail + *k as u64 + 1))
        .count() as u64)
}

/// The arrays of a probe's ring, as the helper's statics name them.
struct Ring {
    prims: ObjectId,
    refs: ObjectId,
    times: ObjectId,
    durs: ObjectId,
    threads: ObjectId,
    /// Each record's stripe of counts, whose owner `stripe_threads` holds.
    who: ObjectId,
    stripe_threads: ObjectId,
    cap: u64,
}

/// Reads the `count` records from record number `from` on (every array
/// in one burst) and turns them into snapshots; also says which of them
/// (from 0) hold an object, first and last.
async fn read_records(
    session: &Jvm,
    id: &str,
    probe: &Live,
    ring: &Ring,
    from: u64,
    count: u64,
) -> Result<(Vec<TraceRecord>, Option<(u64, u64)>), JdwpError> {
    let conn = session.connection();
    let cap = ring.cap;
    let mut records = Vec::with_capacity(count as usize);
    let layout = &probe.layout;
    let (pw, rw) = (layout.prim_width as u64, layout.ref_width as u64);
    let (p, r, t, d, th, w, owners) = futures::join!(
        region(conn, ring.prims, from, count, pw, cap),
        region(conn, ring.refs, from, count, rw, cap),
        region(conn, ring.times, from, count, 1, cap),
        region(
            conn,
            ring.durs,
            from,
            count,
            u64::from(layout.has_duration),
            cap
        ),
        region(conn, ring.threads, from, count, 1, cap),
        region(conn, ring.who, from, count, 1, cap),
        conn.send(&crate::jdwp::array_reference::GetValues {
            array: ring.stripe_threads,
            first_index: 0,
            length: crate::classfile::probe::COUNT_STRIPES,
        }),
    );
    let (p, r, t, d, th, w) = (p?, r?, t?, d?, th?, w?);
    let owners = owners?.values;
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
    let callees = super::snapshot::callee_texts(conn, probe, &r).await;
    let sites = super::snapshot::sites(conn, probe, &r).await;
    let arguments = super::arguments::read(session, probe, &r).await;
    let labels = column_names(probe);
    for k in 0..count as usize {
        let thread = match (w.get(k), th.get(k)) {
            (Some(Value::Long(at)), _) if *at >= 0 => {
                let stripe = (*at / i64::from(crate::classfile::probe::COUNT_WIDTH)) - 1;
                match usize::try_from(stripe).ok().and_then(|s| owners.get(s)) {
                    Some(Value::Object { id, .. }) => id.0,
                    _ => 0,
                }
            }
            (_, Some(Value::Object { id, .. })) => id.0,
            _ => 0,
        };
        let thread_name = session.classes().thread_name(ThreadId(thread)).await;
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
            let total = (*ns).max(0) as u64;
            details.push(("duration".to_string(), Detail::CallTime(total)));
            if let Some(c) = super::snapshot::callees_of(probe, row_r, &callees, total) {
                details.push(("callees".to_string(), c));
            }
        }
        let location = super::snapshot::site_of(probe, row_p, row_r, &sites);
        let mut locals = super::arguments::named(probe, row_r, &arguments, &location);
        locals.extend(columns(probe, &labels, row_p, row_r, &shown));
        details.extend(super::snapshot::path_details(probe, &mut locals));
        details.extend(super::snapshot::write_details(probe, &locals));
        if let Some(gap) = super::snapshot::callers_gap(probe, row_r) {
            details.push(("callers".to_string(), gap));
        }
        records.push(TraceRecord {
            seq: 0,
            at: now.checked_sub(ago).unwrap_or(now),
            stop: id.into(),
            thread: ThreadId(thread),
            thread_name,
            location,
            callers: super::snapshot::callers_of(probe, row_r, &callers),
            locals,
            locals_note: None,
            details,
            overridden: false,
        });
    }
    Ok((records, held(&r, rw)))
}

/// The ring must not keep the application's objects alive: the slots a
/// round consumed (`ready` records from `tail`) let go of them. They are
/// free only once `tail` moves on, after this, so no new record is in
/// them. When every consumed record was read, only those from the first
/// to the last holding an object are written (an exit that returned
/// holds none); records passed over unread are cleared whole.
async fn release(
    conn: &ConnectionHandle,
    ring: &Ring,
    probe: &Live,
    tail: u64,
    ready: u64,
    t: &Take,
    held: Option<(u64, u64)>,
) -> Result<(), JdwpError> {
    let rw = probe.layout.ref_width as u64;
    let refs = if t.read == ready {
        held.map(|(first, last)| (t.from + first, last + 1 - first))
    } else {
        Some((tail, ready))
    };
    if let Some((from, n)) = refs {
        forget(conn, ring.refs, from, n, rw, ring.cap).await?;
    }
    forget(conn, ring.threads, tail, ready, 1, ring.cap).await
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

/// Logs the records read and counts the ones passed over (captured, and
/// evicted by the log as they would have been).
fn count(session: &Jvm, id: &str, probe: &Live, records: Vec<TraceRecord>, t: &Take) {
    if probe.suspends {
        probe
            .stats
            .condition_passed
            .fetch_add(t.captured, Ordering::Relaxed);
        return;
    }
    session.events().pass_over(id, t.passed);
    for rec in records {
        session.events().push_trace(rec);
    }
    for c in [
        &probe.stats.captured,
        &probe.stats.charged,
        &probe.stats.condition_passed,
    ] {
        c.fetch_add(t.captured, Ordering::Relaxed);
    }
}

/// Moves `tail` on and renews the lease in one write.
async fn hand_on(
    session: &Jvm,
    probe: &Live,
    ready: u64,
    tail: u64,
    alive: bool,
) -> Result<(), JdwpError> {
    let mut values = vec![FieldValue {
        field: probe.fields.renew,
        value: Value::Boolean(true),
    }];
    if ready > 0 {
        values.push(FieldValue {
            field: probe.fields.tail,
            value: Value::Long(tail as i64),
        });
    }
    if !alive {
        // The lease lapsed (we were late): count it; the round's end
        // runs the helper's `init` again (`lease.rs`).
        probe.stats.probe.lapses.fetch_add(1, Ordering::Relaxed);
    }
    session
        .connection()
        .send(&SetStatics {
            class: probe.helper,
            values,
        })
        .await?;
    Ok(())
}

/// How many distinct objects a drain round reads (type, string text):
/// the ring holds references only, so these are the reads a round costs.
/// Past the budget a record shows the declared type, so a flood of hits
/// never turns into a flood of round trips.
const READS_PER_ROUND: usize = 512;

/// The objects a round's records hold, each read once (an object in
/// every record, such as `this`, costs one read a round), all at once.
async fn show_objects(session: &Jvm, probe: &Live, refs: &[Value]) -> HashMap<u64, Shown> {
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
            // The record's callers, site or arguments, not a value.
            Kind::Ref
                if matches!(
                    c.source,
                    Source::Callers | Source::Where | Source::Args | Source::Callees
                ) =>
            {
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
