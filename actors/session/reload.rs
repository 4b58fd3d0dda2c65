//! The reload as the session orders it: the probes in the class come out
//! first (their original bytes go back), the build goes in through
//! RedefineClasses, then the probes go in again planned on the new code and
//! the armed line stops are re-armed (HotSpot drops a redefined class's
//! breakpoints). The build, javac and the refusal's reading are the code
//! room's (`code::reload`).

use crate::code::reload::{ReloadQuery, ReloadView, capabilities, compile, times_installed};
use crate::code::{ClassSource, loaded};
use crate::error::{CodeError, SessionError};
use crate::jdwp::ReferenceTypeId;
use crate::jdwp::virtual_machine::{ClassDef, RedefineClasses};
use crate::model::stale::{self, Change, Restriction};
use crate::model::stop_point::{StopState, Target};
use crate::session::SessionHandle;

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
    let probes = take_out_probes(session, id).await;
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
            .reloaded(id, std::sync::Arc::new(build.bytes.clone()))
            .await;
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

/// Takes the probes in class `id` out before a redefinition and returns
/// their stop points: their original bytes go back, so the new bytes are
/// not overwritten; they go in again afterwards, planned on the new code.
async fn take_out_probes(session: &SessionHandle, id: ReferenceTypeId) -> Vec<String> {
    let probes: Vec<String> = session
        .probes()
        .live()
        .await
        .into_iter()
        .filter(|(_, l)| l.covers(id))
        .map(|(p, _)| p)
        .collect();
    for p in &probes {
        let _ = session.toggle_stop(p, Some(false)).await;
    }
    probes
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
        if !on_class || p.state != StopState::Armed || session.probes().is_probe(&p.id).await {
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

impl SessionHandle {
    /// Compiles (when asked) and installs a class's build in the JVM.
    ///
    /// `cancel` is honoured while javac runs (javac is killed and nothing
    /// reaches the JVM); once the redefinition starts it runs to its end,
    /// probes and stop points re-armed, so a class is never left half done.
    pub async fn reload_class(
        &self,
        q: &ReloadQuery,
        cancel: impl std::future::Future<Output = ()>,
    ) -> Result<ReloadView, SessionError> {
        // javac writes class files, dry run or not: read-only runs none.
        if q.compile {
            self.ensure_writable("compiling with javac")?;
        }
        if !q.dry_run {
            self.ensure_writable("redefining a class")?;
        }
        self.check_alive()?;
        reload(self, q, cancel).await
    }
}
