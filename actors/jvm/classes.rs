//! The per-session class cache: what the JVM said about a type (signature,
//! fields, methods, superclass, line and variable tables), fetched once and
//! shared by every reader — stack views, evaluation, stop points, trace
//! capture. Invalidated per type on redefinition and unload.
//!
//! Lookups by name are not cached: a class can be loaded (again, by
//! another loader) at any moment.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use crate::connection::ConnectionHandle;
use crate::error::JdwpError;
use crate::jdwp::method::{LineTable, VariableTableWithGeneric};
use crate::jdwp::reference_type::{
    ClassLoader, FieldsWithGeneric, MethodsWithGeneric, SignatureWithGeneric,
};
use crate::jdwp::virtual_machine::ClassesBySignature;
use crate::jdwp::{ErrorCode, FieldId, MethodId, ObjectId, ReferenceTypeId, TypeTag};
use crate::lock::lock;

/// A reference type as the cache knows it.
#[derive(Debug, Clone)]
pub struct ClassInfo {
    pub id: ReferenceTypeId,
    pub tag: TypeTag,
    /// JNI signature, e.g. `Ljava/util/HashMap;`.
    pub signature: String,
    /// Generic signature, empty when the class file has none.
    pub generic: String,
    /// Java name, e.g. `java.util.HashMap` or `int[]`.
    pub name: String,
}

/// A field of a type.
#[derive(Debug, Clone)]
pub struct FieldInfo {
    pub id: FieldId,
    pub name: String,
    pub signature: String,
    pub generic: String,
    pub modifiers: i32,
}

impl FieldInfo {
    pub fn is_static(&self) -> bool {
        self.modifiers & 0x0008 != 0
    }
}

/// A method of a type.
#[derive(Debug, Clone)]
pub struct MethodInfo {
    pub id: MethodId,
    pub name: String,
    pub signature: String,
    pub generic: String,
    pub modifiers: i32,
}

impl MethodInfo {
    pub fn is_static(&self) -> bool {
        self.modifiers & 0x0008 != 0
    }
    pub fn is_native(&self) -> bool {
        self.modifiers & 0x0100 != 0
    }
    pub fn is_abstract(&self) -> bool {
        self.modifiers & 0x0400 != 0
    }
}

/// A method's line table: (code index, line) pairs sorted by code index.
#[derive(Debug, Clone, Default)]
pub struct Lines {
    pub start: i64,
    pub end: i64,
    pub entries: Vec<(i64, i32)>,
}

impl Lines {
    /// The line of a code index: the entry with the greatest index <= it.
    pub fn line_of(&self, index: i64) -> Option<i32> {
        self.entries
            .iter()
            .take_while(|(i, _)| *i <= index)
            .last()
            .map(|(_, l)| *l)
    }

    /// Every code index that starts `line` (javac may emit several).
    pub fn indexes_of(&self, line: i32) -> Vec<i64> {
        self.entries
            .iter()
            .filter(|(_, l)| *l == line)
            .map(|(i, _)| *i)
            .collect()
    }
}

/// A local variable slot and where it is live.
#[derive(Debug, Clone)]
pub struct VariableInfo {
    pub name: String,
    pub signature: String,
    pub generic: String,
    pub slot: i32,
    pub start: i64,
    pub length: i32,
}

impl VariableInfo {
    /// True when the variable is in scope at `index`.
    pub fn live_at(&self, index: i64) -> bool {
        index >= self.start && index < self.start + i64::from(self.length)
    }
}

/// Why variables are unavailable, or the table.
#[derive(Debug, Clone)]
pub enum Variables {
    Known {
        arg_count: i32,
        vars: Vec<VariableInfo>,
    },
    /// Compiled without `-g`, or a native method.
    Absent,
}

#[derive(Default)]
struct Inner {
    info: HashMap<ReferenceTypeId, Arc<ClassInfo>>,
    fields: HashMap<ReferenceTypeId, Arc<Vec<FieldInfo>>>,
    methods: HashMap<ReferenceTypeId, Arc<Vec<MethodInfo>>>,
    supers: HashMap<ReferenceTypeId, Option<ReferenceTypeId>>,
    loaders: HashMap<ReferenceTypeId, ObjectId>,
    lines: HashMap<(ReferenceTypeId, MethodId), Arc<Lines>>,
    /// Runtime types of objects: an object's class never changes, and
    /// JDWP never reuses an object id within a connection.
    object_types: HashMap<ObjectId, crate::jdwp::TaggedTypeId>,
    vars: HashMap<(ReferenceTypeId, MethodId), Arc<Variables>>,
    /// Classes only the JDK's own loaders may define (`java.*`, arrays of
    /// primitives), by signature: one copy, loaded for good.
    boot_classes: HashMap<String, Vec<Arc<ClassInfo>>>,
    /// Fields of JDK classes looked up by name (`Thread.parkBlocker`).
    boot_fields: HashMap<(&'static str, &'static str), Option<FieldId>>,
    /// Thread names, the one cache of them: hits, traces and probe
    /// records all name their thread through it.
    thread_names: HashMap<crate::jdwp::ThreadId, Arc<str>>,
}

/// Thread names remembered before the memo starts over.
const MAX_THREAD_NAMES: usize = 16_384;

/// The cache. Cheap to clone through its `Arc`.
pub struct ClassCache {
    conn: ConnectionHandle,
    inner: Mutex<Inner>,
    /// The session this cache serves (for what outlives a call, such as a
    /// late invocation's return).
    session: std::sync::OnceLock<crate::link::SessionLink>,
    /// Invocations sent per thread: each lets its thread run, which makes
    /// the frame ids read before it stale.
    invocations: Mutex<HashMap<crate::jdwp::ThreadId, u64>>,
    /// Invocations past their budget whose late return is being watched.
    late_watches: Arc<std::sync::atomic::AtomicUsize>,
    /// Invocations that outran their budget: what cancels them, and the
    /// threads still inside one.
    runaways: Arc<crate::jvm::invoke::runaways::Runaways>,
}

// The type words are read and written by `model::signature` alone.
pub use crate::model::signature::{is_boot_only, java_name, jni_signature};

/// Objects whose types are remembered before the memo starts over.
const MAX_OBJECT_TYPES: usize = 100_000;

impl ClassCache {
    pub fn new(conn: ConnectionHandle) -> Self {
        Self {
            conn,
            inner: Mutex::new(Inner::default()),
            session: std::sync::OnceLock::new(),
            invocations: Mutex::new(HashMap::new()),
            late_watches: Arc::default(),
            runaways: Arc::default(),
        }
    }

    pub fn connection(&self) -> &ConnectionHandle {
        &self.conn
    }

    /// Ties the cache to its session (once, at spawn).
    pub fn set_session(&self, session: crate::link::SessionLink) {
        let _ = self.session.set(session);
    }

    /// Counts one invocation sent on `thread`.
    pub fn note_invocation(&self, thread: crate::jdwp::ThreadId) {
        let mut counts = lock(&self.invocations);
        if counts.len() >= 4096 && !counts.contains_key(&thread) {
            counts.clear();
        }
        *counts.entry(thread).or_default() += 1;
    }

    /// Invocations sent on `thread` so far: when it changes, frames read
    /// before are stale.
    pub fn invocations_on(&self, thread: crate::jdwp::ThreadId) -> u64 {
        lock(&self.invocations).get(&thread).copied().unwrap_or(0)
    }

    /// How many late invocations are being watched (see
    /// `session::invoke`).
    pub fn late_watches(&self) -> &Arc<std::sync::atomic::AtomicUsize> {
        &self.late_watches
    }

    /// Invocations that outran their budget (see `invoke::runaways`).
    pub fn runaways(&self) -> &Arc<crate::jvm::invoke::runaways::Runaways> {
        &self.runaways
    }

    /// The session, if the cache was tied to one.
    pub fn session(&self) -> Option<crate::link::SessionLink> {
        self.session.get().cloned()
    }

    /// The runtime type of an object (cached; bounded).
    pub async fn type_of(&self, object: ObjectId) -> Result<crate::jdwp::TaggedTypeId, JdwpError> {
        if let Some(t) = lock(&self.inner).object_types.get(&object) {
            return Ok(*t);
        }
        let t = self
            .conn
            .send(&crate::jdwp::object_reference::ReferenceType { object })
            .await?;
        let mut g = lock(&self.inner);
        if g.object_types.len() >= MAX_OBJECT_TYPES {
            g.object_types.clear();
        }
        g.object_types.insert(object, t);
        Ok(t)
    }

    /// Forgets everything about one type (redefined or unloaded).
    pub fn invalidate(&self, id: ReferenceTypeId) {
        let mut g = lock(&self.inner);
        g.info.remove(&id);
        g.fields.remove(&id);
        g.methods.remove(&id);
        g.supers.remove(&id);
        g.loaders.remove(&id);
        g.lines.retain(|(t, _), _| *t != id);
        g.object_types.retain(|_, t| t.id != id);
        g.vars.retain(|(t, _), _| *t != id);
    }

    /// Forgets everything (a class unloaded whose id we do not know).
    pub fn clear(&self) {
        *lock(&self.inner) = Inner::default();
    }

    /// Every loaded copy of a class, by Java name (`com.acme.Foo`,
    /// `com.acme.Outer$Inner`, `int[]`), in the JVM's order.
    pub async fn by_name(&self, name: &str) -> Result<Vec<Arc<ClassInfo>>, JdwpError> {
        let signature = jni_signature(name);
        let boot = is_boot_only(&signature);
        if boot && let Some(found) = lock(&self.inner).boot_classes.get(&signature) {
            return Ok(found.clone());
        }
        let found = self
            .conn
            .send(&ClassesBySignature {
                signature: signature.clone(),
            })
            .await?;
        let mut out = Vec::with_capacity(found.len());
        for m in found {
            let info = Arc::new(ClassInfo {
                id: m.ref_type.id,
                tag: m.ref_type.tag,
                signature: signature.clone(),
                generic: String::new(),
                name: java_name(&signature),
            });
            lock(&self.inner)
                .info
                .entry(m.ref_type.id)
                .or_insert_with(|| info.clone());
            out.push(info);
        }
        if boot && !out.is_empty() {
            lock(&self.inner)
                .boot_classes
                .insert(signature, out.clone());
        }
        Ok(out)
    }

    /// What a type is.
    pub async fn info(&self, id: ReferenceTypeId) -> Result<Arc<ClassInfo>, JdwpError> {
        if let Some(i) = lock(&self.inner).info.get(&id) {
            return Ok(i.clone());
        }
        let sig = self
            .conn
            .send(&SignatureWithGeneric { ref_type: id })
            .await?;
        let tag = match sig.signature.as_bytes().first() {
            Some(b'[') => TypeTag::Array,
            _ => TypeTag::Class,
        };
        let info = Arc::new(ClassInfo {
            id,
            tag,
            name: java_name(&sig.signature),
            signature: sig.signature,
            generic: sig.generic_signature,
        });
        lock(&self.inner).info.insert(id, info.clone());
        Ok(info)
    }

    /// Fields the type declares (not inherited).
    pub async fn fields(&self, id: ReferenceTypeId) -> Result<Arc<Vec<FieldInfo>>, JdwpError> {
        if let Some(f) = lock(&self.inner).fields.get(&id) {
            return Ok(f.clone());
        }
        let raw = self.conn.send(&FieldsWithGeneric { ref_type: id }).await?;
        let fields = Arc::new(
            raw.into_iter()
                .map(|f| FieldInfo {
                    id: f.field_id,
                    name: f.name,
                    signature: f.signature,
                    generic: f.generic_signature,
                    modifiers: f.mod_bits,
                })
                .collect::<Vec<_>>(),
        );
        lock(&self.inner).fields.insert(id, fields.clone());
        Ok(fields)
    }

    /// Methods the type declares (not inherited).
    pub async fn methods(&self, id: ReferenceTypeId) -> Result<Arc<Vec<MethodInfo>>, JdwpError> {
        if let Some(m) = lock(&self.inner).methods.get(&id) {
            return Ok(m.clone());
        }
        let raw = self.conn.send(&MethodsWithGeneric { ref_type: id }).await?;
        let methods = Arc::new(
            raw.into_iter()
                .map(|m| MethodInfo {
                    id: m.method_id,
                    name: m.name,
                    signature: m.signature,
                    generic: m.generic_signature,
                    modifiers: m.mod_bits,
                })
                .collect::<Vec<_>>(),
        );
        lock(&self.inner).methods.insert(id, methods.clone());
        Ok(methods)
    }

    /// One method of a type, by id.
    pub async fn method(
        &self,
        class: ReferenceTypeId,
        method: MethodId,
    ) -> Result<Option<MethodInfo>, JdwpError> {
        Ok(self
            .methods(class)
            .await?
            .iter()
            .find(|m| m.id == method)
            .cloned())
    }

    /// The superclass of a class (`None` for Object, interfaces, arrays).
    pub async fn superclass(
        &self,
        id: ReferenceTypeId,
    ) -> Result<Option<ReferenceTypeId>, JdwpError> {
        if let Some(s) = lock(&self.inner).supers.get(&id) {
            return Ok(*s);
        }
        let sup = match self
            .conn
            .send(&crate::jdwp::class_type::Superclass { class: id })
            .await
        {
            Ok(s) if s.0 == 0 => None,
            Ok(s) => Some(s),
            Err(e) if e.code() == Some(ErrorCode::INVALID_CLASS) => None,
            Err(e) => return Err(e),
        };
        lock(&self.inner).supers.insert(id, sup);
        Ok(sup)
    }

    /// The type and its superclasses, nearest first.
    pub async fn hierarchy(&self, id: ReferenceTypeId) -> Result<Vec<ReferenceTypeId>, JdwpError> {
        let mut out = vec![id];
        let mut cur = id;
        while let Some(s) = self.superclass(cur).await? {
            if out.contains(&s) || out.len() > 64 {
                break;
            }
            out.push(s);
            cur = s;
        }
        Ok(out)
    }

    /// The class loader that defined a type (0 = the bootstrap loader).
    pub async fn loader(&self, id: ReferenceTypeId) -> Result<ObjectId, JdwpError> {
        if let Some(l) = lock(&self.inner).loaders.get(&id) {
            return Ok(*l);
        }
        let l = self.conn.send(&ClassLoader { ref_type: id }).await?;
        lock(&self.inner).loaders.insert(id, l);
        Ok(l)
    }

    /// A thread's name (`?` when it cannot be read), cached: a thread is
    /// named once, and a name rarely changes.
    pub async fn thread_name(&self, thread: crate::jdwp::ThreadId) -> Arc<str> {
        if let Some(n) = lock(&self.inner).thread_names.get(&thread) {
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
        let mut g = lock(&self.inner);
        if g.thread_names.len() >= MAX_THREAD_NAMES {
            g.thread_names.clear();
        }
        g.thread_names.insert(thread, name.clone());
        name
    }

    /// A method's line table (empty for native and abstract methods).
    pub async fn lines(
        &self,
        class: ReferenceTypeId,
        method: MethodId,
    ) -> Result<Arc<Lines>, JdwpError> {
        if let Some(l) = lock(&self.inner).lines.get(&(class, method)) {
            return Ok(l.clone());
        }
        // Method id 0 is an obsolete method (a frame still running code a
        // redefinition replaced): asking the JDWP agent about it makes the
        // agent exit and take the JVM with it.
        if method.0 == 0 {
            return Ok(Arc::new(Lines::default()));
        }
        let lines = match self
            .conn
            .send(&LineTable {
                ref_type: class,
                method,
            })
            .await
        {
            Ok(t) => {
                let mut entries: Vec<(i64, i32)> = t
                    .lines
                    .iter()
                    .map(|e| (e.line_code_index, e.line_number))
                    .collect();
                entries.sort();
                Lines {
                    start: t.start,
                    end: t.end,
                    entries,
                }
            }
            Err(e)
                if matches!(
                    e.code(),
                    Some(ErrorCode::ABSENT_INFORMATION) | Some(ErrorCode::NATIVE_METHOD)
                ) =>
            {
                Lines::default()
            }
            Err(e) => return Err(e),
        };
        let lines = Arc::new(lines);
        lock(&self.inner)
            .lines
            .insert((class, method), lines.clone());
        Ok(lines)
    }

    /// A method's local variable table.
    pub async fn variables(
        &self,
        class: ReferenceTypeId,
        method: MethodId,
    ) -> Result<Arc<Variables>, JdwpError> {
        if let Some(v) = lock(&self.inner).vars.get(&(class, method)) {
            return Ok(v.clone());
        }
        if method.0 == 0 {
            return Ok(Arc::new(Variables::Absent));
        }
        let vars = match self
            .conn
            .send(&VariableTableWithGeneric {
                ref_type: class,
                method,
            })
            .await
        {
            Ok(t) => Variables::Known {
                arg_count: t.arg_cnt,
                vars: t
                    .slots
                    .into_iter()
                    .map(|v| VariableInfo {
                        name: v.name,
                        signature: v.signature,
                        generic: v.generic_signature,
                        slot: v.slot,
                        start: v.code_index,
                        length: v.length,
                    })
                    .collect(),
            },
            Err(e)
                if matches!(
                    e.code(),
                    Some(ErrorCode::ABSENT_INFORMATION) | Some(ErrorCode::NATIVE_METHOD)
                ) =>
            {
                Variables::Absent
            }
            Err(e) => return Err(e),
        };
        let vars = Arc::new(vars);
        lock(&self.inner).vars.insert((class, method), vars.clone());
        Ok(vars)
    }

    /// A field of a JDK class that only the bootstrap loader defines
    /// (`java.lang.Thread`), by class and field name; `None` when this JDK
    /// has no such field. Looked up once per session: such a class is
    /// never unloaded, and a redefinition cannot change its fields.
    pub async fn boot_field(
        &self,
        class: &'static str,
        field: &'static str,
    ) -> Result<Option<FieldId>, JdwpError> {
        if let Some(f) = lock(&self.inner).boot_fields.get(&(class, field)) {
            return Ok(*f);
        }
        let mut found = None;
        for info in self.by_name(class).await? {
            if let Some(f) = self.fields(info.id).await?.iter().find(|f| f.name == field) {
                found = Some(f.id);
                break;
            }
        }
        lock(&self.inner).boot_fields.insert((class, field), found);
        Ok(found)
    }

    /// A field of a type or its superclasses, nearest first; with the type
    /// that declares it.
    pub async fn find_field(
        &self,
        class: ReferenceTypeId,
        name: &str,
    ) -> Result<Option<(ReferenceTypeId, FieldInfo)>, JdwpError> {
        for t in self.hierarchy(class).await? {
            if let Some(f) = self.fields(t).await?.iter().find(|f| f.name == name) {
                return Ok(Some((t, f.clone())));
            }
        }
        Ok(None)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_map_both_ways() {
        let l = Lines {
            start: 0,
            end: 40,
            entries: vec![(0, 10), (5, 11), (12, 12), (30, 11)],
        };
        assert_eq!(l.line_of(7), Some(11));
        assert_eq!(l.line_of(31), Some(11));
        assert_eq!(l.indexes_of(11), vec![5, 30]);
    }
}
