//! The reads a hit needs, written for the hot path: labels of locations
//! and thread names cached (a capture of a hot line costs no lookup after
//! the first), frames read in one request without asking for the depth
//! first, locals in one `GetValues`, and everything that does not need the
//! thread suspended (string contents, object types, names) read after it
//! has been resumed.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use futures::future::join_all;
use tokio::sync::{OnceCell, Semaphore};

use crate::actors::connection::ConnectionHandle;
use crate::actors::error::JdwpError;
use crate::actors::events::log::EventLog;
use crate::actors::session::SessionShared;
use crate::actors::session::classes::{ClassCache, Variables};
use crate::actors::session::inspect;
use crate::actors::stop_points::StopPointsHandle;
use crate::jdwp::stack_frame::SlotRequest;
use crate::jdwp::thread_reference::Frames;
use crate::jdwp::{
    ErrorCode, FieldId, FrameInfo, Location, ObjectId, ReferenceTypeId, Tag, TaggedObjectId,
    ThreadId, Value,
};
use crate::model::stop_point::{LocalsChoice, StopPointId};

/// Captures in flight at once (each holds one suspended thread).
pub const CAPTURE_WINDOW: usize = 12;
/// Cached location labels before the cache is reset.
const LABEL_CACHE: usize = 65_536;
/// Cached thread names (and open monitor pairs) before a reset: threads
/// come and go, ids are not reused while we hold them but the map must
/// not grow for ever.
const THREAD_CACHE: usize = 16_384;

/// Everything a capture needs, shared by EventDispatch and its capture
/// tasks.
pub struct Ctx {
    pub conn: ConnectionHandle,
    pub classes: Arc<ClassCache>,
    pub session: Arc<SessionShared>,
    pub stops: StopPointsHandle,
    pub log: Arc<EventLog>,
    /// Bounds the captures in flight.
    pub window: Arc<Semaphore>,
    names: Mutex<HashMap<ThreadId, Arc<str>>>,
    labels: Mutex<HashMap<Location, Arc<str>>>,
    throwable: OnceCell<Option<(ReferenceTypeId, FieldId)>>,
    /// Opening monitor events, by stop point and thread.
    monitors: Mutex<HashMap<(StopPointId, ThreadId), std::time::Instant>>,
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// A `Frames` request in flight.
pub type FramesReply =
    std::pin::Pin<Box<dyn Future<Output = Result<Vec<FrameInfo>, JdwpError>> + Send>>;

/// A local chosen for capture: its name, declared signature and slot.
#[derive(Debug, Clone)]
pub struct Slot {
    pub name: String,
    pub request: SlotRequest,
}

impl Ctx {
    pub fn new(
        conn: ConnectionHandle,
        classes: Arc<ClassCache>,
        session: Arc<SessionShared>,
        stops: StopPointsHandle,
        log: Arc<EventLog>,
    ) -> Self {
        Self {
            conn,
            classes,
            session,
            stops,
            log,
            window: Arc::new(Semaphore::new(CAPTURE_WINDOW)),
            names: Mutex::new(HashMap::new()),
            labels: Mutex::new(HashMap::new()),
            throwable: OnceCell::new(),
            monitors: Mutex::new(HashMap::new()),
        }
    }

    /// `Class.method:line` for a location (cached).
    pub async fn label(&self, loc: &Location) -> Arc<str> {
        if let Some(l) = lock(&self.labels).get(loc) {
            return l.clone();
        }
        let (class, method, lines) = futures::join!(
            self.classes.info(loc.class),
            self.classes.method(loc.class, loc.method),
            self.classes.lines(loc.class, loc.method)
        );
        let class = class.map(|c| c.name.clone()).unwrap_or_else(|_| "?".into());
        let method = method.ok().flatten();
        let line = lines.ok().and_then(|l| l.line_of(loc.index as i64));
        let line = match (&method, line) {
            (Some(m), _) if m.is_native() => "native".to_string(),
            (_, Some(l)) => l.to_string(),
            _ => "?".to_string(),
        };
        let method = method.map(|m| m.name).unwrap_or_else(|| "?".into());
        let label: Arc<str> = format!("{class}.{method}:{line}").into();
        let mut g = lock(&self.labels);
        if g.len() >= LABEL_CACHE {
            g.clear();
        }
        g.insert(*loc, label.clone());
        label
    }

    /// The name of a method at a location (cached by the class cache).
    pub async fn method_name(&self, loc: &Location) -> Option<String> {
        self.classes
            .method(loc.class, loc.method)
            .await
            .ok()
            .flatten()
            .map(|m| m.name)
    }

    /// A thread's name (cached; thread names rarely change).
    pub async fn thread_name(&self, thread: ThreadId) -> Arc<str> {
        if let Some(n) = lock(&self.names).get(&thread) {
            return n.clone();
        }
        let name: Arc<str> = match self
            .conn
            .send(&crate::jdwp::thread_reference::Name { thread })
            .await
        {
            Ok(n) => n.into(),
            Err(_) => "?".into(),
        };
        let mut g = lock(&self.names);
        if g.len() >= THREAD_CACHE {
            g.clear();
        }
        g.insert(thread, name.clone());
        name
    }

    /// Sends the request for up to `count` frames from the top; the reply
    /// is awaited later (`frames_from`).
    pub fn frames_request(&self, thread: ThreadId, count: usize) -> FramesReply {
        Box::pin(self.conn.send(&Frames {
            thread,
            start_frame: 0,
            length: count.max(1).min(i32::MAX as usize) as i32,
        }))
    }

    /// The frames of a request sent with `frames_request`: JDWP refuses a
    /// length past the end, so a shallow stack is then read whole.
    pub async fn frames_from(
        &self,
        thread: ThreadId,
        count: usize,
        reply: FramesReply,
    ) -> Result<Vec<FrameInfo>, JdwpError> {
        match reply.await {
            Err(e) if e.code() == Some(ErrorCode::INVALID_LENGTH) => {
                let mut all = self.conn.send(&Frames::all(thread)).await?;
                all.truncate(count.max(1));
                Ok(all)
            }
            other => other,
        }
    }

    /// Up to `count` frames from the top, in one request.
    pub async fn frames(
        &self,
        thread: ThreadId,
        count: usize,
    ) -> Result<Vec<FrameInfo>, JdwpError> {
        let reply = self.frames_request(thread, count);
        self.frames_from(thread, count, reply).await
    }

    /// The locals a choice names that are live at `loc`, in slot order
    /// (`None`: the method has no variable table).
    pub async fn slots(&self, loc: &Location, choice: &LocalsChoice) -> Option<Vec<Slot>> {
        if *choice == LocalsChoice::None {
            return Some(Vec::new());
        }
        let vars = self.classes.variables(loc.class, loc.method).await.ok()?;
        let Variables::Known { vars, .. } = vars.as_ref() else {
            return None;
        };
        let index = loc.index as i64;
        let mut live: Vec<Slot> = vars
            .iter()
            .filter(|v| v.live_at(index))
            .filter(|v| match choice {
                LocalsChoice::Only(names) => names.contains(&v.name),
                _ => true,
            })
            .map(|v| Slot {
                name: v.name.clone(),
                request: SlotRequest {
                    slot: v.slot,
                    sig_byte: Tag::from_signature(&v.signature),
                },
            })
            .collect();
        live.sort_by_key(|s| s.request.slot);
        live.dedup_by_key(|s| s.request.slot);
        Some(live)
    }

    /// Renders values after the thread runs again (reads in one burst).
    pub async fn render_all(&self, values: &[Value], max_len: usize) -> Vec<String> {
        join_all(values.iter().map(|v| self.render(v, max_len))).await
    }

    /// One value on one line, invoking nothing: primitives and strings
    /// inline, objects as `Type @0x…`.
    pub async fn render(&self, value: &Value, max_len: usize) -> String {
        inspect::render(&self.classes, value, max_len).await
    }

    /// An exception's type and stored message (`detailMessage`, read as a
    /// field: nothing is invoked).
    pub async fn exception(&self, exc: TaggedObjectId, max_len: usize) -> (String, Option<String>) {
        let ty = match self
            .conn
            .send(&crate::jdwp::object_reference::ReferenceType { object: exc.id })
            .await
        {
            Ok(t) => match self.classes.info(t.id).await {
                Ok(i) => i.name.clone(),
                Err(_) => "?".into(),
            },
            Err(_) => return ("Vanished (collected)".into(), None),
        };
        let field = self
            .throwable
            .get_or_init(|| crate::actors::stop_points::arm::detail_message_field(&self.classes))
            .await;
        let Some((_, field)) = field else {
            return (ty, None);
        };
        let message = match self
            .conn
            .send(&crate::jdwp::object_reference::GetValues {
                object: exc.id,
                fields: vec![*field],
            })
            .await
        {
            Ok(v) => match v.first() {
                Some(Value::Object { id, .. }) if id.0 != 0 => {
                    Some(self.render(&v[0], max_len).await)
                }
                _ => None,
            },
            Err(_) => None,
        };
        (ty, message)
    }

    /// Notes the opening event of a monitor pair.
    pub fn monitor_opened(&self, key: (StopPointId, ThreadId), at: std::time::Instant) {
        let mut g = lock(&self.monitors);
        if g.len() >= THREAD_CACHE {
            g.clear();
        }
        g.insert(key, at);
    }

    /// Takes the opening event of a monitor pair.
    pub fn monitor_closed(&self, key: &(StopPointId, ThreadId)) -> Option<std::time::Instant> {
        lock(&self.monitors).remove(key)
    }

    /// Reads the current value of a field (the old value at a watch).
    pub fn field_value(
        &self,
        object: ObjectId,
        declaring: ReferenceTypeId,
        field: FieldId,
    ) -> impl Future<Output = Option<Value>> + Send + 'static + use<> {
        let fut: std::pin::Pin<Box<dyn Future<Output = Result<Vec<Value>, JdwpError>> + Send>> =
            if object.0 == 0 {
                Box::pin(self.conn.send(&crate::jdwp::reference_type::GetValues {
                    ref_type: declaring,
                    fields: vec![field],
                }))
            } else {
                Box::pin(self.conn.send(&crate::jdwp::object_reference::GetValues {
                    object,
                    fields: vec![field],
                }))
            };
        async move { fut.await.ok().and_then(|v| v.into_iter().next()) }
    }

    /// A field's name.
    pub async fn field_name(&self, declaring: ReferenceTypeId, field: FieldId) -> String {
        self.classes
            .fields(declaring)
            .await
            .ok()
            .and_then(|fs| fs.iter().find(|f| f.id == field).map(|f| f.name.clone()))
            .unwrap_or_else(|| "?".into())
    }
}
