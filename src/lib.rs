//! jvmscope: an MCP server that debugs live JVMs over JDWP.
//!
//! Each floor is a crate of the workspace, so layers point one way and the
//! compiler holds them: `jvmscope-jdwp` (the codec) ← `jvmscope-core`
//! (model, expressions, class files) ← `jvmscope-actors` (the I/O and the
//! per-JVM state) ← this crate, the only one that knows MCP and JSON.
//! `main.rs` composes them. The floors are re-exported under their short
//! names for the binary, the tests and the benches.

pub use jvmscope_actors as actors;
pub use jvmscope_core::{classfile, expr, model};
pub use jvmscope_jdwp as jdwp;
pub use jvmscope_telemetry as telemetry;

pub mod mcp;
