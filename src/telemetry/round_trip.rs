//! The span of one JDWP round trip, recorded without `tracing`. A busy
//! session makes up to ~100,000 round trips a second; going through the
//! `tracing` registry (a slab slot, extensions, a field visitor, a close)
//! cost more per round trip than the record itself. A [`RoundTrip`] asks
//! the bridge once, when the request is queued, whether its parent (a tool
//! call, a `jvm.event`) is sampled, and if so builds the finished record
//! straight into its export form; dropping it hands the record to the
//! export queue. The exported span is the same as before: name
//! `jdwp <CommandSet>.<Command>`, kind CLIENT, the `rpc.*`, `server.*` and
//! `jdwp.*` attributes, status ERROR with `jdwp.error` on failure.

use tracing_subscriber::registry::{LookupSpan, SpanData};

use super::bridge::{OtelBridge, Recording};
use super::export::QueueProcessor;
use super::filter::EXPORTED_TARGET;
use super::otlp::Attributes;
use super::record::{Kind, SpanRecord, Status, Text, now_ns};
use super::semconv;

/// What a round trip's span starts with.
pub struct RoundTripStart<'a> {
    /// `CommandSet.Command`.
    pub method: &'static str,
    /// The command set's name.
    pub service: &'static str,
    pub host: &'a str,
    pub port: u16,
    /// Request packet size, header included.
    pub request_bytes: u64,
}

/// A round trip's span in the making; `None` inside when it is not
/// recorded (export off, or its trace not sampled). Dropping it ends it.
#[derive(Default)]
pub struct RoundTrip(Option<Box<Open>>);

struct Open {
    rec: SpanRecord,
    sink: QueueProcessor,
}

impl RoundTrip {
    /// A round trip that records nothing.
    pub fn none() -> Self {
        Self(None)
    }

    /// Opens the span of a round trip whose request was queued under
    /// `parent` (the span current at the caller). Recorded when the bridge
    /// is installed and the parent is one of our sampled spans, or there is
    /// no parent of ours and the sampler keeps a new trace.
    pub fn open(parent: &tracing::Span, start: &RoundTripStart<'_>) -> Self {
        let ours = parent
            .metadata()
            .is_some_and(|m| m.target().starts_with(EXPORTED_TARGET));
        let open = if ours {
            parent
                .with_subscriber(|(id, dispatch)| {
                    let bridge = dispatch.downcast_ref::<OtelBridge>()?;
                    let registry = dispatch.downcast_ref::<tracing_subscriber::Registry>()?;
                    let data = registry.span_data(id)?;
                    let extensions = data.extensions();
                    // No record: the parent's trace was not sampled.
                    let Recording(rec) = extensions.get::<Recording>()?;
                    Some(bridge.round_trip(Some((rec.trace_id, rec.span_id)), start))
                })
                .flatten()
                .flatten()
        } else {
            // Another crate's span, or none: a trace of its own.
            tracing::dispatcher::get_default(|dispatch| {
                dispatch
                    .downcast_ref::<OtelBridge>()
                    .and_then(|bridge| bridge.round_trip(None, start))
            })
        };
        Self(open.map(Box::new))
    }

    /// Whether this round trip is recorded.
    pub fn is_recorded(&self) -> bool {
        self.0.is_some()
    }

    /// The packet id it was sent with.
    pub fn sent(&mut self, id: u32) {
        if let Some(o) = &mut self.0 {
            o.rec.attributes.push_int(semconv::JDWP_ID, i64::from(id));
        }
    }

    /// Time spent waiting for a slot in the in-flight window, and the
    /// reply's size.
    pub fn replied(&mut self, queued_us: u64, reply_bytes: u64) {
        if let Some(o) = &mut self.0 {
            o.rec
                .attributes
                .push_int(semconv::JDWP_QUEUED_US, queued_us as i64);
            o.rec
                .attributes
                .push_int(semconv::JDWP_REPLY_BYTES, reply_bytes as i64);
        }
    }

    /// The round trip failed: a JDWP error's name, `TIMEOUT` or
    /// `DISCONNECTED`.
    pub fn failed(&mut self, error: &str) {
        if let Some(o) = &mut self.0 {
            o.rec
                .attributes
                .push_str(semconv::JDWP_ERROR, error.as_bytes());
            o.rec.status = Status::Error(String::new());
        }
    }
}

impl Drop for RoundTrip {
    fn drop(&mut self) {
        if let Some(open) = self.0.take() {
            let Open { mut rec, sink } = *open;
            rec.end_ns = now_ns();
            sink.on_end(rec);
        }
    }
}

impl OtelBridge {
    /// A round trip's record under `parent` (trace and span id), or a new
    /// root when the sampler keeps it.
    fn round_trip(&self, parent: Option<(u128, u64)>, start: &RoundTripStart<'_>) -> Option<Open> {
        let (trace_id, parent_span_id) = match parent {
            Some(p) => p,
            None => {
                let trace_id = self.new_trace_id();
                if !self.sampled(trace_id) {
                    return None;
                }
                (trace_id, 0)
            }
        };
        let mut attributes = Attributes::for_span(11);
        attributes.push_str(semconv::RPC_SYSTEM, b"jdwp");
        attributes.push_str(semconv::RPC_SERVICE, start.service.as_bytes());
        attributes.push_str(semconv::RPC_METHOD, start.method.as_bytes());
        attributes.push_str(semconv::SERVER_ADDRESS, start.host.as_bytes());
        attributes.push_int(semconv::SERVER_PORT, i64::from(start.port));
        attributes.push_int(semconv::JDWP_REQUEST_BYTES, start.request_bytes as i64);
        Some(Open {
            rec: SpanRecord {
                trace_id,
                span_id: self.new_span_id(),
                parent_span_id,
                name: Text::joined("jdwp ", start.method),
                kind: Kind::Client,
                status: Status::Unset,
                start_ns: now_ns(),
                end_ns: 0,
                attributes,
                events: Vec::new(),
            },
            sink: self.sink.clone(),
        })
    }
}
