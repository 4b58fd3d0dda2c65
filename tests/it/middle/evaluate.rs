//! Evaluation against the simulated JVM: an expression parsed with
//! `jvmscope::expr` is answered with reads of the frame's locals, objects'
//! fields, statics and strings, on a thread the test holds; errors are
//! typed, and nothing is resumed or changed by a read.

use jvmscope::actors::{SessionError, ThreadId};
use jvmscope::expr::eval::Val;
use jvmscope::model::Prim;

use super::scene;
use crate::sim::cmd;
use crate::sim::model::ids::{ADA, MAIN_THREAD, WORKER};

fn parse(src: &str) -> jvmscope::expr::Expr {
    jvmscope::expr::parse_checked(src)
        .unwrap_or_else(|e| panic!("{src}: {e:?}"))
        .expr
}

/// Evaluates `src` in `frame` of the held `thread`.
async fn eval(
    session: &jvmscope::actors::SessionHandle,
    thread: u64,
    frame: usize,
    src: &str,
) -> Result<Val, String> {
    let ctx = session
        .eval_context(Some(ThreadId(thread)), frame)
        .await
        .map_err(|e| format!("{e:?}"))?;
    session
        .evaluate(&ctx, &parse(src))
        .await
        .map(|o| o.value)
        .map_err(|f| format!("{:?}", f.error))
}

#[tokio::test]
async fn arithmetic_on_locals_and_a_static_field() {
    let (engine, session, sim) = scene().await;
    session
        .suspend_thread(ThreadId(WORKER))
        .await
        .expect("suspend");
    let value = eval(&session, WORKER, 0, "qty * 2 + total + demo.Shop.TAX").await;
    assert_eq!(value, Ok(Val::Prim(Prim::Long(8 * 2 + 7 + 20))));
    assert_eq!(sim.counts(), [(MAIN_THREAD, 0), (WORKER, 1)], "left held");
    assert!(sim.jvm().thread_resumes.is_empty());
    engine.shutdown().await;
}

#[tokio::test]
async fn fields_through_objects_and_a_string_comparison() {
    let (engine, session, sim) = scene().await;
    session
        .suspend_thread(ThreadId(MAIN_THREAD))
        .await
        .expect("suspend");
    let customer = eval(&session, MAIN_THREAD, 0, "order.customer").await;
    assert_eq!(
        customer,
        Ok(Val::Object {
            id: ADA,
            tag: jvmscope::jdwp::Tag::String
        })
    );
    let same = eval(
        &session,
        MAIN_THREAD,
        0,
        "order.customer == name && this.count == 7",
    )
    .await;
    assert_eq!(same, Ok(Val::Prim(Prim::Bool(true))));
    assert!(
        sim.jvm().unmodelled.is_empty(),
        "{:?}",
        sim.jvm().unmodelled
    );
    engine.shutdown().await;
}

#[tokio::test]
async fn a_callers_frame_has_its_own_locals() {
    let (engine, session, _sim) = scene().await;
    session
        .suspend_thread(ThreadId(MAIN_THREAD))
        .await
        .expect("suspend");
    assert_eq!(
        eval(&session, MAIN_THREAD, 1, "shop.count + 1").await,
        Ok(Val::Prim(Prim::Int(8)))
    );
    let qty = eval(&session, MAIN_THREAD, 1, "qty").await;
    assert!(qty.as_ref().is_err_and(|e| e.contains("qty")), "{qty:?}");
    engine.shutdown().await;
}

#[tokio::test]
async fn errors_are_typed_and_a_running_thread_is_refused() {
    let (engine, session, sim) = scene().await;
    let running = session.eval_context(Some(ThreadId(MAIN_THREAD)), 0).await;
    assert!(
        matches!(running, Err(SessionError::ThreadRunning { .. })),
        "{running:?}"
    );
    session
        .suspend_thread(ThreadId(MAIN_THREAD))
        .await
        .expect("suspend");
    let unknown = eval(&session, MAIN_THREAD, 0, "nosuch + 1").await;
    assert!(
        unknown.as_ref().is_err_and(|e| e.contains("nosuch")),
        "{unknown:?}"
    );
    let zero = eval(&session, MAIN_THREAD, 0, "qty / (qty - 3)").await;
    assert!(zero.is_err(), "{zero:?}");
    let no_field = eval(&session, MAIN_THREAD, 0, "order.missing").await;
    assert!(
        no_field.as_ref().is_err_and(|e| e.contains("missing")),
        "{no_field:?}"
    );
    assert_eq!(sim.received(cmd::INVOKE), 0, "nothing run in the JVM");
    assert_eq!(sim.counts(), [(MAIN_THREAD, 1), (WORKER, 0)]);
    engine.shutdown().await;
}
