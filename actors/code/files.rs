//! The files behind the code tools: class and source roots, the `.class`
//! and `.java` a loaded type maps to under them, bounded reads, and `javac`.
//! Roots are plain directories: a jar given as a root is skipped and said.

use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use crate::error::{JavacError, SourceRefusal};

/// Longest a class file may be (the JVM's own limit is far lower in practice).
pub const MAX_CLASS_FILE: u64 = 16 * 1024 * 1024;
/// Longest a source file may be read.
pub const MAX_SOURCE_FILE: u64 = 8 * 1024 * 1024;
/// Directory entries a by-name source search visits at most.
const SEARCH_BUDGET: usize = 50_000;
/// How long javac may run.
pub const JAVAC_LIMIT: Duration = Duration::from_secs(120);
/// Diagnostics kept from javac.
const DIAGNOSTICS_MAX: usize = 8 * 1024;

pub use crate::model::classfile::class_file_rel;

/// The package directories of `com.acme.Order$Line` (`com/acme`).
pub fn package_dir(class: &str) -> PathBuf {
    match class.rsplit_once('.') {
        Some((pkg, _)) => PathBuf::from(pkg.replace('.', "/")),
        None => PathBuf::new(),
    }
}

/// The enclosing top-level name: `Order$Line$1` → `Order`.
pub fn outermost(class: &str) -> &str {
    let simple_at = class.rfind('.').map_or(0, |i| i + 1);
    match class[simple_at..].find('$') {
        Some(d) => &class[..simple_at + d],
        None => class,
    }
}

/// Where a class file of `class` is looked for: every directory root, in order.
pub fn class_candidates(roots: &[PathBuf], class: &str) -> Vec<PathBuf> {
    let rel = class_file_rel(class);
    roots
        .iter()
        .filter(|r| !is_jar(r))
        .map(|r| r.join(&rel))
        .collect()
}

/// True for a root that is a jar or zip (not read).
pub fn is_jar(root: &Path) -> bool {
    root.extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("jar") || e.eq_ignore_ascii_case("zip"))
}

/// A file read whole, with its modification time.
pub struct Read {
    pub path: PathBuf,
    pub bytes: Vec<u8>,
    pub modified: Option<SystemTime>,
}

/// Why a file could not be read.
pub enum ReadFailure {
    Missing,
    Unreadable(String),
}

/// Reads `path` if it is a file no longer than `max`.
pub async fn read_bounded(path: &Path, max: u64) -> Result<Read, ReadFailure> {
    let meta = match tokio::fs::metadata(path).await {
        Ok(m) if m.is_file() => m,
        Ok(_) => return Err(ReadFailure::Missing),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Err(ReadFailure::Missing),
        Err(e) => return Err(ReadFailure::Unreadable(e.to_string())),
    };
    if meta.len() > max {
        return Err(ReadFailure::Unreadable(format!(
            "{} bytes, over the {max}-byte limit",
            meta.len()
        )));
    }
    match tokio::fs::read(path).await {
        Ok(bytes) => Ok(Read {
            path: path.to_path_buf(),
            bytes,
            modified: meta.modified().ok(),
        }),
        Err(e) => Err(ReadFailure::Unreadable(e.to_string())),
    }
}

/// The extensions of source files: nothing else under a source root is
/// read, or handed to javac.
pub const SOURCE_EXTENSIONS: &[&str] = &["java", "kt", "kts", "scala", "groovy", "jsp", "jspx"];

/// Just `.java`: what javac is given.
pub const JAVA: &[&str] = &["java"];

/// `path` with every link and `..` resolved, when it is a file whose
/// extension is one of `extensions` inside one of the directory `roots`
/// (themselves resolved): the one gate every source read and every javac
/// argument passes, so `../../etc/passwd`, `/proc/self/environ`, a link
/// out of a root or a javac option is never taken for a source file.
pub async fn source_under_roots(
    roots: &[PathBuf],
    path: &Path,
    extensions: &[&str],
) -> Result<PathBuf, SourceRefusal> {
    let dirs: Vec<&PathBuf> = roots.iter().filter(|r| !is_jar(r)).collect();
    if dirs.is_empty() {
        return Err(SourceRefusal::NoRoots);
    }
    let real = match tokio::fs::canonicalize(path).await {
        Ok(p) => p,
        Err(_) => return Err(SourceRefusal::Missing),
    };
    let mut inside = false;
    for root in dirs {
        if let Ok(r) = tokio::fs::canonicalize(root).await
            && real.starts_with(&r)
        {
            inside = true;
            break;
        }
    }
    if !inside {
        return Err(SourceRefusal::OutsideRoots);
    }
    let ext = real
        .extension()
        .map(|e| e.to_string_lossy().to_lowercase())
        .unwrap_or_default();
    if !extensions.contains(&ext.as_str()) {
        return Err(SourceRefusal::NotSource);
    }
    match tokio::fs::metadata(&real).await {
        Ok(m) if m.is_file() => Ok(real),
        _ => Err(SourceRefusal::NotSource),
    }
}

/// The first of `candidates` that exists, read; `Err` lists what failed.
pub async fn first_readable(
    candidates: &[PathBuf],
    max: u64,
) -> Result<Read, Vec<(PathBuf, Option<String>)>> {
    let mut tried = Vec::new();
    for c in candidates {
        match read_bounded(c, max).await {
            Ok(r) => return Ok(r),
            Err(ReadFailure::Missing) => tried.push((c.clone(), None)),
            Err(ReadFailure::Unreadable(e)) => tried.push((c.clone(), Some(e))),
        }
    }
    Err(tried)
}

/// Looks for a file named `name` under `roots` (breadth first, bounded);
/// returns the root it was found under and its path.
pub async fn search_by_name(roots: &[PathBuf], name: &str) -> Option<(PathBuf, PathBuf)> {
    let roots: Vec<PathBuf> = roots.iter().filter(|r| !is_jar(r)).cloned().collect();
    let name = name.to_string();
    tokio::task::spawn_blocking(move || {
        let mut budget = SEARCH_BUDGET;
        for root in &roots {
            let mut queue = std::collections::VecDeque::from([root.clone()]);
            while let Some(dir) = queue.pop_front() {
                let Ok(entries) = std::fs::read_dir(&dir) else {
                    continue;
                };
                let mut subdirs = Vec::new();
                for entry in entries.flatten() {
                    if budget == 0 {
                        return None;
                    }
                    budget -= 1;
                    let path = entry.path();
                    match entry.file_type() {
                        Ok(t) if t.is_dir() => subdirs.push(path),
                        Ok(_) if entry.file_name().to_string_lossy() == name => {
                            return Some((root.clone(), path));
                        }
                        _ => {}
                    }
                }
                subdirs.sort();
                queue.extend(subdirs);
            }
        }
        None
    })
    .await
    .ok()
    .flatten()
}

/// What javac said, and whether it succeeded.
pub struct Compiled {
    pub command: String,
    pub success: bool,
    pub diagnostics: String,
}

/// The javac to run: `$JAVA_HOME/bin/javac`, else `javac` on PATH.
fn javac() -> PathBuf {
    std::env::var_os("JAVA_HOME")
        .filter(|h| !h.is_empty())
        .map(|h| PathBuf::from(h).join("bin/javac"))
        .filter(|p| p.is_file())
        .unwrap_or_else(|| PathBuf::from("javac"))
}

/// Compiles `sources` into `out` against `classpath`, with debug
/// information and (when known) the running class's release.
pub async fn javac_compile(
    sources: &[PathBuf],
    out: &Path,
    classpath: &[PathBuf],
    release: Option<u32>,
    options: &[&str],
) -> Result<Compiled, JavacError> {
    let javac = javac();
    let mut cmd = tokio::process::Command::new(&javac);
    cmd.arg("-g").args(options).arg("-d").arg(out);
    if !classpath.is_empty() {
        let joined =
            std::env::join_paths(classpath).map_err(|e| JavacError::Classpath(e.to_string()))?;
        cmd.arg("-cp").arg(joined);
    }
    if let Some(r) = release {
        cmd.arg("--release").arg(r.to_string());
    }
    cmd.args(sources);
    cmd.stdin(std::process::Stdio::null()).kill_on_drop(true);
    let command = format!(
        "{} -g{} -d {}{}{} {}",
        javac.display(),
        options.iter().map(|o| format!(" {o}")).collect::<String>(),
        out.display(),
        if classpath.is_empty() {
            String::new()
        } else {
            format!(
                " -cp {}",
                classpath
                    .iter()
                    .map(|p| p.display().to_string())
                    .collect::<Vec<_>>()
                    .join(":")
            )
        },
        release
            .map(|r| format!(" --release {r}"))
            .unwrap_or_default(),
        sources
            .iter()
            .map(|s| s.display().to_string())
            .collect::<Vec<_>>()
            .join(" ")
    );
    let output = match tokio::time::timeout(JAVAC_LIMIT, cmd.output()).await {
        Ok(Ok(o)) => o,
        Ok(Err(e)) => {
            return Err(JavacError::Run {
                javac,
                error: e.to_string(),
            });
        }
        Err(_) => {
            return Err(JavacError::Timeout {
                javac,
                limit: JAVAC_LIMIT,
            });
        }
    };
    let mut diagnostics = String::from_utf8_lossy(&output.stderr).into_owned();
    diagnostics.push_str(&String::from_utf8_lossy(&output.stdout));
    if diagnostics.len() > DIAGNOSTICS_MAX {
        let mut cut = DIAGNOSTICS_MAX;
        while !diagnostics.is_char_boundary(cut) {
            cut -= 1;
        }
        diagnostics.truncate(cut);
        diagnostics.push_str("\n…");
    }
    Ok(Compiled {
        command,
        success: output.status.success(),
        diagnostics: diagnostics.trim_end().to_string(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_map_to_paths() {
        assert_eq!(
            class_file_rel("com.acme.Order$Line"),
            PathBuf::from("com/acme/Order$Line.class")
        );
        assert_eq!(
            package_dir("com.acme.Order$Line"),
            PathBuf::from("com/acme")
        );
        assert_eq!(package_dir("Order"), PathBuf::new());
        assert_eq!(outermost("com.acme.Order$Line$1"), "com.acme.Order");
        assert_eq!(outermost("Order"), "Order");
        assert!(is_jar(Path::new("/x/app.JAR")));
        assert_eq!(
            class_candidates(&[PathBuf::from("/a"), PathBuf::from("/b.jar")], "p.C"),
            [PathBuf::from("/a/p/C.class")]
        );
    }
}
