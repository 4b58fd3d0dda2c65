//! What a session's parts share without messaging each other, each piece
//! narrow and owned by what writes it: the session's fixed description
//! ([`SessionInfo`]), whether it lives ([`Lifeline`]), the stream of event
//! composites and its counters ([`EventBus`], written only by event
//! dispatch), the watchdog's rescues ([`RescueLog`]) and the classes the
//! session installed. The suspension ledger is not here: the Session actor
//! owns it and [`SessionLink`] reaches it through the narrow port in
//! `port.rs`. This room sits below the actors that use it and imports none
//! of them.

pub mod port;

use std::collections::VecDeque;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use crate::jdwp::{Composite, Event, RequestId, SuspendPolicy, ThreadId};
use crate::launch::LaunchedJvm;
use crate::lock::lock;
use crate::model::recent::RecentEvent;
use crate::model::{Roots, SessionId, VmInfo};
pub use port::SessionRef;

/// How many recent events a session remembers for diagnosis.
const RECENT_EVENTS: usize = 64;
/// How many composites a slow event subscriber may fall behind.
const EVENT_SUBSCRIBERS_BACKLOG: usize = 1024;

/// A session's description, fixed once attached.
pub struct SessionInfo {
    pub id: SessionId,
    pub host: String,
    pub port: u16,
    pub read_only: bool,
    pub created: Instant,
    pub launched: Option<Arc<LaunchedJvm>>,
    /// The source and class roots: those given at attach or launch; the
    /// source roots then follow the last ones a call named.
    roots: std::sync::RwLock<Roots>,
    vm: OnceLock<VmInfo>,
    /// Classes this session installed with RedefineClasses.
    installed: std::sync::Mutex<Vec<Installed>>,
    /// The local process of the JVM, once found.
    pub pid: OnceLock<u32>,
    /// The last class histogram taken, which the next one's growth is
    /// measured against: (channel, package filter, histogram).
    pub last_histogram: std::sync::Mutex<Option<(u8, String, crate::model::histogram::Histogram)>>,
    /// The pause of the last histogram walk per channel (by its number),
    /// so a call whose budget that walk would overrun is refused before
    /// it stops the world again.
    pub last_walk: std::sync::Mutex<[Option<std::time::Duration>; 2]>,
    /// Line tables of sources compiled for a line stop's check, by class,
    /// source file and its modification time, so a file is compiled once
    /// per version.
    pub source_checks: std::sync::Mutex<Vec<(SourceVersion, crate::model::stale::Comparison)>>,
}

/// One version of a class's source file, as a line stop's check saw it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SourceVersion {
    pub class: String,
    pub source: std::path::PathBuf,
    pub modified: Option<std::time::SystemTime>,
    pub len: u64,
}

impl SessionInfo {
    pub fn new(
        id: SessionId,
        host: &str,
        port: u16,
        read_only: bool,
        launched: Option<Arc<LaunchedJvm>>,
        roots: Roots,
    ) -> Self {
        Self {
            id,
            host: host.to_string(),
            port,
            read_only,
            created: Instant::now(),
            launched,
            roots: std::sync::RwLock::new(roots),
            vm: OnceLock::new(),
            installed: std::sync::Mutex::new(Vec::new()),
            pid: OnceLock::new(),
            last_histogram: std::sync::Mutex::new(None),
            last_walk: std::sync::Mutex::new([None; 2]),
            source_checks: std::sync::Mutex::new(Vec::new()),
        }
    }

    /// The source and class roots in force.
    pub fn roots(&self) -> Roots {
        self.roots.read().map(|r| r.clone()).unwrap_or_default()
    }

    /// Keeps the source roots a call named for the calls after it: a
    /// source root given once is not asked for again. An empty list (a
    /// call that asked for no roots) leaves them as they were.
    pub fn remember_source_roots(&self, source: &[std::path::PathBuf]) {
        if source.is_empty() {
            return;
        }
        if let Ok(mut r) = self.roots.write() {
            r.source = source.to_vec();
        }
    }

    /// Every class this session installed, oldest first.
    pub fn installed(&self) -> Vec<Installed> {
        self.installed.lock().map(|g| g.clone()).unwrap_or_default()
    }

    /// Records a class this session installed (again).
    pub fn record_installed(&self, name: &str, loader: u64, from: &std::path::Path) {
        let Ok(mut g) = self.installed.lock() else {
            return;
        };
        let now = std::time::Instant::now();
        match g.iter_mut().find(|i| i.name == name && i.loader == loader) {
            Some(i) => {
                i.times += 1;
                i.at = now;
                i.from = from.to_path_buf();
            }
            None => g.push(Installed {
                name: name.to_string(),
                loader,
                from: from.to_path_buf(),
                at: now,
                times: 1,
            }),
        }
    }

    pub fn address(&self) -> String {
        format!("{}:{}", self.host, self.port)
    }

    pub fn vm(&self) -> Option<&VmInfo> {
        self.vm.get()
    }

    /// Records who the JVM is (once, right after the handshake).
    pub fn set_vm(&self, vm: VmInfo) {
        let _ = self.vm.set(vm);
    }
}

/// A class this session installed with RedefineClasses.
#[derive(Debug, Clone)]
pub struct Installed {
    pub name: String,
    pub loader: u64,
    pub from: PathBuf,
    pub at: Instant,
    /// How many swaps of this copy the session made.
    pub times: u32,
}

/// What one watchdog rescue found and did.
#[derive(Debug, Clone)]
pub struct Rescue {
    /// Threads suspended when the watchdog stepped in, of `total`.
    pub held: usize,
    pub total: usize,
    /// How long the JVM had been suspended.
    pub held_for: Duration,
    /// The limit it passed (`JDWP_WATCHDOG_SECS`).
    pub limit: Duration,
    /// `VirtualMachine.Resume`s sent.
    pub resumes: u32,
    /// Threads still suspended afterwards (0 = verified running).
    pub still_held: usize,
    /// JDWP requests cleared because their hits froze the JVM.
    pub cleared: Vec<RequestId>,
    /// Stop points disabled for the same reason.
    pub disabled: Vec<String>,
}

/// Watchdog rescues of one session.
#[derive(Debug, Default, Clone)]
pub struct Rescues {
    pub all: Vec<Rescue>,
    pub unreported: Vec<Rescue>,
    /// JDWP requests the watchdog cleared.
    pub cleared_requests: Vec<RequestId>,
}

/// Whether a session lives, and why it ended.
pub struct Lifeline {
    dead: Mutex<Option<String>>,
    tx: tokio::sync::watch::Sender<bool>,
    /// Heap walks in flight: the JVM answers nothing else meanwhile, so a
    /// liveness probe that times out then is no sign of death.
    heap_walks: std::sync::atomic::AtomicUsize,
}

impl Default for Lifeline {
    fn default() -> Self {
        Self {
            dead: Mutex::new(None),
            tx: tokio::sync::watch::channel(false).0,
            heap_walks: std::sync::atomic::AtomicUsize::new(0),
        }
    }
}

/// A heap walk in flight, counted until dropped.
pub struct HeapWalk(Arc<Lifeline>);

impl Drop for HeapWalk {
    fn drop(&mut self) {
        self.0
            .heap_walks
            .fetch_sub(1, std::sync::atomic::Ordering::SeqCst);
    }
}

impl Lifeline {
    /// Counts a heap walk (an `InstanceCounts`, `Instances` or
    /// `ReferringObjects`, or HotSpot's own) until the guard is dropped.
    pub fn heap_walk(self: &Arc<Self>) -> HeapWalk {
        self.heap_walks
            .fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        HeapWalk(self.clone())
    }

    /// Whether a heap walk is in flight.
    pub fn walking_heap(&self) -> bool {
        self.heap_walks.load(std::sync::atomic::Ordering::SeqCst) > 0
    }

    /// Why the session ended, or `None` while it lives.
    pub fn dead_reason(&self) -> Option<String> {
        self.dead.lock().ok().and_then(|d| d.clone())
    }

    /// Marks the session dead; the first reason wins.
    pub fn mark_dead(&self, reason: &str) {
        if let Ok(mut d) = self.dead.lock()
            && d.is_none()
        {
            *d = Some(reason.to_string());
        }
        self.tx.send_replace(true);
    }

    /// Resolves once the session is dead.
    pub async fn died(&self) {
        let mut rx = self.tx.subscribe();
        let _ = rx.wait_for(|dead| *dead).await;
    }
}

/// The session's event composites as they arrive, and what is counted of
/// them. Event dispatch writes it; anyone may subscribe.
pub struct EventBus {
    events: tokio::sync::broadcast::Sender<Arc<Composite>>,
    events_seen: AtomicU64,
    suspending_events: AtomicU64,
    recent: Mutex<VecDeque<RecentEvent>>,
    /// When the latest resume of the whole VM began.
    last_resume: Mutex<Option<std::time::Instant>>,
    /// Held captures in flight: composites event dispatch holds and will
    /// release itself (their threads resume on their own).
    captures: tokio::sync::watch::Sender<usize>,
}

impl Default for EventBus {
    fn default() -> Self {
        Self {
            events: tokio::sync::broadcast::channel(EVENT_SUBSCRIBERS_BACKLOG).0,
            events_seen: AtomicU64::new(0),
            suspending_events: AtomicU64::new(0),
            recent: Mutex::new(VecDeque::new()),
            last_resume: Mutex::new(None),
            captures: tokio::sync::watch::Sender::new(0),
        }
    }
}

impl EventBus {
    /// Every event composite from now on (a slow subscriber misses the
    /// oldest ones and is told how many).
    pub fn subscribe(&self) -> tokio::sync::broadcast::Receiver<Arc<Composite>> {
        self.events.subscribe()
    }

    /// A resume of the whole VM begins: a hit received before now that
    /// is reported later may have been released by it.
    pub fn resume_started(&self) {
        *lock(&self.last_resume) = Some(std::time::Instant::now());
    }

    /// Whether a resume of the whole VM began at or after `at`.
    pub fn resumed_since(&self, at: std::time::Instant) -> bool {
        lock(&self.last_resume).is_some_and(|r| r >= at)
    }

    /// A held capture begins; it ends when the guard drops (after its
    /// thread was released).
    pub fn capture_started(self: &Arc<Self>) -> CaptureGuard {
        self.captures.send_modify(|n| *n += 1);
        CaptureGuard(self.clone())
    }

    /// The number of held captures in flight, watched: it changes each
    /// time a capture begins or ends.
    pub fn watch_captures(&self) -> tokio::sync::watch::Receiver<usize> {
        self.captures.subscribe()
    }

    pub fn events_seen(&self) -> u64 {
        self.events_seen.load(Ordering::Relaxed)
    }

    /// Sequence number of the newest event that suspended threads; a
    /// verifying resume compares it before and after.
    pub fn suspending_events(&self) -> u64 {
        self.suspending_events.load(Ordering::Relaxed)
    }

    pub fn recent_events(&self) -> Vec<RecentEvent> {
        self.recent
            .lock()
            .map(|r| r.iter().cloned().collect())
            .unwrap_or_default()
    }

    pub fn note_event(&self, entry: RecentEvent) {
        if let Ok(mut r) = self.recent.lock() {
            if r.len() == RECENT_EVENTS {
                r.pop_front();
            }
            r.push_back(entry);
        }
    }

    /// Counts, notes and publishes one composite.
    fn publish(&self, composite: &Composite) {
        self.events_seen
            .fetch_add(composite.events.len() as u64, Ordering::Relaxed);
        if composite.suspend_policy != SuspendPolicy::None {
            self.suspending_events.fetch_add(1, Ordering::Relaxed);
        }
        for event in &composite.events {
            self.note_event(RecentEvent::Event {
                kind: event.kind(),
                request: event.request_id(),
                thread: event.thread(),
                at: event.location(),
                suspend: composite.suspend_policy,
            });
        }
        let _ = self.events.send(Arc::new(composite.clone()));
    }
}

/// A held capture in flight, counted on the bus until dropped.
pub struct CaptureGuard(Arc<EventBus>);

impl Drop for CaptureGuard {
    fn drop(&mut self) {
        self.0.captures.send_modify(|n| *n = n.saturating_sub(1));
    }
}

/// The watchdog's rescues of one session: written by the watchdog alone,
/// read by whoever replies next. Kept apart from the ledger so reading
/// them never waits on the Session actor, whatever it is busy with.
#[derive(Default)]
pub struct RescueLog(Mutex<Rescues>);

impl RescueLog {
    pub fn record(&self, rescue: Rescue) {
        if let Ok(mut r) = self.0.lock() {
            r.cleared_requests.extend(rescue.cleared.clone());
            r.all.push(rescue.clone());
            r.unreported.push(rescue);
        }
    }

    pub fn all(&self) -> Rescues {
        self.0.lock().map(|r| r.clone()).unwrap_or_default()
    }

    /// Rescues not yet shown to the agent, emptied.
    pub fn take_unreported(&self) -> Vec<Rescue> {
        self.0
            .lock()
            .map(|mut r| std::mem::take(&mut r.unreported))
            .unwrap_or_default()
    }
}

/// What a session's children get at spawn instead of the whole session:
/// its id, its lifeline, its event bus, its rescue log, and the Session
/// actor to tell.
#[derive(Clone)]
pub struct SessionLink {
    pub id: SessionId,
    pub session: SessionRef,
    pub bus: Arc<EventBus>,
    pub life: Arc<Lifeline>,
    pub rescues: Arc<RescueLog>,
}

impl SessionLink {
    /// Records a composite: counted and published on the bus, and, when it
    /// suspended something, told to the ledger.
    pub fn record_composite(&self, composite: &Composite) {
        if composite.suspend_policy != SuspendPolicy::None {
            let requests = composite
                .events
                .iter()
                .map(|e| (e.kind(), e.request_id()))
                .collect();
            let threads = composite.events.iter().filter_map(Event::thread).collect();
            let whole_vm = composite.suspend_policy == SuspendPolicy::All;
            self.session.suspended(threads, requests, whole_vm);
        }
        self.bus.publish(composite);
    }

    pub fn note_event(&self, entry: RecentEvent) {
        self.bus.note_event(entry);
    }

    /// No event holds `thread` (or, with `None`, any thread) any more.
    pub fn forget_event_threads(&self, thread: Option<ThreadId>) {
        self.session.forget_event_threads(thread);
    }

    pub fn dead_reason(&self) -> Option<String> {
        self.life.dead_reason()
    }

    /// Asks the Session to end with `reason`.
    pub fn request_end(&self, reason: String) {
        self.session.end(reason);
    }
}
