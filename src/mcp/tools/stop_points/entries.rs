//! Arming one definition, or every entry of a class list, and replying:
//! a single entry answers as itself (its failure is a tool error); a list
//! arms each entry on its own and leads with "N armed, N deferred, N
//! refused" (and "N skipped" when a silent JVM stopped the list), then
//! every entry's outcome.

use super::describe_point;
use super::render;
use crate::actors::ArmReport;
use crate::actors::SessionHandle;
use crate::mcp::error::ToolError;
use crate::mcp::tools::data::{Armed, Outcome};
use crate::mcp::tools::{self, Reply};
use crate::model::stop_point::StopPointSpec;

/// One entry's outcome, as text and data.
pub(super) fn outcome(
    entry: &str,
    r: &Result<ArmReport, ToolError>,
    extra: &[String],
) -> (String, Outcome, bool) {
    match r {
        Ok(report) => {
            let mut text = String::new();
            let mut data = Outcome {
                entry: entry.into(),
                state: "armed".into(),
                ..Outcome::default()
            };
            if let Some(p) = &report.point {
                text.push_str(&describe_point(p, false));
                data.id = Some(p.id.clone());
                data.state = p.state.label().into();
            }
            if let Some(f) = &report.family {
                text.push_str(&render::describe_family(f));
                data.id = Some(f.id.clone());
                data.state = "armed".into();
            }
            let mut notes = render::arm_notes(&report.notes);
            notes.extend(extra.iter().cloned());
            for n in &notes {
                text.push_str(&format!("\n  {n}"));
            }
            data.notes = notes;
            (text, data, true)
        }
        Err(t) => (
            format!("{entry}: REFUSED {}", t.text().replace('\n', "\n  ")),
            Outcome {
                entry: entry.into(),
                state: "refused".into(),
                error: Some(t.text()),
                ..Outcome::default()
            },
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
    let r = handle.arm_stop(spec, max_classes).await;
    let r = r.map_err(ToolError::from);
    match &r {
        Err(e) => Err(e.clone()),
        Ok(_) => {
            let (text, data, _) = outcome(&label, &r, &notes);
            Ok(tools::data(
                text,
                &Armed {
                    outcomes: vec![data],
                },
            ))
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
    // After a silence or a lost session the rest are not tried: each would
    // wait a full timeout for the same answer.
    let mut stopped_by: Option<String> = None;
    for (entry, spec) in specs {
        if let Some(first) = &stopped_by {
            lines.push(format!("{entry}: SKIPPED, not tried after {first} failed"));
            data.push(Outcome {
                entry,
                state: "skipped".into(),
                ..Outcome::default()
            });
            continue;
        }
        let r = match spec {
            Ok(spec) => handle.arm_stop(spec, max_classes).await.map_err(|e| {
                if e.stops_a_list() {
                    stopped_by = Some(entry.clone());
                }
                ToolError::from(e)
            }),
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
    let skipped = data.len() - armed - deferred - refused;
    if skipped > 0 {
        text.push_str(&format!(", {skipped} skipped"));
    }
    for n in &notes {
        text.push_str(&format!("\n{n}"));
    }
    for l in lines {
        text.push_str(&format!("\n{l}"));
    }
    let mut r = tools::data(text, &Armed { outcomes: data });
    if armed + deferred == 0 {
        r.is_error = Some(true);
    }
    Ok(r)
}
