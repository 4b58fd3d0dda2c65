//! A thread dump as plain data: each thread's stack, the monitors and
//! ownable synchronizers it holds and the lock it waits for (a monitor, or
//! the `java.util.concurrent` blocker it is parked on); the deadlock cycles
//! of that one wait-for graph, whatever kind of lock each edge is; and
//! threads with identical stacks and lock state grouped into one entry.
//! Pure: the actors read the JVM, the MCP layer renders.

use std::collections::{BTreeMap, HashMap};

use super::threads::family;

/// A lock: the monitor's object, or a `java.util.concurrent` blocker
/// (a `ReentrantLock$NonfairSync`), and its class.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Monitor {
    pub object: u64,
    /// Dotted class name of the object (empty when unreadable).
    pub class: String,
}

/// How a thread waits on a lock.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum WaitKind {
    /// Blocked entering `synchronized`: somebody else holds it.
    Enter,
    /// In `Object.wait()`: it released the monitor and waits for a notify.
    Wait,
    /// Parked (`LockSupport.park`) with this object as its
    /// `Thread.parkBlocker`; the owner is the synchronizer's
    /// `exclusiveOwnerThread`, when it is an `AbstractOwnableSynchronizer`
    /// that a thread holds exclusively.
    Park,
}

impl WaitKind {
    /// Whether the thread stays stuck until the owner lets go: an edge of
    /// the wait-for graph (a thread in `Object.wait()` waits for a notify,
    /// not for the monitor's owner).
    pub fn blocks_on_owner(self) -> bool {
        matches!(self, WaitKind::Enter | WaitKind::Park)
    }
}

/// The lock a thread waits for, and who holds it now.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Waiting {
    pub monitor: Monitor,
    pub kind: WaitKind,
    /// The owning thread, when one owns it.
    pub owner: Option<u64>,
}

/// A monitor a thread holds, with the frame that took it.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Held {
    pub monitor: Monitor,
    /// Frame index (0 = top) that locked it; `None` when the JVM does not say.
    pub frame: Option<usize>,
}

/// What could be read of a thread's stack.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Stack {
    /// The frames (top first, `class.method:line`), perhaps cut by
    /// `max_frames`; `depth` is how many there are in all.
    Read { frames: Vec<String>, depth: usize },
    /// Not asked for (`monitors_only`).
    Skipped,
    /// The thread runs: JDWP reads stacks and locks of suspended threads only.
    Running,
    /// The suspension bound ran out before this thread was read.
    CutByBound,
    /// The JVM refused (the thread ended meanwhile, …).
    Failed(String),
}

/// One thread of a dump.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DumpThread {
    pub id: u64,
    pub name: String,
    /// `RUNNING`, `MONITOR`, `WAIT`, `SLEEPING`, `ZOMBIE`.
    pub status: String,
    /// Suspensions before the dump (0 = the application was running it).
    pub suspend_count: i32,
    pub is_virtual: bool,
    pub stack: Stack,
    pub held: Vec<Held>,
    /// The ownable synchronizers (`ReentrantLock`, the write lock of a
    /// `ReentrantReadWriteLock`) it owns, as far as the dump saw them:
    /// JDWP lists none, so these are the blockers of parked threads whose
    /// `exclusiveOwnerThread` is this one.
    pub synchronizers: Vec<Monitor>,
    pub waiting: Option<Waiting>,
}

/// The deadlock cycles of a wait-for graph given as each waiting thread's
/// id, how it waits and the thread that holds what it waits for: each
/// cycle a list of thread ids where every thread is blocked entering a
/// monitor, or parked on a synchronizer, that the next one holds (the last
/// waits for the first). Each cycle is reported once, starting at its
/// smallest id; cycles are ordered by that id.
pub fn deadlocks(waits: impl IntoIterator<Item = (u64, WaitKind, Option<u64>)>) -> Vec<Vec<u64>> {
    let next: HashMap<u64, u64> = waits
        .into_iter()
        .filter(|(_, kind, _)| kind.blocks_on_owner())
        .filter_map(|(thread, _, owner)| Some((thread, owner?)))
        .collect();
    cycles(&next)
}

/// The cycles of a graph in which every node has at most one successor.
pub fn cycles(next: &HashMap<u64, u64>) -> Vec<Vec<u64>> {
    // 0 = unseen, 1 = on the current walk, 2 = done.
    let mut state: HashMap<u64, u8> = HashMap::new();
    let mut found = Vec::new();
    let mut starts: Vec<u64> = next.keys().copied().collect();
    starts.sort_unstable();
    for start in starts {
        let mut walk = Vec::new();
        let mut at = start;
        loop {
            match state.get(&at).copied().unwrap_or(0) {
                2 => break,
                1 => {
                    // `at` is on this walk: from its position on is a cycle.
                    let from = walk.iter().position(|&n| n == at).unwrap_or(0);
                    let mut cycle: Vec<u64> = walk[from..].to_vec();
                    let min = cycle
                        .iter()
                        .enumerate()
                        .min_by_key(|(_, n)| **n)
                        .map(|(i, _)| i)
                        .unwrap_or(0);
                    cycle.rotate_left(min);
                    found.push(cycle);
                    break;
                }
                _ => {
                    state.insert(at, 1);
                    walk.push(at);
                    match next.get(&at) {
                        Some(&n) => at = n,
                        None => break,
                    }
                }
            }
        }
        for n in walk {
            state.insert(n, 2);
        }
    }
    found.sort();
    found
}

/// What makes two threads one entry: the same name family, status,
/// debugger suspension, frames and lock state (different locks are
/// different object ids, so they never merge).
#[derive(PartialEq, Eq, Hash, PartialOrd, Ord)]
struct GroupKey {
    family: String,
    status: String,
    suspended: bool,
    is_virtual: bool,
    frames: Vec<String>,
    stack_kind: u8,
    held: Vec<u64>,
    synchronizers: Vec<u64>,
    waiting: Option<(u64, WaitKind)>,
}

fn key(t: &DumpThread) -> GroupKey {
    let (frames, stack_kind) = match &t.stack {
        Stack::Read { frames, depth } => {
            let mut f = frames.clone();
            f.push(format!("#{depth}"));
            (f, 0)
        }
        Stack::Skipped => (Vec::new(), 1),
        Stack::Running => (Vec::new(), 2),
        Stack::CutByBound => (Vec::new(), 3),
        Stack::Failed(why) => (vec![why.clone()], 4),
    };
    GroupKey {
        family: family(&t.name),
        status: t.status.clone(),
        suspended: t.suspend_count > 0,
        is_virtual: t.is_virtual,
        frames,
        stack_kind,
        held: t.held.iter().map(|h| h.monitor.object).collect(),
        synchronizers: t.synchronizers.iter().map(|m| m.object).collect(),
        waiting: t.waiting.as_ref().map(|w| (w.monitor.object, w.kind)),
    }
}

/// Groups `threads` (indexes into it): threads that agree on everything
/// but their name's digits and their id share a group. Groups keep the
/// order of their first member; members keep their order.
pub fn collapse(threads: &[DumpThread]) -> Vec<Vec<usize>> {
    let mut groups: Vec<Vec<usize>> = Vec::new();
    let mut index: BTreeMap<GroupKey, usize> = BTreeMap::new();
    for (i, t) in threads.iter().enumerate() {
        match index.get(&key(t)) {
            Some(&g) => groups[g].push(i),
            None => {
                index.insert(key(t), groups.len());
                groups.push(vec![i]);
            }
        }
    }
    groups
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn thread(id: u64, name: &str, frames: &[&str]) -> DumpThread {
        DumpThread {
            id,
            name: name.into(),
            status: "WAIT".into(),
            suspend_count: 0,
            is_virtual: false,
            stack: Stack::Read {
                frames: frames.iter().map(|f| f.to_string()).collect(),
                depth: frames.len(),
            },
            held: Vec::new(),
            synchronizers: Vec::new(),
            waiting: None,
        }
    }

    /// The cycles among dump threads, from what each waits for.
    fn cycles_of(threads: &[DumpThread]) -> Vec<Vec<u64>> {
        deadlocks(
            threads
                .iter()
                .filter_map(|t| Some((t.id, t.waiting.as_ref()?)))
                .map(|(id, w)| (id, w.kind, w.owner)),
        )
    }

    fn lock(object: u64) -> Monitor {
        Monitor {
            object,
            class: "java.lang.Object".into(),
        }
    }

    fn blocked(mut t: DumpThread, on: u64, owner: u64) -> DumpThread {
        t.status = "MONITOR".into();
        t.waiting = Some(Waiting {
            monitor: lock(on),
            kind: WaitKind::Enter,
            owner: Some(owner),
        });
        t
    }

    fn holding(mut t: DumpThread, object: u64) -> DumpThread {
        t.held.push(Held {
            monitor: lock(object),
            frame: Some(0),
        });
        t
    }

    #[test]
    fn a_two_lock_deadlock_is_one_cycle_from_its_smallest_id() {
        let a = blocked(holding(thread(7, "a", &["X.f:1"]), 100), 200, 3);
        let b = blocked(holding(thread(3, "b", &["X.g:2"]), 200), 100, 7);
        let c = blocked(thread(9, "c", &["X.h:3"]), 100, 7);
        let found = cycles_of(&[a, b, c]);
        assert_eq!(found, vec![vec![3, 7]]);
    }

    #[test]
    fn a_cycle_may_mix_a_monitor_edge_and_a_parked_edge() {
        let mut a = holding(thread(4, "a", &["X.f:1"]), 100);
        a.waiting = Some(Waiting {
            monitor: Monitor {
                object: 300,
                class: "java.util.concurrent.locks.ReentrantLock$NonfairSync".into(),
            },
            kind: WaitKind::Park,
            owner: Some(5),
        });
        let b = blocked(thread(5, "b", &["X.g:2"]), 100, 4);
        // Parked on a synchronizer nobody owns: no edge.
        let mut c = thread(6, "c", &["X.h:3"]);
        c.waiting = Some(Waiting {
            monitor: lock(400),
            kind: WaitKind::Park,
            owner: None,
        });
        assert_eq!(cycles_of(&[a, b, c]), vec![vec![4, 5]]);
    }

    #[test]
    fn waiting_in_object_wait_is_not_a_deadlock_edge() {
        let mut a = holding(thread(1, "a", &["X.f:1"]), 100);
        a.waiting = Some(Waiting {
            monitor: lock(200),
            kind: WaitKind::Wait,
            owner: Some(2),
        });
        let b = blocked(holding(thread(2, "b", &["X.g:2"]), 200), 100, 1);
        assert!(cycles_of(&[a, b]).is_empty());
    }

    #[test]
    fn identical_stacks_collapse_and_different_locks_do_not() {
        let mut all: Vec<DumpThread> = (1..=5)
            .map(|i| thread(i, &format!("pool-{i}"), &["Q.take:5", "W.run:9"]))
            .collect();
        all.push(thread(10, "other-1", &["Q.take:5", "W.run:9"]));
        all.push(holding(thread(11, "pool-6", &["Q.take:5", "W.run:9"]), 1));
        all.push(holding(thread(12, "pool-7", &["Q.take:5", "W.run:9"]), 2));
        all.push(thread(13, "pool-8", &["Q.take:5"]));
        let groups = collapse(&all);
        assert_eq!(
            groups,
            vec![vec![0, 1, 2, 3, 4], vec![5], vec![6], vec![7], vec![8]]
        );
    }

    proptest! {
        #[test]
        fn every_node_on_a_cycle_is_reported_once(edges in proptest::collection::vec((0u64..12, 0u64..12), 0..14)) {
            let next: HashMap<u64, u64> = edges.into_iter().collect();
            let found = cycles(&next);
            let mut seen = std::collections::HashSet::new();
            for c in &found {
                prop_assert!(!c.is_empty());
                prop_assert_eq!(Some(&c[0]), c.iter().min());
                for (i, n) in c.iter().enumerate() {
                    prop_assert!(seen.insert(*n), "node {} in two cycles", n);
                    prop_assert_eq!(next.get(n), Some(&c[(i + 1) % c.len()]));
                }
            }
            // A node that reaches itself is on a reported cycle.
            for &start in next.keys() {
                let mut at = start;
                let mut on_cycle = false;
                for _ in 0..=next.len() {
                    match next.get(&at) {
                        Some(&n) => at = n,
                        None => break,
                    }
                    if at == start {
                        on_cycle = true;
                        break;
                    }
                }
                prop_assert_eq!(on_cycle, seen.contains(&start));
            }
        }
    }
}
