//! Who holds an object: a breadth-first walk back over
//! `ObjectReference.ReferringObjects` from the object (or from one live
//! instance of a class) until a referrer is a root JDWP can see: a
//! `java.lang.Class` (a static field), a `Thread` or a class loader. Each
//! link is placed by reading the referrer's reference fields, or its array
//! elements, and finding the object among them. Every `ReferringObjects`
//! is a heap walk that stops the world, so the walk is bounded in depth,
//! in referrers per object and in the pause it may cause, and says what
//! it cost. The pure naming and folding is `model::holders`.
//!
//! That walk is for what a heap dump cannot do: a JVM on another machine,
//! one this session holds suspended (its attach listener would be held
//! too), or an `@0x…` handle (JDWP's own id, which a dump does not know).
//! A class of a JVM on this machine is answered from one heap dump
//! (`dump`), in one stop of the world whatever the chain's length.

pub mod dump;

use std::collections::{HashSet, VecDeque};
use std::time::{Duration, Instant};

use crate::discovery;
use crate::door::Jvm;
use crate::error::LocalError;
use crate::error::{JdwpError, SessionError};
use crate::jdwp::array_reference::{GetValues as ArrayValues, Length};
use crate::jdwp::class_object_reference::ReflectedType;
use crate::jdwp::object_reference::{GetValues, ReferringObjects};
use crate::jdwp::reference_type::{GetValues as StaticValues, Instances};
use crate::jdwp::thread_reference::Name;
use crate::jdwp::{ObjectId, Tag, TaggedObjectId, ThreadId, Value};
use crate::model::holders::{Chain, Hop, Link, Root, StopReason};
pub use dump::DumpRun;

/// Array elements read at most to place a link.
const MAX_ELEMENTS: i32 = 1 << 20;
/// Elements read per request.
const CHUNK: i32 = 16 * 1024;
/// How long one heap walk may take before the request is given up.
const WALK_TIMEOUT: Duration = Duration::from_secs(60);

/// Where the walk starts.
#[derive(Debug, Clone)]
pub enum HolderTarget {
    Object(u64),
    /// One live instance of this class.
    Class(String),
}

/// What a holder walk may do.
#[derive(Debug, Clone)]
pub struct HoldersSpec {
    pub target: HolderTarget,
    pub max_depth: usize,
    /// Referrers asked for per object.
    pub fan_out: usize,
    pub max_pause: Duration,
}

/// The walk's answer.
#[derive(Debug, Clone)]
pub struct HoldersView {
    pub target: u64,
    pub target_class: String,
    /// Live instances of the class, when the walk started from a class.
    pub instances: Option<usize>,
    pub chain: Chain,
    /// Heap walks (`ReferringObjects` requests) made.
    pub walks: usize,
    /// Their summed wall time (an upper bound of the pause).
    pub wall: Duration,
    /// Safepoint time the JVM counted meanwhile (local JVMs).
    pub safepoint: Option<Duration>,
    /// Objects looked at.
    pub visited: usize,
    /// How the chain was found.
    pub via: Via,
}

/// How a holder question was answered.
#[derive(Debug, Clone)]
pub enum Via {
    /// From a heap dump; `target` is then the object's address in the
    /// dump, not a handle.
    Dump(DumpRun),
    /// Over JDWP, for this reason.
    Jdwp(WhyJdwp),
}

/// Why the walk went over JDWP.
#[derive(Debug, Clone)]
pub enum WhyJdwp {
    /// The question named an `@0x…` handle, which a dump cannot find.
    Handle,
    /// The attach socket could not be used (remote JVM, held, failed).
    Local(LocalError),
}

/// One object met on the way, and the one it refers to nearer the target.
struct Node {
    object: ObjectId,
    class: String,
    /// (index of the object this one refers to, how).
    next: Option<(usize, Link)>,
    depth: usize,
}

impl Jvm {
    /// The chain that holds an object (see the module).
    pub async fn find_holders(&self, spec: HoldersSpec) -> Result<HoldersView, SessionError> {
        self.check_alive()?;
        let why = match &spec.target {
            HolderTarget::Object(_) => WhyJdwp::Handle,
            HolderTarget::Class(name) => match self.holders_from_dump(name).await {
                Ok(view) => return Ok(view),
                Err(SessionError::Local(e)) => WhyJdwp::Local(e),
                Err(e) => return Err(e),
            },
        };
        let mut view = self.holders_over_jdwp(spec).await?;
        view.via = Via::Jdwp(why);
        Ok(view)
    }

    /// The chain to the nearest instance of `class`, from one heap dump
    /// of a local JVM this session does not hold.
    async fn holders_from_dump(&self, class: &str) -> Result<HoldersView, SessionError> {
        let pid = self.local_pid().await?;
        if self.link().session.view().await.suspended_by_us {
            return Err(LocalError::HeldByDebugger { pid }.into());
        }
        let walking = self.link().life.heap_walk();
        let (found, run) = dump::holders_by_dump(pid, class.trim().to_string()).await?;
        drop(walking);
        let found = found.ok_or_else(|| SessionError::NoInstance {
            class: class.trim().to_string(),
        })?;
        Ok(HoldersView {
            target: found.target,
            target_class: found.target_class,
            instances: Some(found.instances),
            chain: found.chain,
            walks: 1,
            wall: run.wall,
            safepoint: run.safepoint,
            visited: found.visited,
            via: Via::Dump(run),
        })
    }

    /// The chain over JDWP, one heap walk per hop (see the module).
    async fn holders_over_jdwp(&self, spec: HoldersSpec) -> Result<HoldersView, SessionError> {
        let pid = self.local_pid().await.ok();
        let before = match pid {
            Some(pid) => discovery::safepoint_secs(pid).await,
            None => None,
        };
        let walking = self.link().life.heap_walk();
        let (target, instances, took) = match &spec.target {
            HolderTarget::Object(id) => (ObjectId(*id), None, None),
            HolderTarget::Class(name) => {
                let (object, n, took) = self
                    .an_instance(name)
                    .await
                    .map_err(|e| self.map_err(e))?
                    .ok_or_else(|| SessionError::NoInstance {
                        class: name.trim().to_string(),
                    })?;
                (object, Some(n), Some(took))
            }
        };
        drop(walking);
        let _walking = self.link().life.heap_walk();
        let mut view = self
            .walk_holders(&spec, target)
            .await
            .map_err(|e| self.map_err(e))?;
        view.instances = instances;
        if let Some(took) = took {
            view.walks += 1;
            view.wall += took;
        }
        if let (Some(pid), Some(before)) = (pid, before) {
            view.safepoint = discovery::safepoint_secs(pid)
                .await
                .map(|after| Duration::from_secs_f64((after - before).max(0.0)));
        }
        Ok(view)
    }

    async fn walk_holders(
        &self,
        spec: &HoldersSpec,
        target: ObjectId,
    ) -> Result<HoldersView, JdwpError> {
        let mut wall = Duration::ZERO;
        let mut walks = 0;
        let target_class = self.class_of(target).await?;
        let mut nodes = vec![Node {
            object: target,
            class: target_class.clone(),
            next: None,
            depth: 0,
        }];
        let mut seen: HashSet<ObjectId> = HashSet::from([target]);
        let mut queue = VecDeque::from([0usize]);
        let mut root = Root::Stopped(StopReason::Exhausted);
        let mut last = 0;
        let mut deeper = false;
        'walk: while let Some(i) = queue.pop_front() {
            if nodes[i].depth >= spec.max_depth {
                deeper = true;
                continue;
            }
            if wall >= spec.max_pause {
                root = Root::Stopped(StopReason::Budget);
                break;
            }
            let started = Instant::now();
            let referrers = self
                .connection()
                .send_within(
                    &ReferringObjects {
                        object: nodes[i].object,
                        max_referrers: i32::try_from(spec.fan_out).unwrap_or(i32::MAX),
                    },
                    WALK_TIMEOUT,
                )
                .await?;
            wall += started.elapsed();
            walks += 1;
            last = i;
            if referrers.is_empty() && i == 0 {
                root = Root::NoHeapReferrer;
                break;
            }
            for r in referrers {
                if !seen.insert(r.id) {
                    continue;
                }
                let here = nodes[i].object;
                if let Some(found) = self.as_root(r, here).await? {
                    let (root_found, hop) = found;
                    root = root_found;
                    if let Some(link) = hop {
                        nodes.push(Node {
                            object: r.id,
                            class: self.class_of(r.id).await.unwrap_or_default(),
                            next: Some((i, link)),
                            depth: nodes[i].depth + 1,
                        });
                        last = nodes.len() - 1;
                    } else {
                        last = i;
                    }
                    break 'walk;
                }
                let class = self.class_of(r.id).await.unwrap_or_default();
                let link = self.link_to(r, here).await.unwrap_or(Link::Unknown);
                nodes.push(Node {
                    object: r.id,
                    class,
                    next: Some((i, link)),
                    depth: nodes[i].depth + 1,
                });
                queue.push_back(nodes.len() - 1);
            }
        }
        if deeper && matches!(root, Root::Stopped(StopReason::Exhausted)) {
            root = Root::Stopped(StopReason::Depth);
        }
        Ok(HoldersView {
            target: target.0,
            target_class,
            instances: None,
            chain: Chain {
                root,
                hops: hops_from(&nodes, last),
            },
            walks,
            wall,
            safepoint: None,
            visited: nodes.len(),
            via: Via::Jdwp(WhyJdwp::Handle),
        })
    }

    /// One live instance of a class (the first the heap walk lists), with
    /// how many there are.
    async fn an_instance(
        &self,
        name: &str,
    ) -> Result<Option<(ObjectId, usize, Duration)>, JdwpError> {
        let copies = self.classes().by_name(name.trim()).await?;
        let started = Instant::now();
        for c in copies.iter() {
            let found = self
                .connection()
                .send_within(
                    &Instances {
                        ref_type: c.id,
                        max_instances: 64,
                    },
                    WALK_TIMEOUT,
                )
                .await?;
            if let Some(last) = found.last() {
                return Ok(Some((last.id, found.len(), started.elapsed())));
            }
        }
        Ok(None)
    }

    async fn class_of(&self, object: ObjectId) -> Result<String, JdwpError> {
        let t = self.classes().type_of(object).await?;
        Ok(self.classes().info(t.id).await?.name.clone())
    }

    /// A referrer that is a root: a class (a static field of it), a thread
    /// or a class loader, with the hop from it when it is an object.
    async fn as_root(
        &self,
        r: TaggedObjectId,
        held: ObjectId,
    ) -> Result<Option<(Root, Option<Link>)>, JdwpError> {
        Ok(match r.tag {
            Tag::ClassObject => {
                let t = self
                    .connection()
                    .send(&ReflectedType { class_object: r.id })
                    .await?;
                let class = self.classes().info(t.id).await?.name.clone();
                let field = self
                    .static_holding(t.id, held)
                    .await
                    .unwrap_or_else(|_| "?".into());
                Some((Root::Static { class, field }, None))
            }
            Tag::Thread => {
                let name = self
                    .connection()
                    .send(&Name {
                        thread: ThreadId(r.id.0),
                    })
                    .await
                    .unwrap_or_default();
                let link = self.link_to(r, held).await.unwrap_or(Link::Unknown);
                Some((
                    Root::Thread {
                        name,
                        object: r.id.0,
                    },
                    Some(link),
                ))
            }
            Tag::ClassLoader => {
                let class = self.class_of(r.id).await.unwrap_or_default();
                let link = self.link_to(r, held).await.unwrap_or(Link::Unknown);
                Some((
                    Root::Loader {
                        class,
                        object: r.id.0,
                    },
                    Some(link),
                ))
            }
            _ => None,
        })
    }

    /// The static field of a type that holds `held`.
    async fn static_holding(
        &self,
        t: crate::jdwp::ReferenceTypeId,
        held: ObjectId,
    ) -> Result<String, JdwpError> {
        let fields = self.classes().fields(t).await?;
        let statics: Vec<_> = fields
            .iter()
            .filter(|f| f.is_static() && is_reference(&f.signature))
            .collect();
        let values = self
            .connection()
            .send(&StaticValues {
                ref_type: t,
                fields: statics.iter().map(|f| f.id).collect(),
            })
            .await?;
        Ok(statics
            .iter()
            .zip(values)
            .find(|(_, v)| holds(v, held))
            .map(|(f, _)| f.name.clone())
            .unwrap_or_else(|| "?".into()))
    }

    /// How the object `r` refers to `held`: a field, or an array index.
    async fn link_to(&self, r: TaggedObjectId, held: ObjectId) -> Result<Link, JdwpError> {
        if r.tag == Tag::Array {
            let len = self.connection().send(&Length { array: r.id }).await?;
            let mut at = 0;
            while at < len.min(MAX_ELEMENTS) {
                let n = CHUNK.min(len - at);
                let region = self
                    .connection()
                    .send(&ArrayValues {
                        array: r.id,
                        first_index: at,
                        length: n,
                    })
                    .await?;
                if let Some(i) = region.values.iter().position(|v| holds(v, held)) {
                    return Ok(Link::Index(at as usize + i));
                }
                at += n;
            }
            return Ok(Link::Unknown);
        }
        let t = self.classes().type_of(r.id).await?;
        for ty in self.classes().hierarchy(t.id).await? {
            let fields = self.classes().fields(ty).await?;
            let own: Vec<_> = fields
                .iter()
                .filter(|f| !f.is_static() && is_reference(&f.signature))
                .collect();
            if own.is_empty() {
                continue;
            }
            let values = self
                .connection()
                .send(&GetValues {
                    object: r.id,
                    fields: own.iter().map(|f| f.id).collect(),
                })
                .await?;
            if let Some((f, _)) = own.iter().zip(values).find(|(_, v)| holds(v, held)) {
                return Ok(Link::Field(f.name.clone()));
            }
        }
        Ok(Link::Unknown)
    }
}

fn is_reference(signature: &str) -> bool {
    signature.starts_with('L') || signature.starts_with('[')
}

fn holds(v: &Value, held: ObjectId) -> bool {
    matches!(v, Value::Object { id, .. } if *id == held)
}

/// The hops from node `from` down to the target, `from` first.
fn hops_from(nodes: &[Node], from: usize) -> Vec<Hop> {
    let mut out = Vec::new();
    let mut i = from;
    while let Some((next, link)) = &nodes[i].next {
        out.push(Hop {
            class: nodes[i].class.clone(),
            object: nodes[i].object.0,
            link: link.clone(),
        });
        i = *next;
    }
    out
}
