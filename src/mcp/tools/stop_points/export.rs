//! `debug_list_stop_points {export:true}`: the stop-point set as the
//! `debug_set_stop` calls that would arm it again, in this JVM after a
//! disconnect or in a redeployed one. Classes, lines and field names are
//! carried as given (re-resolved when replayed); thread and instance
//! filters are dropped and named, because their ids mean nothing in another
//! JVM; a trace budget is what remains of it.

use serde_json::{Map, Value, json};

use crate::actors::{FamilyView, Listing, PointView};
use crate::mcp::tools::data::ExportCall;
use crate::model::stop_point::{LocalsChoice, Mode, StopPointSpec, Target};

/// The tool every exported call is to.
const SET: &str = "debug_set_stop";

/// One exported call, and what could not be carried.
struct Entry {
    from: String,
    tool: &'static str,
    args: Map<String, Value>,
    state: &'static str,
    dropped: Vec<&'static str>,
}

/// The set as text (a JSON block to keep) and as data.
pub(super) fn export(listing: &Listing) -> (String, Vec<ExportCall>) {
    let mut entries: Vec<Entry> = Vec::new();
    for f in &listing.families {
        let first = listing
            .points
            .iter()
            .find(|p| p.family.as_deref() == Some(f.id.as_str()));
        entries.push(family_entry(f, first));
    }
    for p in listing.points.iter().filter(|p| p.family.is_none()) {
        entries.push(point_entry(p));
    }
    let calls: Vec<ExportCall> = entries
        .iter()
        .map(|e| ExportCall {
            tool: e.tool.into(),
            args: e.args.clone(),
            from: e.from.clone(),
            // Deferred is this JVM's state, not the definition's: such an
            // entry is replayed like an armed one.
            state: (e.state != "armed" && e.state != "deferred").then(|| e.state.into()),
        })
        .collect();
    let block = serde_json::to_string_pretty(&calls).unwrap_or_else(|_| "[]".into());
    let mut text = format!(
        "Stop-point set: {} call{} that arm it again (call each tool with its args; nothing is written to a file).\n```json\n{block}\n```",
        calls.len(),
        if calls.len() == 1 { "" } else { "s" }
    );
    for e in &entries {
        if !e.dropped.is_empty() {
            text.push_str(&format!(
                "\n{}: dropped {} (an id of this JVM only): the exported entry is BROADER than the original",
                e.from,
                e.dropped.join(" and ")
            ));
        }
        if e.state != "armed" && e.state != "deferred" {
            text.push_str(&format!(
                "\n{}: {}; arm it only if you want it back",
                e.from, e.state
            ));
        }
    }
    text.push_str(
        "\nLines are as armed here: against another build, check they still mean the same code.",
    );
    (text, calls)
}

fn family_entry(f: &FamilyView, first: Option<&PointView>) -> Entry {
    let mut args = Map::new();
    args.insert("kind".into(), json!("line"));
    args.insert("class_pattern".into(), json!(f.pattern));
    if let Some(m) = &f.method {
        args.insert("method".into(), json!(m));
    }
    args.insert("max_classes".into(), json!(f.max_classes));
    let mut dropped = Vec::new();
    let mut state = "armed";
    if let Some(p) = first {
        common(&p.spec, p, &mut args, &mut dropped);
        state = p.state.label();
    }
    Entry {
        from: f.id.clone(),
        tool: SET,
        args,
        state,
        dropped,
    }
}

fn point_entry(p: &PointView) -> Entry {
    let mut args = Map::new();
    let kind = match &p.spec.target {
        Target::Line(l) => {
            args.insert("class_pattern".into(), json!(l.class));
            if let Some(line) = l.line {
                args.insert("line".into(), json!(line));
            }
            if let Some(m) = &l.method {
                args.insert("method".into(), json!(m));
            }
            "line"
        }
        Target::Exception(e) => {
            if let Some(c) = &e.class {
                args.insert("class_pattern".into(), json!(c));
            }
            if !e.caught {
                args.insert("caught".into(), json!(false));
            }
            if !e.uncaught {
                args.insert("uncaught".into(), json!(false));
            }
            "exception"
        }
        Target::Field(f) => {
            args.insert("class_pattern".into(), json!(f.class));
            args.insert("field_name".into(), json!(f.field));
            if !f.modify {
                args.insert("modify".into(), json!(false));
            }
            if f.access {
                args.insert("access".into(), json!(true));
            }
            if !f.writers.is_empty() {
                args.insert("writers".into(), json!(f.writers));
            }
            "field"
        }
        Target::MethodExit(m) => {
            args.insert("class_pattern".into(), json!(m.class_pattern));
            if let Some(name) = &m.method {
                args.insert("method".into(), json!(name));
            }
            if !m.exclude.is_empty() {
                args.insert("exclude_classes".into(), json!(m.exclude));
            }
            if let Some(d) = m.min_duration_ms {
                args.insert("min_duration_ms".into(), json!(d));
            }
            if m.stats {
                args.insert("stats".into(), json!(true));
            }
            if m.callees {
                args.insert("callees".into(), json!(true));
            }
            "method_exit"
        }
        Target::Monitor(m) => {
            let kinds: Vec<&str> = m.kinds.iter().map(|k| k.label()).collect();
            args.insert("events".into(), json!(kinds));
            if let Some(d) = m.min_duration_ms {
                args.insert("min_duration_ms".into(), json!(d));
            }
            if let Some(c) = &m.monitor_class {
                args.insert("monitor_class".into(), json!(c));
            }
            "monitor"
        }
    };
    args.insert("kind".into(), json!(kind));
    let mut dropped = Vec::new();
    common(&p.spec, p, &mut args, &mut dropped);
    Entry {
        from: p.id.clone(),
        tool: SET,
        args,
        state: p.state.label(),
        dropped,
    }
}

/// The mode and filters every kind shares; a trace budget is what remains.
fn common(
    spec: &StopPointSpec,
    p: &PointView,
    args: &mut Map<String, Value>,
    dropped: &mut Vec<&'static str>,
) {
    let traced_by_default = matches!(spec.target, Target::MethodExit(_) | Target::Monitor(_));
    match &spec.mode {
        Mode::Suspend => {
            if traced_by_default {
                args.insert("trace".into(), json!(false));
            }
        }
        Mode::Trace(t) => {
            args.insert("trace".into(), json!(true));
            args.insert("trace_frames".into(), json!(t.frames));
            let locals = match &t.locals {
                LocalsChoice::All => json!("all"),
                LocalsChoice::None => json!("none"),
                LocalsChoice::Only(names) => json!(names.join(",")),
            };
            args.insert("trace_locals".into(), locals);
            // The budget left; a used-up one keeps its size (0 would mean
            // unbounded) and the entry is marked spent.
            let left = t
                .max_hits
                .saturating_sub(p.budget_used.min(u32::MAX as u64) as u32);
            let budget = if t.max_hits > 0 && left == 0 {
                t.max_hits
            } else {
                left
            };
            args.insert("trace_max_hits".into(), json!(budget));
            args.insert("trace_max_length".into(), json!(t.max_length));
            if !t.exprs.is_empty() {
                args.insert("trace_expr".into(), json!(t.exprs));
            }
        }
    }
    if let Some(c) = &spec.filters.condition {
        args.insert("condition".into(), json!(c));
    }
    if let Some(n) = spec.filters.hit_count {
        args.insert("hit_count".into(), json!(n));
    }
    if spec.filters.calls == crate::model::stop_point::Calls::Allowed {
        args.insert("calls".into(), json!(true));
    }
    if spec.filters.thread.is_some() {
        dropped.push("thread_id");
    }
    if spec.filters.instance.is_some() {
        dropped.push("instance_id");
    }
}
