//! The EventDispatch actor: decodes the event composites the Connection
//! forwards, records them, and handles the ones that belong to stop points
//! (routing through the registry's table): suspension-free traces inline,
//! held hits in a bounded window of concurrent capture tasks, suspending
//! hits into the event log for the agent. It never holds a suspended
//! thread without either handing it to the agent or resuming it.
//!
//! `dispatch` decides per composite, `capture` does the reads, `log` keeps
//! what the agent reads, `condition` is the seam to the evaluator.

pub mod capture;
pub mod condition;
pub mod ctx;
pub mod dispatch;
pub mod dropped;
pub mod hit;
pub mod landings;
pub mod log;

use std::sync::Arc;
use std::time::Instant;

use ractor::{Actor, ActorProcessingErr, ActorRef};
use tracing::Instrument;
use tracing::field::Empty;

use crate::connection::{CompositeArrived, ConnectionHandle};
use crate::jdwp::{Composite, Event};
use crate::jdwp::{Decode, Reader};
use crate::link::SessionLink;
use crate::stop_points::StopPointsHandle;

pub use log::EventLog;

/// Messages of EventDispatch.
pub enum EventsMsg {
    /// An event composite arrived from the JVM (raw data, decoded here).
    Composite { data: Vec<u8>, received: Instant },
    /// Test hook: panics inside the actor so supervision can be exercised.
    Crash,
}

impl From<CompositeArrived> for EventsMsg {
    fn from(c: CompositeArrived) -> Self {
        Self::Composite {
            data: c.data,
            received: c.received,
        }
    }
}

/// Gives a composite back when EventDispatch's mailbox refused it, so the
/// Connection keeps it for the successor.
impl TryFrom<EventsMsg> for CompositeArrived {
    type Error = EventsMsg;

    fn try_from(msg: EventsMsg) -> Result<Self, EventsMsg> {
        match msg {
            EventsMsg::Composite { data, received } => Ok(Self { data, received }),
            other => Err(other),
        }
    }
}

/// The EventDispatch actor (configuration only).
pub struct EventDispatch;

/// What EventDispatch starts from; a restart gets the same arguments and
/// loses nothing, because what it records lives in the session's shared
/// block and the event log.
#[derive(Clone)]
pub struct EventsArgs {
    pub connection: ConnectionHandle,
    pub session: SessionLink,
    pub classes: Arc<crate::jvm::classes::ClassCache>,
    pub stops: StopPointsHandle,
    pub log: Arc<EventLog>,
}

impl Actor for EventDispatch {
    type Msg = EventsMsg;
    type State = Arc<ctx::Ctx>;
    type Arguments = EventsArgs;

    async fn pre_start(
        &self,
        _: ActorRef<Self::Msg>,
        args: Self::Arguments,
    ) -> Result<Self::State, ActorProcessingErr> {
        Ok(Arc::new(ctx::Ctx::new(
            args.connection,
            args.classes,
            args.session,
            args.stops,
            args.log,
        )))
    }

    async fn handle(
        &self,
        _: ActorRef<Self::Msg>,
        message: Self::Msg,
        ctx: &mut Self::State,
    ) -> Result<(), ActorProcessingErr> {
        match message {
            EventsMsg::Composite { data, received } => {
                let sizes = ctx.conn.shared().id_sizes();
                let mut r = Reader::new(&data, sizes);
                match Composite::decode(&mut r) {
                    Ok(composite) => {
                        let span = event_span(ctx, &composite);
                        dispatch::composite(ctx, composite, received)
                            .instrument(span)
                            .await
                    }
                    Err(e) => dropped::release(&ctx.conn, &ctx.session, &data, e.to_string()).await,
                }
            }
            EventsMsg::Crash => panic!("EventDispatch crash requested by a test"),
        }
        Ok(())
    }
}

/// The root span of the JVM-initiated work one composite causes:
/// `jvm.event <kinds>`, with the JDWP round trips of its captures,
/// conditions and releases below it. Its attributes are only built when
/// the span is recorded (this runs for every composite).
fn event_span(ctx: &ctx::Ctx, composite: &Composite) -> tracing::Span {
    let span = tracing::info_span!(
        parent: None,
        "jvm.event",
        "otel.name" = Empty,
        "otel.kind" = "consumer",
        "jvm.event.kinds" = Empty,
        "jvm.event.count" = composite.events.len() as u64,
        "jdwp.suspend_policy" = Empty,
        "jvm.thread.id" = Empty,
        "jvmscope.session" = Empty,
        // Filled by a capture (`dispatch::spawn_capture`, `held`), which
        // runs inside this span: one span per hit, not two.
        "jvmscope.stop_points" = Empty,
        "jvm.capture.traces" = Empty,
        "jvm.capture.reports" = Empty,
    );
    if span.is_disabled() {
        return span;
    }
    let mut kinds: Vec<String> = Vec::new();
    for e in &composite.events {
        let k = format!("{:?}", e.kind());
        if !kinds.contains(&k) {
            kinds.push(k);
        }
    }
    let kinds = kinds.join(",");
    span.record("otel.name", format!("jvm.event {kinds}"));
    span.record("jvm.event.kinds", kinds);
    span.record(
        "jdwp.suspend_policy",
        format!("{:?}", composite.suspend_policy),
    );
    if let Some(t) = composite.events.iter().find_map(Event::thread) {
        span.record("jvm.thread.id", t.0);
    }
    span.record("jvmscope.session", ctx.session.id.to_string());
    span
}
