//! Stop-point tools: set a line, exception, field, method-exit or monitor
//! stop point; list, clear, toggle and update them; panic. Arguments become
//! `model::stop_point` definitions here; the registry does the rest.

mod args;
mod entries;
mod export;
mod manage;
pub(crate) mod render;
mod set;

use super::Route;
use crate::model::stop_point::Filters;

pub use render::{arm_note, describe_point};

/// The listing as debug_list_stop_points writes it (for the report).
pub fn listing_text(l: &crate::actors::Listing, ring: &crate::actors::RingStats) -> String {
    render::listing(l, ring).0
}

/// The set as debug_list_stop_points export:true writes it.
pub fn export_set(l: &crate::actors::Listing) -> String {
    export::export(l).0
}

/// Every stop-point tool, the setters first, in the order `tools/list`
/// shows them.
pub fn routes() -> Vec<Route> {
    let mut routes = set::set_routes();
    routes.extend(manage::manage_routes());
    routes
}

/// hit_count is the JVM's Count: it counts hits, not the hits whose
/// condition holds, which is not how the pair reads.
fn count_with_condition(filters: &Filters, notes: &mut Vec<String>) {
    if let (Some(n), Some(_)) = (filters.hit_count, &filters.condition) {
        notes.push(format!(
            "hit_count {n} with a condition: hit_count counts hits, not matches; the condition is checked on hit {n} only, and the stop point is spent whatever it answers"
        ));
    }
}
