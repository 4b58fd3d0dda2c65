//! The Watchdog actor: bounds how long a JVM stays frozen, and notices a
//! JVM that stopped answering.
//!
//! - **Suspension**: a JVM (or one held thread) suspended longer than
//!   `JDWP_WATCHDOG_SECS` (default 120 s, 0 = off) is resumed and the
//!   resume verified; the event requests whose hits froze it are cleared so
//!   the next hit does not undo the rescue. The rescue is recorded in the
//!   session and reported in the next tool reply.
//! - **Liveness**: a JVM that leaves consecutive probes unanswered ends its
//!   session with the reason, rather than leaving every call to time out.
//!
//! Suspension is only checked while something may be suspended (an event
//! with a suspending policy, a pause or a thread suspend since the last
//! all-clear), so an idle session costs one probe per liveness interval.

use std::time::Duration;

// tokio's clock: a paused test runtime drives the suspension ages and
// the liveness interval.
use tokio::time::Instant;

use ractor::{Actor, ActorProcessingErr, ActorRef};

use crate::connection::ConnectionHandle;
use crate::error::JdwpError;
use crate::jdwp::event_request::Clear;
use crate::jdwp::virtual_machine::{Resume, Version};
use crate::jvm::threads;
use crate::link::Rescue;
use crate::link::SessionLink;

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
    pub session: SessionLink,
    /// How often liveness is probed.
    pub interval: Duration,
    /// How long a probe may take.
    pub probe_timeout: Duration,
    /// Consecutive failed probes that end the session.
    pub max_misses: u32,
    /// Longest a suspension may last; `None` turns the rescue off.
    pub suspend_limit: Option<Duration>,
    /// The registry, so a rescue disables the stop points that froze the
    /// JVM (and they read DISABLED in listings) rather than only clearing
    /// their requests.
    pub stops: Option<crate::stop_points::StopPointsHandle>,
}

impl WatchdogArgs {
    /// `JDWP_WATCHDOG_SECS`: default 120, 0 = off.
    pub fn limit_from_env() -> Option<Duration> {
        match std::env::var("JDWP_WATCHDOG_SECS")
            .ok()
            .and_then(|v| v.trim().parse::<f64>().ok())
        {
            Some(s) if s <= 0.0 => None,
            Some(s) => Some(Duration::from_secs_f64(s)),
            None => Some(Duration::from_secs(120)),
        }
    }

    /// How often the timer ticks: often enough to rescue within a second
    /// of the limit, never more than the liveness interval.
    fn tick(&self) -> Duration {
        match self.suspend_limit {
            Some(limit) => self
                .interval
                .min(Duration::from_millis(500))
                .min(limit / 2)
                .max(Duration::from_millis(50)),
            None => self.interval,
        }
    }
}

pub struct WatchdogState {
    args: WatchdogArgs,
    misses: u32,
    last_probe: Instant,
    /// When the current suspension was first seen.
    held_since: Option<Instant>,
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
        myself.send_interval(args.tick(), || WatchdogMsg::Tick);
        Ok(WatchdogState {
            args,
            misses: 0,
            last_probe: Instant::now(),
            held_since: None,
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
                if state.args.session.dead_reason().is_some() {
                    return Ok(());
                }
                if state.last_probe.elapsed() >= state.args.interval {
                    state.last_probe = Instant::now();
                    state.probe().await;
                }
                if state.args.suspend_limit.is_some() {
                    state.check_suspension().await;
                }
            }
            WatchdogMsg::Crash => panic!("Watchdog crash requested by a test"),
        }
        Ok(())
    }
}

impl WatchdogState {
    async fn probe(&mut self) {
        let span = tracing::info_span!(
            parent: None,
            "watchdog.liveness",
            "otel.name" = "watchdog liveness",
            "jvmscope.session" = %self.args.session.id,
        );
        // The request takes its parent span when it is sent, so send it
        // inside the root span.
        let pending = {
            let _inside = span.enter();
            self.args
                .connection
                .send_within(&Version, self.args.probe_timeout)
        };
        let probe = pending.await;
        match probe {
            Ok(_) => self.misses = 0,
            // A heap walk holds the JVM's command thread: the probe waits
            // behind it, and its silence says nothing.
            Err(JdwpError::Timeout { .. }) if self.args.session.life.walking_heap() => {}
            Err(JdwpError::Timeout { .. }) => {
                self.misses += 1;
                if self.misses >= self.args.max_misses {
                    let reason = format!(
                        "the JVM stopped answering ({} liveness probes of {} ms went unanswered)",
                        self.misses,
                        self.args.probe_timeout.as_millis()
                    );
                    tracing::warn!(%reason, "ending session");
                    self.args.session.request_end(reason);
                }
            }
            Err(_) => {}
        }
    }

    async fn check_suspension(&mut self) {
        let Some(limit) = self.args.suspend_limit else {
            return;
        };
        let shared = &self.args.session;
        if !shared.session.view().await.maybe_suspended {
            self.held_since = None;
            return;
        }
        let census = match threads::census(&self.args.connection).await {
            Ok(c) => c,
            Err(_) => return,
        };
        if census.held == 0 {
            self.held_since = None;
            shared.session.all_clear();
            return;
        }
        let since = *self.held_since.get_or_insert_with(Instant::now);
        if since.elapsed() < limit {
            return;
        }
        let span = tracing::info_span!(
            parent: None,
            "watchdog.rescue",
            "otel.name" = "watchdog rescue",
            "jvmscope.session" = %shared.id,
        );
        use tracing::Instrument;
        self.rescue(census, since, limit).instrument(span).await;
    }

    /// Disarms, resumes, verifies and records one rescue.
    async fn rescue(&mut self, census: threads::Census, since: Instant, limit: Duration) {
        let shared = &self.args.session;
        // Disarm what froze it first, so resuming does not hand the JVM
        // straight back to the same stop point.
        let requests = shared.session.take_suspending_requests().await;
        let mut cleared = Vec::new();
        let mut disabled = Vec::new();
        if let Some(stops) = &self.args.stops {
            use crate::stop_points::routes::{Lookup, RequestKey, Route};
            let routes = stops.table().load();
            let mut ids = Vec::new();
            for (kind, request_id) in &requests {
                if let Lookup::Live(Route::Hit { target, .. }) =
                    routes.lookup(&RequestKey::new(*kind, *request_id))
                    && !ids.contains(&target.id.0)
                {
                    ids.push(target.id.0.clone());
                }
            }
            for id in ids {
                if stops.toggle(&id, Some(false)).await.is_ok() {
                    disabled.push(id);
                }
            }
        }
        for (kind, request_id) in &requests {
            if self
                .args
                .connection
                .send(&Clear {
                    event_kind: *kind,
                    request_id: *request_id,
                })
                .await
                .is_ok()
            {
                cleared.push(*request_id);
            }
        }
        let mut resumes = 0;
        let mut after = census;
        while after.held > 0 && resumes < 64 {
            if self.args.connection.send(&Resume).await.is_err() {
                break;
            }
            resumes += 1;
            match threads::census(&self.args.connection).await {
                Ok(c) => after = c,
                Err(_) => break,
            }
        }
        let rescue = Rescue {
            held: census.held,
            total: census.total,
            held_for: since.elapsed(),
            limit,
            resumes,
            still_held: after.held,
            cleared: cleared.clone(),
            disabled,
        };
        tracing::warn!(
            session = %shared.id,
            held = rescue.held,
            total = rescue.total,
            held_for_ms = rescue.held_for.as_millis() as u64,
            resumes = rescue.resumes,
            still_held = rescue.still_held,
            disabled = ?rescue.disabled,
            "watchdog resumed a JVM suspended past its limit"
        );
        shared.rescues.record(rescue);
        if after.held == 0 {
            shared.session.forget_event_threads(None);
            shared.session.release_all();
            shared.session.all_clear();
        }
        self.held_since = None;
    }
}
