//! The reads a hit needs (methods of the dispatcher's `Ctx`), written for
//! the hot path: labels of locations
//! and thread names cached (a capture of a hot line costs no lookup after
//! the first), frames read in one request without asking for the depth
//! first, locals in one `GetValues`, and everything that does not need the
//! thread suspended (string contents, object types, names) read after it
//! has been resumed.
//!
//! It also keeps what exception stops need across hits: the last exception
//! each stop point reported on each thread, so a rethrow of that instance
//! (a `finally` or `synchronized` handler, `catch (E e) { throw e; }`) is
//! folded into the first report instead of reported again, and HotSpot's
//! helpful NullPointerException text, computed while the thread is held.

use std::sync::Arc;

use futures::future::join_all;

use crate::error::JdwpError;
use crate::events::ctx::{Ctx, Fold, FramesReply, Memo, Record, Slot, SlotSet, Thrown, remember};
use crate::events::log::{HitEvent, TraceRecord};
use crate::jdwp::stack_frame::SlotRequest;
use crate::jdwp::{
    Event, FieldId, FrameInfo, Location, ObjectId, ReferenceTypeId, Tag, TaggedObjectId, ThreadId,
    Value,
};
use crate::jvm::classes::Variables;
use crate::jvm::inspect;
use crate::jvm::show::wire_scalar;
use crate::lock::lock;
use crate::model::shown::{Detail, MessageGap, Shown};
use crate::model::stop_point::{LocalsChoice, StopPointId};

/// Cached location labels before the cache is reset.
const LABEL_CACHE: usize = 65_536;
/// Cached thread names (and open monitor pairs) before a reset: threads
/// come and go, ids are not reused while we hold them but the map must
/// not grow for ever.
const THREAD_CACHE: usize = 16_384;
/// Rethrow sites a folded exception lists; further ones are only counted.
const FOLD_SITES: usize = 4;
/// The only exception type whose message HotSpot computes on demand
/// (JEP 358): thrown by the JVM, its `detailMessage` stays null.
const NPE: &str = "java.lang.NullPointerException";

/// Whether a throw of `exception` at `at` rethrows what `last` reported:
/// the same instance, thrown again from the handler the JVM said would
/// catch it (javac puts `finally` and `synchronized` handlers and a
/// `catch` block's code at or after the handler's first instruction).
fn is_rethrow(last: &Thrown, exception: ObjectId, at: &Location) -> bool {
    last.exception == exception
        && last
            .catch
            .is_some_and(|c| c.class == at.class && c.method == at.method && at.index >= c.index)
}

impl Ctx {
    /// What dispatch remembers across hits, locked for one step.
    fn memo(&self) -> std::sync::MutexGuard<'_, Memo> {
        lock(&self.memo)
    }

    /// The labels of locations already labelled, or `None` if one is not
    /// (a hot line's callers are, after its first hit).
    pub fn cached_labels<'a>(
        &self,
        locs: impl Iterator<Item = &'a Location>,
    ) -> Option<Vec<Arc<str>>> {
        let g = self.memo();
        locs.map(|l| g.labels.get(l).cloned()).collect()
    }

    /// `Class.method:line` for a location (cached).
    pub async fn label(&self, loc: &Location) -> Arc<str> {
        if let Some(l) = self.memo().labels.get(loc) {
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
        let label: Arc<str> = crate::model::label::CodeLabel::frame(
            &class,
            method.as_ref().map(|m| m.name.as_str()),
            method.as_ref().is_some_and(|m| m.is_native()),
            line.map(i64::from),
        )
        .to_string()
        .into();
        remember(&mut self.memo().labels, LABEL_CACHE, *loc, label.clone());
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

    /// A thread's name (from the class cache, the one cache of them).
    pub async fn thread_name(&self, thread: ThreadId) -> Arc<str> {
        self.classes.thread_name(thread).await
    }

    /// Sends the request for up to `count` frames from the top; the reply
    /// is awaited later (`frames_from`).
    pub fn frames_request(&self, thread: ThreadId, count: usize) -> FramesReply {
        Box::pin(inspect::frames_request(&self.conn, thread, 0, count.max(1)))
    }

    /// The frames of a request sent with `frames_request` (a shallow stack
    /// is then read whole: see `inspect::raw_frames_from`).
    pub async fn frames_from(
        &self,
        thread: ThreadId,
        count: usize,
        reply: FramesReply,
    ) -> Result<Vec<FrameInfo>, JdwpError> {
        inspect::raw_frames_from(&self.conn, thread, 0, count.max(1), reply, None)
            .await
            .map(|(frames, _)| frames)
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
    /// The set is kept per location, so a hot line works it out once.
    pub async fn slots(&self, loc: &Location, choice: &LocalsChoice) -> Option<Arc<[Slot]>> {
        if *choice == LocalsChoice::None {
            return Some(Arc::default());
        }
        let table = self.classes.variables(loc.class, loc.method).await.ok()?;
        let Variables::Known { vars, .. } = table.as_ref() else {
            return None;
        };
        if let Some(set) = self.memo().slot_sets.get(loc)
            && Arc::ptr_eq(&set.vars, &table)
            && set.choice == *choice
        {
            return Some(set.slots.clone());
        }
        let index = loc.index as i64;
        let mut live: Vec<Slot> = vars
            .iter()
            .filter(|v| v.live_at(index))
            .filter(|v| match choice {
                LocalsChoice::Only(names) => names.contains(&v.name),
                _ => true,
            })
            .map(|v| Slot {
                name: v.name.as_str().into(),
                request: SlotRequest {
                    slot: v.slot,
                    sig_byte: Tag::from_signature(&v.signature),
                },
            })
            .collect();
        live.sort_by_key(|s| s.request.slot);
        live.dedup_by_key(|s| s.request.slot);
        let slots: Arc<[Slot]> = live.into();
        remember(
            &mut self.memo().slot_sets,
            LABEL_CACHE,
            *loc,
            SlotSet {
                vars: table.clone(),
                choice: choice.clone(),
                slots: slots.clone(),
            },
        );
        Some(slots)
    }

    /// Reads values after the thread runs again (reads in one burst).
    /// Primitives need no read: rendered at once, with no future each.
    pub async fn show_all(&self, values: &[Value], max_len: usize) -> Vec<Shown> {
        let scalars: Option<Vec<Shown>> = values
            .iter()
            .map(|v| wire_scalar(v).map(Shown::Scalar))
            .collect();
        match scalars {
            Some(shown) => shown,
            None => join_all(values.iter().map(|v| self.show(v, max_len))).await,
        }
    }

    /// One value for one line, invoking nothing: primitives and strings
    /// inline, objects with their type.
    pub async fn show(&self, value: &Value, max_len: usize) -> Shown {
        inspect::show(&self.classes, value, max_len).await
    }

    /// An exception's type and stored message (`detailMessage`, read as a
    /// field: nothing is invoked), or the helpful NPE text `condition::held_exception`
    /// computed while the thread was held.
    pub async fn exception(&self, exc: TaggedObjectId, max_len: usize) -> (Detail, Option<Detail>) {
        let helpful = self.memo().npe_messages.get(&exc.id).cloned();
        let ty = match self
            .conn
            .send(&crate::jdwp::object_reference::ReferenceType { object: exc.id })
            .await
        {
            Ok(t) => match self.classes.info(t.id).await {
                Ok(i) => i.name.clone(),
                Err(_) => "?".into(),
            },
            Err(_) => return (Detail::Value(Shown::Vanished { id: exc.id.0 }), None),
        };
        let message = match self.stored_message(exc.id).await {
            Some(v) => Some(Detail::Value(self.show(&v, max_len).await)),
            None => None,
        };
        let message = match (message, helpful) {
            (Some(m), _) => Some(m),
            (None, Some(Ok(text))) => Some(Detail::HelpfulMessage(text)),
            (None, Some(Err(why))) => Some(Detail::NoMessage(why)),
            (None, None) => None,
        };
        (
            Detail::Exception {
                type_name: ty,
                id: exc.id.0,
            },
            message,
        )
    }

    /// Notes that code ran on a held thread (a condition, an expression, a
    /// helpful NPE text).
    pub fn mark_invoked(&self, thread: ThreadId) {
        let invoked = &mut self.memo().invoked;
        if invoked.len() >= THREAD_CACHE {
            invoked.clear();
        }
        invoked.insert(thread);
    }

    /// Whether code ran on `thread` since the last call (and forgets it):
    /// frames read before must be read again.
    pub fn take_invoked(&self, thread: ThreadId) -> bool {
        self.memo().invoked.remove(&thread)
    }

    /// The stored message of an exception, unrendered (`None`: null or
    /// unreadable).
    async fn stored_message(&self, exc: ObjectId) -> Option<Value> {
        let field = self
            .throwable
            .get_or_init(|| crate::stop_points::arm::detail_message_field(&self.classes))
            .await;
        let (_, field) = (*field)?;
        let v = self
            .conn
            .send(&crate::jdwp::object_reference::GetValues {
                object: exc,
                fields: vec![field],
            })
            .await
            .ok()?;
        v.into_iter()
            .next()
            .filter(|v| !matches!(v, Value::Object { id, .. } if id.0 == 0))
    }

    /// The exception of an exception event when its report needs
    /// HotSpot's helpful text, computed while the thread is held: a
    /// NullPointerException with no stored message, not computed yet for
    /// another stop point reporting the same throw.
    pub async fn npe_without_message(&self, event: &Event) -> Option<ObjectId> {
        let Event::Exception { exception, .. } = event else {
            return None;
        };
        // Several stop points may report one throw: computed once.
        if self.memo().npe_messages.contains_key(&exception.id) {
            return None;
        }
        let t = self.classes.type_of(exception.id).await.ok()?;
        if !self.classes.info(t.id).await.is_ok_and(|i| i.name == NPE)
            || self.stored_message(exception.id).await.is_some()
        {
            return None;
        }
        Some(exception.id)
    }

    /// Keeps the helpful text of `exception` (or why there is none) for
    /// the reports that show it.
    pub fn note_helpful(&self, exception: ObjectId, helpful: Result<Shown, MessageGap>) {
        remember(
            &mut self.memo().npe_messages,
            THREAD_CACHE,
            exception,
            helpful,
        );
    }

    /// Whether an exception event rethrows the instance `stop` last
    /// reported on its thread; if so the site is folded into that report
    /// (amending it when it is already written) and the hit is not
    /// reported again. Any other exception becomes the one remembered.
    pub async fn rethrow(&self, stop: &StopPointId, event: &Event) -> bool {
        let Event::Exception {
            thread,
            location,
            exception,
            catch_location,
            ..
        } = event
        else {
            return false;
        };
        let key = (stop.clone(), *thread);
        let again = self
            .memo()
            .thrown
            .get(&key)
            .is_some_and(|t| is_rethrow(t, exception.id, location));
        if !again {
            let mut memo = self.memo();
            let thrown = Thrown {
                exception: exception.id,
                catch: *catch_location,
            };
            remember(&mut memo.thrown, THREAD_CACHE, key, thrown);
            let fold = (stop.clone(), exception.id);
            remember(&mut memo.folds, THREAD_CACHE, fold, Fold::default());
            return false;
        }
        let caught = match catch_location {
            Some(c) => format!("caught at {}", self.label(c).await),
            None => "uncaught".to_string(),
        };
        let site = format!("at {} ({caught})", self.label(location).await);
        let mut memo = self.memo();
        match memo.thrown.get_mut(&key) {
            Some(t) if t.exception == exception.id => t.catch = *catch_location,
            // Replaced meanwhile by another exception: nothing to fold into.
            _ => return true,
        }
        let Some(f) = memo.folds.get_mut(&(stop.clone(), exception.id)) else {
            return true;
        };
        f.count += 1;
        if f.sites.len() < FOLD_SITES {
            f.sites.push(site);
        }
        match f.record {
            Some(Record::Trace(seq)) => self.log.amend_trace(seq, "rethrown", f.detail()),
            Some(Record::Event(seq)) => self.log.amend_event(seq, "rethrown", f.detail()),
            None => {}
        }
        true
    }

    /// Writes a report of `event` with `write`, handing it the rethrows
    /// folded into its exception so far; the first report of an exception
    /// is the one later rethrows amend.
    fn report(
        &self,
        stop: &StopPointId,
        event: &Event,
        write: impl FnOnce(Option<Detail>) -> u64,
        record: fn(u64) -> Record,
    ) -> u64 {
        let Event::Exception {
            thread, exception, ..
        } = event
        else {
            return write(None);
        };
        let mut memo = self.memo();
        let key = (stop.clone(), exception.id);
        let Some(f) = memo.folds.get_mut(&key).filter(|f| f.record.is_none()) else {
            drop(memo);
            return write(None);
        };
        let seq = write((f.count > 0).then(|| f.detail()));
        f.record = Some(record(seq));
        // A thread that has moved on to another exception cannot rethrow
        // this one again: its fold is done.
        let current = memo.thrown.get(&(stop.clone(), *thread));
        if current.is_none_or(|t| t.exception != exception.id) {
            memo.folds.remove(&key);
        }
        seq
    }

    /// Writes a trace snapshot; an exception's carries the rethrows folded
    /// into it so far, and later ones amend it.
    pub fn push_trace(&self, stop: &StopPointId, event: &Event, mut rec: TraceRecord) -> u64 {
        let write = |rethrown: Option<Detail>| {
            rec.details
                .extend(rethrown.map(|d| ("rethrown".to_string(), d)));
            self.log.push_trace(rec)
        };
        self.report(stop, event, write, Record::Trace)
    }

    /// Writes a reportable hit, folding rethrows like `push_trace`.
    pub fn push_event(&self, stop: &StopPointId, event: &Event, mut hit: HitEvent) -> u64 {
        let write = |rethrown: Option<Detail>| {
            hit.details
                .extend(rethrown.map(|d| ("rethrown".to_string(), d)));
            self.log.push_event(hit)
        };
        self.report(stop, event, write, Record::Event)
    }

    /// The locals an anonymous or local class captured from its enclosing
    /// method: its synthetic `val$x` fields, as (`x`, field).
    pub async fn captured_fields(&self, class: ReferenceTypeId) -> Vec<(String, FieldId)> {
        let Ok(fields) = self.classes.fields(class).await else {
            return Vec::new();
        };
        fields
            .iter()
            .filter(|f| !f.is_static())
            .filter_map(|f| Some((f.name.strip_prefix("val$")?.to_string(), f.id)))
            .collect()
    }

    /// The values of captured fields of `this` (empty when unreadable).
    pub async fn captured_values(
        &self,
        this: ObjectId,
        fields: &[(String, FieldId)],
    ) -> Vec<Value> {
        if this.0 == 0 || fields.is_empty() {
            return Vec::new();
        }
        self.conn
            .send(&crate::jdwp::object_reference::GetValues {
                object: this,
                fields: fields.iter().map(|(_, f)| *f).collect(),
            })
            .await
            .unwrap_or_default()
    }

    /// Notes the opening event of a monitor pair.
    pub fn monitor_opened(&self, key: (StopPointId, ThreadId), at: std::time::Instant) {
        remember(&mut self.memo().monitors, THREAD_CACHE, key, at);
    }

    /// Takes the opening event of a monitor pair.
    pub fn monitor_closed(&self, key: &(StopPointId, ThreadId)) -> Option<std::time::Instant> {
        self.memo().monitors.remove(key)
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::events::ctx::Fold;
    use crate::jdwp::{MethodId, TypeTag};

    fn at(method: u64, index: u64) -> Location {
        Location {
            type_tag: TypeTag::Class,
            class: ReferenceTypeId(7),
            method: MethodId(method),
            index,
        }
    }

    #[test]
    fn a_rethrow_is_the_same_instance_from_the_handler_that_caught_it() {
        let last = Thrown {
            exception: ObjectId(5),
            catch: Some(at(1, 20)),
        };
        assert!(is_rethrow(&last, ObjectId(5), &at(1, 20)));
        assert!(is_rethrow(&last, ObjectId(5), &at(1, 31)));
        // Another instance, another method, or code before the handler
        // (a loop throwing a shared instance again) is a new throw.
        assert!(!is_rethrow(&last, ObjectId(6), &at(1, 31)));
        assert!(!is_rethrow(&last, ObjectId(5), &at(2, 31)));
        assert!(!is_rethrow(&last, ObjectId(5), &at(1, 3)));
        let uncaught = Thrown {
            catch: None,
            ..last
        };
        assert!(!is_rethrow(&uncaught, ObjectId(5), &at(1, 31)));
    }

    #[test]
    fn a_fold_lists_a_few_sites_and_counts_the_rest() {
        let mut f = Fold::default();
        for i in 0..6 {
            f.count += 1;
            if f.sites.len() < FOLD_SITES {
                f.sites.push(format!("at A.m:{i} (uncaught)"));
            }
        }
        let Detail::Rethrown { count, sites } = f.detail() else {
            panic!("a fold is a rethrow detail");
        };
        assert_eq!((count, sites.len()), (6, FOLD_SITES));
        assert_eq!(sites[3], "at A.m:3 (uncaught)");
    }
}
