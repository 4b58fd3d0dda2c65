//! Swapping a build into the running JVM: optionally javac first, then
//! VirtualMachine.RedefineClasses with the bytes from the class roots or a
//! given file. A refusal is translated and, when the comparison with the
//! loaded type explains it, marked foreseeable; a success is remembered by
//! the session and says which suspended threads still run the old code.

use std::path::{Path, PathBuf};

use crate::door::Jvm;
use crate::error::{CodeError, SessionError, SourceRefusal};
use crate::jdwp::ReferenceTypeId;
use crate::jdwp::reference_type::ClassFileVersion;
use crate::jdwp::virtual_machine::CapabilitiesNew;

use super::{Pinned, files};

/// What debug_reload_class asks.
#[derive(Debug, Clone, Default)]
pub struct ReloadQuery {
    /// `Name` or `Name@0x<loader>`.
    pub class: String,
    pub class_file: Option<PathBuf>,
    pub class_roots: Option<Vec<PathBuf>>,
    pub dry_run: bool,
    /// Compile first.
    pub compile: bool,
    /// The `.java` files to compile.
    pub sources: Vec<PathBuf>,
}

/// What the JVM can do about redefinition.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RedefineCaps {
    pub redefine: bool,
    pub add_method: bool,
    pub unrestricted: bool,
    pub pop_frames: bool,
}

/// A suspended thread with a frame in the class.
#[derive(Debug, Clone)]
pub struct ThreadInClass {
    pub thread: crate::jdwp::ThreadId,
    pub name: String,
    /// The innermost frame in the class.
    pub frame: usize,
    pub at: String,
    /// The frame runs a method the swap replaced (JDWP reports no id for it).
    pub obsolete: bool,
}

/// What javac did.
#[derive(Debug, Clone)]
pub struct CompileReport {
    pub command: String,
    pub diagnostics: String,
}

/// What a reload did (or, dry, would do).
#[derive(Debug, Clone)]
pub struct ReloadView {
    pub class: Pinned,
    pub class_path: PathBuf,
    pub bytes: usize,
    pub dry_run: bool,
    pub compiled: Option<CompileReport>,
    pub caps: RedefineCaps,
    /// Suspended threads still inside the old code.
    pub inside: Vec<ThreadInClass>,
    /// Swaps of this copy the session made, this one included.
    pub times: u32,
    /// Line stops on the class re-armed against the new code (the JVM
    /// drops every breakpoint in a class it redefines).
    pub rearmed: Vec<String>,
    /// Line stops that could not be re-armed, and why.
    pub rearm_failed: Vec<(String, String)>,
}

/// What the JVM says it can do about redefinition (one CapabilitiesNew).
pub async fn capabilities(session: &Jvm) -> Result<RedefineCaps, SessionError> {
    let caps = session
        .connection()
        .send(&CapabilitiesNew)
        .await
        .map_err(|e| session.map_err(e))?;
    Ok(RedefineCaps {
        redefine: caps.can_redefine_classes,
        add_method: caps.can_add_method,
        unrestricted: caps.can_unrestrictedly_redefine_classes,
        pop_frames: caps.can_pop_frames,
    })
}

pub(crate) fn times_installed(session: &Jvm, pinned: &Pinned) -> u32 {
    session
        .info()
        .installed()
        .iter()
        .find(|i| i.name == pinned.name && i.loader == pinned.loader)
        .map_or(0, |i| i.times)
}

/// Runs javac on the query's sources (without any, the class's own source
/// found under the source roots) into the first class root, against every
/// class root, at the running class's release.
pub(crate) async fn compile(
    session: &Jvm,
    q: &ReloadQuery,
    pinned: &Pinned,
) -> Result<CompileReport, SessionError> {
    let id = ReferenceTypeId(pinned.type_id);
    let roots = session.class_roots_for(q.class_roots.as_deref());
    let Some(out) = roots.iter().find(|r| !files::is_jar(r)) else {
        return Err(CodeError::NoClassRoot {
            class: q.class.clone(),
        }
        .into());
    };
    if !out.is_dir() {
        return Err(CodeError::NoWritableRoot { root: out.clone() }.into());
    }
    let mut sources = Vec::with_capacity(q.sources.len().max(1));
    for s in &q.sources {
        sources.push(resolve_source(session, s).await?);
    }
    if sources.is_empty() {
        sources.push(session.source_of(pinned).await?);
    }
    let release = release_of(session, id).await;
    let compiled = files::javac_compile(&sources, out, &roots, release, &[])
        .await
        .map_err(|detail| CodeError::CompilerFailed { detail })?;
    if !compiled.success {
        return Err(CodeError::CompileFailed {
            command: compiled.command,
            diagnostics: compiled.diagnostics,
        }
        .into());
    }
    Ok(CompileReport {
        command: compiled.command,
        diagnostics: compiled.diagnostics,
    })
}

/// The release javac builds for so the build matches what runs: that of
/// the loaded class file (major 52 = Java 8, +1 per release).
pub(super) async fn release_of(session: &Jvm, id: ReferenceTypeId) -> Option<u32> {
    match session
        .connection()
        .send(&ClassFileVersion { ref_type: id })
        .await
    {
        Ok(v) if v.major_version >= 52 => Some((v.major_version - 44) as u32),
        _ => None,
    }
}

/// A `.java` file under the source roots, as given (relative to a root,
/// or absolute), resolved to its real path: javac is handed nothing else,
/// so no argument can be an option (`-d`, `-processor`) or an `@argfile`.
pub(crate) async fn resolve_source(session: &Jvm, given: &Path) -> Result<PathBuf, SessionError> {
    let roots = &session.roots().source;
    let refused = |why| CodeError::NotASource {
        path: given.to_path_buf(),
        why,
    };
    if given.is_absolute() {
        return files::source_under_roots(roots, given, files::JAVA)
            .await
            .map_err(|why| refused(why).into());
    }
    let mut why = if roots.is_empty() {
        SourceRefusal::NoRoots
    } else {
        SourceRefusal::Missing
    };
    for root in roots.iter().filter(|r| !files::is_jar(r)) {
        match files::source_under_roots(roots, &root.join(given), files::JAVA).await {
            Ok(real) => return Ok(real),
            Err(SourceRefusal::Missing) => {}
            Err(other) => why = other,
        }
    }
    Err(refused(why).into())
}
