//! Domain vocabulary shared by the actors and the MCP face: plain data, no
//! serde, no I/O.

pub mod callees;
pub mod classes;
pub mod classfile;
pub mod cpu;
pub mod dump;
pub mod histogram;
pub mod holders;
pub mod hprof;
pub mod invoking;
pub mod java_source;
pub mod jvms;
pub mod label;
pub mod latency;
pub mod overhead;
pub mod perfdata;
pub mod prim;
pub mod profile;
pub mod recent;
pub mod session;
pub mod shown;
pub mod signature;
pub mod stale;
pub mod stop_point;
pub mod threads;

pub use prim::Prim;
pub use session::{AttachSpec, LaunchSpec, LaunchTarget, Roots, SessionId, SessionState, VmInfo};
