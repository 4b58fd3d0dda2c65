//! What an earlier jvmscope left behind: helper classes (named with
//! [`HELPER_MARK`]) whose target was never given its bytes back, because
//! that jvmscope died. Each helper holds the original bytes and its
//! target's name; the target is found in the helper's own loader, given
//! them back, and the helper is marked restored and switched off. A
//! class whose code no longer calls the helper changed since the probe
//! went in (a reload, another tool): it keeps what it runs now.

use super::HELPER_MARK;
use super::restore::{redefine, still_probed};
use crate::classfile::probe::field;
use crate::connection::ConnectionHandle;
use crate::jdwp::FieldValue;
use crate::jdwp::class_type::SetValues as SetStatics;
use crate::jdwp::reference_type::GetValues;
use crate::jdwp::virtual_machine::AllClasses;
use crate::jdwp::{ReferenceTypeId, Value};
use crate::jvm::classes::ClassCache;

/// One class an earlier jvmscope had instrumented.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Leftover {
    pub class: String,
    pub outcome: LeftoverOutcome,
}

/// What became of a class an earlier jvmscope left instrumented.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LeftoverOutcome {
    /// Its original bytes are back.
    Restored,
    /// Its code no longer calls the probe's helper: it changed since the
    /// probe went in, and keeps what it runs now.
    ChangedSince,
    /// It could not be restored (why).
    Failed(String),
}

/// Finds and restores what earlier sessions left instrumented.
/// Read-only, it only finds them: a redefinition is a mutation, and the
/// helper's lease has switched each probe off already.
pub async fn restore_leftovers(
    conn: &ConnectionHandle,
    classes: &ClassCache,
    read_only: bool,
) -> Vec<Leftover> {
    let Ok(all) = conn.send(&AllClasses).await else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for helper in all.iter().filter(|c| c.signature.contains(HELPER_MARK)) {
        let id = helper.ref_type.id;
        // Its internal name, as the code that calls it names it.
        let name = crate::model::signature::java_name(&helper.signature).replace('.', "/");
        out.extend(restore_one(conn, classes, (id, &name), read_only).await);
    }
    // Several probes on one class each hold its bytes: report it once,
    // restored if one of them restored it.
    out.sort_by_key(|l| (l.class.clone(), l.outcome != LeftoverOutcome::Restored));
    out.dedup_by(|a, b| a.class == b.class);
    out
}

async fn restore_one(
    conn: &ConnectionHandle,
    classes: &ClassCache,
    (helper, helper_name): (ReferenceTypeId, &str),
    read_only: bool,
) -> Vec<Leftover> {
    let Ok(fields) = classes.fields(helper).await else {
        return Vec::new();
    };
    let id = |name: &str| fields.iter().find(|f| f.name == name).map(|f| f.id);
    let (Some(restored), Some(original), Some(target), Some(live)) = (
        id(field::RESTORED),
        id(field::ORIGINAL),
        id(field::TARGET),
        id(field::LIVE),
    ) else {
        return Vec::new();
    };
    // A helper from before write probes spanned classes has no `others`.
    let others = id(field::OTHERS);
    let mut asked = vec![restored, original, target];
    asked.extend(others);
    let Ok(values) = conn
        .send(&GetValues {
            ref_type: helper,
            fields: asked,
        })
        .await
    else {
        return Vec::new();
    };
    if matches!(values.first(), Some(Value::Boolean(true))) {
        return Vec::new();
    }
    let (Some(Value::Object { id: bytes, .. }), Some(Value::Object { id: name, .. })) =
        (values.get(1), values.get(2))
    else {
        return Vec::new();
    };
    let Ok(class) = conn
        .send(&crate::jdwp::string_reference::Value {
            string_object: *name,
        })
        .await
    else {
        return Vec::new();
    };
    let class = class.replace('/', ".");
    let switch_off = || async {
        let _ = conn
            .send(&SetStatics {
                class: helper,
                values: vec![
                    FieldValue {
                        field: live,
                        value: Value::Boolean(false),
                    },
                    FieldValue {
                        field: restored,
                        value: Value::Boolean(true),
                    },
                ],
            })
            .await;
    };
    if bytes.0 == 0 {
        // Defined, but its target was never changed.
        if !read_only {
            switch_off().await;
        }
        return Vec::new();
    }
    let mut originals = vec![(Some(class), *bytes)];
    if let Some(Value::Object { id: array, .. }) = values.get(3)
        && array.0 != 0
    {
        for item in elements(conn, *array).await {
            if let Value::Object { id, .. } = item {
                originals.push((None, id));
            }
        }
    }
    let mut out = Vec::new();
    for (name, bytes) in originals {
        let helper = (helper, helper_name);
        out.push(restore_class(conn, classes, helper, name, bytes, read_only).await);
    }
    if !read_only {
        switch_off().await;
    }
    out.into_iter().flatten().collect()
}

/// Gives one class a helper names its original bytes back (its name read
/// from the bytes themselves when the helper holds no name for it).
async fn restore_class(
    conn: &ConnectionHandle,
    classes: &ClassCache,
    (helper, helper_name): (ReferenceTypeId, &str),
    name: Option<String>,
    bytes: crate::jdwp::ObjectId,
    read_only: bool,
) -> Option<Leftover> {
    let original: Vec<u8> = elements(conn, bytes)
        .await
        .iter()
        .map(|v| match v {
            Value::Byte(b) => *b as u8,
            _ => 0,
        })
        .collect();
    let class = match name {
        Some(n) => n,
        None => crate::model::classfile::parse(&original).ok()?.name,
    };
    let failed = |why: String| {
        Some(Leftover {
            class: class.clone(),
            outcome: LeftoverOutcome::Failed(why),
        })
    };
    if read_only {
        return failed("this session is read-only, which refuses a redefinition".into());
    }
    let loader = classes.loader(helper).await.ok()?;
    let mut target_id = None;
    for copy in classes.by_name(&class).await.ok()? {
        if classes.loader(copy.id).await.ok() == Some(loader) {
            target_id = Some(copy.id);
        }
    }
    let Some(target_id) = target_id else {
        return failed("its class is no longer loaded".into());
    };
    if still_probed(conn, classes, target_id, &[helper_name.to_string()]).await == Some(false) {
        return Some(Leftover {
            class,
            outcome: LeftoverOutcome::ChangedSince,
        });
    }
    let result = redefine(conn, target_id, original).await;
    classes.invalidate(target_id);
    match result {
        Ok(()) => Some(Leftover {
            class,
            outcome: LeftoverOutcome::Restored,
        }),
        Err(e) => failed(e.to_string()),
    }
}

/// Every element of an array in the JVM (none when it cannot be read).
async fn elements(conn: &ConnectionHandle, array: crate::jdwp::ObjectId) -> Vec<Value> {
    let Ok(length) = conn
        .send(&crate::jdwp::array_reference::Length { array })
        .await
    else {
        return Vec::new();
    };
    conn.send(&crate::jdwp::array_reference::GetValues {
        array,
        first_index: 0,
        length,
    })
    .await
    .map(|r| r.values)
    .unwrap_or_default()
}
