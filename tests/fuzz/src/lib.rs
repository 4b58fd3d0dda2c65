//! The JDWP codec alone, compiled from jvmscope's own sources so the fuzz
//! target builds without the server around it (tokio, rmcp, OpenTelemetry).
//!
//! `src/jdwp` is the sans-IO core: it names only `crate::jdwp::…`, std and
//! `thiserror`, so declaring it here as `jdwp` makes every path in it
//! resolve. The library is named `jvmscope` so the fuzz targets read
//! `jvmscope::jdwp::…` exactly as the server's own code does.

#[path = "../../../src/jdwp/mod.rs"]
pub mod jdwp;
