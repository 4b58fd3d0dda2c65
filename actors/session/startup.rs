//! A launched JVM's start-up: from VM_START, held by the launcher, to its
//! main class prepared (or its death), through one ClassPrepare request.

use crate::model::{LaunchSpec, LaunchTarget};

/// Packages of the JDK's own classes: for a jar, the first class prepared
/// outside them is the application's main class (or a `-javaagent`'s).
const JDK_PACKAGES: &[&str] = &[
    "java.*",
    "javax.*",
    "jdk.*",
    "sun.*",
    "com.sun.*",
    "org.w3c.*",
    "org.xml.*",
    "org.ietf.*",
];

/// How a launched JVM's start-up ended.
#[derive(Debug)]
pub enum Startup {
    /// Its main class is prepared: held there (nothing of it has run, not
    /// even its static initializer) when the launch asked for a held JVM,
    /// running otherwise.
    MainLoaded,
    /// The main class was not prepared within the launch timeout, but the
    /// JVM lives: held (VirtualMachine.Suspend) when the launch asked for a
    /// held JVM, running otherwise.
    Slow,
}

/// Why start-up did not reach the main class.
#[derive(Debug)]
pub enum StartupFailure {
    /// The JVM died (a missing main class, a bad option, `System.exit` in
    /// an agent).
    Died,
    /// Talking to it failed.
    Failed(String),
}

/// Lets a JVM launched held at VM_START run until its main class is
/// prepared. "Attached" is no proof of life: the launcher looks the main
/// class up only after VM_START, and a missing one ends the JVM a moment
/// later. So a ClassPrepare request for the main class (for a jar, the
/// first class outside the JDK) is armed with a count of one, the JVM is
/// resumed, and the launch waits for that event or the JVM's death. When
/// the launch asked for a held JVM the event suspends every thread, so the
/// agent gets the JVM back held, now with its main class loaded; when it
/// did not, the event suspends nothing.
pub async fn run_to_main(
    handle: &crate::session::SessionHandle,
    spec: &LaunchSpec,
) -> Result<Startup, StartupFailure> {
    use crate::jdwp::event_request::{Clear, Set};
    use crate::jdwp::{Event, EventKind, Modifier, SuspendPolicy};

    let mut modifiers: Vec<Modifier> = match &spec.target {
        LaunchTarget::MainClass { main_class, .. } => vec![Modifier::ClassMatch {
            class_pattern: main_class.replace('/', "."),
        }],
        LaunchTarget::Jar { .. } => JDK_PACKAGES
            .iter()
            .map(|p| Modifier::ClassExclude {
                class_pattern: (*p).to_string(),
            })
            .collect(),
    };
    modifiers.push(Modifier::Count { count: 1 });
    let failed = |e: crate::error::JdwpError| {
        if e.is_gone() {
            StartupFailure::Died
        } else {
            StartupFailure::Failed(e.to_string())
        }
    };
    let mut events = handle.subscribe();
    let conn = handle.connection();
    let request_id = conn
        .send(&Set {
            event_kind: EventKind::ClassPrepare,
            suspend_policy: if spec.suspend {
                SuspendPolicy::All
            } else {
                SuspendPolicy::None
            },
            modifiers,
        })
        .await
        .map_err(failed)?;
    handle.resume_all_raw().await.map_err(failed)?;
    let prepared = async {
        loop {
            match events.recv().await {
                Ok(composite) => {
                    let hit = composite.events.iter().any(|e| {
                        matches!(e, Event::ClassPrepare { request_id: id, .. } if *id == request_id)
                    });
                    if hit {
                        return;
                    }
                }
                Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => {}
                Err(tokio::sync::broadcast::error::RecvError::Closed) => {
                    std::future::pending::<()>().await
                }
            }
        }
    };
    let outcome = tokio::select! {
        _ = prepared => Startup::MainLoaded,
        _ = handle.died() => return Err(StartupFailure::Died),
        _ = tokio::time::sleep(spec.timeout) => Startup::Slow,
    };
    // The count expired the request once it fired; clearing it covers the
    // slow case, where it would fire later.
    let _ = conn
        .send(&Clear {
            event_kind: EventKind::ClassPrepare,
            request_id,
        })
        .await;
    if matches!(outcome, Startup::Slow) && spec.suspend {
        // Asked for a held JVM: hold it where it is rather than let it run.
        handle
            .pause()
            .await
            .map_err(|e| StartupFailure::Failed(e.to_string()))?;
    }
    Ok(outcome)
}
