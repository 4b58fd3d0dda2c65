//! Filters: which spans reach the OpenTelemetry layer (ours only, never
//! ractor's or rmcp's lifetime spans), and a rate limit on the
//! OpenTelemetry crates' own log lines so a broken collector never floods
//! stderr.

use std::collections::HashSet;
use std::sync::Mutex;

use tracing::callsite::Identifier;
use tracing::level_filters::LevelFilter;
use tracing::subscriber::Interest;
use tracing::{Level, Metadata};
use tracing_subscriber::filter::Targets;
use tracing_subscriber::layer::{Context, Filter};

/// The crate whose spans are exported.
pub const EXPORTED_TARGET: &str = "jvmscope";

/// The per-layer filter of the OpenTelemetry layer: spans and events from
/// `jvmscope::*` at INFO and above. Everything else (ractor's `Actor`
/// spans, rmcp's session spans, hyper/h2/tonic internals) never becomes an
/// OpenTelemetry span.
pub fn exported_spans() -> Targets {
    Targets::new().with_target(EXPORTED_TARGET, Level::INFO)
}

/// Spans opened once per JDWP round trip, or once per hit of a stop point
/// (`jvm.event`, `jvm.condition`: thousands a second on a
/// traced hot line). Log lines do not carry them as context: formatting
/// their fields for the log layers cost more than the rest of the span's
/// life (bench/telemetry.rs); on a traced line it was a third of
/// jvmscope's user-space CPU per hit (bench/trace_load.rs with
/// `--telemetry`). Without export they are then not built at all. Log
/// lines keep the tool call's span.
pub const HOT_SPANS: &[&str] = &["jdwp", "jvm.event", "jvm.condition"];

/// The log layers' span filter: every event and span except [`HOT_SPANS`].
#[derive(Debug, Default, Clone, Copy)]
pub struct NoHotSpans;

impl NoHotSpans {
    fn hot(meta: &Metadata<'_>) -> bool {
        meta.is_span() && HOT_SPANS.contains(&meta.name())
    }
}

impl<S> Filter<S> for NoHotSpans {
    fn enabled(&self, meta: &Metadata<'_>, _cx: &Context<'_, S>) -> bool {
        !Self::hot(meta)
    }

    fn callsite_enabled(&self, meta: &'static Metadata<'static>) -> Interest {
        if Self::hot(meta) {
            Interest::never()
        } else {
            Interest::always()
        }
    }
}

/// Crates whose lines below INFO carry payloads verbatim: rmcp logs every
/// request and reply (a launch's secret arguments, every value read) at
/// DEBUG and each unreadable line at DEBUG, and the HTTP and gRPC stack
/// under the exporter its traffic, headers (the collector's token) among
/// it. Whatever `RUST_LOG` asks, their lines stop at INFO: logs never
/// carry what the replies mask.
pub const PAYLOAD_TARGETS: &[&str] = &[
    "rmcp",
    "h2",
    "hyper",
    "hyper_util",
    "tonic",
    "tower",
    "reqwest",
];

/// The log layers' payload filter: [`PAYLOAD_TARGETS`] at INFO and above.
#[derive(Debug, Default, Clone, Copy)]
pub struct NoPayloads;

impl NoPayloads {
    fn payload(meta: &Metadata<'_>) -> bool {
        let target = meta.target();
        *meta.level() > Level::INFO
            && PAYLOAD_TARGETS.iter().any(|t| {
                target
                    .strip_prefix(t)
                    .is_some_and(|rest| rest.is_empty() || rest.starts_with("::"))
            })
    }
}

impl<S> Filter<S> for NoPayloads {
    fn enabled(&self, meta: &Metadata<'_>, _cx: &Context<'_, S>) -> bool {
        !Self::payload(meta)
    }

    fn callsite_enabled(&self, meta: &'static Metadata<'static>) -> Interest {
        if Self::payload(meta) {
            Interest::never()
        } else {
            Interest::always()
        }
    }
}

/// True for the OpenTelemetry crates' internal diagnostics.
fn is_otel_internal(target: &str) -> bool {
    target.starts_with("opentelemetry")
}

/// Rate-limits the OpenTelemetry crates' internal log lines; every other
/// event passes untouched. Our export task already reports a failed export
/// (once per outage), so by default their lines below ERROR are hidden and
/// each ERROR line passes once per call site. When `RUST_LOG` names an
/// `opentelemetry` target (someone is debugging export), every level
/// passes, still once per call site.
#[derive(Debug)]
pub struct OncePerCallsite {
    seen: Mutex<HashSet<Identifier>>,
    verbose: bool,
}

impl OncePerCallsite {
    /// `verbose`: show the internal lines below ERROR too (still once each).
    pub fn new(verbose: bool) -> Self {
        Self {
            seen: Mutex::new(HashSet::new()),
            verbose,
        }
    }

    fn hidden(&self, meta: &Metadata<'_>) -> bool {
        !self.verbose && *meta.level() > Level::ERROR
    }
}

impl<S> Filter<S> for OncePerCallsite {
    fn enabled(&self, meta: &Metadata<'_>, _cx: &Context<'_, S>) -> bool {
        if !meta.is_event() || !is_otel_internal(meta.target()) {
            return true;
        }
        if self.hidden(meta) {
            return false;
        }
        self.seen
            .lock()
            .map(|mut seen| seen.insert(meta.callsite()))
            .unwrap_or(false)
    }

    fn callsite_enabled(&self, meta: &'static Metadata<'static>) -> Interest {
        if meta.is_event() && is_otel_internal(meta.target()) {
            if self.hidden(meta) {
                return Interest::never();
            }
            Interest::sometimes()
        } else {
            Interest::always()
        }
    }

    fn max_level_hint(&self) -> Option<LevelFilter> {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};

    use tracing_subscriber::Layer;
    use tracing_subscriber::layer::SubscriberExt;

    /// Counts the events it sees.
    struct Count(Arc<AtomicUsize>);

    impl<S: tracing::Subscriber> Layer<S> for Count {
        fn on_event(&self, _: &tracing::Event<'_>, _: tracing_subscriber::layer::Context<'_, S>) {
            self.0.fetch_add(1, Ordering::SeqCst);
        }
    }

    #[test]
    fn payload_crates_stop_at_info_and_ours_do_not() {
        let seen = Arc::new(AtomicUsize::new(0));
        let subscriber =
            tracing_subscriber::registry().with(Count(seen.clone()).with_filter(NoPayloads));
        tracing::subscriber::with_default(subscriber, || {
            tracing::debug!(target: "rmcp::service", "received request");
            tracing::trace!(target: "h2::codec", "headers");
            tracing::debug!(target: "hyper_util::client", "request");
            tracing::info!(target: "rmcp::service", "serve finished");
            tracing::debug!(target: "jvmscope::mcp", "ours");
            tracing::debug!(target: "rmcpx", "another crate");
        });
        assert_eq!(seen.load(Ordering::SeqCst), 3);
    }

    #[test]
    fn otel_internal_lines_pass_once_per_callsite() {
        let emit = || {
            for _ in 0..5 {
                tracing::warn!(target: "opentelemetry_sdk", "export failed");
            }
            for _ in 0..3 {
                tracing::error!(target: "opentelemetry-otlp", "other failure");
            }
            for _ in 0..4 {
                tracing::warn!(target: "jvmscope::x", "ours");
            }
        };
        let quiet = Arc::new(AtomicUsize::new(0));
        let subscriber = tracing_subscriber::registry()
            .with(Count(quiet.clone()).with_filter(OncePerCallsite::new(false)));
        tracing::subscriber::with_default(subscriber, emit);
        assert_eq!(
            quiet.load(Ordering::SeqCst),
            1 + 4,
            "the ERROR once, ours always"
        );

        let verbose = Arc::new(AtomicUsize::new(0));
        let subscriber = tracing_subscriber::registry()
            .with(Count(verbose.clone()).with_filter(OncePerCallsite::new(true)));
        tracing::subscriber::with_default(subscriber, emit);
        assert_eq!(
            verbose.load(Ordering::SeqCst),
            1 + 1 + 4,
            "each call site once"
        );
    }

    #[test]
    fn log_layers_skip_the_per_round_trip_and_per_hit_spans() {
        let seen = Arc::new(AtomicUsize::new(0));
        struct Spans(Arc<AtomicUsize>);
        impl<S: tracing::Subscriber> Layer<S> for Spans {
            fn on_new_span(
                &self,
                _: &tracing::span::Attributes<'_>,
                _: &tracing::span::Id,
                _: tracing_subscriber::layer::Context<'_, S>,
            ) {
                self.0.fetch_add(1, Ordering::SeqCst);
            }
        }
        let subscriber =
            tracing_subscriber::registry().with(Spans(seen.clone()).with_filter(NoHotSpans));
        tracing::subscriber::with_default(subscriber, || {
            let _tool = tracing::info_span!("mcp.tool");
            let _trip = tracing::info_span!("jdwp");
            let hit = tracing::info_span!("jvm.event");
            let _condition = tracing::info_span!("jvm.condition");
            // Nobody but the log layers listens: the per-hit span is off.
            assert!(hit.is_disabled());
        });
        assert_eq!(seen.load(Ordering::SeqCst), 1);
    }

    #[test]
    fn only_our_spans_are_exported() {
        let targets = exported_spans();
        assert!(targets.would_enable("jvmscope::actors::connection", &Level::INFO));
        assert!(targets.would_enable("jvmscope::mcp::server", &Level::INFO));
        assert!(!targets.would_enable("jvmscope::actors::connection", &Level::DEBUG));
        assert!(!targets.would_enable("ractor::actor", &Level::INFO));
        assert!(!targets.would_enable("rmcp::service", &Level::INFO));
    }
}
