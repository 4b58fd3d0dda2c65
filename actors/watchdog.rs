//! The Watchdog actor: ticks, and on each tick checks that the JVM still
//! answers. A JVM that stops answering ends its session with a reason
//! rather than leaving every tool call to time out one by one.

use std::sync::Arc;
use std::time::Duration;

use ractor::{Actor, ActorProcessingErr, ActorRef};

use crate::actors::connection::ConnectionHandle;
use crate::actors::error::JdwpError;
use crate::actors::session::SessionShared;
use crate::jdwp::virtual_machine::Version;

/// Messages of the Watchdog.
pub enum WatchdogMsg {
    /// Time to check; sent by its own timer.
    Tick,
    /// Test hook: panics inside the actor so supervision can be exercised.
    Crash,
}

/// The Watchdog actor (configuration only).
pub struct Watchdog;

/// Watchdog settings.
#[derive(Clone)]
pub struct WatchdogArgs {
    pub connection: ConnectionHandle,
    pub session: Arc<SessionShared>,
    /// How often liveness is probed.
    pub interval: Duration,
    /// How long a probe may take.
    pub probe_timeout: Duration,
    /// Consecutive failed probes that end the session.
    pub max_misses: u32,
}

pub struct WatchdogState {
    args: WatchdogArgs,
    misses: u32,
    probing: bool,
}

impl Actor for Watchdog {
    type Msg = WatchdogMsg;
    type State = WatchdogState;
    type Arguments = WatchdogArgs;

    async fn pre_start(
        &self,
        myself: ActorRef<Self::Msg>,
        args: Self::Arguments,
    ) -> Result<Self::State, ActorProcessingErr> {
        myself.send_interval(args.interval, || WatchdogMsg::Tick);
        Ok(WatchdogState {
            args,
            misses: 0,
            probing: false,
        })
    }

    async fn handle(
        &self,
        _: ActorRef<Self::Msg>,
        message: Self::Msg,
        state: &mut Self::State,
    ) -> Result<(), ActorProcessingErr> {
        match message {
            WatchdogMsg::Tick => {
                if state.probing {
                    return Ok(());
                }
                state.probing = true;
                let probe = state
                    .args
                    .connection
                    .send_within(&Version, state.args.probe_timeout)
                    .await;
                state.probing = false;
                match probe {
                    Ok(_) => state.misses = 0,
                    Err(JdwpError::Timeout { .. }) => {
                        state.misses += 1;
                        if state.misses >= state.args.max_misses {
                            let reason = format!(
                                "the JVM stopped answering ({} liveness probes of {} ms went unanswered)",
                                state.misses,
                                state.args.probe_timeout.as_millis()
                            );
                            tracing::warn!(%reason, "ending session");
                            state.args.session.request_end(reason);
                        }
                    }
                    Err(_) => {}
                }
            }
            WatchdogMsg::Crash => panic!("Watchdog crash requested by a test"),
        }
        Ok(())
    }
}
