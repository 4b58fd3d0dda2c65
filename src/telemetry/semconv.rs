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
/// `jvmscope.group`: the group session a fan-out runs across.
pub const GROUP_ID: &str = "jvmscope.group";
/// `jvmscope.group.members`: how many members a fan-out asks.
pub const GROUP_MEMBERS: &str = "jvmscope.group.members";
/// `jvm.event.count`: events in the composite.
pub const JVM_EVENT_COUNT: &str = "jvm.event.count";
/// `jvm.thread.id`: the event thread's JDWP id.
pub const JVM_THREAD_ID: &str = "jvm.thread.id";
/// `jvm.capture.traces`: hits snapshotted.
pub const JVM_CAPTURE_TRACES: &str = "jvm.capture.traces";
/// `jvm.capture.reports`: hits reported to the agent.
pub const JVM_CAPTURE_REPORTS: &str = "jvm.capture.reports";

/// Our integer attributes that `tracing` records as `u64`.
/// `tracing-opentelemetry` hands a `u64` field over as text (OpenTelemetry
/// has no unsigned integer), so the export path turns these back into
/// integers ([`restore_integers`]).
pub const U64_ATTRIBUTES: &[&str] = &[
    JVM_EVENT_COUNT,
    JVM_THREAD_ID,
    JVM_CAPTURE_TRACES,
    JVM_CAPTURE_REPORTS,
];

/// Turns the [`U64_ATTRIBUTES`] that arrived as text back into integers
/// (values above `i64::MAX` stay text).
pub fn restore_integers(attributes: &mut [opentelemetry::KeyValue]) {
    use opentelemetry::{StringValue, Value};
    for kv in attributes {
        if let Value::String(text) = &kv.value
            && U64_ATTRIBUTES.contains(&kv.key.as_str())
            && let Ok(n) = StringValue::as_str(text).parse::<i64>()
        {
            kv.value = Value::I64(n);
        }
    }
}
