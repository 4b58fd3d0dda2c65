//! The StopPoints actor: the registry of every stop point under our own
//! ids. Its state is the truth about what this session armed in the JVM.

use std::collections::BTreeMap;

use ractor::{Actor, ActorProcessingErr, ActorRef, RpcReplyPort};

/// One registered stop point (kinds and modifiers arrive with the
/// stop-point work; the registry shape is settled now).
#[derive(Debug, Clone)]
pub struct StopPointRecord {
    pub id: String,
    pub description: String,
    pub enabled: bool,
    pub hits: u64,
}

/// Messages of StopPoints.
pub enum StopPointsMsg {
    /// How many stop points are registered.
    Count(RpcReplyPort<usize>),
    /// Every stop point, in id order.
    List(RpcReplyPort<Vec<StopPointRecord>>),
}

/// The registry state: plain data, synchronous methods.
#[derive(Debug, Default)]
pub struct Registry {
    points: BTreeMap<String, StopPointRecord>,
}

impl Registry {
    pub fn len(&self) -> usize {
        self.points.len()
    }

    pub fn is_empty(&self) -> bool {
        self.points.is_empty()
    }

    pub fn list(&self) -> Vec<StopPointRecord> {
        self.points.values().cloned().collect()
    }
}

/// The StopPoints actor (configuration only).
pub struct StopPoints;

impl Actor for StopPoints {
    type Msg = StopPointsMsg;
    type State = Registry;
    type Arguments = ();

    async fn pre_start(
        &self,
        _: ActorRef<Self::Msg>,
        _: Self::Arguments,
    ) -> Result<Self::State, ActorProcessingErr> {
        Ok(Registry::default())
    }

    async fn handle(
        &self,
        _: ActorRef<Self::Msg>,
        message: Self::Msg,
        state: &mut Self::State,
    ) -> Result<(), ActorProcessingErr> {
        match message {
            StopPointsMsg::Count(reply) => {
                let _ = reply.send(state.len());
            }
            StopPointsMsg::List(reply) => {
                let _ = reply.send(state.list());
            }
        }
        Ok(())
    }
}
