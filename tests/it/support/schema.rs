//! A small JSON Schema checker for the output schemas the server declares:
//! `type` (one or a list), `properties`, `required`, `additionalProperties`,
//! `items`, `$ref` into `$defs`, `anyOf`/`oneOf`/`allOf`, `enum`, `const`,
//! `minimum` and `maximum`. A keyword it does not know fails the check, so a schema
//! can never pass by being read loosely.

use serde_json::{Map, Value};

/// Every place where `value` breaks `schema` (empty: it conforms).
pub fn violations(schema: &Value, value: &Value) -> Vec<String> {
    let mut out = Vec::new();
    check(schema, schema, value, "$", &mut out);
    out
}

const KNOWN: &[&str] = &[
    "type",
    "properties",
    "required",
    "additionalProperties",
    "items",
    "$ref",
    "$defs",
    "anyOf",
    "oneOf",
    "allOf",
    "enum",
    "const",
    "minimum",
    "maximum",
    "description",
    "title",
    "format",
    "default",
];

fn check(root: &Value, schema: &Value, value: &Value, at: &str, out: &mut Vec<String>) {
    let Some(s) = schema.as_object() else {
        if schema == &Value::Bool(false) {
            out.push(format!("{at}: nothing is allowed here"));
        }
        return;
    };
    for key in s.keys() {
        if !KNOWN.contains(&key.as_str()) {
            out.push(format!(
                "{at}: the checker does not know the keyword {key:?}"
            ));
        }
    }
    if let Some(Value::String(r)) = s.get("$ref") {
        match resolve(root, r) {
            Some(target) => check(root, target, value, at, out),
            None => out.push(format!("{at}: unresolved $ref {r}")),
        }
    }
    if let Some(t) = s.get("type")
        && !type_matches(t, value)
    {
        out.push(format!("{at}: {value} is not of type {t}"));
        return;
    }
    if let Some(Value::Array(options)) = s.get("enum")
        && !options.contains(value)
    {
        out.push(format!("{at}: {value} is not one of {options:?}"));
    }
    if let Some(c) = s.get("const")
        && c != value
    {
        out.push(format!("{at}: {value} is not {c}"));
    }
    if let (Some(min), Some(v)) = (s.get("minimum").and_then(Value::as_f64), value.as_f64())
        && v < min
    {
        out.push(format!("{at}: {v} is below the minimum {min}"));
    }
    if let (Some(max), Some(v)) = (s.get("maximum").and_then(Value::as_f64), value.as_f64())
        && v > max
    {
        out.push(format!("{at}: {v} is above the maximum {max}"));
    }
    combinators(root, s, value, at, out);
    if let Value::Object(obj) = value {
        object(root, s, obj, at, out);
    }
    if let (Value::Array(items), Some(item_schema)) = (value, s.get("items")) {
        for (i, item) in items.iter().enumerate() {
            check(root, item_schema, item, &format!("{at}[{i}]"), out);
        }
    }
}

fn combinators(
    root: &Value,
    s: &Map<String, Value>,
    value: &Value,
    at: &str,
    out: &mut Vec<String>,
) {
    let passing = |options: &Vec<Value>| {
        options
            .iter()
            .filter(|o| violations_at(root, o, value).is_empty())
            .count()
    };
    if let Some(Value::Array(all)) = s.get("allOf") {
        for o in all {
            check(root, o, value, at, out);
        }
    }
    if let Some(Value::Array(any)) = s.get("anyOf")
        && passing(any) == 0
    {
        out.push(format!("{at}: {value} matches none of anyOf"));
    }
    if let Some(Value::Array(one)) = s.get("oneOf")
        && passing(one) != 1
    {
        out.push(format!("{at}: {value} does not match exactly one of oneOf"));
    }
}

fn violations_at(root: &Value, schema: &Value, value: &Value) -> Vec<String> {
    let mut out = Vec::new();
    check(root, schema, value, "", &mut out);
    out
}

fn object(
    root: &Value,
    s: &Map<String, Value>,
    obj: &Map<String, Value>,
    at: &str,
    out: &mut Vec<String>,
) {
    let props = s.get("properties").and_then(Value::as_object);
    if let Some(Value::Array(required)) = s.get("required") {
        for r in required.iter().filter_map(Value::as_str) {
            if !obj.contains_key(r) {
                out.push(format!("{at}: required property {r:?} is missing"));
            }
        }
    }
    for (k, v) in obj {
        let path = format!("{at}.{k}");
        match props.and_then(|p| p.get(k)) {
            Some(p) => check(root, p, v, &path, out),
            None => match s.get("additionalProperties") {
                Some(Value::Bool(false)) => out.push(format!("{path}: not declared")),
                Some(extra @ Value::Object(_)) => check(root, extra, v, &path, out),
                _ => {}
            },
        }
    }
}

fn resolve<'a>(root: &'a Value, r: &str) -> Option<&'a Value> {
    let path = r.strip_prefix("#/")?;
    path.split('/').try_fold(root, |node, part| node.get(part))
}

fn type_matches(t: &Value, value: &Value) -> bool {
    match t {
        Value::String(name) => one_type(name, value),
        Value::Array(names) => names
            .iter()
            .filter_map(Value::as_str)
            .any(|n| one_type(n, value)),
        _ => false,
    }
}

fn one_type(name: &str, value: &Value) -> bool {
    match name {
        "object" => value.is_object(),
        "array" => value.is_array(),
        "string" => value.is_string(),
        "boolean" => value.is_boolean(),
        "null" => value.is_null(),
        "number" => value.is_number(),
        "integer" => value.as_f64().is_some_and(|f| f.fract() == 0.0),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::violations;
    use serde_json::json;

    #[test]
    fn the_checker_finds_what_breaks_a_schema() {
        let schema = json!({
            "type": "object",
            "properties": {
                "a": {"type": "integer", "minimum": 0},
                "b": {"type": ["string", "null"]},
                "c": {"type": "array", "items": {"$ref": "#/$defs/C"}},
            },
            "required": ["a", "c"],
            "$defs": {"C": {"type": "object", "properties": {"x": {"type": "boolean"}}, "required": ["x"]}},
        });
        assert!(violations(&schema, &json!({"a": 1, "b": null, "c": [{"x": true}]})).is_empty());
        assert_eq!(violations(&schema, &json!({"a": -1, "c": []})).len(), 1);
        assert_eq!(
            violations(&schema, &json!({"a": 1, "b": 3, "c": [{}]})).len(),
            2
        );
        assert_eq!(violations(&schema, &json!({"c": [{"x": 1}]})).len(), 2);
        assert_eq!(
            violations(&json!({"patternProperties": {}}), &json!({})).len(),
            1
        );
    }
}
