//! Stack reads against the simulated JVM: a suspended thread's frames with
//! their locals valued, in one call that leaves the thread as it was.

use jvmscope::actors::{FrameLocals, SessionError, ShownValue, StackQuery, StackView, ThreadId};
use jvmscope::model::shown::Shown;

use super::scene;
use crate::sim::model::ids::{MAIN_THREAD, WORKER};

fn query(thread: Option<u64>) -> StackQuery {
    StackQuery {
        thread: thread.map(ThreadId),
        max_frames: 10,
        package_filter: None,
        expand: false,
        budget: Default::default(),
    }
}

/// A plain view of a stack: each frame's label and its locals.
fn plain(view: &StackView) -> Vec<String> {
    let mut out = vec![format!("thread {} depth {}", view.thread.0, view.depth)];
    for f in &view.frames {
        out.push(f.frame.label());
        match &f.locals {
            FrameLocals::Known(ls) => {
                for l in ls {
                    let value = match &l.value {
                        ShownValue::Line(s) => line(s),
                        ShownValue::Tree(t) => format!("{t:?}"),
                    };
                    out.push(format!("  {} {} = {value}", l.declared, l.name));
                }
            }
            other => out.push(format!("  {other:?}")),
        }
    }
    out
}

fn line(s: &Shown) -> String {
    format!("{s:?}")
}

#[tokio::test]
async fn a_suspended_threads_stack_is_read_with_its_locals_and_left_held() {
    let (engine, session, sim) = scene().await;
    session
        .suspend_thread(ThreadId(MAIN_THREAD))
        .await
        .expect("suspend");
    let view = session
        .stack(&query(Some(MAIN_THREAD)))
        .await
        .expect("stack");
    insta::assert_debug_snapshot!(plain(&view));
    assert_eq!(sim.counts(), [(MAIN_THREAD, 1), (WORKER, 0)], "still held");
    assert!(
        sim.jvm().thread_resumes.is_empty(),
        "a read resumes nothing"
    );
    assert_eq!(sim.jvm().vm_resumes, 0);
    assert!(
        sim.jvm().unmodelled.is_empty(),
        "{:?}",
        sim.jvm().unmodelled
    );
    engine.shutdown().await;
}

#[tokio::test]
async fn a_package_filter_skips_the_locals_of_other_frames() {
    let (engine, session, sim) = scene().await;
    session
        .suspend_thread(ThreadId(WORKER))
        .await
        .expect("suspend");
    let mut q = query(Some(WORKER));
    q.package_filter = Some("demo.Shop".into());
    let view = session.stack(&q).await.expect("stack");
    assert_eq!(view.frames.len(), 2);
    assert!(matches!(&view.frames[0].locals, FrameLocals::Known(ls) if ls.len() == 5));
    assert!(matches!(view.frames[1].locals, FrameLocals::Skipped));
    // Only the kept frame's variable table was asked for.
    let tables = sim.received(crate::sim::cmd::VARIABLE_TABLE_GENERIC);
    assert_eq!(tables, 1);
    engine.shutdown().await;
}

#[tokio::test]
async fn an_expanded_stack_shows_an_objects_fields() {
    let (engine, session, _sim) = scene().await;
    session
        .suspend_thread(ThreadId(MAIN_THREAD))
        .await
        .expect("suspend");
    let mut q = query(Some(MAIN_THREAD));
    q.expand = true;
    q.max_frames = 1;
    let view = session.stack(&q).await.expect("stack");
    insta::assert_debug_snapshot!(plain(&view));
    engine.shutdown().await;
}

#[tokio::test]
async fn a_running_thread_and_no_held_thread_are_refused_without_suspending_anything() {
    let (engine, session, sim) = scene().await;
    let running = session.stack(&query(Some(MAIN_THREAD))).await;
    assert!(running.is_err(), "{running:?}");
    let none = session.stack(&query(None)).await;
    assert!(
        matches!(none, Err(SessionError::NoThreadSuspended { .. })),
        "{none:?}"
    );
    assert_eq!(sim.counts(), [(MAIN_THREAD, 0), (WORKER, 0)]);
    engine.shutdown().await;
}
