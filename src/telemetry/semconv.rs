//! Span and attribute names, in one place. Where OpenTelemetry has a
//! semantic convention (rpc.*, server.*) we use it; our own live under
//! `jdwp.*`, `mcp.*` and `jvmscope.*`.

/// `rpc.system`: always `jdwp` on a round-trip span.
pub const RPC_SYSTEM: &str = "rpc.system";
/// `rpc.service`: the JDWP command set, e.g. `VirtualMachine`.
pub const RPC_SERVICE: &str = "rpc.service";
/// `rpc.method`: `CommandSet.Command`.
pub const RPC_METHOD: &str = "rpc.method";
/// `server.address`: the JVM's host.
pub const SERVER_ADDRESS: &str = "server.address";
/// `server.port`: the JVM's JDWP port.
pub const SERVER_PORT: &str = "server.port";
/// `jdwp.id`: the packet id of the round trip.
pub const JDWP_ID: &str = "jdwp.id";
/// `jdwp.request_bytes`: request packet size, header included.
pub const JDWP_REQUEST_BYTES: &str = "jdwp.request_bytes";
/// `jdwp.reply_bytes`: reply packet size, header included.
pub const JDWP_REPLY_BYTES: &str = "jdwp.reply_bytes";
/// `jdwp.error`: the JDWP error code's name, or `TIMEOUT` / `DISCONNECTED`.
pub const JDWP_ERROR: &str = "jdwp.error";
/// `jdwp.queued_us`: time spent waiting for a slot in the in-flight window.
pub const JDWP_QUEUED_US: &str = "jdwp.queued_us";
/// `mcp.tool.name`: the tool an MCP call named.
pub const MCP_TOOL_NAME: &str = "mcp.tool.name";
/// `jvmscope.session`: our session id.
pub const SESSION_ID: &str = "jvmscope.session";
