//! Rendering values for an agent: one line by default (primitives and
//! strings inline, objects as `Type @0x…`, optionally with a bounded
//! `toString()`), or a field tree with depth and breadth budgets that reads
//! fields only and invokes nothing (cycles detected, boxes unboxed,
//! List/Set/Map/Optional contents shown).

use std::collections::HashSet;
use std::time::Duration;

use futures::future::join_all;

use crate::actors::session::classes::{ClassCache, FieldInfo};
use crate::actors::session::eval::{BOXES, EvalContext, to_val};
use crate::actors::session::inspect::{quote, truncate};
use crate::expr::Charset;
use crate::expr::eval::Val;
use crate::jdwp::array_reference::{GetValues as ArrayValues, Length};
use crate::jdwp::object_reference::{GetValues as ObjectValues, InvokeMethod};
use crate::jdwp::string_reference::Value as StringValue;
use crate::jdwp::{ErrorCode, InvokeOptions, ObjectId, Tag, Value};

/// Budgets of a rendering.
#[derive(Debug, Clone, Copy)]
pub struct Budget {
    /// Longest string or toString() shown, in characters.
    pub max_len: usize,
    /// Levels of a field tree below the root.
    pub max_depth: usize,
    /// Fields or elements shown per object.
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

/// Renders evaluator values.
pub struct Renderer<'a> {
    pub classes: &'a ClassCache,
    pub ctx: &'a EvalContext,
    pub budget: Budget,
    pub charset: Option<Charset>,
}

fn prim(v: &Val) -> Option<String> {
    Some(match v {
        Val::Bool(b) => b.to_string(),
        Val::Byte(x) => x.to_string(),
        Val::Short(x) => x.to_string(),
        Val::Int(x) => x.to_string(),
        Val::Long(x) => format!("{x}L"),
        Val::Float(x) => format!("{x}f"),
        Val::Double(x) => x.to_string(),
        Val::Char(c) => match char::from_u32(u32::from(*c)) {
            Some(c) => format!("'{c}'"),
            None => format!("'\\u{c:04x}'"),
        },
        Val::Null => "null".into(),
        Val::Object { id: 0, .. } => "null".into(),
        _ => return None,
    })
}

impl Renderer<'_> {
    async fn type_name(&self, id: u64) -> Result<String, String> {
        match self.classes.type_of(ObjectId(id)).await {
            Ok(t) => self
                .classes
                .info(t.id)
                .await
                .map(|i| i.name.clone())
                .map_err(|e| e.to_string()),
            Err(e) if e.code() == Some(ErrorCode::INVALID_OBJECT) => Err(format!(
                "Vanished @{id:#x} (collected by the JVM; handles are weak references)"
            )),
            Err(e) => Err(format!("@{id:#x} (unreadable: {e})")),
        }
    }

    /// One line, the default rendering.
    pub async fn line(&self, v: &Val) -> String {
        if let Some(p) = prim(v) {
            return p;
        }
        match v {
            Val::Text(s) => truncate(&quote(s), self.budget.max_len),
            Val::Class { id, name } => {
                let loader = self
                    .classes
                    .loader(crate::jdwp::ReferenceTypeId(*id))
                    .await
                    .map(|l| format!(" (loader @{:#x})", l.0))
                    .unwrap_or_default();
                format!("class {name}{loader}")
            }
            Val::Many(items) => {
                let shown: Vec<String> = join_all(
                    items
                        .iter()
                        .take(self.budget.max_children)
                        .map(|i| self.short(i)),
                )
                .await;
                let more = items.len().saturating_sub(shown.len());
                format!(
                    "[{} element{}] [{}{}]",
                    items.len(),
                    if items.len() == 1 { "" } else { "s" },
                    shown.join(", "),
                    if more > 0 {
                        format!(", … {more} more")
                    } else {
                        String::new()
                    }
                )
            }
            Val::Entries(entries) => {
                let shown: Vec<String> =
                    join_all(entries.iter().take(self.budget.max_children).map(
                        |(k, v)| async move {
                            format!("{} → {}", self.short(k).await, self.short(v).await)
                        },
                    ))
                    .await;
                let more = entries.len().saturating_sub(shown.len());
                format!(
                    "{{{} entr{}}} {{{}{}}}",
                    entries.len(),
                    if entries.len() == 1 { "y" } else { "ies" },
                    shown.join(", "),
                    if more > 0 {
                        format!(", … {more} more")
                    } else {
                        String::new()
                    }
                )
            }
            Val::Object { id, tag } => self.object_line(*id, *tag).await,
            _ => "?".into(),
        }
    }

    /// A short rendering with no toString(): for elements and entries.
    async fn short(&self, v: &Val) -> String {
        if let Some(p) = prim(v) {
            return p;
        }
        match v {
            Val::Text(s) => truncate(&quote(s), self.budget.max_len),
            Val::Object {
                id,
                tag: Tag::String,
            } => self.string(*id).await,
            Val::Object { id, .. } => match self.type_name(*id).await {
                Ok(t) if BOXES.contains(&t.as_str()) => self.unboxed(*id, &t).await,
                Ok(t) => format!("{t} @{id:#x}"),
                Err(e) => e,
            },
            other => Box::pin(self.line(other)).await,
        }
    }

    async fn string(&self, id: u64) -> String {
        match self
            .classes
            .connection()
            .send(&StringValue {
                string_object: ObjectId(id),
            })
            .await
        {
            Ok(s) => truncate(&quote(&s), self.budget.max_len),
            Err(e) if e.code() == Some(ErrorCode::INVALID_OBJECT) => {
                format!("Vanished @{id:#x} (collected by the JVM)")
            }
            Err(e) => format!("@{id:#x} (unreadable: {e})"),
        }
    }

    async fn unboxed(&self, id: u64, type_name: &str) -> String {
        match self
            .fields(id, &["value"])
            .await
            .ok()
            .and_then(|f| f.into_iter().next().flatten())
        {
            Some(v) => format!(
                "{} ({} @{id:#x})",
                prim(&to_val(&v)).unwrap_or_default(),
                type_name.rsplit('.').next().unwrap_or(type_name)
            ),
            None => format!("{type_name} @{id:#x}"),
        }
    }

    async fn fields(&self, id: u64, names: &[&str]) -> Result<Vec<Option<Value>>, String> {
        let conn = self.classes.connection();
        let t = self
            .classes
            .type_of(ObjectId(id))
            .await
            .map_err(|e| e.to_string())?;
        let mut ids = Vec::new();
        let mut pos = Vec::new();
        for n in names {
            match self
                .classes
                .find_field(t.id, n)
                .await
                .map_err(|e| e.to_string())?
            {
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
            .await
            .map_err(|e| e.to_string())?;
        Ok(pos
            .into_iter()
            .map(|p| p.and_then(|i| vals.get(i).copied()))
            .collect())
    }

    async fn object_line(&self, id: u64, tag: Tag) -> String {
        if tag == Tag::String {
            return self.string(id).await;
        }
        let ty = match self.type_name(id).await {
            Ok(t) => t,
            Err(e) => return e,
        };
        if ty.ends_with("[]") {
            return self.array_line(id, &ty).await;
        }
        if BOXES.contains(&ty.as_str()) {
            return self.unboxed(id, &ty).await;
        }
        match self.to_string(id).await {
            Some(Ok(s)) => format!(
                "{ty} @{id:#x} {}",
                truncate(&quote(&s), self.budget.max_len)
            ),
            Some(Err(why)) => format!("{ty} @{id:#x} (toString() {why})"),
            None => format!("{ty} @{id:#x}"),
        }
    }

    /// `toString()` on the event-suspended thread, bounded; `None` when no
    /// such thread is available (the rendering then invokes nothing).
    async fn to_string(&self, id: u64) -> Option<Result<String, String>> {
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
        let reply = crate::actors::session::invoke::bounded(
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
            Ok(r) if r.exception.id.0 != 0 => Err("threw".into()),
            Ok(r) => match r.return_value {
                Value::Object { id, .. } if id.0 != 0 => conn
                    .send(&StringValue { string_object: id })
                    .await
                    .map_err(|e| e.to_string()),
                _ => Ok("null".into()),
            },
            Err(crate::actors::JdwpError::Timeout { .. }) => {
                Err(format!("did not return within {} ms", budget.as_millis()))
            }
            Err(crate::actors::JdwpError::ReadOnly { .. }) => return None,
            Err(e) => Err(e.to_string()),
        })
    }

    async fn array_line(&self, id: u64, ty: &str) -> String {
        let conn = self.classes.connection();
        let len = match conn
            .send(&Length {
                array: ObjectId(id),
            })
            .await
        {
            Ok(n) => n,
            Err(e) => return format!("{ty} @{id:#x} (unreadable: {e})"),
        };
        let elem = ty.strip_suffix("[]").unwrap_or(ty);
        let text_like = matches!(elem, "byte" | "char");
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
                let (text, enc) = decode(&region.values, elem, self.charset);
                return format!(
                    "{elem}[{len}] {enc} {} @{id:#x}",
                    truncate(&quote(&text), self.budget.max_len)
                );
            }
        }
        let n = len.min(self.budget.max_children as i32);
        let shown = if n > 0 {
            match conn
                .send(&ArrayValues {
                    array: ObjectId(id),
                    first_index: 0,
                    length: n,
                })
                .await
            {
                Ok(r) => join_all(
                    r.values
                        .iter()
                        .map(|v| async move { self.short(&to_val(v)).await }),
                )
                .await
                .join(", "),
                Err(e) => format!("unreadable: {e}"),
            }
        } else {
            String::new()
        };
        let more = if len > n {
            format!(", … {} more", len - n)
        } else {
            String::new()
        };
        format!("{elem}[{len}] [{shown}{more}] @{id:#x}")
    }

    /// A field tree: reads fields only, invokes nothing.
    pub async fn tree(&self, v: &Val) -> String {
        let mut out = String::new();
        let mut seen = HashSet::new();
        let head = self.short(v).await;
        out.push_str(&head);
        if let Val::Object { id, .. } = v
            && *id != 0
        {
            Box::pin(self.children(*id, 1, &mut seen, &mut out)).await;
        } else if let Val::Many(items) = v {
            for (i, item) in items.iter().take(self.budget.max_children).enumerate() {
                out.push_str(&format!("\n  [{i}] {}", self.short(item).await));
                if let Val::Object { id, .. } = item {
                    Box::pin(self.children(*id, 2, &mut seen, &mut out)).await;
                }
            }
        } else if let Val::Entries(entries) = v {
            for (k, val) in entries.iter().take(self.budget.max_children) {
                out.push_str(&format!(
                    "\n  {} → {}",
                    self.short(k).await,
                    self.short(val).await
                ));
            }
        }
        out
    }

    async fn children(&self, id: u64, depth: usize, seen: &mut HashSet<u64>, out: &mut String) {
        if depth > self.budget.max_depth {
            return;
        }
        if !seen.insert(id) {
            out.push_str(" (cycle: shown above)");
            return;
        }
        let indent = "  ".repeat(depth);
        let ty = match self.type_name(id).await {
            Ok(t) => t,
            Err(_) => return,
        };
        if ty == "java.lang.String" || BOXES.contains(&ty.as_str()) {
            return;
        }
        // Contents of the collections people mean when they expand one.
        let contents: Option<Val> = if ty.ends_with("[]") {
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
        } else {
            self.contents(id, &ty).await
        };
        if let Some(contents) = contents {
            match contents {
                Val::Many(items) => {
                    for (i, item) in items.iter().take(self.budget.max_children).enumerate() {
                        out.push_str(&format!("\n{indent}[{i}] {}", self.short(item).await));
                        if let Val::Object { id, tag } = item
                            && *id != 0
                            && *tag != Tag::String
                        {
                            Box::pin(self.children(*id, depth + 1, seen, out)).await;
                        }
                    }
                }
                Val::Entries(entries) => {
                    for (k, v) in entries.iter().take(self.budget.max_children) {
                        out.push_str(&format!(
                            "\n{indent}{} → {}",
                            self.short(k).await,
                            self.short(v).await
                        ));
                        if let Val::Object { id, tag } = v
                            && *id != 0
                            && *tag != Tag::String
                        {
                            Box::pin(self.children(*id, depth + 1, seen, out)).await;
                        }
                    }
                }
                other => {
                    out.push_str(&format!("\n{indent}value: {}", self.short(&other).await));
                }
            }
            return;
        }
        // Plain object: every instance field, inherited ones too.
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
            let val = to_val(&v);
            out.push_str(&format!(
                "\n{indent}{} = {}",
                f.name,
                self.short(&val).await
            ));
            if let Val::Object { id, tag } = val
                && id != 0
                && tag != Tag::String
            {
                Box::pin(self.children(id, depth + 1, seen, out)).await;
            }
        }
        if total > self.budget.max_children {
            out.push_str(&format!(
                "\n{indent}… {} more fields (raise max_children)",
                total - self.budget.max_children
            ));
        }
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
/// own field walk, so rendering and subscripts read collections one way.
async fn structural_elements(classes: &ClassCache, ctx: &EvalContext, id: u64) -> Option<Val> {
    let parsed = crate::expr::parse(&format!("@{id:#x}[0..]")).ok()?;
    crate::actors::session::eval::evaluate(classes, ctx, &parsed.expr)
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
