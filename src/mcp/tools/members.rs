//! What a loaded class declares and what lives of it: debug_list_members (methods
//! and fields, rendered as Java source lines, inherited members
//! with their origin, class-loader copies named) and the instance counts of
//! debug_heap kind instances (several classes in one heap walk, its
//! stop-the-world time reported).

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;

use super::kinds::Kind;
use super::{Call, Ctx, Effect, Reply, Route};
use crate::actors::{InstanceReport, Member, MemberSet, Members, TypeMembers};
use crate::mcp::error::ToolError;
use crate::model::java_source::{
    MemberKind, class_type_params, field_line, is_synthetic, method_line, method_sig, modifiers,
};

/// Members shown by default.
const DEFAULT_LIMIT: usize = 200;
/// Handles per class by default.
const DEFAULT_HANDLES: usize = 10;

/// Arguments of debug_list_members (both kinds).
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MembersParams {
    /// Session id; default: the current session.
    pub session_id: Option<String>,
    /// Loaded class (Outer$Inner); Name@0x<loader> picks a copy.
    pub class_name: String,
    /// Add the supertypes' members.
    pub inherited: Option<bool>,
    pub name_filter: Option<String>,
    /// Members shown; default 200.
    pub limit: Option<usize>,
}

/// Arguments of debug_heap kind instances.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct InstancesParams {
    /// Session id; default: the current session.
    pub session_id: Option<String>,
    #[serde(deserialize_with = "crate::mcp::tools::args::string_list")]
    pub class_names: Vec<String>,
    /// Handles per class; default 10, 0 = counts only.
    pub max_instances: Option<usize>,
}

pub fn routes() -> Vec<Route> {
    vec![{
        let tool = "debug_list_members";
        let kind = |name, set: MemberSet, guide| {
            Kind::answered(tool, name, Effect::Read, guide, move |ctx, call| {
                list(ctx, call, set)
            })
        };
        Route::by_kind(
            tool,
            "List members",
            "A loaded class's methods or fields (kind) as Java source lines, with generic \
                 types and parameter names where known; no values read. inherited:true adds the \
                 supertypes'. Name@0x<loader> picks one copy.",
            Effect::Read,
            vec![
                kind(
                    "methods",
                    MemberSet::Methods,
                    "A loaded class's methods as Java source lines: modifiers, generic signatures where the class file \
                  has them, parameter names where it has a variable table. Constructors kept, <clinit> and synthetic \
                  methods left out. inherited:true adds superclasses and interfaces, each under its origin. Several \
                  class-loader copies are named; Name@0x<loader> pins one. Suspends nothing.",
                ),
                kind(
                    "fields",
                    MemberSet::Fields,
                    "A loaded class's fields as Java source lines (modifiers, generic type), statics first; reads no \
                  values. inherited:true adds superclasses' and interfaces' fields under their origin. Copies and \
                  pinning as for methods. Suspends nothing.",
                ),
            ],
        )
    }]
}

async fn list(ctx: Ctx, call: Call<MembersParams>, set: MemberSet) -> Reply {
    let p = call.params?;
    let handle = ctx.engine.session(p.session_id.as_deref())?;
    let members = handle
        .members(&p.class_name, set, p.inherited.unwrap_or(false))
        .await?;
    let limit = p.limit.unwrap_or(DEFAULT_LIMIT).max(1);
    let filter = p.name_filter.as_deref().unwrap_or("");
    let mut out = String::new();
    let mut rows = Vec::new();
    let mut shown = 0;
    let mut hidden = 0;
    let mut matched = 0;
    for (i, t) in members.types.iter().enumerate() {
        let mut lines = lines_of(t, set, &members.class);
        lines.retain(|(name, _, _)| name.contains(filter));
        hidden += lines.iter().filter(|(_, _, synthetic)| *synthetic).count();
        lines.retain(|(_, _, synthetic)| !synthetic);
        matched += lines.len();
        if i == 0 {
            out.push_str(&header(&members, t, set, lines.len()));
        } else if !lines.is_empty() {
            let kind = if t.interface { "interface" } else { "class" };
            out.push_str(&format!("\nfrom {kind} {}:", t.name));
        }
        for (name, line, _) in lines {
            if shown >= limit {
                continue;
            }
            shown += 1;
            out.push_str(&format!("\n  {line}"));
            rows.push(json!({"name": name, "source": line, "declared_by": t.name}));
        }
    }
    if matched > shown {
        out.push_str(&format!(
            "\n… {} more; raise limit or narrow with name_filter",
            matched - shown
        ));
    }
    if hidden > 0 {
        out.push_str(&format!("\n({hidden} compiler-made member(s) left out)"));
    }
    copies_note(&mut out, &members);
    Ok(super::text(out))
}

/// (name, source line, compiler-made) for each member, fields statics
/// first; `<clinit>` dropped.
fn lines_of(t: &TypeMembers, set: MemberSet, class: &str) -> Vec<(String, String, bool)> {
    let simple = t.name.rsplit('.').next().unwrap_or(class);
    let mut members: Vec<&Member> = t.members.iter().filter(|m| m.name != "<clinit>").collect();
    if set == MemberSet::Fields {
        members.sort_by_key(|m| m.modifiers & 0x8 == 0);
    }
    members
        .into_iter()
        .map(|m| {
            let line = match set {
                MemberSet::Fields => field_line(&m.name, m.modifiers, &m.signature, &m.generic),
                MemberSet::Methods => {
                    let sig = method_sig(&m.signature, &m.generic);
                    // An interface's methods are public: JDWP says so, source need not.
                    method_line(&m.name, simple, m.modifiers, &sig, m.param_names.as_deref())
                }
            };
            (m.name.clone(), line, is_synthetic(m.modifiers))
        })
        .collect()
}

fn header(members: &Members, t: &TypeMembers, set: MemberSet, n: usize) -> String {
    let mut words: Vec<&str> = modifiers(t.modifiers, MemberKind::Class);
    words.retain(|w| *w != "static");
    let kind = if t.interface { "interface" } else { "class" };
    let what = if set == MemberSet::Methods {
        "method"
    } else {
        "field"
    };
    let mut out = format!(
        "{}{kind} {}{}: {n} {what}{} declared",
        words.iter().map(|w| format!("{w} ")).collect::<String>(),
        t.name,
        class_type_params(&t.generic),
        if n == 1 { "" } else { "s" }
    );
    if n == 0 {
        out.push_str(&format!(
            " (it declares no {what}s; this is an answer, not a failed lookup)"
        ));
    }
    if members.types.len() == 1 {
        out.push_str("; inherited:true adds superclasses and interfaces");
    }
    out
}

/// Names every class-loader copy when there are several.
fn copies_note(out: &mut String, m: &Members) {
    if m.loaders.len() < 2 {
        return;
    }
    let all: Vec<String> = m
        .loaders
        .iter()
        .map(|l| format!("{}@{l:#x}", m.class))
        .collect();
    out.push_str(&format!(
        "\n{} class-loader copies, each with its own statics: {}. This is {}@{:#x}; pass another to read it.",
        m.loaders.len(),
        all.join(", "),
        m.class,
        m.loader
    ));
}

pub(super) async fn list_instances(ctx: Ctx, call: Call<InstancesParams>) -> Reply {
    let p = call.params?;
    let handle = ctx.engine.session(p.session_id.as_deref())?;
    if p.class_names.is_empty() {
        return Err(ToolError::new(
            "BAD_ARGUMENT",
            "class_names is empty: name at least one class",
        ));
    }
    let max = p.max_instances.unwrap_or(DEFAULT_HANDLES);
    let report = tokio::select! {
        r = handle.instances(&p.class_names, max) => r?,
        _ = super::cancelled() => return Err(super::memory::walk_cancelled()),
    };
    Ok(super::text(render_instances(&report)))
}

fn render_instances(r: &InstanceReport) -> String {
    let mut out = String::from(
        "Live instances, exact type only (subclasses and implementations are not counted; name them too):",
    );
    let copies = |class: &str| r.rows.iter().filter(|x| x.class == class).count();
    for row in &r.rows {
        let name = if copies(&row.class) > 1 {
            format!("{}@{:#x}", row.class, row.loader)
        } else {
            row.class.clone()
        };
        out.push_str(&format!("\n  {name}: {}", row.count));
        if !row.handles.is_empty() {
            let ids: Vec<String> = row.handles.iter().map(|h| format!("@{h:#x}")).collect();
            out.push_str(&format!(" — {}", ids.join(" ")));
            if (row.handles.len() as i64) < row.count {
                out.push_str(&format!(" (first {}; max_instances)", row.handles.len()));
            }
        }
    }
    if !r.not_loaded.is_empty() {
        out.push_str(&format!(
            "\nNot loaded (so no instance exists yet, or the name is wrong): {}; debug_list_classes shows what is.",
            r.not_loaded.join(", ")
        ));
    }
    out.push_str(&format!(
        "\nStop-the-world: the JVM paused its threads for {} ms to count ({} heap walk{} in all",
        r.count_time.as_millis(),
        r.walks,
        if r.walks == 1 { "" } else { "s" }
    ));
    if r.walks > 1 {
        out.push_str(&format!(
            ", {} ms more for the handles",
            r.handle_time.as_millis()
        ));
    }
    out.push_str("); the cost grows with the live heap, not the answer.");
    out
}
