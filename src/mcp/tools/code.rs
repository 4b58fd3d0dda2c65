//! Code tools: is the JVM running my code, and swap in a fix. debug_source
//! (the file a class was compiled from, a window of it, checked against the
//! running bytecode), debug_check_stale (the build against the loaded type,
//! with the redefine forecast) and debug_reload_class (RedefineClasses,
//! optionally after javac).

use std::path::PathBuf;

use schemars::JsonSchema;
use serde::Deserialize;

use super::{Call, Ctx, Effect, Reply, Route};
use crate::actors::{
    Pinned, ReloadQuery, SourceCheck, SourceQuery, SourceText, SourceView, StaleView, StopStaleness,
};
use crate::mcp::error::ToolError;
use crate::mcp::render::change_line;
use crate::model::stale::{Code, Lines, Restriction};

const DEFAULT_CONTEXT: u32 = 20;
const DEFAULT_MAX_LINES: usize = 400;

/// Arguments of debug_source.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SourceParams {
    /// Session id; default: the current session.
    pub session_id: Option<String>,
    /// Loaded class; Name@0x<loader> pins a copy.
    pub class_name: Option<String>,
    /// Instead of class_name: Foo.java:42 or com/acme/Foo.java.
    pub file: Option<String>,
    pub line: Option<u32>,
    /// Lines either side; default 20.
    pub context: Option<u32>,
    /// Whole file, up to max_lines (default 400).
    pub whole_file: Option<bool>,
    pub max_lines: Option<usize>,
    /// Replace the source roots.
    #[serde(default, deserialize_with = "crate::mcp::tools::args::strings")]
    pub source_roots: Option<Vec<String>>,
    /// Replace the class roots; [] skips the check.
    #[serde(default, deserialize_with = "crate::mcp::tools::args::strings")]
    pub class_roots: Option<Vec<String>>,
}

/// Arguments of debug_check_stale.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CheckStaleParams {
    /// Session id; default: the current session.
    pub session_id: Option<String>,
    /// Loaded class; Name@0x<loader> pins a copy.
    pub class_name: String,
    /// The .class to compare instead.
    pub class_file: Option<String>,
    /// Replace the session's class roots.
    #[serde(default, deserialize_with = "crate::mcp::tools::args::strings")]
    pub class_roots: Option<Vec<String>>,
    /// Also compare code bytes.
    pub bytecode: Option<bool>,
    /// Compare with the source under the source roots, compiled now.
    pub source: Option<bool>,
}

/// Arguments of debug_reload_class.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ReloadParams {
    /// Session id; default: the current session.
    pub session_id: Option<String>,
    /// Loaded class; Name@0x<loader> pins a copy.
    pub class_name: String,
    /// The .class to install instead.
    pub class_file: Option<String>,
    /// Replace the session's class roots.
    #[serde(default, deserialize_with = "crate::mcp::tools::args::strings")]
    pub class_roots: Option<Vec<String>>,
    /// Check everything, send nothing.
    pub dry_run: Option<bool>,
    /// Run javac first, on sources or the class's own.
    pub compile: Option<bool>,
    #[serde(default, deserialize_with = "crate::mcp::tools::args::strings")]
    pub sources: Option<Vec<String>>,
}

pub fn routes() -> Vec<Route> {
    vec![
        Route::new(
            "debug_source",
            "Source of a loaded class",
            "A loaded class's source file from the source roots: a window around line, or \
             whole_file. With class roots, the window is checked against the running bytecode.",
            Effect::Read,
            source,
        )
            .with_guide(
                "The file a loaded class was compiled from (JSR-45 noted) and a window of it \
                  from the source roots: line with context, or whole_file. Inner and anonymous classes resolve to \
                  their file. With a class root, the window is checked against the running bytecode (JVM line \
                  tables vs .class, .class vs .java); silence means checked and equal. Suspends nothing.",
            ),
        Route::new(
            "debug_check_stale",
            "Check for stale code",
            "Compare a loaded class with its .class under the class roots: moved lines, code bytes \
             (bytecode:true), methods on one side only, and the restrictions a reload would trip.",
            Effect::Read,
            check_stale,
        )
            .with_guide(
                "Compares a loaded class with its .class under the class roots: per-method line tables (an edit \
                  that moved a line), with bytecode:true the code bytes too (a body edit that moved none), and \
                  methods on one side only. Forecasts the HotSpot restrictions a reload would trip, each with its \
                  JDWP code. One packet per method; suspends nothing.",
            ),
        Route::new(
            "debug_reload_class",
            "Hot-swap a class",
            "Redefine a loaded class from its .class under the class roots or class_file; \
             compile:true runs javac on sources first. Method bodies only: a refusal names the \
             restriction. Running frames keep the old code. Refused read-only (dry_run is not).",
            Effect::Changes,
            reload,
        )
            .with_guide(
                "RedefineClasses with the .class from the class roots or class_file; compile:true runs javac on \
                  sources first and returns its errors. Method bodies only: a refusal names the restriction. Frames \
                  already running keep the old code: debug_pop_frame then debug_continue enters the new one. The \
                  swap outlives the session. sources are .java files under the source roots, nothing else; \
                  without them, compile:true builds the class's own source found there. \
                  Refused in read-only mode (a dry_run is not, unless it compiles: no javac runs read-only).",
            )
            .runs_long_when(|args| super::flag(args, "compile")),
    ]
}

fn paths(v: Option<Vec<String>>) -> Option<Vec<PathBuf>> {
    v.map(|v| v.into_iter().map(PathBuf::from).collect())
}

/// `Foo.java:42` → (`Foo.java`, 42).
fn split_file_line(file: &str) -> (String, Option<u32>) {
    match file.rsplit_once(':') {
        Some((f, l)) if !f.is_empty() && l.parse::<u32>().is_ok() => {
            (f.to_string(), l.parse().ok())
        }
        _ => (file.to_string(), None),
    }
}

/// `Name (loader @0x…)` and the other copies.
fn pinned_line(p: &Pinned) -> String {
    let mut out = format!("{} (loader @{:#x})", p.name, p.loader);
    if !p.others.is_empty() {
        let others: Vec<String> = p
            .others
            .iter()
            .map(|l| format!("{}@{l:#x}", p.name))
            .collect();
        out.push_str(&format!(
            "\nCaveat: {} copies are loaded, each with its own statics; this is the first. Others: {}",
            p.others.len() + 1,
            others.join(", ")
        ));
    }
    out
}

async fn source(ctx: Ctx, call: Call<SourceParams>) -> Reply {
    let (tool, p) = (call.tool, call.params?);
    let handle = ctx.engine.session(p.session_id.as_deref())?;
    let (file, file_line) = match &p.file {
        Some(f) => {
            let (f, l) = split_file_line(f);
            (Some(f), l)
        }
        None => (None, None),
    };
    if p.class_name.is_some() == file.is_some() {
        return Err(ToolError::bad_argument(
            tool,
            "give exactly one of class_name or file",
        ));
    }
    let q = SourceQuery {
        class: p.class_name.clone(),
        file,
        line: p.line.or(file_line),
        context: p.context.unwrap_or(DEFAULT_CONTEXT),
        whole_file: p.whole_file.unwrap_or(false),
        max_lines: p.max_lines.unwrap_or(DEFAULT_MAX_LINES),
        source_roots: paths(p.source_roots),
        class_roots: paths(p.class_roots),
    };
    let view = handle.source(&q).await?;
    Ok(super::text(render_source(&view, &q)))
}

fn render_source(v: &SourceView, q: &SourceQuery) -> String {
    let mut out = match &v.class {
        Some(p) => format!("{} compiled from ", pinned_line(p)),
        None => format!("{} (not loaded: no running bytecode to ask) ", v.class_name),
    };
    match (&v.class, &v.source_file) {
        (Some(_), Some(f)) => out.push_str(f),
        (Some(_), None) => {
            out.push_str("? (no SourceFile attribute: compiled with -g:none, or synthetic)")
        }
        (None, _) => {}
    }
    if let Some(g) = &v.guessed {
        out.push_str(&format!("\nRead {g}, guessed from the class name"));
    }
    if let Some(smap) = &v.smap {
        let stratum = smap.lines().nth(2).unwrap_or("").trim();
        out.push_str(&format!(
            "\nJSR-45: the class carries a source map (default stratum {stratum:?}); its .java is an intermediate"
        ));
    }
    match &v.text {
        SourceText::Shown { path, total, first, lines } => {
            if let (true, Some(line)) = (lines.is_empty(), q.line.filter(|l| *l as usize > *total)) {
                out.push_str(&format!(
                    "\nLine {line} is past the end of {} ({total} lines): this file is not the source of that line",
                    path.display()
                ));
            } else if lines.is_empty() {
                out.push_str(&format!(
                    "\n{} ({total} lines); pass line or whole_file:true for text",
                    path.display()
                ));
            } else {
                let last = first + lines.len() - 1;
                out.push_str(&format!("\n{} lines {first}-{last} of {total}:", path.display()));
                let width = last.to_string().len();
                for (i, l) in lines.iter().enumerate() {
                    let n = first + i;
                    let mark = if q.line == Some(n as u32) { ">" } else { " " };
                    out.push_str(&format!("\n{mark}{n:>width$}  {l}"));
                }
            }
        }
        SourceText::NoSourceName => out.push_str(
            "\nNo file to read: the JVM has no SourceFile for it. Pass file:\"Foo.java:42\" if you know it",
        ),
        SourceText::NoRoots => out.push_str(
            "\nNo source root configured: pass source_roots, or set them on debug_attach / JDWP_SOURCE_ROOTS",
        ),
        SourceText::NotFound { searched, jars } => {
            out.push_str("\nNot found under the source roots; looked at: ");
            let s: Vec<String> = searched.iter().map(|p| p.display().to_string()).collect();
            out.push_str(&if s.is_empty() { "nothing".to_string() } else { s.join(", ") });
            if *jars > 0 {
                out.push_str(&format!(" ({jars} jar root(s) skipped: only directories are read)"));
            }
        }
        SourceText::Unreadable { path, error } => {
            out.push_str(&format!("\nFound {} but cannot read it: {error}", path.display()))
        }
    }
    render_source_check(&v.check, &mut out);
    out
}

fn render_source_check(check: &SourceCheck, out: &mut String) {
    match check {
        SourceCheck::NoClassRoot { disabled } => out.push_str(if *disabled {
            "\nBytecode: not checked (class_roots: [])"
        } else {
            "\nBytecode: not checked (no class root; pass class_roots to compare with the running code)"
        }),
        SourceCheck::NotLoaded => out.push_str("\nBytecode: not checked (class not loaded)"),
        SourceCheck::NoBuild(e) => out.push_str(&format!("\nBytecode: not checked ({e})")),
        SourceCheck::Checked {
            class_path,
            moved,
            structural,
            no_lines,
            too_short,
            source_newer,
            translated: _,
        } => {
            let at = class_path.display();
            if *no_lines {
                out.push_str(&format!(
                    "\nBytecode: cannot tell, no line tables on either side ({at}); debug_check_stale bytecode:true compares code"
                ));
            }
            if !moved.is_empty() {
                let names: Vec<String> = moved.iter().map(|m| m.name.clone()).collect();
                out.push_str(&format!(
                    "\nSTALE: the JVM runs other bytecode than {at}: line tables differ in {}. Redeploy, or debug_reload_class",
                    names.join(", ")
                ));
            }
            if *structural > 0 {
                out.push_str(&format!(
                    "\nSTALE: {structural} structural difference(s) between the loaded class and {at}; debug_check_stale names them"
                ));
            }
            if let Some((max, total)) = too_short {
                out.push_str(&format!(
                    "\nSOURCE MISMATCH: {at} has code on line {max} but this file has {total} lines: it is not the source of that build. Recompile"
                ));
            }
            if *source_newer {
                out.push_str(&format!(
                    "\nHint: the .java is newer than {at} (a timestamp only: a checkout also moves it)"
                ));
            }
        }
    }
}

async fn check_stale(ctx: Ctx, call: Call<CheckStaleParams>) -> Reply {
    let p = call.params?;
    let handle = ctx.engine.session(p.session_id.as_deref())?;
    let bytecode = p.bytecode.unwrap_or(false);
    let source = p.source.unwrap_or(false);
    if source && (p.class_file.is_some() || p.class_roots.is_some()) {
        return Err(ToolError::new(
            "BAD_ARGUMENT",
            "source:true compares with the source compiled now; class_file and class_roots name a build instead: pass one or the other",
        ));
    }
    let v = handle
        .check_stale(
            &p.class_name,
            p.class_file.map(PathBuf::from),
            paths(p.class_roots),
            bytecode,
            source,
        )
        .await?;
    Ok(super::text(render_stale(&v)))
}

fn render_stale(v: &StaleView) -> String {
    let c = &v.comparison;
    let mut out = format!(
        "{} vs {}{} (class file {}.{})",
        pinned_line(&v.class),
        v.class_path.display(),
        if v.from_source { " compiled now" } else { "" },
        v.built_version.0,
        v.built_version.1
    );
    let moved: Vec<_> = c.moved().collect();
    let both = c.methods.len();
    if c.no_lines() && !c.bytecode {
        out.push_str("\nLine tables: CANNOT TELL (none on either side, e.g. -g:none); bytecode:true compares code");
    } else if moved.is_empty() {
        out.push_str(&format!("\nLine tables: no line moved in {both} methods"));
    } else {
        out.push_str(&format!(
            "\nLine tables: STALE, {} of {both} methods moved lines:",
            moved.len()
        ));
        for m in &moved {
            if let Lines::Moved { running, built } = &m.lines {
                out.push_str(&format!(
                    "\n  {}{} running {running:?} vs build {built:?}",
                    m.name, m.signature
                ));
            }
        }
    }
    if c.bytecode {
        let differs: Vec<_> = c.code_differs().collect();
        if differs.is_empty() {
            let unknown = c.methods.iter().filter(|m| m.code == Code::Unknown).count();
            if unknown == both {
                out.push_str("\nBytecode: no method's code could be read from both sides");
            } else {
                out.push_str(&format!(
                    "\nBytecode: identical in {} methods",
                    both - unknown
                ));
            }
        } else {
            out.push_str(&format!(
                "\nBytecode: STALE, code differs in {}:",
                differs.len()
            ));
            for m in &differs {
                let note = if m.lines == Lines::Same {
                    " (lines match: a body edit, or another javac)"
                } else {
                    ""
                };
                out.push_str(&format!("\n  {}{}{note}", m.name, m.signature));
            }
        }
    } else {
        out.push_str(
            "\nBytecode: not compared (bytecode:true catches a body edit that moved no line)",
        );
    }
    let forecast = c.forecast();
    if forecast.is_empty() {
        out.push_str(
            "\nRedefine forecast: no structural change detected (not a promise: the verifier and the JVM decide; debug_reload_class dry_run:true checks the JVM)",
        );
    } else {
        out.push_str(&format!(
            "\nRedefine forecast: REFUSED, {} restriction(s); only a redeploy or restart installs this build:",
            forecast.len()
        ));
        for ch in &c.changes {
            out.push_str(&format!("\n  {}", change_line(ch)));
        }
        out.push_str("\n  (a bridge or synthetic member from another javac can show here too)");
        if v.caps.unrestricted || (v.caps.add_method && forecast == [Restriction::AddMethod]) {
            out.push_str("\n  This JVM reports it can redefine beyond method bodies, so it may accept it anyway");
        }
    }
    if !v.caps.redefine {
        out.push_str("\nThis JVM cannot redefine classes at all (canRedefineClasses false)");
    }
    out.push_str(&format!("\nPackets: {}", v.packets));
    out
}

async fn reload(ctx: Ctx, call: Call<ReloadParams>) -> Reply {
    let p = call.params?;
    let handle = ctx.engine.session(p.session_id.as_deref())?;
    let dry_run = p.dry_run.unwrap_or(false);
    if !dry_run {
        handle.ensure_writable("redefining a class")?;
    }
    let q = ReloadQuery {
        class: p.class_name,
        class_file: p.class_file.map(PathBuf::from),
        class_roots: paths(p.class_roots),
        dry_run,
        compile: p.compile.unwrap_or(false),
        sources: paths(p.sources).unwrap_or_default(),
    };
    if q.compile
        && let Some(p) = super::progress()
    {
        p.report(0.0, None, "compiling with javac".into());
    }
    let v = handle.reload_class(&q, super::cancelled()).await?;
    let mut out = String::new();
    if let Some(c) = &v.compiled {
        out.push_str(&format!("Compiled: {}", c.command));
        if !c.diagnostics.is_empty() {
            out.push_str(&format!("\n{}", c.diagnostics));
        }
        out.push('\n');
    }
    if v.dry_run {
        out.push_str(&format!(
            "Dry run: would install {} ({} bytes) into {}; nothing sent. JVM: canRedefineClasses {}, canAddMethod {}, canUnrestrictedlyRedefineClasses {}, canPopFrames {}. debug_check_stale forecasts refusals",
            v.class_path.display(), v.bytes, pinned_line(&v.class),
            v.caps.redefine, v.caps.add_method, v.caps.unrestricted, v.caps.pop_frames
        ));
    } else {
        out.push_str(&format!(
            "Reloaded {} from {} ({} bytes; swap {} of this copy by this session). New calls run the new code; it stays after the session ends",
            pinned_line(&v.class), v.class_path.display(), v.bytes, v.times
        ));
        if !v.rearmed.is_empty() {
            out.push_str(&format!(
                "\nThe JVM drops breakpoints in a redefined class: re-armed {} on the new code (a line that moved now stops at what is on it)",
                v.rearmed.join(", ")
            ));
        }
        for (id, why) in &v.rearm_failed {
            out.push_str(&format!("\nWARNING: {id} no longer fires (its breakpoint went with the old code) and re-arming failed: {why}"));
        }
        for t in v.inside.iter().filter(|_| !v.caps.pop_frames) {
            out.push_str(&format!(
                "\nThread {:#x} {:?} is inside the class at frame #{}: that frame keeps the old code, and this JVM cannot pop frames (canPopFrames false); the new code runs from the next call",
                t.thread.0, t.name, t.frame
            ));
        }
        for t in v.inside.iter().filter(|_| v.caps.pop_frames) {
            out.push_str(&format!(
                "\nThread {:#x} {:?} is inside the class at frame #{} {}: that frame keeps the old code{}. Next: debug_pop_frame {{thread_id:\"{:#x}\", frame_index:{}}} then debug_continue runs the new body",
                t.thread.0, t.name, t.frame, if t.obsolete { format!("{} (a replaced method)", v.class.name) } else { t.at.clone() },
                if t.obsolete { " (its method is obsolete now)" } else { "" }, t.thread.0, t.frame
            ));
        }
    }
    Ok(super::text(out))
}

/// The staleness line a line stop adds to its arm reply (`None`: checked
/// and equal, or nothing to say).
pub fn line_stop_note(s: &StopStaleness) -> Option<String> {
    match s {
        StopStaleness::NoClassRoot => Some(
            "Build: not checked (no class root; set class_roots to compare the running bytecode with your build)".into(),
        ),
        StopStaleness::NotLoaded => None,
        StopStaleness::Checked {
            class_path,
            comparison,
            from_source,
        } => {
            let moved: Vec<String> = comparison.moved().map(|m| m.name.clone()).collect();
            let forecast = comparison.forecast();
            let (built, detail) = if *from_source {
                (" compiled now", "debug_check_stale source:true")
            } else {
                ("", "debug_check_stale")
            };
            if moved.is_empty() && comparison.changes.is_empty() {
                None
            } else if !moved.is_empty() {
                Some(format!(
                    "STALE: the JVM's line tables differ from {}{built} in {}: this line may be another statement. {detail} has the detail",
                    class_path.display(),
                    moved.join(", ")
                ))
            } else {
                Some(format!(
                    "STALE: the loaded class differs structurally from {}{built} ({}); {detail} has the detail",
                    class_path.display(),
                    forecast.iter().map(|r| r.name()).collect::<Vec<_>>().join(", ")
                ))
            }
        }
        StopStaleness::Failed(e) => Some(format!("Build: not checked ({e})")),
    }
}

/// The classes a session installed, named for list_sessions, panic and
/// disconnect (`None` when it installed none).
pub fn installed_note(handle: &crate::actors::SessionHandle) -> Option<String> {
    let installed = handle.installed_classes();
    if installed.is_empty() {
        return None;
    }
    let names: Vec<String> = installed
        .iter()
        .map(|i| {
            format!(
                "{}@{:#x} (from {}, x{})",
                i.name,
                i.loader,
                i.from.display(),
                i.times
            )
        })
        .collect();
    Some(format!(
        "Installed by debug_reload_class and still in the JVM (no panic or disconnect undoes it; only a redeploy does): {}",
        names.join(", ")
    ))
}

/// Appends to a line stop's arm reply what its classes look like against
/// the build (once per class; nothing when checked and equal).
pub async fn note_line_stop_staleness(
    handle: &crate::actors::SessionHandle,
    classes: &[String],
    reply: &mut rmcp::model::CallToolResult,
) {
    let mut notes = Vec::new();
    for class in classes {
        let note = line_stop_note(&handle.line_stop_staleness(class).await);
        if let Some(n) = note.filter(|n| !notes.contains(n)) {
            notes.push(n);
        }
    }
    if let Some(rmcp::model::ContentBlock::Text(t)) = reply.content.first_mut() {
        for n in notes {
            t.text.push('\n');
            t.text.push_str(&n);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_and_line_split() {
        assert_eq!(
            split_file_line("Foo.java:42"),
            ("Foo.java".into(), Some(42))
        );
        assert_eq!(split_file_line("a/Foo.java"), ("a/Foo.java".into(), None));
        assert_eq!(split_file_line("C:x"), ("C:x".into(), None));
    }
}
