//! Class tools: what the JVM has loaded. Each reads the JVM's own tables
//! and suspends nothing.

use schemars::JsonSchema;
use serde::Deserialize;

use super::{Call, Ctx, Effect, Reply, Route};
use crate::model::classes::{ClassPage, NameFilter, TypeKind, page};

/// Default page size of debug_list_classes.
const DEFAULT_LIMIT: usize = 100;

/// Arguments of debug_list_classes.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ListClassesParams {
    /// Session id; default: the current session.
    pub session_id: Option<String>,
    /// com.example.* (prefix), *.OrderService (suffix), or a substring.
    pub filter: Option<String>,
    pub include_arrays: Option<bool>,
    /// Classes per page; default 100.
    pub limit: Option<usize>,
    /// Matches to skip.
    pub offset: Option<usize>,
}

pub fn routes() -> Vec<Route> {
    vec![Route::new(
        "debug_list_classes",
        "List the loaded classes",
        "Loaded classes by name, filtered (com.example.*, *.OrderService, or a substring) and \
         paged, with counts. A class not used yet is not loaded.",
        Effect::Read,
        list_classes,
    )
             .with_guide(
                 "The classes the JVM has loaded, by dotted name, filtered (com.example.* prefix, *.OrderService \
                   suffix, or a bare substring) and paged, with how many matched of how many are loaded. A class not \
                   yet used is not loaded and does not appear, which is not the same as not existing. A name loaded \
                   by several class loaders shows its copy count. Arrays only with include_arrays. Suspends nothing.",
             )]
}

async fn list_classes(ctx: Ctx, call: Call<ListClassesParams>) -> Reply {
    let p = call.params?;
    let handle = ctx.engine.session(p.session_id.as_deref())?;
    let filter = NameFilter::parse(p.filter.as_deref());
    let limit = p.limit.unwrap_or(DEFAULT_LIMIT).max(1);
    let offset = p.offset.unwrap_or(0);
    let listed = page(
        handle.loaded_classes().await?,
        &filter,
        p.include_arrays.unwrap_or(false),
        offset,
        limit,
    );
    Ok(super::text(render(&listed, p.filter.as_deref())))
}

/// The page as text: a count line, one class per line, and where the rest is.
fn render(p: &ClassPage, filter: Option<&str>) -> String {
    let what = match filter {
        Some(f) if !f.trim().is_empty() => format!(" matching {f:?}"),
        _ => String::new(),
    };
    let mut out = format!("{} of {} loaded classes{what}", p.matched, p.loaded);
    if p.matched == 0 {
        out.push_str(
            "\nNone matched. A class loads on first use: trigger the code path, or widen the filter.",
        );
        return out;
    }
    let end = p.offset + p.shown.len();
    if p.offset > 0 || end < p.matched {
        out.push_str(&format!("; showing {}..{end}", p.offset));
    }
    for c in &p.shown {
        out.push('\n');
        out.push_str(&c.name);
        if c.kind == TypeKind::Interface {
            out.push_str(" (interface)");
        }
        if c.copies > 1 {
            out.push_str(&format!(" ({} copies: one per class loader)", c.copies));
        }
    }
    if end < p.matched {
        out.push_str(&format!(
            "\n… {} more: offset:{end} shows the next page, or narrow the filter",
            p.matched - end
        ));
    }
    out
}
