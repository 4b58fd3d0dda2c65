//! Swapping a build into the running JVM: optionally javac first, then
//! VirtualMachine.RedefineClasses with the bytes from the class roots or a
//! given file. A refusal is translated and, when the comparison with the
//! loaded type explains it, marked foreseeable; a success is remembered by
//! the session and says which suspended threads still run the old code.

use std::path::{Path, PathBuf};

use crate::error::{CodeError, SessionError, SourceRefusal};
use crate::jdwp::ReferenceTypeId;
use crate::jdwp::reference_type::ClassFileVersion;
use crate::jdwp::virtual_machine::{CapabilitiesNew, ClassDef, RedefineClasses};
use crate::model::stale::{self, Change, Restriction};
use crate::model::stop_point::{StopState, Target};
use crate::session::SessionHandle;

use super::{ClassSource, Pinned, files, loaded};

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

/// Runs debug_reload_class (read-only mode was checked by the caller).
pub async fn reload(
    session: &SessionHandle,
    q: &ReloadQuery,
    cancel: impl std::future::Future<Output = ()>,
) -> Result<ReloadView, SessionError> {
    let pinned = loaded::pin(session, &q.class).await?;
    let id = ReferenceTypeId(pinned.type_id);
    let conn = session.connection();
    let compiled = if q.compile {
        // Dropping the compile kills javac (kill_on_drop).
        tokio::select! {
            c = compile(session, q, &pinned) => Some(c?),
            () = cancel => return Err(CodeError::CompileCancelled.into()),
        }
    } else {
        None
    };
    let build = session
        .read_build(
            &pinned.name,
            &ClassSource {
                class_file: q.class_file.as_deref(),
                roots: q.class_roots.as_deref(),
            },
        )
        .await?;
    let caps = capabilities(session).await?;
    if !caps.redefine {
        return Err(CodeError::CannotRedefine.into());
    }
    let bytes = build.bytes.len();
    if q.dry_run {
        return Ok(ReloadView {
            times: times_installed(session, &pinned),
            class: pinned,
            class_path: build.path,
            bytes,
            dry_run: true,
            compiled,
            caps,
            inside: Vec::new(),
            rearmed: Vec::new(),
            rearm_failed: Vec::new(),
        });
    }
    // Probes in the class come out first (their original bytes go back),
    // so the new bytes are not overwritten; they go in again afterwards,
    // planned on the new code.
    let probes: Vec<String> = session
        .probes()
        .live()
        .into_iter()
        .filter(|(_, l)| l.covers(id))
        .map(|(p, _)| p)
        .collect();
    for p in &probes {
        let _ = session.toggle_stop(p, Some(false)).await;
    }
    let sent = conn
        .send(&RedefineClasses {
            classes: vec![ClassDef {
                ref_type: id,
                classfile: build.bytes.clone(),
            }],
        })
        .await;
    // Whatever the answer, what we knew of the type may be stale now.
    session.classes().invalidate(id);
    if sent.is_ok() {
        session
            .probes()
            .reloaded(id, std::sync::Arc::new(build.bytes.clone()));
    }
    let (probes_back, probes_lost) = rearm_probes(session, &probes).await;
    if let Err(e) = sent {
        let Some(code) = e.code() else {
            return Err(session.map_err(e));
        };
        let code = code.0;
        let restriction = Restriction::from_code(code);
        let changes: Vec<Change> = match restriction {
            Some(r) => match loaded::shape(session, &pinned, false).await {
                Ok(running) => stale::compare(&running, &build.shape)
                    .changes
                    .into_iter()
                    .filter(|c| c.restriction() == r)
                    .collect(),
                Err(_) => Vec::new(),
            },
            None => Vec::new(),
        };
        return Err(CodeError::Refused {
            class: pinned.name.clone(),
            code,
            name: crate::jdwp::ErrorCode(code).name(),
            restriction,
            changes,
        }
        .into());
    }
    session
        .info()
        .record_installed(&pinned.name, pinned.loader, &build.path);
    let inside = session.threads_inside(pinned.type_id).await;
    let (mut rearmed, mut rearm_failed) = rearm_line_stops(session, &pinned.name).await;
    rearmed.extend(probes_back);
    rearm_failed.extend(probes_lost);
    Ok(ReloadView {
        rearmed,
        rearm_failed,
        times: times_installed(session, &pinned),
        class: pinned,
        class_path: build.path,
        bytes,
        dry_run: false,
        compiled,
        caps,
        inside,
    })
}

/// Puts the probes taken out for a redefinition back in, each planned on
/// the class's code as it now is.
async fn rearm_probes(
    session: &SessionHandle,
    ids: &[String],
) -> (Vec<String>, Vec<(String, String)>) {
    let mut back = Vec::new();
    let mut lost = Vec::new();
    for p in ids {
        match session.toggle_stop(p, Some(true)).await {
            Ok(_) => back.push(p.clone()),
            Err(e) => lost.push((p.clone(), e.to_string())),
        }
    }
    (back, lost)
}

/// HotSpot clears every breakpoint in a class it redefines while the
/// stop points still read as armed: each armed line stop on `class` is
/// switched off and on again, which arms it on the new code.
async fn rearm_line_stops(
    session: &SessionHandle,
    class: &str,
) -> (Vec<String>, Vec<(String, String)>) {
    let listing = session.stop_points().list().await;
    let mut rearmed = Vec::new();
    let mut failed = Vec::new();
    for p in listing.points {
        let on_class = matches!(&p.spec.target, Target::Line(l) if l.class == class);
        // Probes hold no breakpoint; they were put back on their own.
        if !on_class || p.state != StopState::Armed || session.probes().is_probe(&p.id) {
            continue;
        }
        let points = session.stop_points();
        let result = match points.toggle(&p.id, Some(false)).await {
            Ok(_) => points.toggle(&p.id, Some(true)).await.map(|_| ()),
            Err(e) => Err(e),
        };
        match result {
            Ok(()) => rearmed.push(p.id),
            Err(e) => failed.push((p.id, e.to_string())),
        }
    }
    (rearmed, failed)
}

/// What the JVM says it can do about redefinition (one CapabilitiesNew).
pub async fn capabilities(session: &SessionHandle) -> Result<RedefineCaps, SessionError> {
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

fn times_installed(session: &SessionHandle, pinned: &Pinned) -> u32 {
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
async fn compile(
    session: &SessionHandle,
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
    let compiled = files::javac_compile(&sources, out, roots, release, &[])
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
pub(super) async fn release_of(session: &SessionHandle, id: ReferenceTypeId) -> Option<u32> {
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
async fn resolve_source(session: &SessionHandle, given: &Path) -> Result<PathBuf, SessionError> {
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
