//! Is the JVM running my code, and swap in a fix: the source a loaded
//! class was compiled from, its build compared against the loaded type,
//! and RedefineClasses (optionally after javac). Files are read here and in
//! `files.rs`; class files are parsed by `model::classfile` and compared by
//! `model::stale`.

pub mod files;
pub(crate) mod loaded;
pub mod members;
pub mod reload;
mod scratch;
mod source;

pub use crate::link::Installed;
use std::path::PathBuf;

use crate::door::Jvm;
use crate::error::{CodeError, SessionError};
use crate::jdwp::ThreadId;
use crate::model::classfile::{self, ClassShape};
use crate::model::stale::{self, Comparison};

pub use reload::{CompileReport, RedefineCaps, ReloadQuery, ReloadView, ThreadInClass};
pub use source::{SourceCheck, SourceQuery, SourceText, SourceView};

/// One loaded copy of a class, as a selector resolved it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pinned {
    pub name: String,
    /// The JDWP reference type id.
    pub type_id: u64,
    /// Its defining class loader (0 = bootstrap).
    pub loader: u64,
    /// The loaders of the other copies of the same name.
    pub others: Vec<u64>,
}

/// What check_stale found.
#[derive(Debug, Clone)]
pub struct StaleView {
    pub class: Pinned,
    pub class_path: PathBuf,
    pub comparison: Comparison,
    /// JDWP packets the check sent.
    pub packets: u64,
    /// The build's class file version (major, minor).
    pub built_version: (u16, u16),
    /// What the JVM says it can redefine.
    pub caps: RedefineCaps,
    /// The build was compiled from the source just now (`class_path` is
    /// then the source file).
    pub from_source: bool,
}

/// What a line stop's class looks like against its build.
#[derive(Debug, Clone)]
pub enum StopStaleness {
    /// No class root configured: nothing compared.
    NoClassRoot,
    /// The class is not loaded yet (the stop point is deferred).
    NotLoaded,
    /// Compared: the class file used (or the source compiled for the
    /// check, `from_source`) and what differs.
    Checked {
        class_path: PathBuf,
        comparison: Comparison,
        from_source: bool,
    },
    /// A class root is configured but the comparison could not run.
    Failed(SessionError),
}

/// Where the class file comes from.
pub(crate) struct ClassSource<'a> {
    pub class_file: Option<&'a std::path::Path>,
    /// The roots for this call (`None`: the session's).
    pub roots: Option<&'a [PathBuf]>,
}

/// A build read and parsed.
pub(crate) struct Build {
    pub path: PathBuf,
    pub bytes: Vec<u8>,
    pub shape: ClassShape,
    pub modified: Option<std::time::SystemTime>,
}

impl Jvm {
    /// The class roots in force for a call.
    pub(crate) fn class_roots_for(&self, given: Option<&[PathBuf]>) -> Vec<PathBuf> {
        given.map_or_else(|| self.roots().class, <[PathBuf]>::to_vec)
    }

    /// Reads and parses the build of `class` (a `class_file`, or the first
    /// root holding it), checking it is that class.
    pub(crate) async fn read_build(
        &self,
        class: &str,
        from: &ClassSource<'_>,
    ) -> Result<Build, CodeError> {
        let read = match from.class_file {
            Some(path) => files::read_bounded(path, files::MAX_CLASS_FILE)
                .await
                .map_err(|f| match f {
                    files::ReadFailure::Missing => CodeError::ClassFileMissing {
                        class: class.to_string(),
                        searched: vec![path.to_path_buf()],
                    },
                    files::ReadFailure::Unreadable(error) => CodeError::Unreadable {
                        path: path.to_path_buf(),
                        error,
                    },
                })?,
            None => {
                let roots = self.class_roots_for(from.roots);
                if roots.is_empty() {
                    return Err(CodeError::NoClassRoot {
                        class: class.to_string(),
                    });
                }
                let candidates = files::class_candidates(&roots, class);
                files::first_readable(&candidates, files::MAX_CLASS_FILE)
                    .await
                    .map_err(|tried| {
                        match tried.iter().find_map(|(p, e)| e.clone().map(|e| (p, e))) {
                            Some((path, error)) => CodeError::Unreadable {
                                path: path.clone(),
                                error,
                            },
                            None => CodeError::ClassFileMissing {
                                class: class.to_string(),
                                searched: candidates.clone(),
                            },
                        }
                    })?
            }
        };
        let shape = classfile::parse(&read.bytes).map_err(|e| CodeError::BadClassFile {
            path: read.path.clone(),
            error: e.0,
        })?;
        if shape.name != class {
            return Err(CodeError::WrongClass {
                path: read.path,
                expected: class.to_string(),
                found: shape.name,
            });
        }
        Ok(Build {
            path: read.path,
            bytes: read.bytes,
            shape,
            modified: read.modified,
        })
    }

    /// Compares the loaded class `selector` names with its build: line
    /// tables per method, code bytes when `bytecode`, and the redefine
    /// forecast.
    pub async fn check_stale(
        &self,
        selector: &str,
        class_file: Option<PathBuf>,
        class_roots: Option<Vec<PathBuf>>,
        bytecode: bool,
        from_source: bool,
    ) -> Result<StaleView, SessionError> {
        self.check_alive()?;
        let before = self.packets_sent();
        let pinned = loaded::pin(self, selector).await?;
        let build = if from_source {
            let source = self.source_of(&pinned).await?;
            self.build_from_source(&pinned, &source).await?
        } else {
            self.read_build(
                &pinned.name,
                &ClassSource {
                    class_file: class_file.as_deref(),
                    roots: class_roots.as_deref(),
                },
            )
            .await?
        };
        let running = loaded::shape(self, &pinned, bytecode)
            .await
            .map_err(|e| self.map_err(e))?;
        let caps = reload::capabilities(self).await?;
        Ok(StaleView {
            caps,
            comparison: stale::compare(&running, &build.shape),
            class: pinned,
            class_path: build.path,
            packets: self.packets_sent().saturating_sub(before),
            built_version: (build.shape.major, build.shape.minor),
            from_source,
        })
    }

    /// The staleness a line stop on `class` reports when it is armed: the
    /// line tables of the first loaded copy against the session's build.
    pub async fn line_stop_staleness(&self, class: &str) -> StopStaleness {
        // The line was read from the source: when the session has one and
        // may run javac, what it compiles to is what the line must match.
        if self.roots().source.iter().any(|r| !files::is_jar(r))
            && !self.read_only()
            && let Ok(pinned) = loaded::pin(self, class).await
            && let Ok((source, comparison)) = self.against_source(&pinned).await
        {
            return StopStaleness::Checked {
                class_path: source,
                comparison,
                from_source: true,
            };
        }
        if self.roots().class.is_empty() {
            return StopStaleness::NoClassRoot;
        }
        match self.check_stale(class, None, None, false, false).await {
            Ok(v) => StopStaleness::Checked {
                class_path: v.class_path,
                comparison: v.comparison,
                from_source: false,
            },
            Err(SessionError::Code(CodeError::NotLoaded { .. })) => StopStaleness::NotLoaded,
            Err(e) => StopStaleness::Failed(e),
        }
    }

    /// The file a loaded class was compiled from and a window of it.
    pub async fn source(&self, q: &SourceQuery) -> Result<SourceView, SessionError> {
        self.check_alive()?;
        source::view(self, q).await
    }

    /// Every class this session installed, oldest first.
    pub fn installed_classes(&self) -> Vec<Installed> {
        self.info().installed()
    }

    /// Threads held by an event or the agent with a frame in `type_id`.
    pub(crate) async fn threads_inside(&self, type_id: u64) -> Vec<ThreadInClass> {
        let mut threads: Vec<ThreadId> = self.event_threads().await;
        for h in self.held_threads().await {
            if !threads.contains(&h.thread) {
                threads.push(h.thread);
            }
        }
        let mut out = Vec::new();
        for thread in threads {
            let Ok(frames) = self.frames(thread, 64).await else {
                continue;
            };
            if let Some(f) = frames.iter().find(|f| f.location.class.0 == type_id) {
                let name = self
                    .thread_names(&[thread])
                    .await
                    .pop()
                    .flatten()
                    .unwrap_or_default();
                out.push(ThreadInClass {
                    thread,
                    name,
                    frame: f.index,
                    at: f.label(),
                    obsolete: f.location.method.0 == 0,
                });
            }
        }
        out
    }
}
