//! The EventDispatch actor: decodes the event composites the Connection
//! forwards and records what happened. Later it evaluates conditions and
//! captures traces; it must never hold a suspended thread without either
//! handing it to someone or resuming it.

use std::time::Instant;

use ractor::{Actor, ActorProcessingErr, ActorRef};

use crate::actors::connection::ConnectionHandle;
use crate::actors::session::SessionShared;
use crate::jdwp::{Composite, Event};
use crate::jdwp::{Decode, Reader};
use std::sync::Arc;

/// Messages of EventDispatch.
pub enum EventsMsg {
    /// An event composite arrived from the JVM (raw data, decoded here).
    Composite { data: Vec<u8>, received: Instant },
    /// Test hook: panics inside the actor so supervision can be exercised.
    Crash,
}

/// The EventDispatch actor (configuration only).
pub struct EventDispatch;

/// What EventDispatch starts from; a restart gets the same arguments and
/// loses nothing, because what it records lives in the session's shared
/// block.
#[derive(Clone)]
pub struct EventsArgs {
    pub connection: ConnectionHandle,
    pub session: Arc<SessionShared>,
    pub classes: Arc<crate::actors::session::classes::ClassCache>,
}

impl Actor for EventDispatch {
    type Msg = EventsMsg;
    type State = EventsArgs;
    type Arguments = EventsArgs;

    async fn pre_start(
        &self,
        _: ActorRef<Self::Msg>,
        args: Self::Arguments,
    ) -> Result<Self::State, ActorProcessingErr> {
        Ok(args)
    }

    async fn handle(
        &self,
        _: ActorRef<Self::Msg>,
        message: Self::Msg,
        state: &mut Self::State,
    ) -> Result<(), ActorProcessingErr> {
        match message {
            EventsMsg::Composite { data, .. } => {
                let sizes = state.connection.shared().id_sizes();
                let mut r = Reader::new(&data, sizes);
                match Composite::decode(&mut r) {
                    Ok(composite) => state.session.record_composite(&composite),
                    Err(e) => {
                        tracing::warn!(error = %e, "undecodable event composite");
                        state
                            .session
                            .note_event(format!("undecodable event composite: {e}"));
                    }
                }
            }
            EventsMsg::Crash => panic!("EventDispatch crash requested by a test"),
        }
        Ok(())
    }
}

/// A one-line description of an event, for the session's recent events.
pub fn describe(event: &Event) -> String {
    format!("{event:?}")
}
