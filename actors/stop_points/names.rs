//! Names a condition or a trace expression reads, checked when a line
//! stop is armed: each bare name must be a local live at every armed
//! location, or a field (instance, static or captured `val$` field) of the
//! class or a superclass. A misspelt name is refused up front, with the
//! locals in scope, instead of failing on every hit of a hot line.
//! `frame[0].x` must be a local live there; a deeper `frame[N].x` names a
//! caller, which varies from hit to hit and is unknown when arming, so it
//! is left to each hit (a missing one fails that hit's expression, with
//! the caller's locals).

use std::collections::HashSet;

use crate::error::ArmError;
use crate::jdwp::{Location, ReferenceTypeId};
use crate::jvm::classes::{ClassCache, MethodInfo, Variables};
use crate::model::label::{CodeLabel, LineAt};
use crate::model::stop_point::StopPointSpec;

/// The expressions of `spec` an armed line runs: its condition, then its
/// trace expressions.
fn sources(spec: &StopPointSpec) -> Vec<&str> {
    let mut out: Vec<&str> = spec.filters.condition.iter().map(String::as_str).collect();
    if let Some(t) = spec.trace() {
        out.extend(t.exprs.iter().map(String::as_str));
    }
    out
}

/// Every field name of `class` and its superclasses.
async fn field_names(
    classes: &ClassCache,
    class: ReferenceTypeId,
) -> Result<HashSet<String>, ArmError> {
    let mut names = HashSet::new();
    for c in classes.hierarchy(class).await? {
        for f in classes.fields(c).await?.iter() {
            names.insert(f.name.clone());
        }
    }
    Ok(names)
}

/// Refuses the first bare name of `spec`'s expressions that no armed
/// location of `class` can resolve.
pub async fn check(
    classes: &ClassCache,
    class: ReferenceTypeId,
    class_name: &str,
    found: &[(Location, MethodInfo)],
    line: Option<u32>,
    spec: &StopPointSpec,
) -> Result<(), ArmError> {
    let parsed: Vec<_> = sources(spec)
        .into_iter()
        .filter_map(|src| crate::expr::parse(src).ok())
        .collect();
    let own_frame = |p: &crate::expr::Parsed| -> Vec<crate::expr::Ident> {
        p.expr
            .frame_names()
            .into_iter()
            .filter(|(depth, _)| *depth == 0)
            .map(|(_, i)| i.clone())
            .collect()
    };
    if parsed
        .iter()
        .all(|p| p.expr.bare_names().is_empty() && own_frame(p).is_empty())
    {
        return Ok(());
    }
    let fields = field_names(classes, class).await?;
    for (location, method) in found {
        let (live, table) = match &*classes.variables(location.class, location.method).await? {
            Variables::Known { vars, .. } => (
                vars.iter()
                    .filter(|v| v.live_at(location.index as i64))
                    .map(|v| v.name.clone())
                    .collect::<Vec<_>>(),
                true,
            ),
            Variables::Absent => (Vec::new(), false),
        };
        for p in &parsed {
            for ident in p.expr.bare_names() {
                let n = ident.name.as_str();
                let known = live.iter().any(|l| l == n)
                    || fields.contains(n)
                    || fields.contains(&format!("val${n}"));
                if !known {
                    return Err(unknown(
                        n,
                        &ident.span,
                        p,
                        class_name,
                        method,
                        line,
                        &live,
                        table,
                    ));
                }
            }
            for ident in own_frame(p) {
                if !live.contains(&ident.name) {
                    let name = format!("frame[0].{}", ident.name);
                    return Err(unknown(
                        &name,
                        &ident.span,
                        p,
                        class_name,
                        method,
                        line,
                        &live,
                        table,
                    ));
                }
            }
        }
    }
    Ok(())
}

/// The refusal of `name`, unknown where `p` runs.
#[allow(clippy::too_many_arguments)]
fn unknown(
    name: &str,
    span: &crate::expr::Span,
    p: &crate::expr::Parsed,
    class_name: &str,
    method: &MethodInfo,
    line: Option<u32>,
    live: &[String],
    has_table: bool,
) -> ArmError {
    ArmError::UnknownName {
        name: name.to_string(),
        expression: p.source.clone(),
        column: span.column(&p.source),
        scope: CodeLabel::new(
            class_name,
            Some(&method.name),
            line.map_or(LineAt::Omitted, |l| LineAt::At(i64::from(l))),
        )
        .to_string(),
        locals: live.to_vec(),
        has_table,
    }
}
