//! The MCP face: the only module that knows MCP or JSON. It turns tool
//! calls into `model` types, calls the actor handles, and renders compact
//! text (plus structured content where a script will read the result).

pub mod error;
pub mod http;
pub mod render;
pub mod resources;
pub mod server;
pub mod stdio;
pub mod tasks;
pub mod tools;

pub use server::JvmScope;
