//! Who holds an instance of a class, found in a heap dump: a breadth-first
//! walk forward from the roots over the dump's references until it meets
//! an instance of the class, so the chain it gives is a shortest one. The
//! static fields of every class are walked first, and the thread, stack
//! and JVM roots only when no static reaches an instance: a leak worth
//! asking about is kept by a static, while a thread's locals come and go.
//! One pass over the dump answers, however long the chain.

use std::collections::{HashSet, VecDeque};

use super::{Chain, Hop, JvmRoot, Link, Root, StopReason};
use crate::model::hprof::{Dump, Kind, Ref, RootKind, prim_array_name};

/// The chain found in a dump.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DumpHolders {
    pub chain: Chain,
    /// The instance reached (its address in the dump, not a JDWP handle).
    pub target: u64,
    pub target_class: String,
    /// Instances of the class in the dump (unreachable ones included when
    /// the dump kept them).
    pub instances: usize,
    /// Objects the walk reached.
    pub visited: usize,
}

/// Where a walk started from.
#[derive(Debug, Clone, Copy)]
enum Seed {
    /// A class: the chain starts at one of its static fields.
    Class,
    Root(RootKind),
}

const UNSEEN: usize = usize::MAX;

/// The chain to the nearest instance of `class` (a Java name:
/// `com.acme.Cache$Entry`, `byte[]`); `None` when the dump has no instance.
pub fn holders_in_dump(dump: &Dump<'_>, class: &str) -> Option<DumpHolders> {
    let class = class.trim();
    let classes: HashSet<u64> = dump
        .classes()
        .map(|c| c.id)
        .filter(|id| dump.class_name(*id) == class)
        .collect();
    let is_target = |index: usize| match dump.kind_at(index) {
        Some((Kind::Instance | Kind::ObjectArray, c)) => classes.contains(&c),
        Some((Kind::PrimArray, ty)) => prim_array_name(ty as u8) == class,
        _ => false,
    };
    let instances = (0..dump.len()).filter(|i| is_target(*i)).count();
    if instances == 0 {
        return None;
    }
    let mut walk = Walk {
        dump,
        parent: vec![UNSEEN; dump.len()],
        seeds: Vec::new(),
        queue: VecDeque::new(),
        visited: 0,
    };
    let mut class_seeds: Vec<usize> = dump.classes().filter_map(|c| dump.index_of(c.id)).collect();
    class_seeds.sort_unstable();
    for i in class_seeds {
        walk.seed(i, Seed::Class);
    }
    let mut found = walk.run(&is_target);
    if found.is_none() {
        // Threads first, then what their stacks hold, then the JVM's own.
        let rank = |k: &RootKind| match k {
            RootKind::ThreadObject { .. } => 0,
            RootKind::Stack { .. } => 1,
            _ => 2,
        };
        let mut roots: Vec<_> = dump.roots().to_vec();
        roots.sort_by_key(|r| rank(&r.kind));
        for r in roots {
            if let Some(i) = dump.index_of(r.object) {
                walk.seed(i, Seed::Root(r.kind));
            }
        }
        found = walk.run(&is_target);
    }
    let chain = match found {
        Some(end) => walk.chain(end),
        None => Chain {
            root: Root::Stopped(StopReason::Exhausted),
            hops: Vec::new(),
        },
    };
    let end = found.unwrap_or(0);
    Some(DumpHolders {
        chain,
        target: found.map_or(0, |i| dump.id_at(i)),
        target_class: if found.is_some() {
            dump.class_name_at(end)
        } else {
            class.to_string()
        },
        instances,
        visited: walk.visited,
    })
}

/// The breadth-first walk's state.
struct Walk<'d, 'a> {
    dump: &'d Dump<'a>,
    /// Per object: the object it was reached from, itself for a seed,
    /// `UNSEEN` when not reached.
    parent: Vec<usize>,
    seeds: Vec<(usize, Seed)>,
    queue: VecDeque<usize>,
    visited: usize,
}

impl Walk<'_, '_> {
    fn seed(&mut self, index: usize, seed: Seed) {
        if self.parent.get(index) == Some(&UNSEEN) {
            self.parent[index] = index;
            self.seeds.push((index, seed));
            self.queue.push_back(index);
            self.visited += 1;
        }
    }

    /// Walks until the queue is empty or a target is met.
    fn run(&mut self, is_target: &dyn Fn(usize) -> bool) -> Option<usize> {
        let dump = self.dump;
        while let Some(i) = self.queue.pop_front() {
            if is_target(i) {
                return Some(i);
            }
            let (parent, queue, visited) = (&mut self.parent, &mut self.queue, &mut self.visited);
            dump.references(i, &mut |_, v| {
                if let Some(j) = dump.index_of(v)
                    && parent[j] == UNSEEN
                {
                    parent[j] = i;
                    queue.push_back(j);
                    *visited += 1;
                }
                true
            });
        }
        None
    }

    /// The chain from the seed that reached `end` down to `end`.
    fn chain(&self, end: usize) -> Chain {
        let mut path = vec![end];
        let mut at = end;
        // A parent chain is a tree path: it ends at a seed within `len` steps.
        for _ in 0..self.parent.len() {
            let p = self.parent[at];
            if p == at || p == UNSEEN {
                break;
            }
            path.push(p);
            at = p;
        }
        path.reverse();
        let seed = self
            .seeds
            .iter()
            .find(|(i, _)| *i == path[0])
            .map_or(Seed::Class, |(_, s)| *s);
        let dump = self.dump;
        let link = |k: usize| self.link(path[k], path.get(k + 1).copied());
        let (root, first) = match seed {
            Seed::Class => {
                let field = match link(0) {
                    Link::Field(f) => f,
                    _ => "?".into(),
                };
                let class = dump
                    .class(dump.id_at(path[0]))
                    .map_or_else(|| "?".into(), |c| dump.class_name(c.id));
                (Root::Static { class, field }, 1)
            }
            Seed::Root(kind) => (self.root(kind, path[0]), 0),
        };
        let hops = (first..path.len().saturating_sub(1))
            .map(|k| Hop {
                class: dump.class_name_at(path[k]),
                object: dump.id_at(path[k]),
                link: link(k),
            })
            .collect();
        Chain { root, hops }
    }

    /// How the object at `from` refers to the object at `to`.
    fn link(&self, from: usize, to: Option<usize>) -> Link {
        let Some(to) = to.map(|t| self.dump.id_at(t)) else {
            return Link::Unknown;
        };
        let mut out = Link::Unknown;
        self.dump.references(from, &mut |r, v| {
            if v != to {
                return true;
            }
            out = match r {
                Ref::Field(name) => Link::Field(self.dump.name(name)),
                Ref::Index(i) => Link::Index(i),
            };
            false
        });
        out
    }

    fn root(&self, kind: RootKind, seed: usize) -> Root {
        let dump = self.dump;
        let thread_name = |serial: u32| {
            dump.thread_object(serial)
                .and_then(|t| dump.thread_name(t))
                .unwrap_or_else(|| format!("#{serial}"))
        };
        match kind {
            RootKind::ThreadObject { .. } => {
                let object = dump.id_at(seed);
                Root::Thread {
                    name: dump.thread_name(object).unwrap_or_else(|| "?".into()),
                    object,
                }
            }
            RootKind::Stack { thread } => Root::Stack {
                thread: thread_name(thread),
            },
            RootKind::JniGlobal => Root::Jvm(JvmRoot::JniGlobal),
            RootKind::MonitorUsed => Root::Jvm(JvmRoot::Monitor),
            RootKind::Unknown | RootKind::StickyClass => Root::Jvm(JvmRoot::Other),
        }
    }
}

#[cfg(test)]
mod tests;
