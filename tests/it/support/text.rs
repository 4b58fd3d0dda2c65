//! Readers of the reply text of the tools that reply text only (ADR 0012):
//! the facts a test asserts on, read from the lines an agent reads.

/// The number right after the first `prefix` in `text`.
pub fn number_after(text: &str, prefix: &str) -> Option<u64> {
    let at = text.find(prefix)? + prefix.len();
    let digits: String = text[at..]
        .chars()
        .take_while(char::is_ascii_digit)
        .collect();
    digits.parse().ok()
}

/// The `@0x…` handle right after the first `prefix` in `text`.
pub fn handle_after(text: &str, prefix: &str) -> Option<String> {
    let at = text.find(prefix)? + prefix.len();
    let rest = &text[at..];
    let rest = rest.strip_prefix('@').unwrap_or(rest);
    let hex: String = rest
        .strip_prefix("0x")?
        .chars()
        .take_while(char::is_ascii_hexdigit)
        .collect();
    (!hex.is_empty()).then(|| format!("@0x{hex}"))
}

/// The session id an attach or launch reply names
/// (`Attached session s1 to …`).
pub fn session_id(text: &str) -> String {
    text.split_once(" session ")
        .and_then(|(_, rest)| rest.split_whitespace().next())
        .map(String::from)
        .unwrap_or_else(|| panic!("no session id: {text}"))
}

/// A field of the `[event] seq=… stop=… kind=… thread=@0x… "name" at=…
/// suspended=…` line of an event reply (`thread_name` for the quoted name).
pub fn event_field(text: &str, key: &str) -> Option<String> {
    let line = text.lines().find(|l| l.starts_with("[event] "))?;
    if key == "thread_name" {
        let rest = line.split_once(" thread=@")?.1;
        return quoted(rest.split_once(" \"")?.1).map(|(n, _)| n);
    }
    line.split_whitespace()
        .find_map(|w| w.strip_prefix(&format!("{key}=")))
        .map(String::from)
}

/// A quoted name as Rust's `{:?}` writes it, from just after its opening quote.
fn quoted(rest: &str) -> Option<(String, &str)> {
    let mut end = None;
    let mut escaped = false;
    for (i, c) in rest.char_indices() {
        match c {
            '\\' if !escaped => escaped = true,
            '"' if !escaped => {
                end = Some(i);
                break;
            }
            _ => escaped = false,
        }
    }
    let end = end?;
    let name = serde_json::from_str(&format!("\"{}\"", &rest[..end])).ok()?;
    Some((name, &rest[end + 1..]))
}

/// One line of `debug_list_threads`: `@0x1 "name" (virtual) STATUS suspended xN …`.
#[derive(Debug, Clone, PartialEq)]
pub struct ThreadRow {
    pub id: String,
    pub name: String,
    pub is_virtual: bool,
    pub status: String,
    pub suspend_count: u64,
}

/// Every thread line of a `debug_list_threads` reply.
pub fn threads(text: &str) -> Vec<ThreadRow> {
    text.lines()
        .filter_map(|line| {
            let (id, rest) = line.split_once(' ')?;
            if !id.starts_with("@0x") {
                return None;
            }
            let (name, rest) = quoted(rest.strip_prefix('"')?)?;
            let is_virtual = rest.starts_with(" (virtual)");
            let rest = rest.trim_start_matches(" (virtual)").trim_start();
            let status = rest.split_whitespace().next().unwrap_or("").to_string();
            let suspend_count = number_after(rest, " suspended x").unwrap_or(0);
            Some(ThreadRow {
                id: id.to_string(),
                name,
                is_virtual,
                status,
                suspend_count,
            })
        })
        .collect()
}

/// One entry of a `debug_thread_dump`: a thread, or threads with one stack.
#[derive(Debug, Clone)]
pub struct DumpEntry {
    /// The entry's first line.
    pub header: String,
    /// How many threads it stands for.
    pub count: u64,
    /// Its whole text.
    pub block: String,
}

impl DumpEntry {
    /// The thread's id (a single thread), or the first id of the group.
    pub fn first_id(&self) -> Option<String> {
        handle_after(&self.header, " @").or_else(|| handle_after(&self.header, ": "))
    }

    /// The stack was read: its `at` lines.
    pub fn frames(&self) -> usize {
        self.block
            .lines()
            .filter(|l| l.starts_with("  at "))
            .count()
    }

    pub fn is_virtual(&self) -> bool {
        self.header.contains(" (virtual)")
    }
}

/// The entries of a `debug_thread_dump` reply, in order.
pub fn dump_entries(text: &str) -> Vec<DumpEntry> {
    text.split("\n\n")
        .skip(1)
        .filter(|b| !b.starts_with("Cost: "))
        .map(|block| {
            let header = block.lines().next().unwrap_or("").to_string();
            let count = header
                .strip_prefix('×')
                .and_then(|r| number_after(r, ""))
                .unwrap_or(1);
            DumpEntry {
                header,
                count,
                block: block.to_string(),
            }
        })
        .collect()
}

/// The entry of the thread called `name` (a single-thread entry).
pub fn dump_entry<'a>(entries: &'a [DumpEntry], name: &str) -> &'a DumpEntry {
    let quoted = format!("{name:?} @");
    entries
        .iter()
        .find(|e| e.header.starts_with(&quoted))
        .unwrap_or_else(|| panic!("no entry for {name}: {entries:#?}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thread_lines_and_dump_entries_are_read() {
        let t = threads(
            "2 threads\n@0x1 \"main\" RUNNING\n@0x2f \"a \\\"b\\\"\" (virtual) WAIT suspended x2 (held by you x1 for 3 s)",
        );
        assert_eq!(t.len(), 2);
        assert_eq!(t[1].name, "a \"b\"");
        assert!(t[1].is_virtual);
        assert_eq!(t[1].status, "WAIT");
        assert_eq!(t[1].suspend_count, 2);
        assert_eq!(t[0].suspend_count, 0);
        let d = dump_entries(
            "Thread dump: 3 threads shown of 3 live.\n\n\"x\" @0x5 WAIT\n  at A.b:1\n\n×2 \"p-#\" WAIT — 2 threads with an identical stack: @0x7 @0x8\n  at C.d:2\n\nCost: 4 JDWP packets, 1 ms",
        );
        assert_eq!(d.len(), 2);
        assert_eq!(d[0].first_id().as_deref(), Some("@0x5"));
        assert_eq!(d[1].count, 2);
        assert_eq!(d[1].first_id().as_deref(), Some("@0x7"));
        assert_eq!(d[1].frames(), 1);
        assert_eq!(number_after("Cost: 42 JDWP", "Cost: "), Some(42));
        let e = "[event] seq=3 stop=bp_1 kind=breakpoint thread=@0x1 \"main\" at=A.b:4 suspended=all (0.1s ago)";
        assert_eq!(event_field(e, "stop").as_deref(), Some("bp_1"));
        assert_eq!(event_field(e, "thread").as_deref(), Some("@0x1"));
        assert_eq!(event_field(e, "thread_name").as_deref(), Some("main"));
        assert_eq!(event_field(e, "at").as_deref(), Some("A.b:4"));
        assert_eq!(event_field(e, "suspended").as_deref(), Some("all"));
    }
}
