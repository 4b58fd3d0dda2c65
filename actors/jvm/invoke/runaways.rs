//! What a session keeps for invocations that outrun their budget: the
//! `Error` a cancel throws into such a call, the marker requests a cancel
//! sets (`markers.rs`), and the threads still inside a call that could
//! not be cancelled.
//!
//! The `Error` is made once per session, by the first invocation, on the
//! thread about to invoke: a cancel needs it when that thread is busy in
//! the call and no other thread can make one. It is kept from collection
//! for the session's life (a `Dispose` lets it go).

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::jdwp::class_type::NewInstance;
use crate::jdwp::object_reference::DisableCollection;
use crate::jdwp::virtual_machine::CreateString;
use crate::jdwp::{InvokeOptions, MethodId, ObjectId, ReferenceTypeId, Tag, ThreadId, Value};
use crate::jvm::classes::ClassCache;
use crate::lock::lock;
use crate::model::invoking::{Invoking, Uncancelled};

use super::markers::Markers;

/// The message of the `Error` a cancel throws, for whoever catches it.
const MESSAGE: &str = "jvmscope cancelled this call: it ran past its budget";
/// How long making the `Error` may take.
const MAKE_WITHIN: Duration = Duration::from_secs(2);
/// Attempts at making it before a session gives up.
const MAX_ATTEMPTS: u8 = 3;

/// The `Error` a cancel throws.
#[derive(Debug, Clone, Copy, Default)]
enum Throwable {
    #[default]
    NotYet,
    /// Being made by another invocation since then: this one goes
    /// without (one whose maker was dropped is tried again later).
    Making(Instant, u8),
    Made(ObjectId),
    Failed(u8),
}

/// A thread inside a call that could not be cancelled.
#[derive(Debug, Clone)]
struct Taken {
    thread: ThreadId,
    name: String,
    method: String,
    since: Instant,
    why: Uncancelled,
    by: Option<String>,
}

/// The per-session state of overrunning invocations.
#[derive(Default)]
pub struct Runaways {
    throwable: Mutex<Throwable>,
    markers: Arc<Markers>,
    taken: Mutex<Vec<Taken>>,
}

impl Runaways {
    pub fn markers(&self) -> &Arc<Markers> {
        &self.markers
    }

    /// The `Error` a cancel throws, once made.
    pub fn throwable(&self) -> Option<ObjectId> {
        match *lock(&self.throwable) {
            Throwable::Made(id) => Some(id),
            _ => None,
        }
    }

    /// Makes the `Error` on `thread` (suspended by an event, about to
    /// invoke) unless it was made already or making it failed too often.
    /// A failure leaves calls uncancellable, never refused.
    pub async fn prepare(&self, classes: &ClassCache, thread: ThreadId) {
        if classes.connection().shared().read_only {
            return;
        }
        let attempts = {
            let mut t = lock(&self.throwable);
            let attempts = match *t {
                Throwable::Making(since, n) if since.elapsed() > 2 * MAKE_WITHIN => n,
                Throwable::Made(_) | Throwable::Making(..) => return,
                Throwable::NotYet => 0,
                Throwable::Failed(n) if n >= MAX_ATTEMPTS => return,
                Throwable::Failed(n) => n,
            };
            *t = Throwable::Making(Instant::now(), attempts + 1);
            attempts
        };
        let made = make(classes, thread).await;
        *lock(&self.throwable) = match made {
            Some(id) => Throwable::Made(id),
            None => Throwable::Failed(attempts + 1),
        };
    }

    /// Records `thread` as still inside the call of `target` started at
    /// `since`, which could not be cancelled for `why`.
    pub async fn take(
        &self,
        classes: &ClassCache,
        thread: ThreadId,
        target: (ReferenceTypeId, MethodId),
        since: Instant,
        why: Uncancelled,
    ) {
        let conn = classes.connection();
        let name = conn
            .send(&crate::jdwp::thread_reference::Name { thread })
            .await
            .unwrap_or_default();
        let method = label(classes, target).await;
        let mut t = lock(&self.taken);
        t.retain(|x| x.thread != thread);
        t.push(Taken {
            thread,
            name,
            method,
            since,
            why,
            by: None,
        });
    }

    /// The call on `thread` returned at last.
    pub fn give_back(&self, thread: ThreadId) {
        lock(&self.taken).retain(|x| x.thread != thread);
    }

    pub fn is_taken(&self, thread: ThreadId) -> bool {
        lock(&self.taken).iter().any(|x| x.thread == thread)
    }

    /// Says which stop point's condition or trace expression made the
    /// call that holds `thread`.
    pub fn attribute(&self, thread: ThreadId, by: &str) {
        if let Some(x) = lock(&self.taken).iter_mut().find(|x| x.thread == thread) {
            x.by = Some(by.to_string());
        }
    }

    /// Threads stop point `by` left inside a call.
    pub fn taken_by(&self, by: &str) -> usize {
        lock(&self.taken)
            .iter()
            .filter(|x| x.by.as_deref() == Some(by))
            .count()
    }

    /// Every thread still inside a call, longest first.
    pub fn list(&self) -> Vec<Invoking> {
        let now = Instant::now();
        let mut out: Vec<Invoking> = lock(&self.taken)
            .iter()
            .map(|x| Invoking {
                thread: x.thread,
                name: x.name.clone(),
                method: x.method.clone(),
                for_ms: now.duration_since(x.since).as_millis(),
                why: x.why.clone(),
                by: x.by.clone(),
            })
            .collect();
        out.sort_by_key(|i| std::cmp::Reverse(i.for_ms));
        out
    }
}

/// `new Error(MESSAGE)` on `thread`, kept from collection.
async fn make(classes: &ClassCache, thread: ThreadId) -> Option<ObjectId> {
    let conn = classes.connection();
    let class = classes.by_name("java.lang.Error").await.ok()?.first()?.id;
    let ctor = classes
        .methods(class)
        .await
        .ok()?
        .iter()
        .find(|m| m.name == "<init>" && m.signature == "(Ljava/lang/String;)V")?
        .id;
    let message = conn
        .send(&CreateString {
            utf: MESSAGE.into(),
        })
        .await
        .ok()?;
    let made = conn
        .send_within(
            &NewInstance {
                class,
                thread,
                method: ctor,
                arguments: vec![Value::Object {
                    tag: Tag::String,
                    id: message,
                }],
                options: InvokeOptions::INVOKE_SINGLE_THREADED,
            },
            MAKE_WITHIN,
        )
        .await
        .ok()?;
    let id = made.new_object.id;
    if id.0 == 0 || made.exception.id.0 != 0 {
        return None;
    }
    conn.send(&DisableCollection { object: id }).await.ok()?;
    Some(id)
}

/// `Class.method` of an invocation's target, as far as it can be read.
async fn label(classes: &ClassCache, (class, method): (ReferenceTypeId, MethodId)) -> String {
    let class_name = match classes.info(class).await {
        Ok(i) => i.name.clone(),
        Err(_) => "?".into(),
    };
    let method_name = match classes.method(class, method).await {
        Ok(Some(m)) => m.name,
        _ => "?".into(),
    };
    format!("{class_name}.{method_name}")
}
