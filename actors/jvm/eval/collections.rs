//! Reading collections by walking their fields: arrays, ArrayList's
//! `elementData`, and the HashMap family's table and bins, level by level
//! with each level in one pipelined burst. No code runs in the JVM.

use futures::future::join_all;

use super::{Driver, MAX_ELEMENTS, Structural, prim_eq, to_val};
use crate::error::JdwpError;
use crate::expr::eval::{Answer, Val};
use crate::jdwp::array_reference::{GetValues as ArrayValues, Length};
use crate::jdwp::object_reference::GetValues as ObjectValues;
use crate::jdwp::string_reference::Value as StringValue;
use crate::jdwp::{ObjectId, Tag, Value};
use crate::model::shown::EvalNote;

impl Driver<'_> {
    /// Reads named instance fields of one object in one request.
    pub(super) async fn fields_of(
        &self,
        object: u64,
        names: &[&str],
    ) -> Result<Vec<Option<Value>>, JdwpError> {
        let (ty, _) = self.type_of(object).await?;
        let mut ids = Vec::new();
        let mut positions = Vec::new();
        for name in names {
            match self.classes.find_field(ty, name).await? {
                Some((_, f)) if !f.is_static() => {
                    positions.push(Some(ids.len()));
                    ids.push(f.id);
                }
                _ => positions.push(None),
            }
        }
        let values = if ids.is_empty() {
            Vec::new()
        } else {
            self.classes
                .connection()
                .send(&ObjectValues {
                    object: ObjectId(object),
                    fields: ids,
                })
                .await?
        };
        Ok(positions
            .into_iter()
            .map(|p| p.and_then(|i| values.get(i).copied()))
            .collect())
    }

    pub(super) async fn array(
        &self,
        id: u64,
        from: i64,
        to: Option<i64>,
    ) -> Result<Vec<Val>, JdwpError> {
        let conn = self.classes.connection();
        let len = i64::from(
            conn.send(&Length {
                array: ObjectId(id),
            })
            .await?,
        );
        let end = to.unwrap_or(len).clamp(0, len);
        let start = from.clamp(0, end);
        if start == end {
            return Ok(Vec::new());
        }
        let region = conn
            .send(&ArrayValues {
                array: ObjectId(id),
                first_index: start as i32,
                length: (end - start) as i32,
            })
            .await?;
        Ok(region.values.iter().map(to_val).collect())
    }

    /// ArrayList elements [from, to) from `elementData` and `size`.
    pub(super) async fn array_list(
        &self,
        id: u64,
        from: i64,
        to: Option<i64>,
    ) -> Result<Vec<Val>, JdwpError> {
        let f = self.fields_of(id, &["size", "elementData"]).await?;
        let size = match f.first().copied().flatten() {
            Some(Value::Int(n)) => i64::from(n),
            _ => 0,
        };
        let Some(Some(Value::Object { id: data, .. })) = f.get(1).copied() else {
            return Ok(Vec::new());
        };
        let end = to.unwrap_or(size).clamp(0, size);
        self.array(data.0, from, Some(end)).await
    }

    /// Every (key, value) of a HashMap-family map, read by walking its
    /// table and bins level by level (all bins of one level at once).
    pub(super) async fn map_entries(
        &self,
        id: u64,
        kind: Structural,
    ) -> Result<Vec<(Val, Val)>, JdwpError> {
        let value_field = if kind == Structural::ConcurrentHashMap {
            "val"
        } else {
            "value"
        };
        if kind == Structural::LinkedHashMap {
            // Insertion order: head → after → …
            let mut out = Vec::new();
            let mut cur = match self
                .fields_of(id, &["head"])
                .await?
                .first()
                .copied()
                .flatten()
            {
                Some(Value::Object { id, .. }) if id.0 != 0 => id.0,
                _ => return Ok(out),
            };
            while out.len() < MAX_ELEMENTS {
                let f = self.fields_of(cur, &["key", value_field, "after"]).await?;
                let get = |i: usize| {
                    f.get(i)
                        .copied()
                        .flatten()
                        .map(|v| to_val(&v))
                        .unwrap_or(Val::Null)
                };
                out.push((get(0), get(1)));
                match f.get(2).copied().flatten() {
                    Some(Value::Object { id, .. }) if id.0 != 0 => cur = id.0,
                    _ => break,
                }
            }
            return Ok(out);
        }
        let table = match self
            .fields_of(id, &["table"])
            .await?
            .first()
            .copied()
            .flatten()
        {
            Some(Value::Object { id, .. }) if id.0 != 0 => id.0,
            _ => return Ok(Vec::new()),
        };
        let mut level: Vec<u64> = self
            .array(table, 0, None)
            .await?
            .into_iter()
            .filter_map(|v| match v {
                Val::Object { id, .. } if id != 0 => Some(id),
                _ => None,
            })
            .collect();
        let mut out = Vec::new();
        while !level.is_empty() && out.len() < MAX_ELEMENTS {
            let reads = join_all(level.iter().map(|&node| async move {
                let (_, ty) = self.type_of(node).await?;
                if ty.ends_with("$TreeBin") {
                    // A ConcurrentHashMap bin turned into a tree keeps its
                    // nodes linked from `first`.
                    let f = self.fields_of(node, &["first"]).await?;
                    return Ok::<_, JdwpError>((None, f.first().copied().flatten()));
                }
                if ty.ends_with("$ForwardingNode") {
                    self.note(EvalNote::MapResizing);
                    return Ok((None, None));
                }
                let f = self.fields_of(node, &["key", value_field, "next"]).await?;
                let get = |i: usize| {
                    f.get(i)
                        .copied()
                        .flatten()
                        .map(|v| to_val(&v))
                        .unwrap_or(Val::Null)
                };
                Ok((Some((get(0), get(1))), f.get(2).copied().flatten()))
            }))
            .await;
            let mut next = Vec::new();
            for r in reads {
                let (entry, following) = r?;
                if let Some(e) = entry {
                    out.push(e);
                }
                if let Some(Value::Object { id, .. }) = following
                    && id.0 != 0
                {
                    next.push(id.0);
                }
            }
            level = next;
        }
        Ok(out)
    }

    /// Key equality for structural lookups: content for strings and boxed
    /// primitives, identity otherwise.
    pub(super) async fn key_matches(&self, key: &Val, candidate: &Val) -> Result<bool, JdwpError> {
        match (key, candidate) {
            (Val::Null, Val::Null) => Ok(true),
            (_, Val::Null) | (Val::Null, _) => Ok(false),
            (Val::Object { id: a, .. }, Val::Object { id: b, .. }) if a == b => Ok(true),
            (
                Val::Text(_)
                | Val::Object {
                    tag: Tag::String, ..
                },
                Val::Object {
                    tag: Tag::String, ..
                },
            ) => {
                let a = match key {
                    Val::Text(s) => s.clone(),
                    Val::Object { id, .. } => {
                        self.classes
                            .connection()
                            .send(&StringValue {
                                string_object: ObjectId(*id),
                            })
                            .await?
                    }
                    _ => return Ok(false),
                };
                let b = match candidate {
                    Val::Object { id, .. } => {
                        self.classes
                            .connection()
                            .send(&StringValue {
                                string_object: ObjectId(*id),
                            })
                            .await?
                    }
                    _ => return Ok(false),
                };
                Ok(a == b)
            }
            (k, Val::Object { .. }) if !matches!(k, Val::Object { .. } | Val::Text(_)) => {
                match self.unbox(candidate).await? {
                    Answer::Value(v) => Ok(prim_eq(k, &v)),
                    _ => Ok(false),
                }
            }
            _ => Ok(false),
        }
    }
}
