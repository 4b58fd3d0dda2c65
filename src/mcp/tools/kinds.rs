//! Tools that differ only by a kind are one tool with a `kind` argument
//! (`debug_set_stop {kind: "line"}`): one description and one schema in
//! `tools/list` instead of one per kind. Each kind keeps its own parameter
//! type and handler; the merged schema is the union of the kinds'
//! arguments, and a call is refused, naming what its kind accepts, when
//! it gives an argument of another kind.

use std::collections::BTreeSet;
use std::sync::Arc;

use rmcp::model::JsonObject;
use serde_json::{Value, json};

use super::{Effect, Route, tool};
use crate::mcp::error::ToolError;

/// One kind of a merged tool: its name and the route that answers it
/// (declared with the merged tool's name, so its messages name the tool).
pub struct Kind {
    pub name: &'static str,
    pub route: Route,
}

impl Kind {
    pub fn new(name: &'static str, route: Route) -> Self {
        Self { name, route }
    }

    /// A kind of the merged tool `tool`, answered by `handler`, with the
    /// guide that says its rules in full.
    pub fn answered<P, H, F>(
        tool: &'static str,
        name: &'static str,
        effect: Effect,
        guide: &'static str,
        handler: H,
    ) -> Self
    where
        P: schemars::JsonSchema + serde::de::DeserializeOwned + Send + 'static,
        H: Fn(super::Ctx, super::Call<P>) -> F + Send + Sync + 'static,
        F: Future<Output = super::Reply> + Send + 'static,
    {
        Self::new(
            name,
            Route::new(tool, "", "", effect, handler).with_guide(guide),
        )
    }

    fn accepted(&self) -> BTreeSet<String> {
        properties(&self.route.tool.input_schema)
            .map(|p| p.keys().cloned().collect())
            .unwrap_or_default()
    }
}

fn properties(schema: &JsonObject) -> Option<&serde_json::Map<String, Value>> {
    schema.get("properties").and_then(Value::as_object)
}

impl Route {
    /// Declares one tool answering several kinds: `kind` picks the route
    /// its other arguments go to. The first kind that declares an
    /// argument gives its schema; an argument is required when every kind
    /// requires it. Structured output, if any, is the first kind's.
    pub fn by_kind(
        name: &'static str,
        title: &'static str,
        description: &'static str,
        effect: Effect,
        kinds: Vec<Kind>,
    ) -> Self {
        Self::merged(name, title, description, effect, kinds, false)
    }

    /// Like [`Route::by_kind`], but `kind` may be left out: the first
    /// kind is the tool's plain use, the others variants of it.
    pub fn by_kind_or_first(
        name: &'static str,
        title: &'static str,
        description: &'static str,
        effect: Effect,
        kinds: Vec<Kind>,
    ) -> Self {
        Self::merged(name, title, description, effect, kinds, true)
    }

    fn merged(
        name: &'static str,
        title: &'static str,
        description: &'static str,
        effect: Effect,
        kinds: Vec<Kind>,
        optional: bool,
    ) -> Self {
        let mut merged = tool::<Empty>(name, title, description, effect);
        merged.input_schema = Arc::new(merged_schema(&kinds, optional));
        merged.output_schema = kinds
            .first()
            .and_then(|k| k.route.tool.output_schema.clone());
        let guide = kinds
            .iter()
            .filter_map(|k| Some(format!("kind `{}`: {}", k.name, k.route.guide.as_deref()?)))
            .collect::<Vec<_>>()
            .join("\n\n");
        let kinds = Arc::new(kinds);
        Self {
            tool: merged,
            call: Arc::new(move |ctx, args| {
                let kinds = kinds.clone();
                Box::pin(async move {
                    let mut args = args.unwrap_or_default();
                    let kind = match args.remove("kind") {
                        None if optional => &kinds[0],
                        given => pick(name, &kinds, given)?,
                    };
                    let accepted = kind.accepted();
                    if let Some(other) = args.keys().find(|k| !accepted.contains(*k)) {
                        let list: Vec<&str> = accepted.iter().map(String::as_str).collect();
                        return Err(ToolError::bad_argument(
                            name,
                            format!(
                                "kind {} takes no `{other}`; it accepts kind, {}",
                                kind.name,
                                list.join(", ")
                            ),
                        ));
                    }
                    (kind.route.call)(ctx, Some(args)).await
                })
            }),
            guide: (!guide.is_empty()).then_some(guide),
            long: None,
            fan_out: None,
        }
    }
}

/// Tools that became kinds of a merged tool, by their old names without
/// the `debug_` prefix: a call by an old name is told the new one.
const RENAMED: &[(&str, &str, &str)] = &[
    ("set_line_stop", "debug_set_stop", "line"),
    ("set_exception_stop", "debug_set_stop", "exception"),
    ("set_field_stop", "debug_set_stop", "field"),
    ("set_method_exit_stop", "debug_set_stop", "method_exit"),
    ("set_monitor_stop", "debug_set_stop", "monitor"),
    ("step_over", "debug_step", "over"),
    ("step_into", "debug_step", "into"),
    ("step_out", "debug_step", "out"),
    ("suspend_thread", "debug_thread", "suspend"),
    ("resume_thread", "debug_thread", "resume"),
    ("list_methods", "debug_list_members", "methods"),
    ("list_fields", "debug_list_members", "fields"),
    ("evaluate_chain", "debug_evaluate", "chain"),
    ("toggle_stop_point", "debug_update_stop_point", "toggle"),
    ("clear_stop_point", "debug_update_stop_point", "clear"),
    ("class_histogram", "debug_heap", "histogram"),
    ("find_holders", "debug_heap", "holders"),
    ("list_instances", "debug_heap", "instances"),
];

/// The tool and kind a former tool's name became.
pub fn renamed(name: &str) -> Option<(&'static str, &'static str)> {
    let old = name.strip_prefix("debug_")?;
    RENAMED
        .iter()
        .find(|(o, _, _)| *o == old)
        .map(|(_, tool, kind)| (*tool, *kind))
}

/// The kind a call names, or a refusal naming the kinds there are.
fn pick<'k>(tool: &str, kinds: &'k [Kind], kind: Option<Value>) -> Result<&'k Kind, ToolError> {
    let names: Vec<&str> = kinds.iter().map(|k| k.name).collect();
    let given = kind.as_ref().and_then(Value::as_str);
    kinds.iter().find(|k| Some(k.name) == given).ok_or_else(|| {
        let what = match &kind {
            None => "kind is required".to_string(),
            Some(v) => format!("unknown kind {v}"),
        };
        ToolError::bad_argument(tool, format!("{what}; one of {}", names.join(", ")))
    })
}

/// The union of the kinds' input schemas, with `kind` first among the
/// required arguments (unless it may be left out).
fn merged_schema(kinds: &[Kind], optional: bool) -> JsonObject {
    let mut props = serde_json::Map::new();
    let mut defs = serde_json::Map::new();
    let names: Vec<&str> = kinds.iter().map(|k| k.name).collect();
    props.insert("kind".into(), json!({ "enum": names, "type": "string" }));
    let mut required: Option<BTreeSet<String>> = None;
    for k in kinds {
        let schema = &k.route.tool.input_schema;
        for (p, s) in properties(schema).into_iter().flatten() {
            props.entry(p.clone()).or_insert_with(|| s.clone());
        }
        if let Some(d) = schema.get("$defs").and_then(Value::as_object) {
            for (n, s) in d {
                defs.entry(n.clone()).or_insert_with(|| s.clone());
            }
        }
        let own: BTreeSet<String> = schema
            .get("required")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(|v| v.as_str().map(String::from))
            .collect();
        required = Some(match required {
            None => own,
            Some(r) => r.intersection(&own).cloned().collect(),
        });
    }
    let mut required: Vec<String> = required.unwrap_or_default().into_iter().collect();
    if !optional {
        required.insert(0, "kind".into());
    }
    let mut schema = JsonObject::new();
    if !defs.is_empty() {
        schema.insert("$defs".into(), Value::Object(defs));
    }
    schema.insert("additionalProperties".into(), Value::Bool(false));
    schema.insert("properties".into(), Value::Object(props));
    schema.insert("required".into(), json!(required));
    schema.insert("type".into(), json!("object"));
    schema
}

/// The merged tool's own parameters: none beyond what its kinds declare.
#[derive(schemars::JsonSchema)]
struct Empty {}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mcp::tools::{Call, Ctx, Reply};

    #[derive(serde::Deserialize, schemars::JsonSchema)]
    #[serde(deny_unknown_fields)]
    struct A {
        shared: String,
        only_a: Option<u32>,
    }

    #[derive(serde::Deserialize, schemars::JsonSchema)]
    #[serde(deny_unknown_fields)]
    struct B {
        shared: String,
        only_b: Option<bool>,
    }

    async fn a(_: Ctx, call: Call<A>) -> Reply {
        let p = call.params?;
        Ok(crate::mcp::tools::text(format!(
            "a {} {:?}",
            p.shared, p.only_a
        )))
    }

    async fn b(_: Ctx, call: Call<B>) -> Reply {
        let p = call.params?;
        Ok(crate::mcp::tools::text(format!(
            "b {} {:?}",
            p.shared, p.only_b
        )))
    }

    fn merged() -> Route {
        merged_with(false)
    }

    fn merged_with(optional: bool) -> Route {
        Route::merged(
            "t",
            "T",
            "d",
            Effect::Read,
            vec![
                Kind::new("a", Route::new("t", "", "", Effect::Read, a)),
                Kind::new("b", Route::new("t", "", "", Effect::Read, b)),
            ],
            optional,
        )
    }

    #[test]
    fn the_schema_is_the_union_with_kind_and_what_every_kind_requires() {
        let r = merged();
        let s = &r.tool.input_schema;
        let props = properties(s).expect("properties");
        let keys: Vec<&str> = props.keys().map(String::as_str).collect();
        assert_eq!(keys, ["kind", "only_a", "only_b", "shared"]);
        assert_eq!(props["kind"]["enum"], json!(["a", "b"]));
        assert_eq!(s["required"], json!(["kind", "shared"]));
        assert_eq!(s["additionalProperties"], json!(false));
    }

    fn args(v: Value) -> Option<JsonObject> {
        v.as_object().cloned()
    }

    fn run(route: &Route, v: Value) -> Result<String, String> {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("runtime");
        rt.block_on(async {
            let engine = crate::actors::Engine::start(crate::actors::EngineConfig::from_env())
                .await
                .expect("engine");
            (route.call)(Ctx { engine }, args(v)).await
        })
        .map(|r| format!("{:?}", r.content))
        .map_err(|e| e.text())
    }

    #[test]
    fn a_call_goes_to_its_kind_and_a_foreign_argument_is_refused_by_name() {
        let r = merged();
        let ok = run(&r, json!({"kind": "b", "shared": "x", "only_b": true})).expect("b");
        assert!(ok.contains("b x Some(true)"), "{ok}");
        let e = run(&r, json!({"kind": "a", "shared": "x", "only_b": true})).expect_err("refused");
        assert!(
            e.contains("kind a takes no `only_b`; it accepts kind, only_a, shared"),
            "{e}"
        );
        let e = run(&r, json!({"shared": "x"})).expect_err("refused");
        assert!(e.contains("kind is required; one of a, b"), "{e}");
        let e = run(&r, json!({"kind": "c"})).expect_err("refused");
        assert!(e.contains("unknown kind \"c\"; one of a, b"), "{e}");
    }

    #[test]
    fn a_former_tool_name_leads_to_its_tool_and_kind() {
        let old = |rest: &str| format!("debug_{rest}");
        assert_eq!(
            renamed(&old("set_line_stop")),
            Some(("debug_set_stop", "line"))
        );
        assert_eq!(
            renamed(&old("list_instances")),
            Some(("debug_heap", "instances"))
        );
        assert_eq!(renamed(&old("set_stop")), None);
        assert_eq!(renamed("set_line_stop"), None);
        let catalogue: BTreeSet<String> = crate::mcp::tools::catalogue()
            .iter()
            .map(|t| t.name.to_string())
            .collect();
        for (o, tool, _) in RENAMED {
            assert!(catalogue.contains(*tool), "{tool}");
            assert!(!catalogue.contains(&old(o)), "{o} is still a tool");
        }
    }

    #[test]
    fn an_optional_kind_defaults_to_the_first() {
        let r = merged_with(true);
        assert_eq!(r.tool.input_schema["required"], json!(["shared"]));
        let ok = run(&r, json!({"shared": "x", "only_a": 3})).expect("a");
        assert!(ok.contains("a x Some(3)"), "{ok}");
        let e = run(&r, json!({"kind": "z", "shared": "x"})).expect_err("refused");
        assert!(e.contains("unknown kind \"z\"; one of a, b"), "{e}");
    }
}
