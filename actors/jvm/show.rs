//! Reading values for someone to look at: one line by default (primitives
//! and strings inline, objects with their type and id, optionally with a
//! bounded `toString()`), or a field tree with depth and breadth budgets
//! that reads fields only and invokes nothing (cycles detected, boxes
//! unboxed, List/Set/Map/Optional contents shown). The result is plain
//! data ([`Shown`], [`Tree`]); the MCP layer words it.

use std::collections::HashSet;
use std::time::Duration;

use futures::future::join_all;

use crate::error::JdwpError;
use crate::expr::Charset;
use crate::expr::eval::Val;
use crate::jdwp::array_reference::{GetValues as ArrayValues, Length};
use crate::jdwp::object_reference::{GetValues as ObjectValues, InvokeMethod};
use crate::jdwp::string_reference::Value as StringValue;
use crate::jdwp::{ErrorCode, InvokeOptions, ObjectId, Tag, Value};
use crate::jvm::classes::{ClassCache, FieldInfo};
use crate::jvm::eval::{BOXES, EvalContext, to_val};
use crate::model::Prim;
use crate::model::shown::{Cut, Edge, Elements, Scalar, Shown, ToStringFailure, Tree};

/// Budgets of a reading.
#[derive(Debug, Clone, Copy)]
pub struct Budget {
    /// Longest string or toString() kept, in characters.
    pub max_len: usize,
    /// Levels of a field tree below the root.
    pub max_depth: usize,
    /// Fields or elements kept per object.
    pub max_children: usize,
}

impl Default for Budget {
    fn default() -> Self {
        Self {
            max_len: 200,
            max_depth: 2,
            max_children: 20,
        }
    }
}

/// Reads evaluator values for display.
pub struct ValueReader<'a> {
    pub classes: &'a ClassCache,
    pub ctx: &'a EvalContext,
    pub budget: Budget,
    pub charset: Option<Charset>,
}

/// A primitive (or null) evaluator value; `None` for references.
pub fn scalar(v: &Val) -> Option<Scalar> {
    match v {
        Val::Prim(p) => Some(Scalar::Prim(*p)),
        Val::Null | Val::Object { id: 0, .. } => Some(Scalar::Null),
        _ => None,
    }
}

/// A primitive (or null) JDWP value; `None` for references.
pub fn wire_scalar(value: &Value) -> Option<Scalar> {
    match *value {
        Value::Void => Some(Scalar::Void),
        Value::Object { id, .. } if id.0 == 0 => Some(Scalar::Null),
        Value::Object { .. } => None,
        _ => Prim::from_wire(value).map(Scalar::Prim),
    }
}

/// What a failed read of object `id` shows.
pub fn unreadable(e: &crate::error::JdwpError, id: u64, type_name: Option<String>) -> Shown {
    if e.code() == Some(ErrorCode::INVALID_OBJECT) {
        Shown::Vanished { id }
    } else {
        Shown::Unreadable {
            id,
            type_name,
            why: e.to_string(),
        }
    }
}

impl ValueReader<'_> {
    fn cut(&self, s: &str) -> Cut {
        Cut::new(s, self.budget.max_len)
    }

    async fn type_name(&self, id: u64) -> Result<String, Shown> {
        match self.classes.type_of(ObjectId(id)).await {
            Ok(t) => self
                .classes
                .info(t.id)
                .await
                .map(|i| i.name.clone())
                .map_err(|e| unreadable(&e, id, None)),
            Err(e) => Err(unreadable(&e, id, None)),
        }
    }

    /// One line, the default reading.
    pub async fn line(&self, v: &Val) -> Shown {
        if let Some(p) = scalar(v) {
            return Shown::Scalar(p);
        }
        match v {
            Val::Text(s) => Shown::Text(self.cut(s)),
            Val::Class { id, name } => Shown::Class {
                name: name.clone(),
                loader: self
                    .classes
                    .loader(crate::jdwp::ReferenceTypeId(*id))
                    .await
                    .ok()
                    .map(|l| l.0),
            },
            Val::Many(items) => Shown::Many {
                total: items.len(),
                items: join_all(
                    items
                        .iter()
                        .take(self.budget.max_children)
                        .map(|i| self.short(i)),
                )
                .await,
            },
            Val::Entries(entries) => Shown::Entries {
                total: entries.len(),
                entries: join_all(
                    entries
                        .iter()
                        .take(self.budget.max_children)
                        .map(|(k, v)| async move { (self.short(k).await, self.short(v).await) }),
                )
                .await,
            },
            Val::Object { id, tag } => self.object_line(*id, *tag).await,
            _ => Shown::Unknown,
        }
    }

    /// A short reading with no toString(): for elements and entries.
    pub async fn short(&self, v: &Val) -> Shown {
        if let Some(p) = scalar(v) {
            return Shown::Scalar(p);
        }
        match v {
            Val::Text(s) => Shown::Text(self.cut(s)),
            Val::Object {
                id,
                tag: Tag::String,
            } => self.string(*id).await,
            Val::Object { id, .. } => match self.type_name(*id).await {
                Ok(t) if BOXES.contains(&t.as_str()) => self.unboxed(*id, t).await,
                Ok(type_name) => match self.enum_constant(*id).await {
                    Some(constant) => Shown::Enum {
                        constant,
                        type_name,
                        id: *id,
                    },
                    None => Shown::Object {
                        type_name,
                        id: *id,
                        to_string: None,
                    },
                },
                Err(e) => e,
            },
            other => Box::pin(self.line(other)).await,
        }
    }

    async fn string(&self, id: u64) -> Shown {
        match self
            .classes
            .connection()
            .send(&StringValue {
                string_object: ObjectId(id),
            })
            .await
        {
            Ok(s) => Shown::Text(self.cut(&s)),
            Err(e) => unreadable(&e, id, Some("java.lang.String".into())),
        }
    }

    async fn unboxed(&self, id: u64, type_name: String) -> Shown {
        unboxed(self.classes, id, type_name).await
    }

    async fn enum_constant(&self, id: u64) -> Option<String> {
        enum_constant(self.classes, id).await
    }

    async fn fields(&self, id: u64, names: &[&str]) -> Result<Vec<Option<Value>>, JdwpError> {
        object_fields(self.classes, id, names).await
    }

    async fn object_line(&self, id: u64, tag: Tag) -> Shown {
        if tag == Tag::String {
            return self.string(id).await;
        }
        // An array's length is asked for along with its type.
        let length = (tag == Tag::Array).then(|| {
            self.classes.connection().send(&Length {
                array: ObjectId(id),
            })
        });
        let type_name = match self.type_name(id).await {
            Ok(t) => t,
            Err(e) => return e,
        };
        if type_name.ends_with("[]") {
            return self.array(id, &type_name, true, length).await;
        }
        if BOXES.contains(&type_name.as_str()) {
            return self.unboxed(id, type_name).await;
        }
        if let Some(constant) = self.enum_constant(id).await {
            return Shown::Enum {
                constant,
                type_name,
                id,
            };
        }
        let to_string = self.to_string(id).await;
        Shown::Object {
            type_name,
            id,
            to_string,
        }
    }

    /// `toString()` on the event-suspended thread, bounded; `None` when no
    /// such thread is available (the reading then invokes nothing).
    async fn to_string(&self, id: u64) -> Option<Result<Cut, ToStringFailure>> {
        let thread = self.ctx.thread.filter(|_| self.ctx.invocable)?;
        let conn = self.classes.connection();
        let t = self.classes.type_of(ObjectId(id)).await.ok()?;
        let mut method = None;
        for c in self.classes.hierarchy(t.id).await.ok()? {
            if let Some(m) = self
                .classes
                .methods(c)
                .await
                .ok()?
                .iter()
                .find(|m| m.name == "toString" && m.signature == "()Ljava/lang/String;")
            {
                method = Some((c, m.id));
                break;
            }
        }
        let (class, method) = method?;
        let budget = self.ctx.invoke_budget.unwrap_or(Duration::from_secs(2));
        let reply = crate::jvm::invoke::bounded(
            self.classes,
            &InvokeMethod {
                object: ObjectId(id),
                thread,
                class,
                method,
                arguments: vec![],
                options: InvokeOptions::INVOKE_SINGLE_THREADED,
            },
            thread,
            budget,
        )
        .await;
        Some(match reply {
            Ok(r) if r.exception.id.0 != 0 => Err(ToStringFailure::Threw),
            Ok(r) => match r.return_value {
                Value::Object { id, .. } if id.0 != 0 => conn
                    .send(&StringValue { string_object: id })
                    .await
                    .map(|s| self.cut(&s))
                    .map_err(|e| ToStringFailure::Failed(e.to_string())),
                _ => Ok(Cut::new("null", 4)),
            },
            Err(crate::error::JdwpError::Cancelled { .. }) => Err(ToStringFailure::Late {
                ms: budget.as_millis(),
                cancelled: true,
            }),
            Err(crate::error::JdwpError::Overran { .. }) => Err(ToStringFailure::Late {
                ms: budget.as_millis(),
                cancelled: false,
            }),
            Err(crate::error::JdwpError::ReadOnly { .. }) => return None,
            Err(e) => Err(ToStringFailure::Failed(e.to_string())),
        })
    }

    /// An array: its length, and its first elements when `elements` (a
    /// `byte[]`/`char[]` decoded as text unless the charset says raw). The
    /// `Length` request may have been sent already, along with the type's.
    async fn array(
        &self,
        id: u64,
        ty: &str,
        elements: bool,
        length: Option<impl Future<Output = Result<i32, JdwpError>>>,
    ) -> Shown {
        let conn = self.classes.connection();
        let elem = ty.strip_suffix("[]").unwrap_or(ty).to_string();
        let length = match length {
            Some(l) => l.await,
            None => {
                conn.send(&Length {
                    array: ObjectId(id),
                })
                .await
            }
        };
        let len = match length {
            Ok(n) => n,
            Err(e) => return unreadable(&e, id, Some(ty.to_string())),
        };
        if !elements {
            return Shown::Array {
                elem,
                id,
                len,
                elements: Elements::NotRead,
            };
        }
        let text_like = matches!(elem.as_str(), "byte" | "char");
        if text_like && self.charset != Some(Charset::Raw) && len > 0 {
            let n = len.min(self.budget.max_len.max(1) as i32 * 4);
            if let Ok(region) = conn
                .send(&ArrayValues {
                    array: ObjectId(id),
                    first_index: 0,
                    length: n,
                })
                .await
            {
                let (text, encoding) = decode(&region.values, &elem, self.charset);
                return Shown::Decoded {
                    elem,
                    id,
                    len,
                    encoding,
                    text: self.cut(&text),
                };
            }
        }
        let n = len.min(self.budget.max_children as i32);
        let elements = if n > 0 {
            match conn
                .send(&ArrayValues {
                    array: ObjectId(id),
                    first_index: 0,
                    length: n,
                })
                .await
            {
                Ok(r) => Elements::Read(
                    join_all(
                        r.values
                            .iter()
                            .map(|v| async move { self.short(&to_val(v)).await }),
                    )
                    .await,
                ),
                Err(e) => Elements::Unreadable(e.to_string()),
            }
        } else {
            Elements::Read(Vec::new())
        };
        Shown::Array {
            elem,
            id,
            len,
            elements,
        }
    }

    /// A field tree: reads fields only, invokes nothing.
    pub async fn tree(&self, v: &Val) -> Tree {
        let mut seen = HashSet::new();
        let mut root = Tree::leaf(self.short(v).await);
        match v {
            Val::Object { id, .. } if *id != 0 => {
                Box::pin(self.children(*id, 1, &mut seen, &mut root)).await;
            }
            Val::Many(items) => {
                for (i, item) in items.iter().take(self.budget.max_children).enumerate() {
                    let mut node = Tree::leaf(self.short(item).await);
                    if let Val::Object { id, .. } = item {
                        Box::pin(self.children(*id, 2, &mut seen, &mut node)).await;
                    }
                    root.children.push((Edge::Index(i), node));
                }
            }
            Val::Entries(entries) => {
                for (k, val) in entries.iter().take(self.budget.max_children) {
                    let key = self.short(k).await;
                    root.children
                        .push((Edge::Key(key), Tree::leaf(self.short(val).await)));
                }
            }
            _ => {}
        }
        root
    }

    /// One child of `node`, expanded further when it is an object.
    async fn child(
        &self,
        edge: Edge,
        v: &Val,
        depth: usize,
        seen: &mut HashSet<u64>,
        node: &mut Tree,
    ) {
        let mut child = Tree::leaf(self.short(v).await);
        if let Val::Object { id, tag } = v
            && *id != 0
            && *tag != Tag::String
        {
            Box::pin(self.children(*id, depth + 1, seen, &mut child)).await;
        }
        node.children.push((edge, child));
    }

    async fn children(&self, id: u64, depth: usize, seen: &mut HashSet<u64>, node: &mut Tree) {
        if depth > self.budget.max_depth {
            return;
        }
        if !seen.insert(id) {
            node.cycle = true;
            return;
        }
        let Ok(ty) = self.type_name(id).await else {
            return;
        };
        if ty == "java.lang.String" || BOXES.contains(&ty.as_str()) {
            return;
        }
        // Contents of the collections people mean when they expand one.
        let contents = if ty.ends_with("[]") {
            self.array_contents(id).await
        } else {
            self.contents(id, &ty).await
        };
        match contents {
            Some(Val::Many(items)) => {
                for (i, item) in items.iter().take(self.budget.max_children).enumerate() {
                    self.child(Edge::Index(i), item, depth, seen, node).await;
                }
            }
            Some(Val::Entries(entries)) => {
                for (k, v) in entries.iter().take(self.budget.max_children) {
                    let key = self.short(k).await;
                    self.child(Edge::Key(key), v, depth, seen, node).await;
                }
            }
            Some(other) => {
                let held = Tree::leaf(self.short(&other).await);
                node.children.push((Edge::Held, held));
            }
            None => self.plain_fields(id, depth, seen, node).await,
        }
    }

    async fn array_contents(&self, id: u64) -> Option<Val> {
        let conn = self.classes.connection();
        match conn
            .send(&Length {
                array: ObjectId(id),
            })
            .await
        {
            Ok(len) if len > 0 => conn
                .send(&ArrayValues {
                    array: ObjectId(id),
                    first_index: 0,
                    length: len.min(self.budget.max_children as i32),
                })
                .await
                .ok()
                .map(|r| Val::Many(r.values.iter().map(to_val).collect())),
            _ => Some(Val::Many(vec![])),
        }
    }

    /// A plain object: every instance field, inherited ones too.
    async fn plain_fields(&self, id: u64, depth: usize, seen: &mut HashSet<u64>, node: &mut Tree) {
        let conn = self.classes.connection();
        let Ok(t) = self.classes.type_of(ObjectId(id)).await else {
            return;
        };
        let Ok(chain) = self.classes.hierarchy(t.id).await else {
            return;
        };
        let mut fields: Vec<FieldInfo> = Vec::new();
        for c in chain {
            if let Ok(fs) = self.classes.fields(c).await {
                fields.extend(fs.iter().filter(|f| !f.is_static()).cloned());
            }
        }
        let total = fields.len();
        fields.truncate(self.budget.max_children);
        let values = if fields.is_empty() {
            Vec::new()
        } else {
            conn.send(&ObjectValues {
                object: ObjectId(id),
                fields: fields.iter().map(|f| f.id).collect(),
            })
            .await
            .unwrap_or_default()
        };
        for (f, v) in fields.iter().zip(values) {
            self.child(Edge::Field(f.name.clone()), &to_val(&v), depth, seen, node)
                .await;
        }
        node.more_fields = total.saturating_sub(self.budget.max_children);
    }

    /// The elements or entries of well-known containers, read from fields.
    async fn contents(&self, id: u64, ty: &str) -> Option<Val> {
        let ctx = EvalContext::default();
        match ty {
            "java.util.ArrayList"
            | "java.util.HashMap"
            | "java.util.LinkedHashMap"
            | "java.util.concurrent.ConcurrentHashMap" => {
                structural_elements(self.classes, &ctx, id).await
            }
            "java.util.HashSet" | "java.util.LinkedHashSet" => {
                let map = self
                    .fields(id, &["map"])
                    .await
                    .ok()?
                    .into_iter()
                    .next()
                    .flatten()?;
                let Value::Object { id: map, .. } = map else {
                    return None;
                };
                match structural_elements(self.classes, &ctx, map.0).await? {
                    Val::Entries(e) => Some(Val::Many(e.into_iter().map(|(k, _)| k).collect())),
                    other => Some(other),
                }
            }
            "java.util.Optional" => {
                let v = self
                    .fields(id, &["value"])
                    .await
                    .ok()?
                    .into_iter()
                    .next()
                    .flatten()?;
                Some(to_val(&v))
            }
            _ => None,
        }
    }
}

/// Elements (or entries) of a structural collection via the evaluator's
/// own field walk, so reading and subscripts walk collections one way.
async fn structural_elements(classes: &ClassCache, ctx: &EvalContext, id: u64) -> Option<Val> {
    let parsed = crate::expr::parse(&format!("@{id:#x}[0..]")).ok()?;
    crate::jvm::eval::evaluate(classes, ctx, &parsed.expr)
        .await
        .ok()
        .map(|o| o.value)
}

/// Decodes byte[] / char[] contents; undecodable octets show as `\xNN`.
fn decode(values: &[Value], elem: &str, charset: Option<Charset>) -> (String, &'static str) {
    if elem == "char" {
        let units: Vec<u16> = values
            .iter()
            .filter_map(|v| match v {
                Value::Char(c) => Some(*c),
                _ => None,
            })
            .collect();
        return (String::from_utf16_lossy(&units), "UTF-16");
    }
    let bytes: Vec<u8> = values
        .iter()
        .filter_map(|v| match v {
            Value::Byte(b) => Some(*b as u8),
            _ => None,
        })
        .collect();
    match charset {
        Some(Charset::Latin1) => (bytes.iter().map(|&b| b as char).collect(), "ISO-8859-1"),
        _ => {
            let mut out = String::new();
            let mut rest: &[u8] = &bytes;
            loop {
                match std::str::from_utf8(rest) {
                    Ok(s) => {
                        out.push_str(s);
                        break;
                    }
                    Err(e) => {
                        let (good, bad) = rest.split_at(e.valid_up_to());
                        out.push_str(std::str::from_utf8(good).unwrap_or(""));
                        let skip = e.error_len().unwrap_or(bad.len()).max(1).min(bad.len());
                        for b in &bad[..skip] {
                            out.push_str(&format!("\\x{b:02X}"));
                        }
                        rest = &bad[skip..];
                        if rest.is_empty() {
                            break;
                        }
                    }
                }
            }
            (out, "UTF-8")
        }
    }
}

/// A boxed primitive, unboxed from its `value` field (an object of another
/// shape as itself).
/// A boxed primitive, unboxed from its `value` field (an object of another
/// shape is shown as itself).
pub(crate) async fn unboxed(classes: &ClassCache, id: u64, type_name: String) -> Shown {
    match object_fields(classes, id, &["value"])
        .await
        .ok()
        .and_then(|f| f.into_iter().next().flatten())
        .and_then(|v| wire_scalar(&v))
    {
        Some(value) => Shown::Boxed {
            value,
            type_name,
            id,
        },
        None => Shown::Object {
            type_name,
            id,
            to_string: None,
        },
    }
}

/// The values of the instance fields `names` of object `id` (`None` for a
/// name it has no instance field of).
pub(crate) async fn object_fields(
    classes: &ClassCache,
    id: u64,
    names: &[&str],
) -> Result<Vec<Option<Value>>, JdwpError> {
    let conn = classes.connection();
    let t = classes.type_of(ObjectId(id)).await?;
    let mut ids = Vec::new();
    let mut pos = Vec::new();
    for n in names {
        match classes.find_field(t.id, n).await? {
            Some((_, f)) if !f.is_static() => {
                pos.push(Some(ids.len()));
                ids.push(f.id);
            }
            _ => pos.push(None),
        }
    }
    if ids.is_empty() {
        return Ok(vec![None; names.len()]);
    }
    let vals = conn
        .send(&ObjectValues {
            object: ObjectId(id),
            fields: ids,
        })
        .await?;
    Ok(pos
        .into_iter()
        .map(|p| p.and_then(|i| vals.get(i).copied()))
        .collect())
}

/// The name of the enum constant `id` is, read from `java.lang.Enum`'s own
/// `name` field (an enum may declare a field of that name too); `None` for
/// any other object. A constant with a body is an instance of a subclass
/// of its enum, so two levels are looked at. The class walk is cached, so
/// an object that is no enum costs no packet once its class was seen.
pub(crate) async fn enum_constant(classes: &ClassCache, id: u64) -> Option<String> {
    let mut t = classes.type_of(ObjectId(id)).await.ok()?.id;
    for _ in 0..2 {
        let up = classes.superclass(t).await.ok()??;
        if classes.info(up).await.ok()?.name == "java.lang.Enum" {
            let field = classes
                .fields(up)
                .await
                .ok()?
                .iter()
                .find(|f| f.name == "name" && !f.is_static())?
                .id;
            let conn = classes.connection();
            let values = conn
                .send(&ObjectValues {
                    object: ObjectId(id),
                    fields: vec![field],
                })
                .await
                .ok()?;
            let Value::Object { id: name, .. } = *values.first()? else {
                return None;
            };
            if name.0 == 0 {
                return None;
            }
            return conn
                .send(&StringValue {
                    string_object: name,
                })
                .await
                .ok();
        }
        t = up;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bytes_decode_with_marked_bad_octets() {
        let v: Vec<Value> = [b'h', b'i', 0xff, b'!']
            .iter()
            .map(|b| Value::Byte(*b as i8))
            .collect();
        assert_eq!(decode(&v, "byte", None), ("hi\\xFF!".to_string(), "UTF-8"));
        let v: Vec<Value> = [0xe9u8].iter().map(|b| Value::Byte(*b as i8)).collect();
        assert_eq!(decode(&v, "byte", Some(Charset::Latin1)).0, "é");
    }
}
