//! The class as its source compiles now, built in a scratch directory that
//! is removed afterwards: what `check_stale` with `source` and a line stop
//! compare the running code with, so an edited but unbuilt file shows.

use std::path::{Path, PathBuf};

use super::{Build, ClassSource, Pinned, files, reload};
use crate::door::Jvm;
use crate::error::{CodeError, SessionError, SourceRefusal};
use crate::jdwp::ReferenceTypeId;
use crate::jdwp::reference_type::SourceFile;
use crate::link::SourceVersion;
use crate::model::stale::Comparison;

/// Sources compiled for line stops remembered per session.
const REMEMBERED: usize = 64;

impl Jvm {
    /// The source file of `pinned` under the source roots: the name the
    /// class carries (its SourceFile) in its package's directory, else the
    /// first file of that name found under the roots.
    pub(crate) async fn source_of(&self, pinned: &Pinned) -> Result<PathBuf, SessionError> {
        let roots = &self.roots().source;
        let id = ReferenceTypeId(pinned.type_id);
        let name = match self.connection().send(&SourceFile { ref_type: id }).await {
            Ok(name) => name,
            Err(e) if e.code().is_some() => {
                let outer = files::outermost(&pinned.name);
                format!("{}.java", &outer[outer.rfind('.').map_or(0, |i| i + 1)..])
            }
            Err(e) => return Err(self.map_err(e)),
        };
        let rel = files::package_dir(&pinned.name).join(&name);
        let dirs: Vec<&PathBuf> = roots.iter().filter(|r| !files::is_jar(r)).collect();
        if dirs.is_empty() {
            return Err(CodeError::NotASource {
                path: rel,
                why: SourceRefusal::NoRoots,
            }
            .into());
        }
        let found = match dirs.iter().map(|r| r.join(&rel)).find(|c| c.is_file()) {
            Some(path) => Some(path),
            None => files::search_by_name(roots, &name)
                .await
                .map(|(_, path)| path),
        };
        let Some(path) = found else {
            return Err(CodeError::NotASource {
                path: rel,
                why: SourceRefusal::Missing,
            }
            .into());
        };
        files::source_under_roots(roots, &path, files::JAVA)
            .await
            .map_err(|why| CodeError::NotASource { path, why }.into())
    }

    /// Compiles `source` into a scratch directory (against the class
    /// roots, at the running class's release, with no annotation
    /// processing) and reads `pinned`'s class from it.
    pub(crate) async fn build_from_source(
        &self,
        pinned: &Pinned,
        source: &Path,
    ) -> Result<Build, SessionError> {
        if self.read_only() {
            return Err(CodeError::ReadOnlyCompile.into());
        }
        let scratch = tempfile::Builder::new()
            .prefix("jvmscope-source-")
            .tempdir()
            .map_err(|e| CodeError::Unreadable {
                path: std::env::temp_dir(),
                error: e.to_string(),
            })?;
        let release = reload::release_of(self, ReferenceTypeId(pinned.type_id)).await;
        let classpath = self.class_roots_for(None);
        // Sibling sources resolve from the source roots; only this file's
        // classes are written.
        let roots = self.roots();
        let dirs: Vec<&PathBuf> = roots.source.iter().filter(|r| !files::is_jar(r)).collect();
        let sourcepath = std::env::join_paths(dirs)
            .map(|p| p.to_string_lossy().into_owned())
            .unwrap_or_default();
        let compiled = files::javac_compile(
            &[source.to_path_buf()],
            scratch.path(),
            &classpath,
            release,
            &[
                "-proc:none",
                "-implicit:none",
                "-nowarn",
                "-sourcepath",
                &sourcepath,
            ],
        )
        .await
        .map_err(|detail| CodeError::CompilerFailed { detail })?;
        if !compiled.success {
            return Err(CodeError::SourceDoesNotCompile {
                file: source.to_path_buf(),
                diagnostics: compiled.diagnostics,
            }
            .into());
        }
        let roots = [scratch.path().to_path_buf()];
        let mut build = self
            .read_build(
                &pinned.name,
                &ClassSource {
                    class_file: None,
                    roots: Some(&roots),
                },
            )
            .await?;
        build.path = source.to_path_buf();
        Ok(build)
    }

    /// The running class against what its source compiles to now, for a
    /// line stop: compiled once per version of the file (its time and
    /// length), remembered for the session.
    pub(crate) async fn against_source(
        &self,
        pinned: &Pinned,
    ) -> Result<(PathBuf, Comparison), SessionError> {
        let source = self.source_of(pinned).await?;
        let meta = tokio::fs::metadata(&source).await.ok();
        let version = SourceVersion {
            class: pinned.name.clone(),
            source: source.clone(),
            modified: meta.as_ref().and_then(|m| m.modified().ok()),
            len: meta.as_ref().map_or(0, |m| m.len()),
        };
        let known = crate::lock::lock(&self.info().source_checks)
            .iter()
            .find(|(v, _)| *v == version)
            .map(|(_, c)| c.clone());
        if let Some(c) = known {
            return Ok((source, c));
        }
        let build = self.build_from_source(pinned, &source).await?;
        let running = super::loaded::shape(self, pinned, false)
            .await
            .map_err(|e| self.map_err(e))?;
        let comparison = crate::model::stale::compare(&running, &build.shape);
        let mut remembered = crate::lock::lock(&self.info().source_checks);
        if remembered.len() >= REMEMBERED {
            remembered.remove(0);
        }
        remembered.push((version, comparison.clone()));
        Ok((source, comparison))
    }
}
