//! The source of a loaded class: the file the JVM says it was compiled
//! from (with a JSR-45 SMAP when the class has one), a bounded window of it
//! read from the source roots, and, when a class root is configured, that
//! window checked two ways: the JVM's line tables against the `.class`, and
//! the `.class` against the `.java`.

use std::path::{Path, PathBuf};

use crate::door::Jvm;
use crate::error::{CodeError, JdwpError, SessionError};
use crate::jdwp::ErrorCode;
use crate::jdwp::ReferenceTypeId;
use crate::jdwp::reference_type::{SourceDebugExtension, SourceFile};
use crate::model::stale::{self, MethodVerdict};

use super::{ClassSource, Pinned, files, loaded};

/// What debug_source asks.
#[derive(Debug, Clone, Default)]
pub struct SourceQuery {
    /// A loaded class (`Name` or `Name@0x<loader>`).
    pub class: Option<String>,
    /// A source file, `Foo.java` or `com/acme/Foo.java`.
    pub file: Option<String>,
    pub line: Option<u32>,
    pub context: u32,
    pub whole_file: bool,
    pub max_lines: usize,
    pub source_roots: Option<Vec<PathBuf>>,
    pub class_roots: Option<Vec<PathBuf>>,
}

/// The text half.
#[derive(Debug, Clone)]
pub enum SourceText {
    /// Lines `first..first + lines.len()` (1-based) of `total`.
    Shown {
        path: PathBuf,
        total: usize,
        first: usize,
        lines: Vec<String>,
    },
    /// The class carries no SourceFile attribute (`javac -g:none`, synthetic).
    NoSourceName,
    /// No source root is configured (or the call passed `[]`).
    NoRoots,
    /// No root holds the file; `jars` roots were skipped.
    NotFound {
        searched: Vec<PathBuf>,
        jars: usize,
    },
    Unreadable {
        path: PathBuf,
        error: String,
    },
}

/// The check of the window against the running bytecode.
#[derive(Debug, Clone)]
pub enum SourceCheck {
    /// No class root (`disabled`: the call passed `class_roots: []`).
    NoClassRoot { disabled: bool },
    /// The class is not loaded: there is no running bytecode to check.
    NotLoaded,
    /// A class root is configured but its build could not be read.
    NoBuild(CodeError),
    Checked {
        class_path: PathBuf,
        /// Methods whose JVM line table differs from the `.class`.
        moved: Vec<MethodVerdict>,
        /// Structural differences between the loaded type and the `.class`.
        structural: usize,
        /// Neither side has line tables to compare.
        no_lines: bool,
        /// The `.class` names line `.0` but the `.java` has `.1` lines.
        too_short: Option<(u16, usize)>,
        /// The `.java` was modified after the `.class`.
        source_newer: bool,
        /// A JSR-45 class: no length check.
        translated: bool,
    },
}

/// What debug_source found.
#[derive(Debug, Clone)]
pub struct SourceView {
    /// The loaded copy, when the class is loaded.
    pub class: Option<Pinned>,
    /// The class name (from the selector or the file's place under a root).
    pub class_name: String,
    /// The JVM's SourceFile for the class.
    pub source_file: Option<String>,
    /// The JSR-45 SourceDebugExtension.
    pub smap: Option<String>,
    /// With no SourceFile, the file name guessed from the class name
    /// (`Outer$1` → `Outer.java`) and read.
    pub guessed: Option<String>,
    pub text: SourceText,
    pub check: SourceCheck,
}

/// A JDWP read whose "no such information" answer is `None`.
fn optional(r: Result<String, JdwpError>) -> Result<Option<String>, JdwpError> {
    match r {
        Ok(s) => Ok(Some(s)),
        Err(e)
            if matches!(
                e.code(),
                Some(ErrorCode::ABSENT_INFORMATION) | Some(ErrorCode::NOT_IMPLEMENTED)
            ) =>
        {
            Ok(None)
        }
        Err(e) => Err(e),
    }
}

/// The class a source path under a root declares: `com/acme/Foo.java` → `com.acme.Foo`.
fn class_of(rel: &Path) -> String {
    let s = rel
        .with_extension("")
        .to_string_lossy()
        .replace(['/', '\\'], ".");
    s.trim_start_matches('.').to_string()
}

/// Finds the file `file` names: as given, under each root, then by name.
async fn locate_file(roots: &[PathBuf], file: &str) -> (Option<(PathBuf, String)>, Vec<PathBuf>) {
    let given = Path::new(file);
    let mut searched = Vec::new();
    if given.is_absolute() {
        let class = given
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default();
        return (
            Some((given.to_path_buf(), class)),
            vec![given.to_path_buf()],
        );
    }
    for root in roots.iter().filter(|r| !files::is_jar(r)) {
        let candidate = root.join(given);
        searched.push(candidate.clone());
        if candidate.is_file() {
            return (Some((candidate, class_of(given))), searched);
        }
    }
    let name = given
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    if let Some((root, path)) = files::search_by_name(roots, &name).await {
        let rel = path.strip_prefix(&root).unwrap_or(&path).to_path_buf();
        return (Some((path, class_of(&rel))), searched);
    }
    (None, searched)
}

/// Reads the window the query asks for, from a source file under the
/// source roots and nothing else (`NotASource` names why not).
async fn window(
    q: &SourceQuery,
    roots: &[PathBuf],
    path: &Path,
) -> Result<(SourceText, Option<std::time::SystemTime>), SessionError> {
    let real = files::source_under_roots(roots, path, files::SOURCE_EXTENSIONS)
        .await
        .map_err(|why| CodeError::NotASource {
            path: path.to_path_buf(),
            why,
        })?;
    Ok(read_window(q, &real).await)
}

/// Reads the window of a file the gate let through.
async fn read_window(q: &SourceQuery, path: &Path) -> (SourceText, Option<std::time::SystemTime>) {
    match files::read_bounded(path, files::MAX_SOURCE_FILE).await {
        Ok(read) => {
            let text = String::from_utf8_lossy(&read.bytes);
            let all: Vec<&str> = text.lines().collect();
            let total = all.len();
            let max = q.max_lines.max(1);
            let (first, last) = if q.whole_file {
                (1, total.min(max))
            } else if let Some(line) = q.line {
                let line = line as usize;
                let c = q.context as usize;
                let first = line.saturating_sub(c).max(1);
                (
                    first,
                    line.saturating_add(c)
                        .min(total)
                        .min(first.saturating_add(max - 1)),
                )
            } else {
                (1, 0)
            };
            let lines = if first <= last {
                all[first - 1..last].iter().map(|l| l.to_string()).collect()
            } else {
                Vec::new()
            };
            (
                SourceText::Shown {
                    path: read.path,
                    total,
                    first,
                    lines,
                },
                read.modified,
            )
        }
        Err(files::ReadFailure::Missing) => (
            SourceText::NotFound {
                searched: vec![path.to_path_buf()],
                jars: 0,
            },
            None,
        ),
        Err(files::ReadFailure::Unreadable(error)) => (
            SourceText::Unreadable {
                path: path.to_path_buf(),
                error,
            },
            None,
        ),
    }
}

/// Runs debug_source.
pub async fn view(session: &Jvm, q: &SourceQuery) -> Result<SourceView, SessionError> {
    let source_roots: Vec<PathBuf> = match q.source_roots.as_deref() {
        Some(given) => {
            session.info().remember_source_roots(given);
            given.to_vec()
        }
        None => session.roots().source,
    };
    let source_roots: &[PathBuf] = &source_roots;
    let (pinned, class_name, found, searched) = match (&q.class, &q.file) {
        (Some(selector), _) => {
            let p = loaded::pin(session, selector).await?;
            let name = p.name.clone();
            (Some(p), name, None, Vec::new())
        }
        (None, Some(file)) => {
            let (found, searched) = locate_file(source_roots, file).await;
            let class = found.as_ref().map(|(_, c)| c.clone()).unwrap_or_else(|| {
                class_of(
                    Path::new(file)
                        .file_name()
                        .map(Path::new)
                        .unwrap_or(Path::new("")),
                )
            });
            let pinned = match loaded::pin(session, &class).await {
                Ok(p) => Some(p),
                Err(SessionError::Code(CodeError::NotLoaded { .. })) => None,
                Err(e) => return Err(e),
            };
            (pinned, class, found.map(|(p, _)| p), searched)
        }
        (None, None) => {
            return Err(CodeError::NotLoaded {
                class: String::new(),
            }
            .into());
        }
    };
    let conn = session.connection();
    let (source_file, smap) = match &pinned {
        Some(p) => {
            let id = ReferenceTypeId(p.type_id);
            let (f, s) = futures::join!(
                conn.send(&SourceFile { ref_type: id }),
                conn.send(&SourceDebugExtension { ref_type: id })
            );
            (
                optional(f).map_err(|e| session.map_err(e))?,
                optional(s).map_err(|e| session.map_err(e))?,
            )
        }
        None => (None, None),
    };
    let jars = source_roots.iter().filter(|r| files::is_jar(r)).count();
    let mut guessed = None;
    let guess = |class: &str| {
        let outer = files::outermost(class);
        format!("{}.java", &outer[outer.rfind('.').map_or(0, |i| i + 1)..])
    };
    let (text, source_mtime) = match (found, &source_file) {
        (Some(path), _) => window(q, source_roots, &path).await?,
        (None, _) if q.file.is_some() => (SourceText::NotFound { searched, jars }, None),
        (None, None) => {
            let name = guess(&class_name);
            let rel = files::package_dir(&class_name).join(&name);
            match source_roots
                .iter()
                .map(|r| r.join(&rel))
                .find(|c| c.is_file())
            {
                Some(path) => {
                    guessed = Some(name);
                    window(q, source_roots, &path).await?
                }
                None => (SourceText::NoSourceName, None),
            }
        }
        (None, Some(_)) if source_roots.is_empty() => (SourceText::NoRoots, None),
        (None, Some(name)) => {
            let rel = files::package_dir(&class_name).join(name);
            let candidates: Vec<PathBuf> = source_roots
                .iter()
                .filter(|r| !files::is_jar(r))
                .map(|r| r.join(&rel))
                .collect();
            match candidates.iter().find(|c| c.is_file()) {
                Some(path) => window(q, source_roots, path).await?,
                None => (
                    SourceText::NotFound {
                        searched: candidates,
                        jars,
                    },
                    None,
                ),
            }
        }
    };
    let check = check(
        session,
        q,
        pinned.as_ref(),
        &text,
        source_mtime,
        smap.is_some(),
    )
    .await?;
    Ok(SourceView {
        class: pinned,
        class_name,
        source_file,
        smap,
        guessed,
        text,
        check,
    })
}

/// Checks the window against the running bytecode and the build.
async fn check(
    session: &Jvm,
    q: &SourceQuery,
    pinned: Option<&Pinned>,
    text: &SourceText,
    source_mtime: Option<std::time::SystemTime>,
    translated: bool,
) -> Result<SourceCheck, SessionError> {
    let roots = session.class_roots_for(q.class_roots.as_deref());
    if roots.is_empty() {
        return Ok(SourceCheck::NoClassRoot {
            disabled: q.class_roots.as_ref().is_some_and(Vec::is_empty),
        });
    }
    let Some(pinned) = pinned else {
        return Ok(SourceCheck::NotLoaded);
    };
    let build = match session
        .read_build(
            &pinned.name,
            &ClassSource {
                class_file: None,
                roots: Some(&roots),
            },
        )
        .await
    {
        Ok(b) => b,
        Err(e) => return Ok(SourceCheck::NoBuild(e)),
    };
    let running = loaded::shape(session, pinned, false)
        .await
        .map_err(|e| session.map_err(e))?;
    let comparison = stale::compare(&running, &build.shape);
    let total = match text {
        SourceText::Shown { total, .. } => Some(*total),
        _ => None,
    };
    let too_short = match (total, build.shape.max_line()) {
        (Some(total), Some(max)) if !translated && usize::from(max) > total => Some((max, total)),
        _ => None,
    };
    let source_newer = matches!((source_mtime, build.modified), (Some(s), Some(c)) if s > c);
    Ok(SourceCheck::Checked {
        class_path: build.path,
        moved: comparison.moved().cloned().collect(),
        structural: comparison.changes.len(),
        no_lines: comparison.no_lines(),
        too_short,
        source_newer,
        translated,
    })
}
