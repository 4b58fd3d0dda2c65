//! What the registry shows: stop points and families as listings read
//! them (with `instance_id` objects checked for collection), and the notes about suspending stop points that override traces
//! at a shared location.

use std::time::Instant;

use futures::future::join_all;

use crate::jdwp::object_reference::IsCollected;
use crate::jdwp::{ErrorCode, ObjectId, SuspendPolicy};
use crate::model::stop_point::{ArmNote, Mode, StopPointSpec, StopState, Target};

use super::super::registry::Point;
use super::super::routes::Stats;
use super::super::{FamilyView, Listing, PointView};
use super::Book;

impl Book {
    /// Notes about suspend policies that override traces at the same
    /// locations as `id`.
    pub(super) fn overrides(&self, id: &str) -> Vec<ArmNote> {
        let Some(me) = self.reg.point(id) else {
            return Vec::new();
        };
        let mine_suspends = suspends_all(me);
        let mut out = Vec::new();
        for other in self.reg.points() {
            if other.id == me.id || other.state != StopState::Armed {
                continue;
            }
            let shared = me
                .copies
                .iter()
                .flat_map(|c| c.locations.iter())
                .any(|l| other.at(l));
            if !shared {
                continue;
            }
            if mine_suspends && other.spec.trace().is_some() {
                out.push(ArmNote::SuspendsTrace {
                    trace: other.id.0.clone(),
                    suspender: me.id.0.clone(),
                });
            } else if me.spec.trace().is_some() && suspends_all(other) {
                out.push(ArmNote::SuspendedBy {
                    suspender: other.id.0.clone(),
                });
            }
        }
        out
    }

    /// The listing.
    pub fn listing(&self) -> Listing {
        Listing {
            points: self
                .reg
                .ids()
                .iter()
                .filter_map(|id| self.view(&id.0))
                .collect(),
            families: self
                .reg
                .family_ids()
                .iter()
                .filter_map(|f| self.family_view(&f.0))
                .collect(),
        }
    }

    /// One stop point as listings show it.
    pub fn view(&self, id: &str) -> Option<PointView> {
        let p = self.reg.point(id)?;
        let now = Instant::now();
        let overridden_by: Vec<String> = if p.spec.trace().is_some() && p.state == StopState::Armed
        {
            self.reg
                .points()
                .filter(|o| o.id != p.id && o.state == StopState::Armed && suspends_all(o))
                .filter(|o| {
                    p.copies
                        .iter()
                        .flat_map(|c| c.locations.iter())
                        .any(|l| o.at(l))
                })
                .map(|o| o.id.0.clone())
                .collect()
        } else {
            Vec::new()
        };
        let mut loaders: Vec<_> = p.copies.iter().map(|c| c.loader).collect();
        loaders.sort();
        loaders.dedup();
        Some(PointView {
            id: p.id.0.clone(),
            kind: p.spec.target.kind(),
            target: p.spec.target.describe(),
            spec: (*p.spec).clone(),
            state: p.state.clone(),
            policy: p.spec.policy(p.count_here.is_some()),
            count_mode: p.count_mode,
            hits: Stats::get(&p.stats.hits),
            captured: Stats::get(&p.stats.captured),
            budget_used: p.stats.budget_used(),
            over_budget: Stats::get(&p.stats.over_budget),
            discarded: Stats::get(&p.stats.discarded),
            below_threshold: Stats::get(&p.stats.below_threshold),
            rethrows: Stats::get(&p.stats.rethrows),
            instance_collected: false,
            overridden_hits: Stats::get(&p.stats.overridden),
            condition_errors: Stats::get(&p.stats.condition_errors),
            condition_false: Stats::get(&p.stats.condition_false),
            condition_passed: Stats::get(&p.stats.condition_passed),
            last_operands: p.stats.last_operands(),
            counted: Stats::get(&p.stats.counted),
            shed: Stats::get(&p.stats.shed),
            last_error: p.stats.last_error(),
            stopped_by_errors: p.stats.stopped_by_errors(),
            paused: p.stats.paused(),
            budget_pct: self.io.guard.stop_point_pct(p.spec.filters.overhead_pct),
            cost: p.stats.cost(now),
            invoking: self.io.classes.runaways().taken_by(&p.id.0),
            probe: p.probe.then(|| p.stats.probe.cost()),
            locations: p.locations(),
            copies: p.copies.len(),
            loaders: loaders.len(),
            loader_ids: loaders.iter().map(|l| l.0).collect(),
            later: p.copies.iter().filter(|c| c.later).count(),
            watching: p.watch.is_some(),
            family: p.family.as_ref().map(|f| f.0.clone()),
            overridden_by,
            notes: p.notes.clone(),
        })
    }

    pub fn family_view(&self, id: &str) -> Option<FamilyView> {
        let f = self.reg.family(id)?;
        Some(FamilyView {
            id: f.id.0.clone(),
            pattern: f.pattern.clone(),
            method: match &f.template.target {
                Target::Line(l) => l.method.clone(),
                _ => None,
            },
            members: f
                .members
                .iter()
                .map(|m| {
                    let class = self
                        .reg
                        .point(&m.0)
                        .and_then(|p| p.spec.target.class_name().map(String::from))
                        .unwrap_or_default();
                    (m.0.clone(), class)
                })
                .collect(),
            max_classes: f.max_classes,
            watch: f.watch_state.clone(),
            left_out: f.left_out,
            without_method: f.without_method,
            joined_later: f.joined_later,
        })
    }

    /// Marks the stop points whose `instance_id` object was garbage
    /// collected. An armed request holds its object, so this concerns
    /// disabled and spent ones: re-arming them would fail.
    pub async fn mark_collected(&self, listing: &mut Listing) {
        let conn = &self.io.conn;
        let checks = listing.points.iter().map(|p| async move {
            let Some(object) = p.spec.filters.instance else {
                return false;
            };
            match conn
                .send(&IsCollected {
                    object: ObjectId(object),
                })
                .await
            {
                Ok(collected) => collected,
                Err(e) => e.code() == Some(ErrorCode::INVALID_OBJECT),
            }
        });
        let collected = join_all(checks).await;
        for (p, c) in listing.points.iter_mut().zip(collected) {
            p.instance_collected = c;
        }
    }

    /// The definition of a stop point.
    pub fn spec(&self, id: &str) -> Option<StopPointSpec> {
        self.reg.point(id).map(|p| (*p.spec).clone())
    }
}

fn suspends_all(p: &Point) -> bool {
    p.state == StopState::Armed
        && matches!(p.spec.mode, Mode::Suspend)
        && p.spec.policy(p.count_here.is_some()) == SuspendPolicy::All
}
