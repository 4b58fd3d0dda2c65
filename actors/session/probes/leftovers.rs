//! What an earlier jvmscope left behind: helper classes (named with
//! [`HELPER_MARK`]) whose target was never given its bytes back, because
//! that jvmscope died. Each helper holds the original bytes and its
//! target's name; the target is found in the helper's own loader, given
//! them back, and the helper is marked restored and switched off.

use super::HELPER_MARK;
use super::restore::redefine;
use crate::actors::connection::ConnectionHandle;
use crate::actors::jvm::classes::ClassCache;
use crate::classfile::probe::field;
use crate::jdwp::FieldValue;
use crate::jdwp::class_type::SetValues as SetStatics;
use crate::jdwp::reference_type::GetValues;
use crate::jdwp::virtual_machine::AllClasses;
use crate::jdwp::{ReferenceTypeId, Value};

/// One class an earlier jvmscope had instrumented.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Leftover {
    pub class: String,
    /// `None`: restored; `Some(why)`: it could not be.
    pub failed: Option<String>,
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
        if let Some(l) = restore_one(conn, classes, id, read_only).await {
            out.push(l);
        }
    }
    // Several probes on one class each hold its bytes: report it once.
    out.sort_by(|a, b| a.class.cmp(&b.class));
    out.dedup_by(|a, b| a.class == b.class);
    out
}

async fn restore_one(
    conn: &ConnectionHandle,
    classes: &ClassCache,
    helper: ReferenceTypeId,
    read_only: bool,
) -> Option<Leftover> {
    let fields = classes.fields(helper).await.ok()?;
    let id = |name: &str| fields.iter().find(|f| f.name == name).map(|f| f.id);
    let (restored, original, target, live) = (
        id(field::RESTORED)?,
        id(field::ORIGINAL)?,
        id(field::TARGET)?,
        id(field::LIVE)?,
    );
    let values = conn
        .send(&GetValues {
            ref_type: helper,
            fields: vec![restored, original, target],
        })
        .await
        .ok()?;
    if matches!(values.first(), Some(Value::Boolean(true))) {
        return None;
    }
    let (Some(Value::Object { id: bytes, .. }), Some(Value::Object { id: name, .. })) =
        (values.get(1), values.get(2))
    else {
        return None;
    };
    let class = conn
        .send(&crate::jdwp::string_reference::Value {
            string_object: *name,
        })
        .await
        .ok()?
        .replace('/', ".");
    if read_only {
        return Some(Leftover {
            class,
            failed: Some("this session is read-only, which refuses a redefinition".into()),
        });
    }
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
        switch_off().await;
        return None;
    }
    let failed = |why: String| {
        Some(Leftover {
            class: class.clone(),
            failed: Some(why),
        })
    };
    let loader = classes.loader(helper).await.ok()?;
    let mut target_id = None;
    for copy in classes.by_name(&class).await.ok()? {
        if classes.loader(copy.id).await.ok() == Some(loader) {
            target_id = Some(copy.id);
        }
    }
    let Some(target_id) = target_id else {
        switch_off().await;
        return failed("its class is no longer loaded".into());
    };
    let len = conn
        .send(&crate::jdwp::array_reference::Length { array: *bytes })
        .await
        .ok()?;
    let region = conn
        .send(&crate::jdwp::array_reference::GetValues {
            array: *bytes,
            first_index: 0,
            length: len,
        })
        .await
        .ok()?;
    let original: Vec<u8> = region
        .values
        .iter()
        .map(|v| match v {
            Value::Byte(b) => *b as u8,
            _ => 0,
        })
        .collect();
    let result = redefine(conn, target_id, original).await;
    classes.invalidate(target_id);
    switch_off().await;
    match result {
        Ok(()) => Some(Leftover {
            class,
            failed: None,
        }),
        Err(e) => failed(e.to_string()),
    }
}
