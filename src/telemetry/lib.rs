//! Logging and tracing set-up: `tracing` to stderr (never stdout, which
//! belongs to MCP) with `RUST_LOG` honoured, an optional rotating log file,
//! and optional OpenTelemetry export over OTLP configured only by the
//! standard `OTEL_*` variables. Without an endpoint nothing is exported and
//! nothing is said about it.
//!
//! Spans reach OpenTelemetry through `tracing-opentelemetry`'s layer and
//! the `opentelemetry_sdk` tracer; JDWP round trips, the hot path, through
//! the same tracer directly (`round_trip`). Finished spans go through a
//! bounded, asynchronous span processor of our own (`export`) to the
//! `opentelemetry-otlp` exporter (`exporter`: gRPC or http/protobuf, TLS,
//! gzip, retry with back-off): a collector that is down or slow costs tool
//! calls nothing, a full queue drops spans and counts them, and a failure
//! is logged once per outage. Only our own spans (`jvmscope::*`) are
//! exported; ractor's and rmcp's lifetime spans never are. The span
//! catalogue is in docs/telemetry.md; attribute names live in `semconv`.

pub mod config;
mod export;
mod exporter;
mod filter;
mod rotate;
mod round_trip;
pub mod semconv;

use std::time::Duration;

use opentelemetry::trace::TracerProvider as _;
use opentelemetry::{InstrumentationScope, Key, KeyValue};
use opentelemetry_sdk::Resource;
use opentelemetry_sdk::resource::{EnvResourceDetector, ResourceDetector};
use opentelemetry_sdk::trace::{Sampler, SdkTracerProvider, SpanExporter as _};
use tracing::Dispatch;
use tracing_subscriber::EnvFilter;
use tracing_subscriber::Layer;
use tracing_subscriber::filter::FilterExt;
use tracing_subscriber::layer::SubscriberExt;
use tracing_subscriber::util::SubscriberInitExt;

pub use config::{
    DEFAULT_SERVICE_NAME, ExportConfig, LogFileConfig, Protocol, QueueConfig, SamplerChoice,
    TelemetryConfig,
};
pub use export::ExportSnapshot;
pub use rotate::RotatingFile;
pub use round_trip::{RoundTrip, RoundTripStart};

/// How long shutdown waits for the last spans to reach the collector.
pub const SHUTDOWN_FLUSH: Duration = Duration::from_secs(3);

/// The running telemetry: keep it alive for the life of the process and
/// call [`Telemetry::shutdown`] last, so the final spans are exported.
#[derive(Debug, Default)]
#[must_use = "dropping Telemetry without shutdown() loses the last spans"]
pub struct Telemetry {
    export: Option<Export>,
}

#[derive(Debug)]
struct Export {
    handle: export::ExportHandle,
    endpoint: String,
    protocol: Protocol,
    /// Kept so the tracers' provider lives as long as export does.
    _provider: SdkTracerProvider,
    /// Where the export task runs; dropped last, it stops the thread.
    _thread: ExportThread,
}

impl Telemetry {
    /// Whether spans are being exported.
    pub fn is_exporting(&self) -> bool {
        self.export.is_some()
    }

    /// The export counters (spans exported, dropped on a full queue,
    /// failed), or `None` when nothing is exported.
    pub fn export_stats(&self) -> Option<ExportSnapshot> {
        self.export.as_ref().map(|e| e.handle.stats())
    }

    /// Exports every span finished so far; gives up after `within`.
    pub async fn flush(&self, within: Duration) -> bool {
        match &self.export {
            Some(e) => e.handle.flush(within).await,
            None => true,
        }
    }

    /// Exports the last spans and stops exporting, within
    /// [`SHUTDOWN_FLUSH`]. Never blocks the runtime: the export task is
    /// async and the wait is a timed `await`. Logs what was lost, if
    /// anything. Spans that end later are not exported.
    pub async fn shutdown(mut self) {
        let Some(export) = self.export.take() else {
            return;
        };
        let flushed = export.handle.shutdown(SHUTDOWN_FLUSH).await;
        let stats = export.handle.stats();
        if !flushed {
            tracing::warn!(
                endpoint = %export.endpoint,
                "the collector did not take the last spans within {SHUTDOWN_FLUSH:?}; they are lost"
            );
        }
        if stats.dropped > 0 || stats.failed > 0 {
            tracing::warn!(
                exported = stats.exported,
                dropped = stats.dropped,
                failed = stats.failed,
                "span export finished with spans lost: {} dropped (export queue full), {} in failed exports",
                stats.dropped,
                stats.failed
            );
        } else {
            tracing::debug!(
                exported = stats.exported,
                protocol = export.protocol.as_str(),
                "span export finished"
            );
        }
    }
}

/// Reads the environment, installs the global subscriber and, when an
/// OTLP endpoint is set, the exporter (on a thread of its own).
pub fn init() -> Telemetry {
    let config = TelemetryConfig::from_env();
    let (dispatch, telemetry) = build(&config);
    let _ = dispatch.try_init();
    if let Some(export) = &telemetry.export {
        tracing::info!(
            endpoint = %export.endpoint,
            protocol = export.protocol.as_str(),
            "exporting traces over OTLP"
        );
    }
    telemetry
}

/// Installs logging only (stderr and the optional log file), no export.
pub fn init_logging() {
    let mut config = TelemetryConfig::from_env();
    config.export = None;
    let (dispatch, _telemetry) = build(&config);
    let _ = dispatch.try_init();
}

/// Builds the subscriber for `config` without installing it (tests and
/// benches install it where they need it). Problems with the configuration
/// are logged through the returned dispatcher. Export runs on a thread of
/// its own (`ExportThread`), so it needs no runtime of the caller's.
pub fn build(config: &TelemetryConfig) -> (Dispatch, Telemetry) {
    let mut warnings = config.warnings.clone();
    // Someone naming the OpenTelemetry crates in RUST_LOG wants their lines.
    let verbose = config.log_filter.contains("opentelemetry");

    let env_filter = |what: &str, warnings: &mut Vec<String>| {
        EnvFilter::try_new(&config.log_filter).unwrap_or_else(|e| {
            warnings.push(format!(
                "RUST_LOG={:?} is not a valid filter ({e}); {what} uses {:?}",
                config.log_filter,
                config::DEFAULT_LOG_FILTER
            ));
            EnvFilter::new(config::DEFAULT_LOG_FILTER)
        })
    };
    let stderr = tracing_subscriber::fmt::layer()
        .with_writer(std::io::stderr)
        .with_ansi(false)
        .with_target(true)
        .with_filter(
            filter::NoHotSpans
                .and(filter::NoPayloads)
                .and(env_filter("stderr", &mut warnings))
                .and(filter::OncePerCallsite::new(verbose)),
        );

    let file = config
        .log_file
        .as_ref()
        .and_then(|cfg| match RotatingFile::open(cfg) {
            Ok(writer) => Some(
                tracing_subscriber::fmt::layer()
                    .with_writer(writer)
                    .with_ansi(false)
                    .with_target(true)
                    .with_filter(
                        filter::NoHotSpans
                            .and(filter::NoPayloads)
                            .and(env_filter("the log file", &mut Vec::new()))
                            .and(filter::OncePerCallsite::new(verbose)),
                    ),
            ),
            Err(e) => {
                warnings.push(format!(
                    "cannot open the log file {} ({e}); logging to stderr only",
                    cfg.path.display()
                ));
                None
            }
        });

    let (otel, export) = match &config.export {
        None => (None, None),
        Some(export_config) => match start_export(config, export_config, &mut warnings) {
            Ok((provider, handle, thread)) => {
                let scope = InstrumentationScope::builder("jvmscope")
                    .with_version(env!("CARGO_PKG_VERSION"))
                    .build();
                let tracer = provider.tracer_with_scope(scope);
                // Only the attributes exported before ADR 0005: no source locations,
                // thread names, targets or busy/idle times on every span.
                let layer = tracing_opentelemetry::layer()
                    .with_tracer(tracer.clone())
                    .with_location(false)
                    .with_threads(false)
                    .with_target(false)
                    .with_tracked_inactivity(false)
                    .with_context_activation(false)
                    .and_then(round_trip::RoundTripTracer(tracer))
                    .with_filter(filter::exported_spans());
                let export = Export {
                    handle,
                    endpoint: export_config.endpoint.clone(),
                    protocol: export_config.protocol,
                    _provider: provider,
                    _thread: thread,
                };
                (Some(layer), Some(export))
            }
            Err(why) => {
                warnings.push(format!("OTLP export is off: {why}"));
                (None, None)
            }
        },
    };

    // The layers as a list, never an `Option` layer: a `None` layer
    // answers every call site "always", so the registry would build every
    // span (each hit's `jvm.event` among them) with nobody to read it.
    let mut layers: Vec<Box<dyn Layer<tracing_subscriber::Registry> + Send + Sync>> =
        vec![stderr.boxed()];
    layers.extend(file.map(Layer::boxed));
    layers.extend(otel.map(Layer::boxed));
    let subscriber = tracing_subscriber::registry().with(layers);
    let dispatch = Dispatch::new(subscriber);
    tracing::dispatcher::with_default(&dispatch, || {
        for warning in &warnings {
            tracing::warn!("telemetry: {warning}");
        }
    });
    (dispatch, Telemetry { export })
}

/// Builds the exporter (with the resource), starts the export task and
/// the tracer provider that feeds it. The exporter's own variables (TLS,
/// compression, timeout) are read here; their problems join `warnings`.
fn start_export(
    config: &TelemetryConfig,
    export_config: &ExportConfig,
    warnings: &mut Vec<String>,
) -> Result<(SdkTracerProvider, export::ExportHandle, ExportThread), String> {
    let thread =
        ExportThread::start().map_err(|e| format!("cannot start the export thread: {e}"))?;
    let runtime = thread.handle.clone();
    // The gRPC channel (or HTTP client) is created on the export thread's
    // runtime, and its connection tasks run there.
    let _entered = runtime.enter();
    let settings = exporter::Settings::from_lookup(|name| std::env::var(name).ok(), warnings);
    let resource = resource(config);
    let mut exporter = exporter::build(
        &export_config.endpoint,
        export_config.protocol,
        &settings,
        warnings,
    )
    .map_err(|e| {
        format!(
            "cannot reach the OTLP endpoint {}: {e}",
            export_config.endpoint
        )
    })?;
    exporter.set_resource(&resource);
    let (processor, handle) = export::spawn(
        export::OtlpSink::new(exporter),
        export_config.queue,
        export_config.endpoint.clone(),
        &runtime,
    );
    let provider = SdkTracerProvider::builder()
        .with_span_processor(processor)
        .with_sampler(sampler(export_config.sampler))
        .with_resource(resource)
        .build();
    Ok((provider, handle, thread))
}

/// The SDK sampler for the `OTEL_TRACES_SAMPLER` choice.
fn sampler(choice: SamplerChoice) -> Sampler {
    match choice {
        SamplerChoice::AlwaysOn => Sampler::AlwaysOn,
        SamplerChoice::AlwaysOff => Sampler::AlwaysOff,
        SamplerChoice::TraceIdRatio(r) => Sampler::TraceIdRatioBased(r),
        SamplerChoice::ParentBasedAlwaysOn => Sampler::ParentBased(Box::new(Sampler::AlwaysOn)),
        SamplerChoice::ParentBasedAlwaysOff => Sampler::ParentBased(Box::new(Sampler::AlwaysOff)),
        SamplerChoice::ParentBasedTraceIdRatio(r) => {
            Sampler::ParentBased(Box::new(Sampler::TraceIdRatioBased(r)))
        }
    }
}

/// The resource: `OTEL_RESOURCE_ATTRIBUTES`, then the service name
/// (`OTEL_SERVICE_NAME`, else a `service.name` attribute, else
/// `jvmscope`) and our version unless the attributes give one.
fn resource(config: &TelemetryConfig) -> Resource {
    let from_env = EnvResourceDetector::new().detect();
    let name = config
        .service_name
        .clone()
        .or_else(|| {
            from_env
                .get(&Key::from_static_str("service.name"))
                .map(|v| v.to_string())
        })
        .unwrap_or_else(|| DEFAULT_SERVICE_NAME.to_string());
    let mut builder = Resource::builder().with_service_name(name);
    if from_env
        .get(&Key::from_static_str("service.version"))
        .is_none()
    {
        builder =
            builder.with_attribute(KeyValue::new("service.version", env!("CARGO_PKG_VERSION")));
    }
    builder.build()
}

/// The thread span export runs on: a current-thread runtime of its own,
/// so encoding, compressing and sending batches never takes a turn of the
/// engine's worker (ADR 0014). It ends when the export task is dropped.
#[derive(Debug)]
struct ExportThread {
    handle: tokio::runtime::Handle,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
}

impl ExportThread {
    fn start() -> std::io::Result<Self> {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()?;
        let handle = runtime.handle().clone();
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        std::thread::Builder::new()
            .name("jvmscope-otlp".into())
            .spawn(move || {
                // Runs the export task (and the exporter's connections)
                // until told to stop; dropping the runtime then cancels
                // what is left.
                let _ = runtime.block_on(stopped);
            })?;
        Ok(Self {
            handle,
            stop: Some(stop),
        })
    }
}

impl Drop for ExportThread {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn without_export_the_per_hit_spans_are_not_built() {
        let config = TelemetryConfig::from_lookup(|_| None);
        let (dispatch, _telemetry) = build(&config);
        tracing::dispatcher::with_default(&dispatch, || {
            let hit = tracing::info_span!(target: "jvmscope_actors::events", "jvm.event");
            assert!(
                hit.is_disabled(),
                "a hit's span is built with nobody to read it"
            );
            let tool = tracing::info_span!(target: "jvmscope::mcp::server", "mcp.tool");
            assert!(
                !tool.is_disabled(),
                "the tool call's span carries log lines"
            );
        });
    }
}
