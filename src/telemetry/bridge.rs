//! The bridge from our `tracing` spans to OpenTelemetry span data: a
//! `tracing_subscriber` layer that records each exported span's fields
//! straight into the OTLP shape and hands the finished span to the export
//! queue.
//!
//! It replaces `tracing-opentelemetry`'s layer for cost: that layer builds
//! every span's attributes before the sampler is asked and hands unsigned
//! integers over as text, which measured 3–4 µs per JDWP span even when the
//! span was then dropped by a 10% sampler (bench/telemetry.rs). Here the
//! sampling decision is taken once, when a root span opens, and inherited
//! by its descendants, so an unsampled span costs a marker and nothing
//! else; integers stay integers.
//!
//! Fields follow `tracing-opentelemetry`'s conventions: `otel.name` renames
//! the span, `otel.kind` sets the kind (`server`, `client`, …),
//! `otel.status_code` (`ERROR`, `OK`) and `otel.status_message` the status;
//! every other field is an attribute. Events inside a sampled span become
//! span events (the `message` field names them); an ERROR event sets the
//! span's status to ERROR.

use std::borrow::Cow;
use std::fmt;
use std::time::SystemTime;

use opentelemetry::trace::{
    Event, SpanContext, SpanId, SpanKind, Status, TraceFlags, TraceId, TraceState,
};
use opentelemetry::{InstrumentationScope, Key, KeyValue, Value};
use opentelemetry_sdk::trace::{IdGenerator, RandomIdGenerator, SpanData, SpanEvents, SpanLinks};
use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id, Record};
use tracing::{Level, Subscriber};
use tracing_subscriber::Layer;
use tracing_subscriber::layer::Context;
use tracing_subscriber::registry::LookupSpan;

use super::config::SamplerChoice;
use super::export::QueueProcessor;

/// Whether a new root trace is recorded.
#[derive(Debug, Clone, Copy, PartialEq)]
enum RootDecision {
    Always,
    Never,
    /// The OpenTelemetry trace-id ratio rule, so decisions match the SDK's.
    Ratio(f64),
}

impl RootDecision {
    fn from(choice: SamplerChoice) -> Self {
        // No parent ever comes from outside this process (MCP carries no
        // trace context), so the parent-based samplers decide roots exactly
        // as their root sampler and children follow their root.
        match choice {
            SamplerChoice::AlwaysOn | SamplerChoice::ParentBasedAlwaysOn => Self::Always,
            SamplerChoice::AlwaysOff | SamplerChoice::ParentBasedAlwaysOff => Self::Never,
            SamplerChoice::TraceIdRatio(r) | SamplerChoice::ParentBasedTraceIdRatio(r) => {
                if r >= 1.0 {
                    Self::Always
                } else if r <= 0.0 {
                    Self::Never
                } else {
                    Self::Ratio(r)
                }
            }
        }
    }

    fn sampled(self, trace_id: TraceId) -> bool {
        match self {
            Self::Always => true,
            Self::Never => false,
            Self::Ratio(r) => {
                let bound = (r * (1u64 << 63) as f64) as u64;
                let low = (u128::from_be_bytes(trace_id.to_bytes()) & u128::from(u64::MAX)) as u64;
                (low >> 1) < bound
            }
        }
    }
}

/// Marks a span (and through it, its descendants) as not recorded.
struct NotSampled;

/// A recorded span in the making.
struct Recording {
    trace_id: TraceId,
    span_id: SpanId,
    parent_span_id: SpanId,
    name: Cow<'static, str>,
    kind: SpanKind,
    status: Status,
    start: SystemTime,
    attributes: Vec<KeyValue>,
    events: Vec<Event>,
}

/// What a new span learns from its parent.
enum Parent {
    None,
    NotSampled,
    Recorded(TraceId, SpanId),
}

/// The layer. Put it behind the per-layer filter that selects our spans.
#[derive(Debug)]
pub struct OtelBridge {
    sink: QueueProcessor,
    decision: RootDecision,
    ids: RandomIdGenerator,
    scope: InstrumentationScope,
}

impl OtelBridge {
    pub fn new(sink: QueueProcessor, sampler: SamplerChoice) -> Self {
        Self {
            sink,
            decision: RootDecision::from(sampler),
            ids: RandomIdGenerator::default(),
            scope: InstrumentationScope::builder("jvmscope")
                .with_version(env!("CARGO_PKG_VERSION"))
                .build(),
        }
    }

    fn parent<S>(&self, attrs: &Attributes<'_>, ctx: &Context<'_, S>) -> Parent
    where
        S: Subscriber + for<'a> LookupSpan<'a>,
    {
        let parent = if let Some(id) = attrs.parent() {
            // An explicit parent this layer does not see (another crate's
            // span) makes a root, as in tracing-opentelemetry.
            ctx.span(id)
        } else if attrs.is_contextual() {
            ctx.lookup_current()
        } else {
            None
        };
        let Some(parent) = parent else {
            return Parent::None;
        };
        let extensions = parent.extensions();
        if let Some(rec) = extensions.get::<Recording>() {
            Parent::Recorded(rec.trace_id, rec.span_id)
        } else {
            Parent::NotSampled
        }
    }
}

impl<S> Layer<S> for OtelBridge
where
    S: Subscriber + for<'a> LookupSpan<'a>,
{
    fn on_new_span(&self, attrs: &Attributes<'_>, id: &Id, ctx: Context<'_, S>) {
        let Some(span) = ctx.span(id) else {
            return;
        };
        let (trace_id, parent_span_id) = match self.parent(attrs, &ctx) {
            Parent::NotSampled => {
                span.extensions_mut().insert(NotSampled);
                return;
            }
            Parent::Recorded(trace_id, parent) => (trace_id, parent),
            Parent::None => {
                let trace_id = self.ids.new_trace_id();
                if !self.decision.sampled(trace_id) {
                    span.extensions_mut().insert(NotSampled);
                    return;
                }
                (trace_id, SpanId::INVALID)
            }
        };
        let mut rec = Recording {
            trace_id,
            span_id: self.ids.new_span_id(),
            parent_span_id,
            name: Cow::Borrowed(attrs.metadata().name()),
            kind: SpanKind::Internal,
            status: Status::Unset,
            start: SystemTime::now(),
            attributes: Vec::with_capacity(attrs.fields().len()),
            events: Vec::new(),
        };
        attrs.record(&mut SpanFields(&mut rec));
        span.extensions_mut().insert(rec);
    }

    fn on_record(&self, id: &Id, values: &Record<'_>, ctx: Context<'_, S>) {
        let Some(span) = ctx.span(id) else {
            return;
        };
        let mut extensions = span.extensions_mut();
        if let Some(rec) = extensions.get_mut::<Recording>() {
            values.record(&mut SpanFields(rec));
        }
    }

    fn on_event(&self, event: &tracing::Event<'_>, ctx: Context<'_, S>) {
        let Some(span) = ctx.event_span(event) else {
            return;
        };
        let mut extensions = span.extensions_mut();
        let Some(rec) = extensions.get_mut::<Recording>() else {
            return;
        };
        let mut fields = EventFields {
            message: None,
            attributes: Vec::new(),
        };
        event.record(&mut fields);
        let name: Cow<'static, str> = match fields.message {
            Some(message) => message.into(),
            None => Cow::Borrowed(event.metadata().name()),
        };
        if *event.metadata().level() == Level::ERROR {
            rec.status = Status::error(name.clone());
        }
        fields
            .attributes
            .push(KeyValue::new("level", event.metadata().level().as_str()));
        rec.events
            .push(Event::new(name, SystemTime::now(), fields.attributes, 0));
    }

    fn on_close(&self, id: Id, ctx: Context<'_, S>) {
        let Some(span) = ctx.span(&id) else {
            return;
        };
        let Some(rec) = span.extensions_mut().remove::<Recording>() else {
            return;
        };
        let mut events = SpanEvents::default();
        events.events = rec.events;
        self.sink.on_end(SpanData {
            span_context: SpanContext::new(
                rec.trace_id,
                rec.span_id,
                TraceFlags::SAMPLED,
                false,
                TraceState::NONE,
            ),
            parent_span_id: rec.parent_span_id,
            parent_span_is_remote: false,
            span_kind: rec.kind,
            name: rec.name,
            start_time: rec.start,
            end_time: SystemTime::now(),
            attributes: rec.attributes,
            dropped_attributes_count: 0,
            events,
            links: SpanLinks::default(),
            status: rec.status,
            instrumentation_scope: self.scope.clone(),
        });
    }
}

fn span_kind(value: &str) -> Option<SpanKind> {
    let v = value.to_ascii_lowercase();
    Some(match v.as_str() {
        "server" => SpanKind::Server,
        "client" => SpanKind::Client,
        "producer" => SpanKind::Producer,
        "consumer" => SpanKind::Consumer,
        "internal" => SpanKind::Internal,
        _ => return None,
    })
}

/// Records span fields into a [`Recording`].
struct SpanFields<'a>(&'a mut Recording);

impl SpanFields<'_> {
    fn text(&mut self, field: &Field, value: Cow<'_, str>) {
        let rec = &mut *self.0;
        match field.name() {
            "otel.name" => rec.name = Cow::Owned(value.into_owned()),
            "otel.kind" => {
                if let Some(kind) = span_kind(&value) {
                    rec.kind = kind;
                }
            }
            "otel.status_code" => match value.to_ascii_uppercase().as_str() {
                "ERROR" => {
                    if !matches!(rec.status, Status::Error { .. }) {
                        rec.status = Status::error("");
                    }
                }
                "OK" => rec.status = Status::Ok,
                _ => rec.status = Status::Unset,
            },
            "otel.status_message" | "otel.status_description" => {
                rec.status = Status::error(value.into_owned());
            }
            name => rec.attributes.push(KeyValue::new(
                Key::from_static_str(name),
                value.into_owned(),
            )),
        }
    }

    fn push(&mut self, field: &Field, value: Value) {
        self.0
            .attributes
            .push(KeyValue::new(Key::from_static_str(field.name()), value));
    }
}

impl Visit for SpanFields<'_> {
    fn record_str(&mut self, field: &Field, value: &str) {
        self.text(field, Cow::Borrowed(value));
    }

    fn record_debug(&mut self, field: &Field, value: &dyn fmt::Debug) {
        self.text(field, Cow::Owned(format!("{value:?}")));
    }

    fn record_i64(&mut self, field: &Field, value: i64) {
        self.push(field, Value::I64(value));
    }

    fn record_u64(&mut self, field: &Field, value: u64) {
        match i64::try_from(value) {
            Ok(v) => self.push(field, Value::I64(v)),
            Err(_) => self.push(field, Value::from(value.to_string())),
        }
    }

    fn record_f64(&mut self, field: &Field, value: f64) {
        self.push(field, Value::F64(value));
    }

    fn record_bool(&mut self, field: &Field, value: bool) {
        self.push(field, Value::Bool(value));
    }

    fn record_error(&mut self, field: &Field, value: &(dyn std::error::Error + 'static)) {
        self.text(field, Cow::Owned(value.to_string()));
    }
}

/// Records an event's fields: `message` names it, the rest are attributes.
struct EventFields {
    message: Option<String>,
    attributes: Vec<KeyValue>,
}

impl EventFields {
    fn push(&mut self, field: &Field, value: Value) {
        if field.name() == "message" {
            self.message = Some(value.to_string());
        } else {
            self.attributes
                .push(KeyValue::new(Key::from_static_str(field.name()), value));
        }
    }
}

impl Visit for EventFields {
    fn record_str(&mut self, field: &Field, value: &str) {
        self.push(field, Value::from(value.to_string()));
    }

    fn record_debug(&mut self, field: &Field, value: &dyn fmt::Debug) {
        self.push(field, Value::from(format!("{value:?}")));
    }

    fn record_i64(&mut self, field: &Field, value: i64) {
        self.push(field, Value::I64(value));
    }

    fn record_u64(&mut self, field: &Field, value: u64) {
        match i64::try_from(value) {
            Ok(v) => self.push(field, Value::I64(v)),
            Err(_) => self.push(field, Value::from(value.to_string())),
        }
    }

    fn record_f64(&mut self, field: &Field, value: f64) {
        self.push(field, Value::F64(value));
    }

    fn record_bool(&mut self, field: &Field, value: bool) {
        self.push(field, Value::Bool(value));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::{Arc, Mutex};
    use std::time::Duration;

    use opentelemetry_sdk::error::OTelSdkResult;
    use opentelemetry_sdk::trace::SpanExporter;
    use tracing::field::Empty;
    use tracing_subscriber::layer::SubscriberExt;

    use crate::telemetry::config::QueueConfig;
    use crate::telemetry::export;

    #[derive(Debug, Clone, Default)]
    struct Keep(Arc<Mutex<Vec<SpanData>>>);

    impl SpanExporter for Keep {
        async fn export(&self, batch: Vec<SpanData>) -> OTelSdkResult {
            self.0
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .extend(batch);
            Ok(())
        }
    }

    /// Runs `body` under the bridge with `sampler`; returns the spans exported.
    fn collect(sampler: SamplerChoice, body: impl FnOnce()) -> Vec<SpanData> {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .unwrap_or_else(|e| panic!("runtime: {e}"));
        let keep = Keep::default();
        let (processor, handle) = export::spawn(
            keep.clone(),
            QueueConfig::default(),
            "test".into(),
            runtime.handle(),
        );
        let subscriber = tracing_subscriber::registry().with(OtelBridge::new(processor, sampler));
        tracing::subscriber::with_default(subscriber, body);
        assert!(runtime.block_on(handle.shutdown(Duration::from_secs(5))));
        keep.0.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }

    fn attr<'a>(span: &'a SpanData, key: &str) -> Option<&'a Value> {
        span.attributes
            .iter()
            .find(|kv| kv.key.as_str() == key)
            .map(|kv| &kv.value)
    }

    #[test]
    fn names_kinds_status_and_typed_attributes() {
        let spans = collect(SamplerChoice::ParentBasedAlwaysOn, || {
            let root = tracing::info_span!(
                parent: None,
                "mcp.tool",
                "otel.name" = "mcp.tool debug_attach",
                "otel.kind" = "server",
                "mcp.tool.name" = "debug_attach",
            );
            let child = tracing::info_span!(
                parent: &root,
                "jdwp",
                "otel.name" = %format_args!("jdwp {}", "VirtualMachine.Version"),
                "otel.kind" = "client",
                "otel.status_code" = Empty,
                "server.port" = 5005u16,
                "jdwp.id" = Empty,
                "jdwp.error" = Empty,
                "flag" = true,
            );
            child.record("jdwp.id", 7u32);
            child.record("jdwp.error", "TIMEOUT");
            child.record("otel.status_code", "ERROR");
            drop(child);
            let _inside = root.enter();
            tracing::info!(threads = 3, "attached");
        });
        assert_eq!(spans.len(), 2);
        let child = &spans[0];
        let root = &spans[1];
        assert_eq!(root.name, "mcp.tool debug_attach");
        assert_eq!(root.span_kind, SpanKind::Server);
        assert_eq!(root.parent_span_id, SpanId::INVALID);
        assert_eq!(root.events.len(), 1);
        assert_eq!(root.events[0].name, "attached");
        assert_eq!(child.name, "jdwp VirtualMachine.Version");
        assert_eq!(child.span_kind, SpanKind::Client);
        assert_eq!(child.parent_span_id, root.span_context.span_id());
        assert_eq!(child.span_context.trace_id(), root.span_context.trace_id());
        assert!(matches!(child.status, Status::Error { .. }));
        assert_eq!(attr(child, "server.port"), Some(&Value::I64(5005)));
        assert_eq!(attr(child, "jdwp.id"), Some(&Value::I64(7)));
        assert_eq!(attr(child, "jdwp.error"), Some(&Value::from("TIMEOUT")));
        assert_eq!(attr(child, "flag"), Some(&Value::Bool(true)));
        assert_eq!(attr(child, "otel.name"), None, "otel.* are not attributes");
        assert_eq!(child.instrumentation_scope.name(), "jvmscope");
    }

    #[test]
    fn whole_traces_are_sampled_or_not() {
        let spans = collect(SamplerChoice::ParentBasedTraceIdRatio(0.3), || {
            for _ in 0..400 {
                let root = tracing::info_span!(parent: None, "root");
                for _ in 0..3 {
                    let _child = tracing::info_span!(parent: &root, "child");
                }
                let _in = root.enter();
                let _contextual = tracing::info_span!("contextual child");
            }
        });
        let roots: Vec<_> = spans
            .iter()
            .filter(|s| s.parent_span_id == SpanId::INVALID)
            .collect();
        assert!(
            (60..=180).contains(&roots.len()),
            "about 30% of 400 traces: {}",
            roots.len()
        );
        assert_eq!(spans.len(), roots.len() * 5, "every sampled trace is whole");
        let none = collect(SamplerChoice::AlwaysOff, || {
            let root = tracing::info_span!(parent: None, "root");
            let _child = tracing::info_span!(parent: &root, "child");
        });
        assert!(none.is_empty());
    }

    #[test]
    fn the_ratio_rule_matches_the_sdk() {
        let half = RootDecision::from(SamplerChoice::TraceIdRatio(0.5));
        assert!(half.sampled(TraceId::from(0u128)));
        assert!(!half.sampled(TraceId::from(u128::from(u64::MAX))));
        assert_eq!(
            RootDecision::from(SamplerChoice::TraceIdRatio(1.0)),
            RootDecision::Always
        );
        assert_eq!(
            RootDecision::from(SamplerChoice::ParentBasedTraceIdRatio(0.0)),
            RootDecision::Never
        );
    }
}
