//! Integration tests: the single test binary; each module below is one area of tests.

mod classes;
mod code;
mod data_tools;
mod discovery;
mod dump;
mod evaluate;
mod execution;
mod fake_jdwp;
mod fake_jdwp_selftest;
mod faults;
mod investigation;
mod invoke;
mod launch;
mod mcp_surface;
mod members;
mod middle;
mod probes;
mod round_trips;
mod sessions;
mod stop_points;
mod supervision;
mod support;
mod support_selftest;
mod telemetry;
mod threads;
mod tidy;
