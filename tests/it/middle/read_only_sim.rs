//! A read-only session against the simulated JVM: stacks, evaluation and
//! traces go on; writing a local and calling a method are refused before
//! a byte of them reaches the JVM, whose model stays as it was.

use jvmscope::actors::{JdwpError, SessionError, ThreadId};
use jvmscope::jdwp::Value;
use jvmscope::model::stop_point::{Filters, LocalsChoice, Mode, TraceSpec};

use super::{arm, attach_sim, config, counts_become, line_stop, point_when};
use crate::sim::cmd;
use crate::sim::model::ids::{MAIN_THREAD, WORKER};
use crate::sim::model::scene;

fn parse(src: &str) -> jvmscope::expr::Expr {
    jvmscope::expr::parse_checked(src).expect("parses").expr
}

#[tokio::test]
async fn writing_a_local_is_refused_and_the_jvm_unchanged() {
    let (engine, session, sim) = attach_sim(config(), scene(), true).await;
    session
        .suspend_thread(ThreadId(MAIN_THREAD))
        .await
        .expect("suspend");
    let ctx = session
        .eval_context(Some(ThreadId(MAIN_THREAD)), 0)
        .await
        .expect("a context");
    let written = session.set_value(&ctx, &parse("qty"), &parse("5")).await;
    // Refused by the connection, before the wire.
    assert!(
        matches!(
            written,
            Err(SessionError::Jdwp(JdwpError::ReadOnly {
                command: "StackFrame.SetValues"
            }))
        ),
        "{written:?}"
    );
    assert_eq!(sim.received(cmd::SET_LOCALS), 0);
    assert_eq!(sim.jvm().threads[0].frames[0].locals[&1], Value::Int(3));
    // Reads go on.
    let qty = session
        .evaluate(&ctx, &parse("qty + 1"))
        .await
        .expect("read");
    assert_eq!(format!("{:?}", qty.value), "Prim(Int(4))");
    engine.shutdown().await;
}

#[tokio::test]
async fn a_method_call_is_refused_in_a_read_only_evaluation() {
    let (engine, session, sim) = attach_sim(config(), scene(), true).await;
    session
        .suspend_thread(ThreadId(MAIN_THREAD))
        .await
        .expect("suspend");
    let ctx = session
        .eval_context(Some(ThreadId(MAIN_THREAD)), 0)
        .await
        .expect("a context");
    let called = session.evaluate(&ctx, &parse("name.length()")).await;
    let failure = called.expect_err("refused");
    assert!(failure.read_only, "{:?}", failure.error);
    assert_eq!(sim.received(cmd::INVOKE), 0, "nothing ran in the JVM");
    assert_eq!(sim.counts(), [(MAIN_THREAD, 1), (WORKER, 0)]);
    engine.shutdown().await;
}

#[tokio::test]
async fn a_read_only_session_still_traces_and_resumes() {
    let (engine, session, sim) = attach_sim(config(), scene(), true).await;
    let mode = Mode::Trace(TraceSpec {
        frames: 1,
        locals: LocalsChoice::All,
        ..TraceSpec::default()
    });
    let id = arm(&session, line_stop(14, mode, Filters::default())).await;
    sim.hit(WORKER, "demo.Shop", "checkout", 14);
    point_when(&session, &id, "the capture", |v| v.captured == 1).await;
    counts_become(&sim, &[(MAIN_THREAD, 0), (WORKER, 0)]).await;
    assert_eq!(sim.jvm().thread_resumes, [WORKER]);
    engine.shutdown().await;
}
