//! JVM values as text: one line (primitives and strings inline, objects as
//! `Type @0x…` with an optional `toString()`), a field tree, and the values
//! reported beside events. Everything shown here was read and bounded by
//! the actors' value reader; nothing here talks to a JVM.

use crate::model::Prim;
use crate::model::shown::{
    Cut, Detail, Edge, Elements, EvalNote, HitNote, LocalsGap, MessageGap, Scalar, Shown,
    ToStringFailure, Tree, Unmeasured,
};

/// Quotes a string the way Java source would.
pub fn quote(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// A cut string, quoted; a cut one ends in `…(+N chars)` instead of its
/// closing quote.
pub fn quoted(c: &Cut) -> String {
    let q = quote(&c.text);
    if c.omitted == 0 {
        return q;
    }
    format!("{}…(+{} chars)", &q[..q.len() - 1], c.omitted)
}

/// A primitive, null or void as Java source prints it.
pub fn scalar(s: &Scalar) -> String {
    match s {
        Scalar::Prim(p) => prim(*p),
        Scalar::Null => "null".into(),
        Scalar::Void => "void".into(),
    }
}

/// A primitive as Java source prints it.
pub fn prim(p: Prim) -> String {
    match p {
        Prim::Bool(b) => b.to_string(),
        Prim::Byte(x) => x.to_string(),
        Prim::Short(x) => x.to_string(),
        Prim::Int(x) => x.to_string(),
        Prim::Long(x) => format!("{x}L"),
        Prim::Float(x) => format!("{x}f"),
        Prim::Double(x) => x.to_string(),
        Prim::Char(c) => match char::from_u32(u32::from(c)) {
            Some(c) => format!("'{c}'"),
            None => format!("'\\u{c:04x}'"),
        },
    }
}

fn more(shown: usize, total: usize) -> String {
    if total > shown {
        format!(", … {} more", total - shown)
    } else {
        String::new()
    }
}

/// A type's name without its package.
fn simple(type_name: &str) -> &str {
    type_name.rsplit('.').next().unwrap_or(type_name)
}

/// A value as a grouping key: a boxed primitive by its value and an enum
/// constant by its name, whichever object holds them; anything else as
/// its line.
pub fn key(v: &Shown) -> String {
    match v {
        Shown::Boxed { value, .. } => scalar(value),
        Shown::Enum { constant, .. } => constant.clone(),
        other => line(other),
    }
}

/// One value on one line.
pub fn line(v: &Shown) -> String {
    match v {
        Shown::Scalar(s) => scalar(s),
        Shown::Text(c) => quoted(c),
        Shown::Class { name, loader } => match loader {
            Some(l) => format!("class {name} (loader @{l:#x})"),
            None => format!("class {name}"),
        },
        Shown::Boxed {
            value,
            type_name,
            id,
        } => format!("{} ({} @{id:#x})", scalar(value), simple(type_name)),
        Shown::Enum {
            constant,
            type_name,
            id,
        } => format!("{constant} ({} @{id:#x})", simple(type_name)),
        Shown::Object {
            type_name,
            id,
            to_string,
        } => match to_string {
            None => format!("{type_name} @{id:#x}"),
            Some(Ok(s)) => format!("{type_name} @{id:#x} {}", quoted(s)),
            Some(Err(why)) => format!("{type_name} @{id:#x} (toString() {})", failure(why)),
        },
        Shown::Array {
            elem,
            id,
            len,
            elements,
        } => match elements {
            Elements::NotRead => format!("{elem}[{len}] @{id:#x}"),
            Elements::Unreadable(why) => format!("{elem}[{len}] [unreadable: {why}] @{id:#x}"),
            Elements::Read(items) => {
                let shown: Vec<String> = items.iter().map(line).collect();
                let total = usize::try_from(*len).unwrap_or(0);
                format!(
                    "{elem}[{len}] [{}{}] @{id:#x}",
                    shown.join(", "),
                    more(items.len(), total)
                )
            }
        },
        Shown::Decoded {
            elem,
            id,
            len,
            encoding,
            text,
        } => format!("{elem}[{len}] {encoding} {} @{id:#x}", quoted(text)),
        Shown::Many { total, items } => {
            let shown: Vec<String> = items.iter().map(line).collect();
            format!(
                "[{total} element{}] [{}{}]",
                if *total == 1 { "" } else { "s" },
                shown.join(", "),
                more(items.len(), *total)
            )
        }
        Shown::Entries { total, entries } => {
            let shown: Vec<String> = entries
                .iter()
                .map(|(k, v)| format!("{} → {}", line(k), line(v)))
                .collect();
            format!(
                "{{{total} entr{}}} {{{}{}}}",
                if *total == 1 { "y" } else { "ies" },
                shown.join(", "),
                more(entries.len(), *total)
            )
        }
        Shown::Vanished { id } => {
            format!("Vanished @{id:#x} (collected by the JVM; handles are weak references)")
        }
        Shown::Unreadable {
            id,
            type_name: Some(t),
            why,
        } => format!("{t} @{id:#x} (unreadable: {why})"),
        Shown::Unreadable {
            id,
            type_name: None,
            why,
        } => format!("@{id:#x} (unreadable: {why})"),
        Shown::Unknown => "?".into(),
    }
}

fn failure(f: &ToStringFailure) -> String {
    match f {
        ToStringFailure::Threw => "threw".into(),
        ToStringFailure::Late {
            ms,
            cancelled: true,
        } => format!("did not return within {ms} ms (cancelled)"),
        ToStringFailure::Late {
            ms,
            cancelled: false,
        } => format!("did not return within {ms} ms (could not be cancelled: [INVOKING])"),
        ToStringFailure::Failed(why) => why.clone(),
    }
}

/// How an evaluation read what it read.
pub fn eval_note(n: &EvalNote) -> String {
    match n {
        EvalNote::SeveralLoaders {
            class,
            copies,
            loader,
        } => format!(
            "{class} is loaded by {copies} class loaders; answered from the copy of loader \
             @{loader:#x} (pin another with {class}@0x<loader>)"
        ),
        EvalNote::FromOtherCopy {
            class,
            member,
            copy,
            copies,
            loader,
        } => format!(
            "{class}.{member} is missing from the first copy; answered from copy {copy} of \
             {copies} (loader @{loader:#x})"
        ),
        EvalNote::WalkedList { class } => {
            format!("{class} read by walking its fields (no invoke)")
        }
        EvalNote::WalkedMap { class } => format!(
            "{class} read by walking its fields (no invoke, no lock taken: a sample, not a \
             transaction)"
        ),
        EvalNote::CalledGet { class } => {
            format!("{class} is not read structurally; called get()")
        }
        EvalNote::CalledToArray { class } => {
            format!("{class} is not read structurally; called toArray()")
        }
        EvalNote::MapResizing => {
            "the map was being resized; entries moved to the new table were not read".into()
        }
    }
}

/// What a reported hit held, when it differs from what was asked.
pub fn hit_note(n: &HitNote) -> String {
    match n {
        HitNote::EscalationFailed(e) => format!(
            "the stop point matched, but suspending the VM failed ({e}); the application may \
             still be running"
        ),
        HitNote::Escalated => "matched on the hit thread, then the VM was suspended: other \
             threads ran for one round trip"
            .into(),
        HitNote::EscalatedFromProbe => "matched in the JVM by the probe; the hit thread stepped \
             back into this method, then the VM was suspended: other threads ran for a few round \
             trips"
            .into(),
        HitNote::Stacked => "the VM was already held for another hit, so this hit's own \
             suspension was undone: its thread waits here, and one debug_continue releases both"
            .into(),
        HitNote::ReleasedUnread => "released by a resume before this event was read: its \
             thread has run on"
            .into(),
        HitNote::Undecided => {
            "the hit was not treated as true or false: nothing was suspended".into()
        }
    }
}

/// Why a snapshot has no locals.
pub fn locals_gap(g: &LocalsGap) -> String {
    match g {
        LocalsGap::NoVariableTable => "no local variable table (compiled without -g?)".into(),
        LocalsGap::Unreadable(e) => format!("locals unreadable: {e}"),
    }
}

/// A field tree, one node per line, indented by depth.
pub fn tree(t: &Tree) -> String {
    let mut out = line(&t.head);
    below(t, 1, &mut out);
    out
}

fn below(t: &Tree, depth: usize, out: &mut String) {
    if t.cycle {
        out.push_str(" (cycle: shown above)");
    }
    let indent = "  ".repeat(depth);
    for (edge, child) in &t.children {
        out.push('\n');
        out.push_str(&indent);
        match edge {
            Edge::Field(name) => out.push_str(&format!("{name} = ")),
            Edge::Index(i) => out.push_str(&format!("[{i}] ")),
            Edge::Key(k) => out.push_str(&format!("{} → ", line(k))),
            Edge::Held => out.push_str("value: "),
        }
        out.push_str(&line(&child.head));
        below(child, depth + 1, out);
    }
    if t.more_fields > 0 {
        out.push_str(&format!(
            "\n{indent}… {} more fields (raise max_children)",
            t.more_fields
        ));
    }
}

/// A value reported beside an event or a snapshot.
pub fn detail(d: &Detail) -> String {
    match d {
        Detail::Value(v) => line(v),
        Detail::Change { old, new } => format!(
            "{} → {}",
            old.as_ref().map(line).unwrap_or_else(|| "?".into()),
            line(new)
        ),
        Detail::Exception { type_name, id } => format!("{type_name} @{id:#x}"),
        Detail::HelpfulMessage(v) => {
            format!("{} (helpful NPE text, from getMessage())", line(v))
        }
        Detail::NoMessage(gap) => match gap {
            MessageGap::ReadOnly => "not stored; HotSpot's helpful NPE text needs an invocation \
                 of getMessage(), which read-only mode refuses"
                .into(),
            MessageGap::NoHeldThread => "not stored; HotSpot's helpful NPE text needs \
                 getMessage() on a held thread, and this trace holds none (give it trace_frames \
                 or trace_locals)"
                .into(),
            MessageGap::Failed(e) => format!("not stored; getMessage() failed: {e}"),
        },
        Detail::Text(t) => t.clone(),
        Detail::Flag(b) => b.to_string(),
        Detail::Duration(Ok(ms)) => format!("{ms} ms (measured here, between the two events)"),
        Detail::Duration(Err(Unmeasured::OpeningNotSeen)) => {
            "not measurable (the opening event was not seen)".into()
        }
        Detail::Duration(Err(Unmeasured::HalfArmed)) => {
            "not measurable (only this half of the pair is armed)".into()
        }
        Detail::CallTime(ns) => format!("{} (timed in the JVM)", nanos(*ns)),
        Detail::Callees(c) => super::callees::line(c),
        Detail::WaitTimeout(ms) => format!("{ms} ms (as passed to wait)"),
        Detail::Rethrown { count, sites } => {
            let mut t = format!("{count}×: {}", sites.join("; "));
            let more = count.saturating_sub(sites.len() as u64);
            if more > 0 {
                t.push_str(&format!("; and {more} more"));
            }
            t
        }
        Detail::Failed(why) => format!("error: {why}"),
    }
}

/// A span of nanoseconds in the unit that reads best: 840 ns, 12.5 µs,
/// 3.204 ms, 1.250 s.
pub fn nanos(ns: u64) -> String {
    match ns {
        0..1_000 => format!("{ns} ns"),
        1_000..1_000_000 => format!("{:.1} µs", ns as f64 / 1e3),
        1_000_000..1_000_000_000 => format!("{:.3} ms", ns as f64 / 1e6),
        _ => format!("{:.3} s", ns as f64 / 1e9),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(s: &str, max: usize) -> Shown {
        Shown::Text(Cut::new(s, max))
    }

    #[test]
    fn a_cut_string_shows_what_was_left_out() {
        assert_eq!(line(&text("order-17", 3)), "\"ord…(+5 chars)");
        assert_eq!(line(&text("a\"b", 10)), "\"a\\\"b\"");
    }

    #[test]
    fn a_tree_indents_by_depth_and_marks_cycles() {
        let inner = Tree {
            head: Shown::Object {
                type_name: "Node".into(),
                id: 1,
                to_string: None,
            },
            cycle: true,
            children: vec![],
            more_fields: 0,
        };
        let root = Tree {
            head: Shown::Object {
                type_name: "Node".into(),
                id: 1,
                to_string: None,
            },
            cycle: false,
            children: vec![
                (Edge::Field("next".into()), inner),
                (
                    Edge::Field("n".into()),
                    Tree::leaf(Shown::Scalar(Scalar::Prim(Prim::Int(3)))),
                ),
            ],
            more_fields: 2,
        };
        assert_eq!(
            tree(&root),
            "Node @0x1\n  next = Node @0x1 (cycle: shown above)\n  n = 3\n  … 2 more fields (raise max_children)"
        );
    }

    #[test]
    fn collections_say_how_many_were_left_out() {
        let many = Shown::Many {
            total: 3,
            items: vec![Shown::Scalar(Scalar::Prim(Prim::Int(1)))],
        };
        assert_eq!(line(&many), "[3 elements] [1, … 2 more]");
        let one = Shown::Entries {
            total: 1,
            entries: vec![(text("k", 9), Shown::Scalar(Scalar::Null))],
        };
        assert_eq!(line(&one), "{1 entry} {\"k\" → null}");
    }

    #[test]
    fn details_read_as_before() {
        let fold = Detail::Rethrown {
            count: 6,
            sites: (0..4).map(|i| format!("at A.m:{i} (uncaught)")).collect(),
        };
        assert_eq!(
            detail(&fold),
            "6×: at A.m:0 (uncaught); at A.m:1 (uncaught); at A.m:2 (uncaught); at A.m:3 (uncaught); and 2 more"
        );
        assert_eq!(
            detail(&Detail::Duration(Ok(42))),
            "42 ms (measured here, between the two events)"
        );
        assert!(detail(&Detail::Duration(Err(Unmeasured::HalfArmed))).contains("only this half"));
        let change = Detail::Change {
            old: None,
            new: Shown::Scalar(Scalar::Prim(Prim::Long(3))),
        };
        assert_eq!(detail(&change), "? → 3L");
        assert_eq!(scalar(&Scalar::Prim(Prim::Char(65))), "'A'");
    }
}
