//! The probe bench's value check: each value a traced exit returned or a
//! traced write wrote, `(id << 48) | n`, must name a call of the thread
//! that recorded it, in the order the thread made them.

use anyhow::{Result, anyhow};

use jvmscope::actors::SessionHandle;

/// What the value check of a traced exit or write found.
#[derive(Clone, Copy, Default)]
pub struct Checked {
    pub read: usize,
    pub right: usize,
    pub wrong: usize,
}

/// Reads the newest snapshots of `id` and checks each recorded value, the
/// returned or written `(id << 48) | n`: its `id` is the worker's whose
/// thread recorded it, and each worker's `n` goes up from one of its
/// snapshots to the next.
pub async fn check_values(h: &SessionHandle, id: &str) -> Result<Checked> {
    use jvmscope::model::Prim;
    use jvmscope::model::shown::{Detail, Scalar, Shown};
    let view = h
        .traces(&jvmscope::actors::TraceQuery {
            stop: Some(id.to_string()),
            limit: 20_000,
            ..Default::default()
        })
        .await
        .map_err(|e| anyhow!("reading the snapshots: {e}"))?;
    let mut last: std::collections::HashMap<i64, i64> = Default::default();
    let mut c = Checked::default();
    for t in &view.shown {
        // An exit's returned value is its `returnValue`, a write's the
        // change's new value.
        let returned = t
            .locals
            .iter()
            .find(|(n, _)| &**n == "returnValue")
            .and_then(|(_, v)| match v {
                Shown::Scalar(Scalar::Prim(Prim::Long(v))) => Some(*v),
                _ => None,
            });
        let value = returned.or_else(|| {
            t.details.iter().find_map(|(_, d)| match d {
                Detail::Change {
                    new: Shown::Scalar(Scalar::Prim(Prim::Long(v))),
                    ..
                } => Some(*v),
                _ => None,
            })
        });
        let worker = t
            .thread_name
            .strip_prefix("worker-")
            .and_then(|w| w.parse::<i64>().ok());
        c.read += 1;
        let ok = match (value, worker) {
            (Some(v), Some(w)) if v >> 48 == w => {
                let n = v & ((1 << 48) - 1);
                let before = last.insert(w, n);
                before.is_none_or(|b| n > b)
            }
            _ => false,
        };
        if ok {
            c.right += 1;
        } else {
            c.wrong += 1;
        }
    }
    Ok(c)
}
