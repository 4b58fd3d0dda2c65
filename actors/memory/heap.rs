//! The class histogram: live instances per loaded class, counted either
//! over JDWP (`VirtualMachine.InstanceCounts` over every loaded class, one
//! heap walk) or, for a JVM on this machine, through HotSpot's attach
//! socket (`inspectheap`, which also gives bytes; ADR 0019). Either way
//! the JVM stops the world for the walk: the view carries the wall time
//! and, for a local JVM, the safepoint time its perfdata counted. The
//! last histogram is kept on the session so the next call reports growth.
//! Also where the session finds its JVM's local process.

use std::time::{Duration, Instant};

use crate::discovery;
use crate::door::Jvm;
use crate::error::{LocalError, SessionError};
use crate::jdwp::TypeTag;
use crate::jdwp::virtual_machine::{AllClasses, InstanceCounts};
use crate::lock::lock;
use crate::model::histogram::{ClassCount, Histogram};
use crate::model::signature::java_name;

/// How long one heap walk may take before the request is given up.
const WALK_TIMEOUT: Duration = Duration::from_secs(120);

/// Which channel counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Channel {
    /// JDWP `InstanceCounts`: counts only, works on any JVM we attach to.
    Jdwp,
    /// HotSpot's attach socket: counts and bytes, local JVMs only.
    Attach,
}

/// The channel asked for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChannelChoice {
    /// The attach socket for a local JVM, else JDWP.
    Auto,
    Only(Channel),
}

/// What a histogram call asks.
#[derive(Debug, Clone)]
pub struct HistogramSpec {
    pub channel: ChannelChoice,
    /// Only classes whose name starts with this (empty: all).
    pub package: String,
    /// Take two histograms this far apart (growth without an earlier call).
    pub interval: Option<Duration>,
    /// The stop-the-world time the call may cause; a second walk is taken
    /// only when the first left room for it.
    pub max_pause: Duration,
}

/// One heap walk's cost.
#[derive(Debug, Clone, Copy)]
pub struct Walk {
    /// Wall time of the request (an upper bound of the pause).
    pub wall: Duration,
    /// Time the JVM spent at safepoints meanwhile, from its perfdata.
    pub safepoint: Option<Duration>,
}

impl Walk {
    /// The best figure of the pause this walk caused.
    pub fn pause(&self) -> Duration {
        self.safepoint.unwrap_or(self.wall)
    }
}

/// A histogram call's answer.
#[derive(Debug, Clone)]
pub struct HistogramView {
    pub now: Histogram,
    /// What growth is measured against: this call's first sample, or the
    /// session's previous histogram of the same channel and scope.
    pub earlier: Option<Histogram>,
    /// Whether `earlier` came from this call (`interval`).
    pub sampled_twice: bool,
    pub channel: Channel,
    pub walks: Vec<Walk>,
    /// Why the attach socket was not used when it was wanted.
    pub attach_refused: Option<LocalError>,
    /// The second walk was skipped: the first used over half the budget.
    pub second_skipped: bool,
}

impl Jvm {
    /// The JVM's process on this machine: the one we launched, or the one
    /// holding the JDWP port; refused for a JVM on another host.
    pub async fn local_pid(&self) -> Result<u32, SessionError> {
        if let Some(pid) = self.info().pid.get() {
            return Ok(*pid);
        }
        if !crate::model::jvms::is_loopback_host(self.host()) {
            return Err(LocalError::NotLocal {
                host: self.host().to_string(),
            }
            .into());
        }
        let pid = match self.launched_pid() {
            Some(pid) => pid,
            None => discovery::pid_of_port(self.port())
                .await
                .ok_or(LocalError::NoProcess { port: self.port() })?,
        };
        let _ = self.info().pid.set(pid);
        Ok(pid)
    }

    /// The class histogram (see the module).
    pub async fn class_histogram(
        &self,
        spec: HistogramSpec,
    ) -> Result<HistogramView, SessionError> {
        self.check_alive()?;
        let local = self.local_pid().await;
        // While this session holds the JVM, the attach socket's listener
        // (started on the first attach) would be held as well: a walk
        // through it would wait its full timeout.
        let held = self.link().session.view().await.suspended_by_us;
        let (channel, attach_refused) = match (spec.channel, &local) {
            (ChannelChoice::Auto, Ok(pid)) if held => (
                Channel::Jdwp,
                Some(LocalError::HeldByDebugger { pid: *pid }),
            ),
            (ChannelChoice::Only(c), _) => (c, None),
            (ChannelChoice::Auto, Ok(_)) => (Channel::Attach, None),
            (ChannelChoice::Auto, Err(SessionError::Local(e))) => (Channel::Jdwp, Some(e.clone())),
            (ChannelChoice::Auto, Err(_)) => (Channel::Jdwp, None),
        };
        let pid = match channel {
            Channel::Attach => Some(local?),
            Channel::Jdwp => local.ok(),
        };
        if let Some(last) = lock(&self.info().last_walk)[channel as usize]
            && last > spec.max_pause
        {
            return Err(SessionError::PauseOverBudget {
                last,
                budget: spec.max_pause,
            });
        }
        let mut walks = Vec::new();
        let first = self
            .one_histogram(channel, pid, &spec.package, &mut walks)
            .await;
        // The attach socket can fail where JDWP still works: fall back when
        // the agent did not insist on it.
        let (channel, first, attach_refused) = match (first, spec.channel) {
            (Err(SessionError::Local(e)), ChannelChoice::Auto) => {
                let h = self
                    .one_histogram(Channel::Jdwp, pid, &spec.package, &mut walks)
                    .await?;
                (Channel::Jdwp, h, Some(e))
            }
            (r, _) => (channel, r?, attach_refused),
        };
        let mut view = HistogramView {
            now: first,
            earlier: None,
            sampled_twice: false,
            channel,
            walks,
            attach_refused,
            second_skipped: false,
        };
        if let Some(interval) = spec.interval {
            let spent: Duration = view.walks.iter().map(Walk::pause).sum();
            if spent * 2 > spec.max_pause {
                view.second_skipped = true;
            } else {
                tokio::time::sleep(interval).await;
                let second = self
                    .one_histogram(channel, pid, &spec.package, &mut view.walks)
                    .await?;
                view.earlier = Some(std::mem::replace(&mut view.now, second));
                view.sampled_twice = true;
            }
        }
        let key = channel as u8;
        let mut last = lock(&self.info().last_histogram);
        if view.earlier.is_none()
            && let Some((c, scope, h)) = last.as_ref()
            && *c == key
            && spec.package.starts_with(scope.as_str())
        {
            view.earlier = Some(h.clone());
        }
        *last = Some((key, spec.package.clone(), view.now.clone()));
        Ok(view)
    }

    /// One histogram through `channel`, its walk recorded in `walks`.
    async fn one_histogram(
        &self,
        channel: Channel,
        pid: Option<u32>,
        package: &str,
        walks: &mut Vec<Walk>,
    ) -> Result<Histogram, SessionError> {
        let safepoints_before = match pid {
            Some(pid) => discovery::safepoint_secs(pid).await,
            None => None,
        };
        let _walking = self.link().life.heap_walk();
        let started = Instant::now();
        let mut rows = match (channel, pid) {
            (Channel::Attach, Some(pid)) => {
                discovery::hotspot_histogram(pid, true, WALK_TIMEOUT).await?
            }
            (Channel::Attach, None) => {
                return Err(LocalError::NoProcess { port: self.port() }.into());
            }
            (Channel::Jdwp, _) => self.jdwp_counts(package).await?,
        };
        let wall = started.elapsed();
        let at = self.created().elapsed().as_secs_f64() - wall.as_secs_f64() / 2.0;
        let safepoint = match (pid, safepoints_before) {
            (Some(pid), Some(before)) => discovery::safepoint_secs(pid)
                .await
                .map(|after| Duration::from_secs_f64((after - before).max(0.0))),
            _ => None,
        };
        let walk = Walk { wall, safepoint };
        lock(&self.info().last_walk)[channel as usize] = Some(walk.pause());
        walks.push(walk);
        rows.retain(|r| r.class.starts_with(package));
        Ok(Histogram { rows, at })
    }

    /// Live instances of every loaded class (of `package`) in one
    /// `InstanceCounts`; copies of a class under several loaders summed.
    async fn jdwp_counts(&self, package: &str) -> Result<Vec<ClassCount>, SessionError> {
        self.require_instance_info().await?;
        let all = self
            .connection()
            .send(&AllClasses)
            .await
            .map_err(|e| self.map_err(e))?;
        let classes: Vec<(String, crate::jdwp::ReferenceTypeId)> = all
            .into_iter()
            .filter(|c| c.ref_type.tag != TypeTag::Interface)
            .map(|c| (java_name(&c.signature), c.ref_type.id))
            .filter(|(name, _)| name.starts_with(package))
            .collect();
        let counts = self
            .connection()
            .send_within(
                &InstanceCounts {
                    ref_types: classes.iter().map(|(_, id)| *id).collect(),
                },
                WALK_TIMEOUT,
            )
            .await
            .map_err(|e| self.map_err(e))?;
        let mut merged: std::collections::HashMap<String, i64> = std::collections::HashMap::new();
        for ((name, _), n) in classes.into_iter().zip(counts) {
            *merged.entry(name).or_default() += n;
        }
        Ok(merged
            .into_iter()
            .filter(|(_, n)| *n > 0)
            .map(|(class, instances)| ClassCount {
                class,
                instances,
                bytes: None,
            })
            .collect())
    }
}
