//! The bridge from our `tracing` spans to OpenTelemetry spans: a
//! `tracing_subscriber` layer that records each exported span's fields
//! straight into a compact [`SpanRecord`] (static keys, typed values, short
//! strings inline) and hands the finished record to the export queue, which
//! encodes batches of them as OTLP protobuf (`otlp`).
//!
//! It replaces `tracing-opentelemetry`'s layer for cost: that layer builds
//! every span's attributes before the sampler is asked and hands unsigned
//! integers over as text, which measured 3–4 µs per JDWP span even when the
//! span was then dropped by a 10% sampler (bench/telemetry.rs). Here the
//! sampling decision is taken once, when a root span opens, and inherited
//! by its descendants, so an unsampled span costs a look at its parent and
//! nothing else; integers stay integers.
//!
//! Fields follow `tracing-opentelemetry`'s conventions: `otel.name` renames
//! the span, `otel.kind` sets the kind (`server`, `client`, …),
//! `otel.status_code` (`ERROR`, `OK`) and `otel.status_message` the status;
//! every other field is an attribute. Events inside a sampled span become
//! span events (the `message` field names them); an ERROR event sets the
//! span's status to ERROR.

use std::fmt;

use opentelemetry::trace::TraceId;
use opentelemetry_sdk::trace::{IdGenerator, RandomIdGenerator};
use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id, Record};
use tracing::{Level, Subscriber};
use tracing_subscriber::Layer;
use tracing_subscriber::layer::Context;
use tracing_subscriber::registry::LookupSpan;

use super::config::SamplerChoice;
use super::export::QueueProcessor;
use super::otlp::Attributes as Encoded;
use super::record::{EventRecord, Kind, SpanRecord, Status, Text, Value, now_ns};

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

/// A recorded span in the making: the finished record, less its end.
pub(super) struct Recording(pub(super) SpanRecord);

/// What a new span learns from its parent. A parent without a
/// [`Recording`] was not sampled (nothing marks it: that saves a registry
/// write per unsampled span), so neither is the child.
enum Parent {
    None,
    NotSampled,
    Recorded(u128, u64),
}

/// The layer. Put it behind the per-layer filter that selects our spans.
#[derive(Debug)]
pub struct OtelBridge {
    pub(super) sink: QueueProcessor,
    decision: RootDecision,
    ids: RandomIdGenerator,
}

impl OtelBridge {
    pub fn new(sink: QueueProcessor, sampler: SamplerChoice) -> Self {
        Self {
            sink,
            decision: RootDecision::from(sampler),
            ids: RandomIdGenerator::default(),
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
        if let Some(Recording(rec)) = extensions.get::<Recording>() {
            Parent::Recorded(rec.trace_id, rec.span_id)
        } else {
            Parent::NotSampled
        }
    }

    pub(super) fn new_span_id(&self) -> u64 {
        u64::from_be_bytes(self.ids.new_span_id().to_bytes())
    }

    /// A new trace id, as an integer.
    pub(super) fn new_trace_id(&self) -> u128 {
        u128::from_be_bytes(self.ids.new_trace_id().to_bytes())
    }

    /// Whether the sampler keeps a new trace with this id.
    pub(super) fn sampled(&self, trace_id: u128) -> bool {
        self.decision
            .sampled(opentelemetry::trace::TraceId::from_bytes(
                trace_id.to_be_bytes(),
            ))
    }
}

impl<S> Layer<S> for OtelBridge
where
    S: Subscriber + for<'a> LookupSpan<'a>,
{
    fn on_new_span(&self, attrs: &Attributes<'_>, id: &Id, ctx: Context<'_, S>) {
        let (trace_id, parent_span_id) = match self.parent(attrs, &ctx) {
            Parent::NotSampled => return,
            Parent::Recorded(trace_id, parent) => (trace_id, parent),
            Parent::None => {
                let trace_id = self.ids.new_trace_id();
                if !self.decision.sampled(trace_id) {
                    return;
                }
                (u128::from_be_bytes(trace_id.to_bytes()), 0)
            }
        };
        let Some(span) = ctx.span(id) else {
            return;
        };
        let mut rec = SpanRecord {
            trace_id,
            span_id: self.new_span_id(),
            parent_span_id,
            name: Text::new(attrs.metadata().name()),
            kind: Kind::Internal,
            status: Status::Unset,
            start_ns: now_ns(),
            end_ns: 0,
            attributes: Encoded::for_span(attrs.fields().len()),
            events: Vec::new(),
        };
        attrs.record(&mut SpanFields(&mut rec));
        span.extensions_mut().insert(Recording(rec));
    }

    fn on_record(&self, id: &Id, values: &Record<'_>, ctx: Context<'_, S>) {
        let Some(span) = ctx.span(id) else {
            return;
        };
        let mut extensions = span.extensions_mut();
        if let Some(Recording(rec)) = extensions.get_mut::<Recording>() {
            values.record(&mut SpanFields(rec));
        }
    }

    fn on_event(&self, event: &tracing::Event<'_>, ctx: Context<'_, S>) {
        let Some(span) = ctx.event_span(event) else {
            return;
        };
        let mut extensions = span.extensions_mut();
        let Some(Recording(rec)) = extensions.get_mut::<Recording>() else {
            return;
        };
        let mut fields = EventFields {
            message: None,
            attributes: Encoded::for_event(),
        };
        event.record(&mut fields);
        let name = fields
            .message
            .unwrap_or_else(|| event.metadata().name().to_string());
        if *event.metadata().level() == Level::ERROR {
            rec.status = Status::Error(name.clone());
        }
        fields
            .attributes
            .push_str("level", event.metadata().level().as_str().as_bytes());
        rec.events.push(EventRecord {
            time_ns: now_ns(),
            name,
            attributes: fields.attributes,
        });
    }

    fn on_close(&self, id: Id, ctx: Context<'_, S>) {
        let Some(span) = ctx.span(&id) else {
            return;
        };
        let Some(Recording(mut rec)) = span.extensions_mut().remove::<Recording>() else {
            return;
        };
        rec.end_ns = now_ns();
        self.sink.on_end(rec);
    }
}

/// Records span fields into a [`SpanRecord`].
struct SpanFields<'a>(&'a mut SpanRecord);

/// A text field's value as `tracing` hands it over.
enum TextValue<'a> {
    Str(&'a str),
    Debug(&'a dyn fmt::Debug),
    Owned(String),
}

impl TextValue<'_> {
    fn text(self) -> Text {
        match self {
            TextValue::Str(s) => Text::new(s),
            TextValue::Debug(d) => Text::debug(d),
            TextValue::Owned(s) => Text::from(s),
        }
    }
}

impl SpanFields<'_> {
    /// A text field: one of the `otel.*` conventions, or an attribute
    /// (written straight into its wire form).
    fn text(&mut self, field: &Field, value: TextValue<'_>) {
        let rec = &mut *self.0;
        let key = field.name();
        if !key.starts_with("otel.") {
            match value {
                TextValue::Str(s) => rec.attributes.push_str(key, s.as_bytes()),
                TextValue::Owned(s) => rec.attributes.push_str(key, s.as_bytes()),
                TextValue::Debug(d) => rec.attributes.push_str(key, Text::debug(d).as_bytes()),
            }
            return;
        }
        match key {
            "otel.name" => rec.name = value.text(),
            "otel.kind" => {
                if let Some(kind) = Kind::parse(value.text().as_str()) {
                    rec.kind = kind;
                }
            }
            "otel.status_code" => {
                let code = value.text();
                if code.as_str().eq_ignore_ascii_case("ERROR") {
                    if !matches!(rec.status, Status::Error(_)) {
                        rec.status = Status::Error(String::new());
                    }
                } else if code.as_str().eq_ignore_ascii_case("OK") {
                    rec.status = Status::Ok;
                } else {
                    rec.status = Status::Unset;
                }
            }
            "otel.status_message" | "otel.status_description" => {
                rec.status = Status::Error(value.text().as_str().to_string());
            }
            // Another `otel.*` field is an attribute like any other.
            _ => rec.attributes.push_str(key, value.text().as_bytes()),
        }
    }

    fn push(&mut self, field: &Field, value: Value) {
        match value {
            Value::Int(i) => self.0.attributes.push_int(field.name(), i),
            other => self.0.attributes.push(field.name(), &other),
        }
    }
}

impl Visit for SpanFields<'_> {
    fn record_str(&mut self, field: &Field, value: &str) {
        self.text(field, TextValue::Str(value));
    }

    fn record_debug(&mut self, field: &Field, value: &dyn fmt::Debug) {
        self.text(field, TextValue::Debug(value));
    }

    fn record_i64(&mut self, field: &Field, value: i64) {
        self.push(field, Value::Int(value));
    }

    fn record_u64(&mut self, field: &Field, value: u64) {
        match i64::try_from(value) {
            Ok(v) => self.push(field, Value::Int(v)),
            Err(_) => self.text(field, TextValue::Owned(value.to_string())),
        }
    }

    fn record_f64(&mut self, field: &Field, value: f64) {
        self.push(field, Value::Double(value));
    }

    fn record_bool(&mut self, field: &Field, value: bool) {
        self.push(field, Value::Bool(value));
    }

    fn record_error(&mut self, field: &Field, value: &(dyn std::error::Error + 'static)) {
        self.text(field, TextValue::Owned(value.to_string()));
    }
}

/// Records an event's fields: `message` names it, the rest are attributes.
struct EventFields {
    message: Option<String>,
    attributes: Encoded,
}

impl EventFields {
    fn push(&mut self, field: &Field, value: Value) {
        if field.name() == "message" {
            self.message = Some(match value {
                Value::Str(s) => s.as_str().to_string(),
                Value::Int(i) => i.to_string(),
                Value::Double(d) => d.to_string(),
                Value::Bool(b) => b.to_string(),
            });
        } else {
            self.attributes.push(field.name(), &value);
        }
    }
}

impl Visit for EventFields {
    fn record_str(&mut self, field: &Field, value: &str) {
        self.push(field, Value::Str(Text::new(value)));
    }

    fn record_debug(&mut self, field: &Field, value: &dyn fmt::Debug) {
        self.push(field, Value::Str(Text::debug(value)));
    }

    fn record_i64(&mut self, field: &Field, value: i64) {
        self.push(field, Value::Int(value));
    }

    fn record_u64(&mut self, field: &Field, value: u64) {
        match i64::try_from(value) {
            Ok(v) => self.push(field, Value::Int(v)),
            Err(_) => self.push(field, Value::Str(Text::from(value.to_string()))),
        }
    }

    fn record_f64(&mut self, field: &Field, value: f64) {
        self.push(field, Value::Double(value));
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

    use tracing::field::Empty;
    use tracing_subscriber::layer::SubscriberExt;

    use crate::telemetry::config::QueueConfig;
    use crate::telemetry::export::{self, SpanSink};

    #[derive(Debug, Clone, Default)]
    struct Keep(Arc<Mutex<Vec<SpanRecord>>>);

    impl SpanSink for Keep {
        fn export(
            &mut self,
            batch: &[SpanRecord],
        ) -> impl Future<Output = Result<(), String>> + Send + 'static {
            self.0
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .extend_from_slice(batch);
            std::future::ready(Ok(()))
        }
    }

    /// Runs `body` under the bridge with `sampler`; returns the spans exported.
    fn collect(sampler: SamplerChoice, body: impl FnOnce()) -> Vec<SpanRecord> {
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

    fn attr(span: &SpanRecord, key: &str) -> Option<Value> {
        span.attributes
            .decoded()
            .into_iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v)
    }

    #[test]
    fn round_trips_follow_their_parent_and_export_as_jdwp_spans() {
        use crate::telemetry::{RoundTrip, RoundTripStart};
        let start = RoundTripStart {
            method: "VirtualMachine.Version",
            service: "VirtualMachine",
            host: "127.0.0.1",
            port: 5005,
            request_bytes: 11,
        };
        // Without the bridge nothing is recorded.
        tracing::subscriber::with_default(tracing_subscriber::registry(), || {
            let root = tracing::info_span!(parent: None, "root");
            assert!(!RoundTrip::open(&root, &start).is_recorded());
        });
        let mut seen = Vec::new();
        let spans = collect(SamplerChoice::AlwaysOff, || {
            let root = tracing::info_span!(parent: None, "root");
            seen.push(RoundTrip::open(&root, &start).is_recorded());
            seen.push(RoundTrip::open(&tracing::Span::none(), &start).is_recorded());
        });
        assert!(spans.is_empty());
        assert_eq!(
            seen,
            [false, false],
            "an unsampled parent; a root the sampler drops"
        );
        let spans = collect(SamplerChoice::AlwaysOn, || {
            let root = tracing::info_span!(parent: None, "root");
            let mut ok = RoundTrip::open(&root, &start);
            ok.sent(7);
            ok.replied(3, 120);
            drop(ok);
            let mut failed = RoundTrip::open(&root, &start);
            failed.failed("TIMEOUT");
            drop(failed);
            drop(root);
            drop(RoundTrip::open(&tracing::Span::none(), &start));
        });
        assert_eq!(spans.len(), 4, "{spans:?}");
        let root = spans
            .iter()
            .find(|s| s.name.as_str() == "root")
            .expect("root");
        let trips: Vec<_> = spans
            .iter()
            .filter(|s| s.name.as_str() == "jdwp VirtualMachine.Version")
            .collect();
        assert_eq!(trips.len(), 3);
        let (children, roots): (Vec<&SpanRecord>, Vec<&SpanRecord>) = trips
            .iter()
            .copied()
            .partition(|s| s.parent_span_id == root.span_id);
        assert_eq!((children.len(), roots.len()), (2, 1));
        assert_eq!(roots[0].parent_span_id, 0, "no parent: a root of its own");
        for c in &children {
            assert_eq!(c.trace_id, root.trace_id);
            assert_eq!(c.kind, Kind::Client);
            assert_eq!(
                attr(c, "rpc.method"),
                Some(Value::Str(Text::new("VirtualMachine.Version")))
            );
            assert_eq!(attr(c, "server.port"), Some(Value::Int(5005)));
            assert!(c.start_ns <= c.end_ns);
        }
        let ok = children
            .iter()
            .find(|c| c.status == Status::Unset)
            .expect("the answered one");
        assert_eq!(attr(ok, "jdwp.id"), Some(Value::Int(7)));
        assert_eq!(attr(ok, "jdwp.reply_bytes"), Some(Value::Int(120)));
        assert_eq!(attr(ok, "jdwp.queued_us"), Some(Value::Int(3)));
        let failed = children
            .iter()
            .find(|c| matches!(c.status, Status::Error(_)))
            .expect("the failed one");
        assert_eq!(
            attr(failed, "jdwp.error"),
            Some(Value::Str(Text::new("TIMEOUT")))
        );
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
                "server.address" = %"127.0.0.1",
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
        assert_eq!(root.name.as_str(), "mcp.tool debug_attach");
        assert_eq!(root.kind, Kind::Server);
        assert_eq!(root.parent_span_id, 0);
        assert_eq!(root.events.len(), 1);
        assert_eq!(root.events[0].name, "attached");
        assert_eq!(
            root.events[0].attributes.decoded()[0],
            ("threads".to_string(), Value::Int(3))
        );
        assert_eq!(child.name.as_str(), "jdwp VirtualMachine.Version");
        assert_eq!(child.kind, Kind::Client);
        assert_eq!(child.parent_span_id, root.span_id);
        assert_ne!(child.span_id, root.span_id);
        assert_eq!(child.trace_id, root.trace_id);
        assert!(child.start_ns > 0 && child.end_ns >= child.start_ns);
        assert!(matches!(child.status, Status::Error(_)));
        assert_eq!(attr(child, "server.port"), Some(Value::Int(5005)));
        assert_eq!(attr(child, "jdwp.id"), Some(Value::Int(7)));
        assert_eq!(
            attr(child, "jdwp.error"),
            Some(Value::Str(Text::new("TIMEOUT")))
        );
        assert_eq!(attr(child, "flag"), Some(Value::Bool(true)));
        assert_eq!(
            attr(child, "server.address"),
            Some(Value::Str(Text::new("127.0.0.1")))
        );
        assert_eq!(attr(child, "otel.name"), None, "otel.* are not attributes");
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
        let roots: Vec<_> = spans.iter().filter(|s| s.parent_span_id == 0).collect();
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
