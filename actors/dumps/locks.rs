//! The wait-for graph of a dump. JDWP names the monitor a thread waits to
//! enter and who owns it; for `java.util.concurrent` locks it says
//! nothing, so a parked thread's lock is read the way `jstack -l` finds
//! it: the thread's `Thread.parkBlocker` field, and when that blocker is
//! an `AbstractOwnableSynchronizer` (a `ReentrantLock`'s or a
//! `ReentrantReadWriteLock`'s sync), its `exclusiveOwnerThread`. Both kinds
//! of edge go into one graph, so a cycle may mix them.
//!
//! Cost: one `ObjectReference.GetValues` per parked thread, one per
//! distinct blocker; the field ids and each blocker class's hierarchy come
//! from the session's class cache, so they cost packets once per session.

use std::collections::{HashMap, HashSet};

use futures::future::join_all;

use super::reads::Raw;
use crate::connection::ConnectionHandle;
use crate::jdwp::object_reference::GetValues;
use crate::jdwp::{FieldId, ObjectId, ThreadId, ThreadStatus, Value};
use crate::jvm::classes::ClassCache;
use crate::model::dump::{WaitKind, deadlocks};

/// The class whose instances carry a parked thread's blocker.
const THREAD: &str = "java.lang.Thread";
/// `Thread.parkBlocker`: the object a thread passed to `LockSupport.park`
/// (on JDK 17 and 25 alike a field of `java.lang.Thread`, set while the
/// thread is parked).
const PARK_BLOCKER: &str = "parkBlocker";
/// The class that declares the exclusive owner of a synchronizer.
const OWNABLE: &str = "java.util.concurrent.locks.AbstractOwnableSynchronizer";
const OWNER: &str = "exclusiveOwnerThread";

/// The field id of `Thread.parkBlocker` (looked up once per session), or
/// `None` when this JVM has no such field or does not answer.
pub(super) async fn park_blocker(classes: &ClassCache) -> Option<FieldId> {
    classes
        .boot_field(THREAD, PARK_BLOCKER)
        .await
        .ok()
        .flatten()
}

/// A parked thread's blocker (`None` when null or unreadable).
pub(super) async fn blocker(
    conn: &ConnectionHandle,
    thread: ThreadId,
    field: FieldId,
) -> Option<ObjectId> {
    let values = conn
        .send(&GetValues {
            object: thread.into(),
            fields: vec![field],
        })
        .await
        .ok()?;
    reference(values.first()?)
}

/// Who owns each blocker exclusively, read concurrently: `None` for a
/// blocker that is not an ownable synchronizer (a latch's sync is one,
/// owned by nobody; a `Condition` or a `FutureTask` is not).
pub(super) async fn owners(
    conn: &ConnectionHandle,
    classes: &ClassCache,
    blockers: HashSet<ObjectId>,
) -> HashMap<ObjectId, Option<ThreadId>> {
    let reads = blockers
        .into_iter()
        .map(|b| async move { (b, owner(conn, classes, b).await) });
    join_all(reads).await.into_iter().collect()
}

/// The `exclusiveOwnerThread` of an `AbstractOwnableSynchronizer`.
async fn owner(
    conn: &ConnectionHandle,
    classes: &ClassCache,
    blocker: ObjectId,
) -> Option<ThreadId> {
    let class = classes.type_of(blocker).await.ok()?;
    let (declared_by, field) = classes.find_field(class.id, OWNER).await.ok()??;
    if classes.info(declared_by).await.ok()?.name != OWNABLE {
        return None;
    }
    let values = conn
        .send(&GetValues {
            object: blocker,
            fields: vec![field.id],
        })
        .await
        .ok()?;
    reference(values.first()?).map(|o| ThreadId(o.0))
}

/// A non-null reference value.
fn reference(value: &Value) -> Option<ObjectId> {
    match value {
        Value::Object { id, .. } if id.0 != 0 => Some(*id),
        _ => None,
    }
}

/// The owner of every monitor a read thread holds (from its owned
/// monitors, or from `MonitorInfo` for a monitor nobody read owns).
pub(super) fn monitor_owners(raws: &HashMap<ThreadId, Raw>) -> HashMap<ObjectId, ThreadId> {
    raws.iter()
        .filter_map(|(t, r)| Some((*t, r.owned.as_ref()?.as_ref().ok()?)))
        .flat_map(|(t, owned)| owned.iter().map(move |m| (m.monitor.id, t)))
        .collect()
}

/// What a thread waits for: the monitor it waits on (to enter, or in
/// `Object.wait()` when its status says so; `listed` stands in for a
/// status that could not be re-read), else the blocker it is parked on;
/// with the thread that holds it.
pub(super) fn wait_of(
    raw: &Raw,
    listed: Option<ThreadStatus>,
    monitors: &HashMap<ObjectId, ThreadId>,
    owners: &HashMap<ObjectId, Option<ThreadId>>,
) -> Option<(ObjectId, WaitKind, Option<ThreadId>)> {
    if let Some(object) = raw.contended {
        let kind = match raw.status.or(listed) {
            Some(ThreadStatus::Wait) => WaitKind::Wait,
            _ => WaitKind::Enter,
        };
        return Some((object, kind, monitors.get(&object).copied()));
    }
    let object = raw.blocker?;
    Some((
        object,
        WaitKind::Park,
        owners.get(&object).copied().flatten(),
    ))
}

/// The deadlock cycles among every thread read, monitors and ownable
/// synchronizers in one graph.
pub(super) fn cycles(
    raws: &HashMap<ThreadId, Raw>,
    owners: &HashMap<ObjectId, Option<ThreadId>>,
) -> Vec<Vec<u64>> {
    let monitors = monitor_owners(raws);
    deadlocks(raws.iter().filter_map(|(t, r)| {
        let (_, kind, owner) = wait_of(r, None, &monitors, owners)?;
        Some((t.0, kind, owner.map(|o| o.0)))
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::jdwp::thread_reference::MonitorStackDepth;
    use crate::jdwp::{Tag, TaggedObjectId};

    fn holding(monitor: u64) -> Raw {
        Raw {
            full: true,
            owned: Some(Ok(vec![MonitorStackDepth {
                monitor: TaggedObjectId {
                    tag: Tag::Object,
                    id: ObjectId(monitor),
                },
                stack_depth: 0,
            }])),
            ..Raw::default()
        }
    }

    #[test]
    fn a_monitor_edge_and_a_parked_edge_close_one_cycle() {
        // 1 holds monitor 100 and parks on sync 200, which 2 owns; 2 is
        // blocked entering 100.
        let mut one = holding(100);
        one.blocker = Some(ObjectId(200));
        let mut two = Raw {
            contended: Some(ObjectId(100)),
            status: Some(ThreadStatus::Monitor),
            ..Raw::default()
        };
        two.full = false;
        // 3 parks on a latch nobody owns; 4 is in Object.wait() on 100.
        let three = Raw {
            blocker: Some(ObjectId(300)),
            ..Raw::default()
        };
        let four = Raw {
            contended: Some(ObjectId(100)),
            status: Some(ThreadStatus::Wait),
            ..Raw::default()
        };
        let raws: HashMap<ThreadId, Raw> = [(1, one), (2, two), (3, three), (4, four)]
            .into_iter()
            .map(|(t, r)| (ThreadId(t), r))
            .collect();
        let owners = HashMap::from([(ObjectId(200), Some(ThreadId(2))), (ObjectId(300), None)]);
        assert_eq!(cycles(&raws, &owners), vec![vec![1, 2]]);
        let monitors = monitor_owners(&raws);
        assert_eq!(
            wait_of(&raws[&ThreadId(4)], None, &monitors, &owners),
            Some((ObjectId(100), WaitKind::Wait, Some(ThreadId(1))))
        );
        assert_eq!(
            wait_of(&raws[&ThreadId(3)], None, &monitors, &owners),
            Some((ObjectId(300), WaitKind::Park, None))
        );
    }
}
