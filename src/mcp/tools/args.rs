//! Arguments several tool families read the same way: object and thread
//! ids as the agent was shown them, how deep and wide a value view goes,
//! and lists of strings (one string is a list of one). One reading each, so
//! the families accept the same spellings.

use crate::actors::{Budget, ThreadId};
use crate::mcp::error::ToolError;

/// Reads an optional list of strings, taking one string as a list of one
/// (`"group_by": "qty"` means `["qty"]`): `#[serde(default,
/// deserialize_with = "strings")]` on an `Option<Vec<String>>`.
pub fn strings<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<Vec<String>>, D::Error> {
    struct Strings;
    impl<'de> serde::de::Visitor<'de> for Strings {
        type Value = Option<Vec<String>>;
        fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
            f.write_str("a string or a list of strings")
        }
        fn visit_unit<E: serde::de::Error>(self) -> Result<Self::Value, E> {
            Ok(None)
        }
        fn visit_none<E: serde::de::Error>(self) -> Result<Self::Value, E> {
            Ok(None)
        }
        fn visit_str<E: serde::de::Error>(self, s: &str) -> Result<Self::Value, E> {
            Ok(Some(vec![s.to_string()]))
        }
        fn visit_seq<A: serde::de::SeqAccess<'de>>(
            self,
            mut seq: A,
        ) -> Result<Self::Value, A::Error> {
            let mut out = Vec::new();
            while let Some(s) = seq.next_element::<String>()? {
                out.push(s);
            }
            Ok(Some(out))
        }
    }
    d.deserialize_any(Strings)
}

/// A required list of strings, taking one string as a list of one:
/// `#[serde(deserialize_with = "string_list")]` on a `Vec<String>`.
pub fn string_list<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Vec<String>, D::Error> {
    strings(d).map(Option::unwrap_or_default)
}

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

    #[derive(serde::Deserialize, Debug)]
    #[serde(deny_unknown_fields)]
    struct P {
        #[serde(default, deserialize_with = "strings")]
        keys: Option<Vec<String>>,
    }

    #[test]
    fn one_string_is_a_list_of_one_and_anything_else_is_refused_by_what_it_takes() {
        let p = |v: serde_json::Value| serde_json::from_value::<P>(v).map(|p| p.keys);
        assert_eq!(
            p(serde_json::json!({"keys": "qty"})).ok(),
            Some(Some(vec!["qty".into()]))
        );
        assert_eq!(
            p(serde_json::json!({"keys": ["a", "b"]})).ok(),
            Some(Some(vec!["a".into(), "b".into()]))
        );
        assert_eq!(p(serde_json::json!({})).ok(), Some(None));
        assert_eq!(p(serde_json::json!({"keys": null})).ok(), Some(None));
        let e = p(serde_json::json!({"keys": 3})).expect_err("a number is refused");
        assert!(
            e.to_string().contains("a string or a list of strings"),
            "{e}"
        );
        let e = p(serde_json::json!({"keys": [1]})).expect_err("a list of numbers is refused");
        assert!(e.to_string().contains("string"), "{e}");
    }

    #[derive(serde::Deserialize, Debug)]
    struct Required {
        #[serde(deserialize_with = "string_list")]
        names: Vec<String>,
    }

    #[test]
    fn a_required_list_takes_one_string_too() {
        let r = |v: serde_json::Value| serde_json::from_value::<Required>(v).map(|r| r.names);
        assert_eq!(
            r(serde_json::json!({"names": "Leak$Key"})).ok(),
            Some(vec!["Leak$Key".to_string()])
        );
        assert_eq!(
            r(serde_json::json!({"names": ["a", "b"]})).ok(),
            Some(vec!["a".to_string(), "b".to_string()])
        );
        assert!(r(serde_json::json!({})).is_err(), "still required");
    }

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
