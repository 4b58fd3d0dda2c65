//! Calling the application: debug_invoke (a method with JSON arguments,
//! or its argument template), debug_spring (the context's readiness, its
//! beans and Environment keys) and debug_run_named_query (a JPA named
//! query). Each runs code in the JVM, so read-only sessions refuse them.

use std::time::Duration;

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value as Json, json};

use super::args::{thread_id, view_budget};
use super::{Call, Ctx, Effect, Reply, Route};
use crate::actors::{
    Arg, Budget, CallOutcome, CallSpec, CallTarget, MethodShape, NamedQuery, SpringQuery, Venue,
};
use crate::mcp::error::ToolError;
use crate::mcp::render::value;
use crate::model::Prim;
use crate::model::shown::{Edge, Scalar, Shown, Tree};
use crate::model::signature::JType;

/// Default bound on one call.
const DEFAULT_TIMEOUT_MS: u64 = 5_000;

/// Arguments of debug_invoke.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct InvokeParams {
    /// Session id; default: the current session.
    pub session_id: Option<String>,
    pub class: Option<String>,
    pub object: Option<String>,
    pub bean: Option<String>,
    /// Spring bean type (class name) to call on.
    pub bean_type: Option<String>,
    pub method: String,
    /// In order: number, string, boolean, null, "@0x…", enum name, array (array/List/Set), object (Map).
    pub args: Option<Vec<Json>>,
    /// Declared types picking an overload, e.g. ["int"].
    #[serde(default, deserialize_with = "crate::mcp::tools::args::strings")]
    pub param_types: Option<Vec<String>>,
    /// Show each overload's arguments; call nothing.
    pub template: Option<bool>,
    /// Thread to run on; default: a held one, else one parked.
    pub thread_id: Option<String>,
    /// Call budget; default 5000.
    pub timeout_ms: Option<u64>,
    /// Let other threads run during the call.
    pub all_threads: Option<bool>,
    pub max_depth: Option<usize>,
    pub max_children: Option<usize>,
}

/// Arguments of debug_spring.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SpringParams {
    /// Session id; default: the current session.
    pub session_id: Option<String>,
    /// Beans whose name or type contains this.
    pub beans: Option<String>,
    #[serde(default, deserialize_with = "crate::mcp::tools::args::strings")]
    pub keys: Option<Vec<String>>,
    /// Thread to run on; default as debug_invoke.
    pub thread_id: Option<String>,
    /// Budget per call; default 5000.
    pub timeout_ms: Option<u64>,
}

/// Arguments of debug_run_named_query.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NamedQueryParams {
    /// Session id; default: the current session.
    pub session_id: Option<String>,
    /// Named query, e.g. "Order.byStatus".
    pub name: String,
    /// By name, typed as debug_invoke's args.
    pub parameters: Option<serde_json::Map<String, Json>>,
    /// Rows fetched and shown; default 20.
    pub max_rows: Option<usize>,
    /// EntityManager expression; default: found in the frame.
    pub entity_manager: Option<String>,
    /// Flush pending changes first (a write).
    pub allow_flush: Option<bool>,
    /// Thread to run on; default as debug_invoke.
    pub thread_id: Option<String>,
    /// Budget per call; default 5000.
    pub timeout_ms: Option<u64>,
    /// Field-tree depth per row; default 1.
    pub max_depth: Option<usize>,
}

pub fn routes() -> Vec<Route> {
    vec![
        Route::new(
            "debug_invoke",
            "Call a method",
            "Call a static method, or one on an object (@0x…) or a Spring bean, with JSON args \
             typed by the declared parameters. Runs on a thread an event holds, else parks one at \
             its next line; only that thread runs. template:true shows each overload's arguments.",
            Effect::Changes,
            invoke,
        )
            .with_guide(
                "Calls a static method (class), or one on an object (@0x…) or a Spring bean (bean, bean_type), with \
                  JSON args typed by the declared parameters; param_types picks an overload. Runs on a thread an \
                  event suspended, else parks one (main first) at its next line and resumes it after; the reply \
                  says which. Single-threaded by default: a method waiting on a lock held by a suspended thread \
                  times out. Views: toString, JSON, field tree. template:true returns what each overload takes.",
            ),
        Route::new(
            "debug_spring",
            "Read the Spring context",
            "The Spring context, found on the heap: readiness, beans by name or type, Environment \
             keys with the property source of each (secret-looking values masked). Calls run like \
             debug_invoke.",
            Effect::Changes,
            spring,
        )
            .with_guide(
                "The application's Spring context, found on the heap: ready (active and refresh finished), beans \
                  by name and type filtered, and Environment keys as Spring resolves them, each with the property \
                  source it came from. Values of keys naming a password, secret, token or key are masked. Runs \
                  calls like debug_invoke.",
            ),
        Route::new(
            "debug_run_named_query",
            "Run a JPA named query",
            "Run a JPA named query through the application's EntityManager with typed parameters, \
             up to max_rows. Flush is off: unflushed changes are not seen. Reaches the database; \
             runs like debug_invoke.",
            Effect::Changes,
            named_query,
        )
            .with_guide(
                "Runs a JPA named query through the application's EntityManager with typed parameters, at most \
                  max_rows fetched. Flush is suppressed (FlushModeType.COMMIT), so uncommitted changes are not \
                  written first and not seen. Rows are read by their fields, invoking nothing. Reaches the \
                  database; runs like debug_invoke.",
            ),
    ]
}

/// The session, refused first when it is read-only.
/// A JSON value as a typed argument: `"@0x…"` is a handle.
pub fn arg(v: &Json) -> Arg {
    match v {
        Json::Null => Arg::Null,
        Json::Bool(b) => Arg::Bool(*b),
        Json::Number(n) => match n.as_i64() {
            Some(i) => Arg::Int(i),
            None => Arg::Float(n.as_f64().unwrap_or(f64::NAN)),
        },
        Json::String(s) => match s
            .strip_prefix("@0x")
            .and_then(|h| u64::from_str_radix(h, 16).ok())
        {
            Some(id) => Arg::Handle(id),
            None => Arg::Text(s.clone()),
        },
        Json::Array(items) => Arg::List(items.iter().map(arg).collect()),
        Json::Object(m) => Arg::Map(m.iter().map(|(k, v)| (k.clone(), arg(v))).collect()),
    }
}

fn handle(tool: &str, raw: &str) -> Result<u64, ToolError> {
    raw.trim()
        .trim_start_matches('@')
        .strip_prefix("0x")
        .and_then(|h| u64::from_str_radix(h, 16).ok())
        .ok_or_else(|| {
            ToolError::bad_argument(tool, format!("object {raw:?} is not an @0x… handle"))
        })
}

fn target(tool: &str, p: &InvokeParams) -> Result<CallTarget, ToolError> {
    match (&p.class, &p.object, &p.bean, &p.bean_type) {
        (Some(c), None, None, None) => Ok(CallTarget::Class(c.clone())),
        (None, Some(o), None, None) => Ok(CallTarget::Object(handle(tool, o)?)),
        (None, None, name, ty) if name.is_some() || ty.is_some() => Ok(CallTarget::Bean {
            name: name.clone(),
            type_name: ty.clone(),
        }),
        _ => Err(ToolError::bad_argument(
            tool,
            "give exactly one target: class, object, or bean/bean_type",
        )),
    }
}

/// How the call's thread was had, in a sentence.
fn venue(v: Venue, name: &str) -> String {
    match v {
        Venue::EventThread => format!("ran on thread {name:?}, which an event had suspended"),
        Venue::Parked => format!(
            "ran on thread {name:?}, parked for the call at its next line by a single step (no event held a thread) and resumed after"
        ),
    }
}

async fn invoke(ctx: Ctx, call: Call<InvokeParams>) -> Reply {
    let (tool, p) = (call.tool, call.params?);
    let session = ctx.writable(p.session_id.as_deref(), "invoke a method")?;
    let target = target(tool, &p)?;
    if p.template.unwrap_or(false) {
        let shapes = session.method_shapes(&target, &p.method).await?;
        return Ok(template_reply(&shapes));
    }
    let spec = CallSpec {
        target,
        method: p.method.clone(),
        param_types: p.param_types.clone(),
        args: p.args.iter().flatten().map(arg).collect(),
        thread: thread_id(tool, p.thread_id.as_deref())?,
        budget: Duration::from_millis(p.timeout_ms.unwrap_or(DEFAULT_TIMEOUT_MS).max(1)),
        all_threads: p.all_threads.unwrap_or(false),
        views: view_budget(p.max_depth, p.max_children),
    };
    let out = session.invoke(&spec).await?;
    Ok(invoke_reply(&out, spec.all_threads))
}

fn invoke_reply(out: &CallOutcome, all_threads: bool) -> rmcp::model::CallToolResult {
    let m = &out.method;
    let shown = tree_json(&out.tree);
    let mut text = format!(
        "{}.{} returned {}{}",
        m.class,
        m.declaration,
        out.value_type
            .as_deref()
            .map(|t| format!("a {t}: "))
            .unwrap_or_default(),
        out.to_string
            .as_deref()
            .map_or_else(|| shown.to_string(), |s| format!("{s:?}"))
    );
    text.push_str(&format!(
        "\n{} in {} ms",
        venue(out.venue, &out.thread_name),
        out.took.as_millis()
    ));
    text.push_str(if all_threads {
        "\nall threads ran during the call"
    } else {
        "\nsingle-threaded: the other threads stayed as they were, so a method waiting on a lock one of them holds times out"
    });
    if let Some((context, id)) = &out.bean_context {
        text.push_str(&format!("\nthe bean came from {context} @{id:#x}"));
    }
    text.push_str(&format!("\nfield tree:\n{}", value::tree(&out.tree)));
    super::text(text)
}

/// A value read from the JVM as JSON: scalars and strings as themselves,
/// an object as its type and handle, collections as arrays and objects.
pub fn shown_json(v: &Shown) -> Json {
    match v {
        Shown::Scalar(s) | Shown::Boxed { value: s, .. } => scalar_json(s),
        Shown::Text(c) | Shown::Decoded { text: c, .. } => json!(c.text),
        Shown::Enum { constant, .. } => json!(constant),
        Shown::Class { name, .. } => json!({ "@class": name }),
        Shown::Object { type_name, id, .. }
        | Shown::Unreadable {
            id,
            type_name: Some(type_name),
            ..
        } => {
            json!({ "@type": type_name, "@id": format!("@{id:#x}") })
        }
        Shown::Array { elem, id, len, .. } => {
            json!({ "@type": format!("{elem}[{len}]"), "@id": format!("@{id:#x}") })
        }
        Shown::Many { items, .. } => Json::Array(items.iter().map(shown_json).collect()),
        Shown::Entries { entries, .. } => Json::Object(
            entries
                .iter()
                .map(|(k, v)| (key_text(k), shown_json(v)))
                .collect(),
        ),
        Shown::Vanished { .. } | Shown::Unreadable { .. } | Shown::Unknown => Json::Null,
    }
}

fn scalar_json(s: &Scalar) -> Json {
    match *s {
        Scalar::Prim(Prim::Bool(b)) => json!(b),
        Scalar::Prim(Prim::Byte(x)) => json!(x),
        Scalar::Prim(Prim::Short(x)) => json!(x),
        Scalar::Prim(Prim::Int(x)) => json!(x),
        Scalar::Prim(Prim::Long(x)) => json!(x),
        Scalar::Prim(Prim::Float(x)) => json!(x),
        Scalar::Prim(Prim::Double(x)) => json!(x),
        Scalar::Prim(Prim::Char(c)) => json!(char::from_u32(u32::from(c)).map(String::from)),
        Scalar::Null | Scalar::Void => Json::Null,
    }
}

fn key_text(k: &Shown) -> String {
    match shown_json(k) {
        Json::String(s) => s,
        other => other.to_string(),
    }
}

/// A field tree as JSON: fields as members (with the object's `@type`),
/// elements as an array, map entries by key; what the budgets cut is
/// counted in `@more`, an object shown above is `@cycle`.
pub fn tree_json(t: &Tree) -> Json {
    if t.cycle {
        return json!({ "@cycle": shown_json(&t.head) });
    }
    if t.children.is_empty() {
        return shown_json(&t.head);
    }
    if t.children.iter().all(|(e, _)| matches!(e, Edge::Index(_))) {
        return Json::Array(t.children.iter().map(|(_, c)| tree_json(c)).collect());
    }
    let mut m = serde_json::Map::new();
    if let Json::Object(head) = shown_json(&t.head) {
        m.extend(head);
    }
    for (edge, child) in &t.children {
        let key = match edge {
            Edge::Field(name) => name.clone(),
            Edge::Index(i) => i.to_string(),
            Edge::Key(k) => key_text(k),
            Edge::Held => "value".into(),
        };
        m.insert(key, tree_json(child));
    }
    if t.more_fields > 0 {
        m.insert("@more".into(), json!(t.more_fields));
    }
    Json::Object(m)
}

/// A value to fill in for a parameter of type `ty`.
fn placeholder(ty: &JType, constants: &[String]) -> Json {
    if let Some(first) = constants.first() {
        return Json::String(first.clone());
    }
    let class = ty.class_name().unwrap_or("");
    match ty {
        JType::Prim('Z') => json!(false),
        JType::Prim('F' | 'D') => json!(0.0),
        JType::Prim('C') => json!("a"),
        JType::Prim(_) => json!(0),
        JType::Array(e) => json!([placeholder(e, &[])]),
        _ => match class {
            "java.lang.String" | "java.lang.CharSequence" => json!(""),
            "java.lang.Boolean" => json!(false),
            "java.lang.Double" | "java.lang.Float" => json!(0.0),
            "java.lang.Integer" | "java.lang.Long" | "java.lang.Short" | "java.lang.Byte"
            | "java.lang.Number" => json!(0),
            c if c.starts_with("java.util.")
                && (c.ends_with("List") || c.ends_with("Set") || c.ends_with("Collection")) =>
            {
                json!([placeholder(&ty.arg(0), &[])])
            }
            c if c.starts_with("java.util.") && c.ends_with("Map") => {
                let mut m = serde_json::Map::new();
                m.insert(String::new(), placeholder(&ty.arg(1), &[]));
                Json::Object(m)
            }
            _ => Json::Null,
        },
    }
}

fn template_reply(shapes: &[MethodShape]) -> rmcp::model::CallToolResult {
    let mut text = format!(
        "{} overload(s); fill in args and pass param_types when several",
        shapes.len()
    );
    let mut data = Vec::new();
    for s in shapes {
        let args: Vec<Json> = s
            .params
            .iter()
            .map(|p| placeholder(&p.ty, &p.enum_constants))
            .collect();
        let types: Vec<String> = s.params.iter().map(|p| p.ty.java()).collect();
        let erased: Vec<String> = s
            .params
            .iter()
            .map(|p| {
                p.ty.class_name()
                    .map_or_else(|| p.ty.java(), str::to_string)
            })
            .collect();
        let params: Vec<String> = s
            .params
            .iter()
            .map(|p| {
                let consts = if p.enum_constants.is_empty() {
                    String::new()
                } else {
                    format!(" (one of {})", p.enum_constants.join(", "))
                };
                format!("{} {}{consts}", p.ty.java(), p.name)
            })
            .collect();
        text.push_str(&format!(
            "\n{}{}.{} -> {}\n  params: {}\n  args: {}\n  param_types: {}",
            if s.is_static { "static " } else { "" },
            s.class,
            s.declaration,
            s.returns.java(),
            if params.is_empty() {
                "none".into()
            } else {
                params.join(", ")
            },
            Json::Array(args.clone()),
            json!(erased)
        ));
        data.push(json!({
            "declaration": format!("{}.{}", s.class, s.declaration),
            "static": s.is_static,
            "returns": s.returns.java(),
            "params": s.params.iter().zip(&types).map(|(p, t)| json!({
                "name": p.name, "type": t, "enum_constants": p.enum_constants,
            })).collect::<Vec<_>>(),
            "args": args,
            "param_types": erased,
        }));
    }
    super::text(text)
}

async fn spring(ctx: Ctx, call: Call<SpringParams>) -> Reply {
    let (tool, p) = (call.tool, call.params?);
    let session = ctx.writable(
        p.session_id.as_deref(),
        "invoke Spring's ApplicationContext",
    )?;
    let q = SpringQuery {
        beans: p.beans.clone(),
        keys: p.keys.clone().unwrap_or_default(),
        thread: thread_id(tool, p.thread_id.as_deref())?,
        budget: Duration::from_millis(p.timeout_ms.unwrap_or(DEFAULT_TIMEOUT_MS).max(1)),
    };
    let r = session.spring(&q).await?;
    let state = if r.ready() {
        "READY (active, refresh finished)".to_string()
    } else {
        format!(
            "NOT READY (active: {}, refreshed: {}{})",
            r.active,
            r.refreshed,
            r.not_refreshed
                .as_deref()
                .map(|w| format!(": {w}"))
                .unwrap_or_default()
        )
    };
    let mut text = format!("Spring context {}: {state}", r.context);
    if r.contexts > 1 {
        text.push_str(&format!(
            " ({} contexts alive; the first active one is read)",
            r.contexts
        ));
    }
    if p.beans.is_some() {
        text.push_str(&format!(
            "\n{} of {} beans match:",
            r.beans.len(),
            r.bean_count
        ));
        for b in &r.beans {
            text.push_str(&format!("\n  {}: {}", b.name, b.type_name));
        }
    }
    for k in &r.keys {
        text.push_str(&match (&k.value, &k.source) {
            (Some(v), src) => format!(
                "\n{} = {}{} (from {})",
                k.key,
                if k.masked {
                    v.clone()
                } else {
                    format!("{v:?}")
                },
                if k.masked {
                    " masked: the key names a secret"
                } else {
                    ""
                },
                src.as_deref().unwrap_or("an unnamed source")
            ),
            (None, _) => format!(
                "\n{}: not resolved by the Environment (no property source has it)",
                k.key
            ),
        });
    }
    text.push_str(&format!("\n{}", venue(r.venue, &r.thread_name)));
    Ok(super::text(text))
}

async fn named_query(ctx: Ctx, call: Call<NamedQueryParams>) -> Reply {
    let (tool, p) = (call.tool, call.params?);
    let session = ctx.writable(p.session_id.as_deref(), "run a JPA query")?;
    let entity_manager = match &p.entity_manager {
        Some(src) => Some(
            crate::expr::parse_checked(src)
                .map_err(|e| {
                    ToolError::new(
                        "BAD_EXPRESSION",
                        format!("{tool} entity_manager: {e}\n{}", e.caret(src)),
                    )
                })?
                .expr,
        ),
        None => None,
    };
    let q = NamedQuery {
        name: p.name.clone(),
        parameters: p
            .parameters
            .iter()
            .flatten()
            .map(|(k, v)| (k.clone(), arg(v)))
            .collect(),
        max_rows: p.max_rows.unwrap_or(20).max(1),
        entity_manager,
        allow_flush: p.allow_flush.unwrap_or(false),
        thread: thread_id(tool, p.thread_id.as_deref())?,
        budget: Duration::from_millis(p.timeout_ms.unwrap_or(DEFAULT_TIMEOUT_MS).max(1)),
        views: Budget {
            max_depth: p.max_depth.unwrap_or(1),
            ..Budget::default()
        },
    };
    let r = session.run_named_query(&q).await?;
    let mut text = format!(
        "{} row(s) from {:?}{} via {}",
        r.count,
        q.name,
        if r.count >= r.max_rows {
            format!(" (max_rows {} reached: there may be more)", r.max_rows)
        } else {
            String::new()
        },
        r.entity_manager
    );
    for (name, ty) in &r.bound {
        text.push_str(&format!("\n:{name} bound as {ty}"));
    }
    text.push_str(&if r.flush == "COMMIT" {
        "\nflush suppressed (FlushModeType.COMMIT): pending changes were not written and are not in the rows".to_string()
    } else {
        "\nflush allowed: pending changes of the persistence context were written first".to_string()
    });
    for (i, row) in r.rows.iter().enumerate() {
        text.push_str(&format!("\n[{i}] {}", value::tree(row)));
    }
    text.push_str(&format!("\n{}", venue(r.venue, &r.thread_name)));
    Ok(super::text(text))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::shown::Cut;

    #[test]
    fn json_arguments_map_onto_typed_ones() {
        assert_eq!(
            arg(&json!([1, 2.5, "x", "@0x1f", null, true, {"k": [false]}])),
            Arg::List(vec![
                Arg::Int(1),
                Arg::Float(2.5),
                Arg::Text("x".into()),
                Arg::Handle(0x1f),
                Arg::Null,
                Arg::Bool(true),
                Arg::Map(vec![("k".into(), Arg::List(vec![Arg::Bool(false)]))]),
            ])
        );
        // Not a handle: the text stays text.
        assert_eq!(arg(&json!("@0xzz")), Arg::Text("@0xzz".into()));
    }

    #[test]
    fn placeholders_follow_the_declared_types() {
        let (params, _) = crate::model::signature::method_types(
            "(Ljava/lang/String;I[JLjava/util/List<Ljava/lang/Integer;>;Ljava/util/Map<Ljava/lang/String;Ljava/lang/Boolean;>;La/Tier;)V",
        )
        .expect("parses");
        let got: Vec<Json> = params.iter().map(|p| placeholder(p, &[])).collect();
        assert_eq!(
            got,
            [
                json!(""),
                json!(0),
                json!([0]),
                json!([0]),
                json!({"": false}),
                Json::Null
            ]
        );
        assert_eq!(placeholder(&params[5], &["GOLD".into()]), json!("GOLD"));
    }

    #[test]
    fn a_field_tree_becomes_json() {
        let text = |s: &str| Shown::Text(Cut::new(s, 100));
        let leaf = Tree::leaf;
        let tree = Tree {
            head: Shown::Object {
                type_name: "Product".into(),
                id: 0x2a,
                to_string: None,
            },
            cycle: false,
            children: vec![
                (Edge::Field("sku".into()), leaf(text("P1"))),
                (
                    Edge::Field("price".into()),
                    leaf(Shown::Scalar(Scalar::Prim(Prim::Int(30)))),
                ),
                (
                    Edge::Field("tags".into()),
                    Tree {
                        head: Shown::Many {
                            total: 1,
                            items: Vec::new(),
                        },
                        cycle: false,
                        children: vec![(Edge::Index(0), leaf(text("new")))],
                        more_fields: 0,
                    },
                ),
            ],
            more_fields: 2,
        };
        assert_eq!(
            tree_json(&tree),
            json!({"@type": "Product", "@id": "@0x2a", "sku": "P1", "price": 30, "tags": ["new"], "@more": 2})
        );
    }
}
