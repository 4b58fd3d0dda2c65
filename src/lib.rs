//! jvmscope: an MCP server that debugs live JVMs over JDWP.
//!
//! Layers point one way: the pure core (`jdwp`, `model`) does no I/O;
//! `actors` does the I/O and owns per-JVM state; `mcp` is the only layer
//! that knows MCP and JSON; `main.rs` composes them.

#[path = "../actors/mod.rs"]
pub mod actors;
pub mod classfile;
pub mod expr;
pub mod jdwp;
pub mod mcp;
pub mod model;
pub mod telemetry;
