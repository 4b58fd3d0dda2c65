//! The span of one JDWP round trip, recorded through the OpenTelemetry API
//! and SDK directly rather than as a `tracing` span. A busy session makes
//! up to ~100,000 round trips a second; a `tracing` span per round trip
//! (a registry slot, extensions, a field visitor, `tracing-opentelemetry`'s
//! span builder, a close) cost more than the span itself. A [`RoundTrip`]
//! looks once, when the request is queued, at the OpenTelemetry context of
//! its parent (a tool call, a `jvm.event`): an unsampled parent means
//! nothing is built at all; a sampled one gets a child span from the SDK
//! tracer, filled as the round trip goes and ended when the `RoundTrip` is
//! dropped. A round trip without a parent of ours asks the SDK's sampler
//! for a trace of its own before any attribute is built.
//!
//! The exported span: name `jdwp <CommandSet>.<Command>`, kind CLIENT, the
//! `rpc.*`, `server.*` and `jdwp.*` attributes (integers as integers),
//! status ERROR with `jdwp.error` on failure.

use opentelemetry::trace::{
    Span as _, SpanBuilder, SpanKind, Status, TraceContextExt, Tracer as _,
};
use opentelemetry::{Context, KeyValue};
use opentelemetry_sdk::trace::{SdkTracer, Span};
use tracing::Subscriber;
use tracing_subscriber::Layer;

use super::filter::EXPORTED_TARGET;
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
pub struct RoundTrip(Option<Box<Span>>);

impl RoundTrip {
    /// A round trip that records nothing.
    pub fn none() -> Self {
        Self(None)
    }

    /// Opens the span of a round trip whose request was queued under
    /// `parent` (the span current at the caller). Recorded when export is
    /// on and the parent is one of our sampled spans, or there is no parent
    /// of ours and the sampler keeps a new trace.
    pub fn open(parent: &tracing::Span, start: &RoundTripStart<'_>) -> Self {
        let ours = parent
            .metadata()
            .is_some_and(|m| m.target().starts_with(EXPORTED_TARGET));
        let span = if ours {
            parent
                .with_subscriber(|(id, dispatch)| {
                    let tracer = dispatch.downcast_ref::<RoundTripTracer>()?;
                    // No context: the span never reached the OpenTelemetry
                    // layer (below INFO), so neither does its round trip.
                    let cx = tracing_opentelemetry::get_otel_context(id, dispatch)?;
                    tracer.child(&cx, start)
                })
                .flatten()
        } else {
            // Another crate's span, or none: a trace of its own.
            tracing::dispatcher::get_default(|dispatch| {
                dispatch
                    .downcast_ref::<RoundTripTracer>()
                    .and_then(|tracer| tracer.root(start))
            })
        };
        Self(span.map(Box::new))
    }

    /// Whether this round trip is recorded.
    pub fn is_recorded(&self) -> bool {
        self.0.is_some()
    }

    /// The packet id it was sent with.
    pub fn sent(&mut self, id: u32) {
        if let Some(span) = &mut self.0 {
            span.set_attribute(KeyValue::new(semconv::JDWP_ID, i64::from(id)));
        }
    }

    /// Time spent waiting for a slot in the in-flight window, and the
    /// reply's size.
    pub fn replied(&mut self, queued_us: u64, reply_bytes: u64) {
        if let Some(span) = &mut self.0 {
            span.set_attribute(KeyValue::new(semconv::JDWP_QUEUED_US, queued_us as i64));
            span.set_attribute(KeyValue::new(semconv::JDWP_REPLY_BYTES, reply_bytes as i64));
        }
    }

    /// The round trip failed: a JDWP error's name, `TIMEOUT` or
    /// `DISCONNECTED`.
    pub fn failed(&mut self, error: &str) {
        if let Some(span) = &mut self.0 {
            span.set_attribute(KeyValue::new(semconv::JDWP_ERROR, error.to_string()));
            span.set_status(Status::error(""));
        }
    }
}

/// Attributes a round trip ends with: the six it starts with, the packet
/// id, the queue time and the reply size (or the error).
const ATTRIBUTES: usize = 9;

/// The SDK tracer round trips are recorded with, found through the
/// dispatcher like `tracing-opentelemetry`'s own layer (so each subscriber
/// built by [`super::build`] has its own). A layer that does nothing.
#[derive(Debug, Clone)]
pub struct RoundTripTracer(pub SdkTracer);

impl<S: Subscriber> Layer<S> for RoundTripTracer {}

impl RoundTripTracer {
    /// The span under `parent`'s context, when that is sampled; nothing is
    /// built otherwise. A context without a valid span is no parent.
    fn child(&self, parent: &Context, start: &RoundTripStart<'_>) -> Option<Span> {
        let parent_span = parent.span();
        let sc = parent_span.span_context();
        if !sc.is_valid() {
            return self.root(start);
        }
        if !sc.is_sampled() {
            return None;
        }
        let builder = self.builder(start).with_attributes(attributes(start));
        let span = self.0.build_with_context(builder, parent);
        span.is_recording().then_some(span)
    }

    /// A round trip with no parent: the sampler decides before any
    /// attribute is built.
    fn root(&self, start: &RoundTripStart<'_>) -> Option<Span> {
        let mut span = self
            .0
            .build_with_context(self.builder(start), &Context::new());
        if !span.is_recording() {
            return None;
        }
        span.set_attributes(attributes(start));
        Some(span)
    }

    fn builder(&self, start: &RoundTripStart<'_>) -> SpanBuilder {
        let mut name = String::with_capacity(5 + start.method.len());
        name.push_str("jdwp ");
        name.push_str(start.method);
        SpanBuilder::from_name(name).with_kind(SpanKind::Client)
    }
}

/// The attributes a round trip's span starts with.
fn attributes(start: &RoundTripStart<'_>) -> Vec<KeyValue> {
    let mut attributes = Vec::with_capacity(ATTRIBUTES);
    attributes.extend([
        KeyValue::new(semconv::RPC_SYSTEM, "jdwp"),
        KeyValue::new(semconv::RPC_SERVICE, start.service),
        KeyValue::new(semconv::RPC_METHOD, start.method),
        KeyValue::new(semconv::SERVER_ADDRESS, start.host.to_string()),
        KeyValue::new(semconv::SERVER_PORT, i64::from(start.port)),
        KeyValue::new(semconv::JDWP_REQUEST_BYTES, start.request_bytes as i64),
    ]);
    attributes
}
