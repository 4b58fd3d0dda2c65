//! Arguments several tool families read the same way: object and thread
//! ids as the agent was shown them, and how deep and wide a value view
//! goes. One reading each, so the families accept the same spellings.

use crate::actors::{Budget, ThreadId};
use crate::mcp::error::ToolError;

/// `@0x1f`, `0x1f` or `31` → 31.
pub fn object_id(s: &str) -> Option<u64> {
    let t = s.trim().trim_start_matches('@');
    match t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
        Some(hex) => u64::from_str_radix(hex, 16).ok(),
        None => t.parse().ok(),
    }
}

/// Parses a thread id as printed (`@0x1f`, `0x1f`) or decimal.
pub fn thread_id(tool: &str, raw: Option<&str>) -> Result<Option<ThreadId>, ToolError> {
    let Some(raw) = raw else { return Ok(None) };
    match object_id(raw) {
        Some(v) => Ok(Some(ThreadId(v))),
        None => Err(ToolError::bad_argument(
            tool,
            format!(
                "thread_id {raw:?} is not a thread id (use the @0x… ids debug_list_threads prints)"
            ),
        )),
    }
}

/// How far a value view reads: `max_depth` levels (default 2) and
/// `max_children` entries per level (default 20).
pub fn view_budget(max_depth: Option<usize>, max_children: Option<usize>) -> Budget {
    Budget {
        max_depth: max_depth.unwrap_or(2),
        max_children: max_children.unwrap_or(20),
        ..Budget::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_parse_in_every_spelling() {
        assert_eq!(object_id("@0x1f"), Some(31));
        assert_eq!(object_id("0x1F"), Some(31));
        assert_eq!(object_id(" 31 "), Some(31));
        assert_eq!(object_id("@zz"), None);
        assert_eq!(thread_id("t", Some("@0x1f")).ok(), Some(Some(ThreadId(31))));
        assert_eq!(thread_id("t", None).ok(), Some(None));
        let e = thread_id("debug_get_stack", Some("main"))
            .err()
            .map(|e| e.text());
        assert!(
            e.is_some_and(|e| e.starts_with("[BAD_ARGUMENT] debug_get_stack: thread_id \"main\""))
        );
    }
}
