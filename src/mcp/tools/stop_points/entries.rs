//! Arming one definition, or every entry of a class list, and replying:
//! a single entry answers as itself (its failure is a tool error); a list
//! arms each entry on its own and leads with "N armed, N deferred, N
//! refused", then every entry's outcome.

use serde_json::json;

use super::render;
use super::{describe_point, point_json};
use crate::actors::ArmReport;
use crate::actors::SessionHandle;
use crate::mcp::error::ToolError;
use crate::mcp::tools::{Reply, text_and_data};
use crate::model::stop_point::StopPointSpec;

/// One entry's outcome, as text and data.
pub(super) fn outcome(
    entry: &str,
    r: &Result<ArmReport, ToolError>,
    extra: &[String],
) -> (String, serde_json::Value, bool) {
    match r {
        Ok(report) => {
            let mut text = String::new();
            let mut data = json!({"entry": entry});
            if let Some(p) = &report.point {
                text.push_str(&describe_point(p, false));
                data = point_json(p);
                data["entry"] = json!(entry);
            }
            if let Some(f) = &report.family {
                text.push_str(&render::describe_family(f));
                data = render::family_json(f);
                data["entry"] = json!(entry);
            }
            let mut notes = render::arm_notes(&report.notes);
            notes.extend(extra.iter().cloned());
            for n in &notes {
                text.push_str(&format!("\n  {n}"));
            }
            data["notes"] = json!(notes);
            (text, data, true)
        }
        Err(t) => (
            format!("{entry}: REFUSED {}", t.text().replace('\n', "\n  ")),
            json!({"entry": entry, "state": "refused", "label": t.label, "error": t.message}),
            false,
        ),
    }
}

/// Arms one definition and replies (a single entry's failure is a tool
/// error).
pub(super) async fn arm_one(
    handle: &SessionHandle,
    spec: StopPointSpec,
    max_classes: usize,
    notes: Vec<String>,
) -> Reply {
    let label = spec.target.describe();
    let r = handle.stop_points().arm(spec, max_classes).await;
    let r = r.map_err(ToolError::from);
    match &r {
        Err(e) => Err(e.clone()),
        Ok(_) => {
            let (text, data, _) = outcome(&label, &r, &notes);
            Ok(text_and_data(text, json!({"outcomes": [data]})))
        }
    }
}

/// Arms one definition per entry of a class_pattern: a single entry replies
/// as itself (its failure is a tool error); a list arms every entry on its
/// own and reports each outcome.
pub(super) async fn arm_entries(
    handle: &SessionHandle,
    mut specs: Vec<(String, Result<StopPointSpec, ToolError>)>,
    max_classes: usize,
    notes: Vec<String>,
) -> Reply {
    if specs.len() == 1 {
        let (_, spec) = specs.remove(0);
        return arm_one(handle, spec?, max_classes, notes).await;
    }
    let mut lines = Vec::new();
    let mut data = Vec::new();
    let (mut armed, mut deferred, mut refused) = (0, 0, 0);
    for (entry, spec) in specs {
        let r = match spec {
            Ok(spec) => handle
                .stop_points()
                .arm(spec, max_classes)
                .await
                .map_err(ToolError::from),
            Err(t) => Err(t),
        };
        match &r {
            Ok(rep)
                if rep
                    .point
                    .as_ref()
                    .is_some_and(|p| p.state.label() == "deferred") =>
            {
                deferred += 1
            }
            Ok(_) => armed += 1,
            Err(_) => refused += 1,
        }
        let (text, d, _) = outcome(&entry, &r, &[]);
        lines.push(text);
        data.push(d);
    }
    let mut text = format!("{armed} armed, {deferred} deferred, {refused} refused");
    for n in &notes {
        text.push_str(&format!("\n{n}"));
    }
    for l in lines {
        text.push_str(&format!("\n{l}"));
    }
    let mut r = text_and_data(text, json!({"outcomes": data}));
    if armed + deferred == 0 {
        r.is_error = Some(true);
    }
    Ok(r)
}
