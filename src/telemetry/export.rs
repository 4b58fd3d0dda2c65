//! The bounded, asynchronous span export path: a span processor of our
//! own (`QueueProcessor`, an `opentelemetry_sdk` `SpanProcessor`) feeding
//! the library's exporter (`opentelemetry-otlp`). A finished span goes into
//! a bounded queue without waiting and without waking anyone (a full queue
//! drops the span and counts it); one task on the tokio runtime is woken
//! once per full batch, or by its timer, and hands the batch to the
//! exporter, which encodes it, sends it and retries what the collector
//! refuses for the time being (HTTP 429/502/503/504, gRPC UNAVAILABLE …)
//! with back-off. So a collector that is down or slow costs tool calls
//! nothing, and a busy session does not pay a thread wake-up per span. A
//! failed export is logged once per outage, never per span.
//!
//! Why not the SDK's `BatchSpanProcessor`: it keeps no counters we can
//! report (dropped, failed), sends one batch at a time, and its default
//! form exports from a thread of its own with `block_on`, where the async
//! HTTP client panics (no reactor).

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::mpsc::{Receiver, SyncSender, TrySendError, sync_channel};
use std::time::Duration;

use opentelemetry::Context;
use opentelemetry_sdk::error::OTelSdkResult;
use opentelemetry_sdk::trace::{Span, SpanData, SpanExporter, SpanProcessor};
use tokio::sync::{Notify, mpsc, oneshot};
use tokio::task::JoinSet;

use super::config::QueueConfig;
use super::semconv;

/// Export requests in flight at once. Each is a whole batch; more than one
/// keeps the queue draining while the collector answers the previous
/// request (or while the exporter waits to retry it).
pub const MAX_IN_FLIGHT: usize = 4;

/// Where the export task sends each batch.
pub trait SpanSink: Send + 'static {
    /// Takes `batch` and returns the sending of it; the error says why the
    /// batch was lost.
    fn export(
        &mut self,
        batch: Vec<SpanData>,
    ) -> impl Future<Output = Result<(), String>> + Send + 'static;
}

/// The real sink: the `opentelemetry-otlp` exporter (shared by the
/// requests in flight).
#[derive(Debug, Clone)]
pub struct OtlpSink(Arc<opentelemetry_otlp::SpanExporter>);

impl OtlpSink {
    pub fn new(exporter: opentelemetry_otlp::SpanExporter) -> Self {
        Self(Arc::new(exporter))
    }
}

impl SpanSink for OtlpSink {
    fn export(
        &mut self,
        batch: Vec<SpanData>,
    ) -> impl Future<Output = Result<(), String>> + Send + 'static {
        let exporter = self.0.clone();
        async move { exporter.export(batch).await.map_err(|e| e.to_string()) }
    }
}

/// Counters of the export path, shared by the producers and the task.
#[derive(Debug, Default)]
pub struct ExportStats {
    exported: AtomicU64,
    dropped: AtomicU64,
    failed: AtomicU64,
    failed_batches: AtomicU64,
    drop_noticed: AtomicBool,
}

/// A copy of the counters at one moment.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ExportSnapshot {
    /// Spans the collector accepted.
    pub exported: u64,
    /// Spans dropped before export: the queue was full, or export had
    /// already shut down.
    pub dropped: u64,
    /// Spans lost in exports that failed (collector down, timeout, refusal).
    pub failed: u64,
    /// Export requests that failed.
    pub failed_batches: u64,
}

impl ExportStats {
    /// The counters now.
    pub fn snapshot(&self) -> ExportSnapshot {
        ExportSnapshot {
            exported: self.exported.load(Ordering::Relaxed),
            dropped: self.dropped.load(Ordering::Relaxed),
            failed: self.failed.load(Ordering::Relaxed),
            failed_batches: self.failed_batches.load(Ordering::Relaxed),
        }
    }
}

/// What producers and the task share.
#[derive(Debug)]
struct Shared {
    stats: ExportStats,
    /// Spans queued and not yet taken by the task.
    pending: AtomicUsize,
    /// Wakes the task when `pending` reaches a full batch.
    wake: Notify,
    batch_size: usize,
}

/// What the export task is asked to do besides exporting.
enum Control {
    /// Export everything queued, then answer.
    Flush(oneshot::Sender<()>),
    /// Export everything queued, answer and end.
    Shutdown(oneshot::Sender<()>),
}

/// The producers' side: hands finished spans to the export task. `on_end`
/// never blocks, never allocates and wakes the task once per full batch.
#[derive(Debug, Clone)]
pub struct QueueProcessor {
    spans: SyncSender<SpanData>,
    shared: Arc<Shared>,
}

impl QueueProcessor {
    /// Queues a finished span, or drops and counts it when the queue is
    /// full or export has shut down.
    pub fn queue(&self, mut span: SpanData) {
        // CLIENT spans are JDWP round trips, recorded with integers already.
        if span.span_kind != opentelemetry::trace::SpanKind::Client {
            semconv::restore_integers(&mut span.attributes);
        }
        match self.spans.try_send(span) {
            Ok(()) => {
                let pending = self.shared.pending.fetch_add(1, Ordering::AcqRel) + 1;
                if pending == self.shared.batch_size {
                    self.shared.wake.notify_one();
                }
            }
            Err(TrySendError::Full(_) | TrySendError::Disconnected(_)) => {
                self.shared.stats.dropped.fetch_add(1, Ordering::Relaxed);
                self.shared
                    .stats
                    .drop_noticed
                    .store(true, Ordering::Relaxed);
            }
        }
    }
}

impl SpanProcessor for QueueProcessor {
    fn on_start(&self, _span: &mut Span, _cx: &Context) {}

    fn on_end(&self, span: SpanData) {
        self.queue(span);
    }

    /// Flushing is async ([`ExportHandle::flush`]); the SDK's synchronous
    /// form has nothing to wait for here.
    fn force_flush(&self) -> OTelSdkResult {
        Ok(())
    }

    /// Shutdown is async ([`ExportHandle::shutdown`]), never a blocking
    /// wait on the runtime's own threads.
    fn shutdown_with_timeout(&self, _timeout: Duration) -> OTelSdkResult {
        Ok(())
    }
}

/// The caller's side of the export task: flush and shut down, async.
#[derive(Debug, Clone)]
pub struct ExportHandle {
    control: mpsc::UnboundedSender<Control>,
    shared: Arc<Shared>,
}

impl ExportHandle {
    /// The counters.
    pub fn stats(&self) -> ExportSnapshot {
        self.shared.stats.snapshot()
    }

    /// Exports everything queued so far; gives up after `within`. Returns
    /// whether the task answered in time.
    pub async fn flush(&self, within: Duration) -> bool {
        let (tx, rx) = oneshot::channel();
        if self.control.send(Control::Flush(tx)).is_err() {
            return false;
        }
        matches!(tokio::time::timeout(within, rx).await, Ok(Ok(())))
    }

    /// Exports everything queued, then stops the task;
    /// gives up after `within`. Spans ending later are dropped and counted.
    pub async fn shutdown(&self, within: Duration) -> bool {
        let (tx, rx) = oneshot::channel();
        if self.control.send(Control::Shutdown(tx)).is_err() {
            return true; // already stopped
        }
        matches!(tokio::time::timeout(within, rx).await, Ok(Ok(())))
    }
}

/// Starts the export task on `runtime`; returns the producers' side and
/// the caller's handle.
pub fn spawn<E>(
    sink: E,
    queue: QueueConfig,
    endpoint: String,
    runtime: &tokio::runtime::Handle,
) -> (QueueProcessor, ExportHandle)
where
    E: SpanSink,
{
    let (spans_tx, spans_rx) = sync_channel(queue.max_queue_size.max(1));
    let (control_tx, control_rx) = mpsc::unbounded_channel();
    let shared = Arc::new(Shared {
        stats: ExportStats::default(),
        pending: AtomicUsize::new(0),
        wake: Notify::new(),
        batch_size: queue.max_export_batch_size.max(1),
    });
    let task = ExportTask {
        sink,
        queue,
        endpoint,
        shared: shared.clone(),
        spans: spans_rx,
        in_flight: JoinSet::new(),
        failing: false,
        drop_reported: false,
    };
    runtime.spawn(task.run(control_rx));
    (
        QueueProcessor {
            spans: spans_tx,
            shared: shared.clone(),
        },
        ExportHandle {
            control: control_tx,
            shared,
        },
    )
}

/// The task that owns the sink.
struct ExportTask<E> {
    sink: E,
    queue: QueueConfig,
    endpoint: String,
    shared: Arc<Shared>,
    spans: Receiver<SpanData>,
    /// Requests sent and not yet answered: (spans, outcome).
    in_flight: JoinSet<(u64, Result<(), String>)>,
    /// The last export failed (an outage is in progress).
    failing: bool,
    drop_reported: bool,
}

impl<E: SpanSink> ExportTask<E> {
    async fn run(mut self, mut control: mpsc::UnboundedReceiver<Control>) {
        let mut tick = tokio::time::interval(self.queue.scheduled_delay);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        let shared = self.shared.clone();
        loop {
            tokio::select! {
                biased;
                message = control.recv() => match message {
                    Some(Control::Flush(done)) => {
                        self.drain().await;
                        self.settle_all().await;
                        let _ = done.send(());
                    }
                    Some(Control::Shutdown(done)) => {
                        self.stop().await;
                        let _ = done.send(());
                        return;
                    }
                    None => {
                        self.stop().await;
                        return;
                    }
                },
                Some(answer) = self.in_flight.join_next(), if !self.in_flight.is_empty() => {
                    self.settle(answer);
                }
                _ = shared.wake.notified() => self.drain().await,
                _ = tick.tick() => {
                    self.report_drops();
                    self.drain().await;
                }
            }
        }
    }

    /// Exports everything queued and waits for the answers. The queue
    /// closes when the task returns: later spans are dropped and counted.
    async fn stop(&mut self) {
        self.drain().await;
        self.settle_all().await;
        self.report_drops();
    }

    /// Sends everything queued, in batches, at most [`MAX_IN_FLIGHT`]
    /// requests at once (waiting for an answer when that many are out).
    async fn drain(&mut self) {
        let mut batch = Vec::with_capacity(self.queue.max_export_batch_size);
        loop {
            while batch.len() < self.queue.max_export_batch_size {
                match self.spans.try_recv() {
                    Ok(span) => {
                        self.shared.pending.fetch_sub(1, Ordering::AcqRel);
                        batch.push(span);
                    }
                    Err(_) => break,
                }
            }
            if batch.is_empty() {
                return;
            }
            while self.in_flight.len() >= MAX_IN_FLIGHT {
                if let Some(answer) = self.in_flight.join_next().await {
                    self.settle(answer);
                }
            }
            let full = batch.len() >= self.queue.max_export_batch_size;
            let count = batch.len() as u64;
            let timeout = self.queue.export_timeout;
            let send = self.sink.export(std::mem::take(&mut batch));
            self.in_flight.spawn(async move {
                match tokio::time::timeout(timeout, send).await {
                    Ok(result) => (count, result),
                    Err(_) => (
                        count,
                        Err(format!("the export took longer than {timeout:?}")),
                    ),
                }
            });
            if !full {
                return;
            }
            batch.reserve(self.queue.max_export_batch_size);
        }
    }

    /// Waits for every request in flight.
    async fn settle_all(&mut self) {
        while let Some(answer) = self.in_flight.join_next().await {
            self.settle(answer);
        }
    }

    /// Counts an answered request; logs the start and the end of an outage.
    fn settle(&mut self, answer: Result<(u64, Result<(), String>), tokio::task::JoinError>) {
        let (count, result) = match answer {
            Ok(answer) => answer,
            // Only a panic in the sender gets here; its spans are lost.
            Err(e) => (0, Err(format!("the export task failed: {e}"))),
        };
        let stats = &self.shared.stats;
        match result {
            Ok(()) => {
                stats.exported.fetch_add(count, Ordering::Relaxed);
                if self.failing {
                    self.failing = false;
                    tracing::info!(endpoint = %self.endpoint, "OTLP export recovered");
                }
            }
            Err(error) => {
                stats.failed.fetch_add(count, Ordering::Relaxed);
                stats.failed_batches.fetch_add(1, Ordering::Relaxed);
                if !self.failing {
                    self.failing = true;
                    tracing::warn!(
                        endpoint = %self.endpoint,
                        %error,
                        "OTLP export failed; spans are dropped until the collector answers \
                         (logged once per outage)"
                    );
                }
            }
        }
    }

    /// Says once that the queue overflowed; the total is logged at shutdown.
    fn report_drops(&mut self) {
        if !self.drop_reported && self.shared.stats.drop_noticed.load(Ordering::Relaxed) {
            self.drop_reported = true;
            tracing::warn!(
                max_queue_size = self.queue.max_queue_size,
                "span export queue is full; spans are dropped and counted (total at shutdown)"
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Mutex;

    use opentelemetry::trace::{SpanContext, SpanId, SpanKind, Status};
    use opentelemetry::{InstrumentationScope, KeyValue};

    /// Records batches; optionally fails or stalls.
    #[derive(Debug, Clone, Default)]
    struct Recorder {
        got: Arc<Mutex<Vec<String>>>,
        fail: Arc<AtomicBool>,
        stall: Arc<AtomicBool>,
    }

    impl SpanSink for Recorder {
        fn export(
            &mut self,
            batch: Vec<SpanData>,
        ) -> impl Future<Output = Result<(), String>> + Send + 'static {
            let names: Vec<String> = batch.iter().map(|s| s.name.to_string()).collect();
            let this = self.clone();
            async move {
                if this.stall.load(Ordering::SeqCst) {
                    std::future::pending::<()>().await;
                }
                if this.fail.load(Ordering::SeqCst) {
                    return Err("down".into());
                }
                let mut got = this.got.lock().unwrap_or_else(|e| e.into_inner());
                got.extend(names);
                Ok(())
            }
        }
    }

    fn span(name: &str) -> SpanData {
        SpanData {
            span_context: SpanContext::empty_context(),
            parent_span_id: SpanId::INVALID,
            parent_span_is_remote: false,
            span_kind: SpanKind::Internal,
            name: name.to_string().into(),
            start_time: std::time::SystemTime::UNIX_EPOCH,
            end_time: std::time::SystemTime::UNIX_EPOCH,
            attributes: vec![KeyValue::new("jvm.event.count", "3")],
            dropped_attributes_count: 0,
            events: Default::default(),
            links: Default::default(),
            status: Status::Unset,
            instrumentation_scope: InstrumentationScope::builder("test").build(),
        }
    }

    fn queue(size: usize) -> QueueConfig {
        QueueConfig {
            max_queue_size: size,
            scheduled_delay: Duration::from_millis(20),
            max_export_batch_size: size,
            export_timeout: Duration::from_secs(5),
        }
    }

    #[tokio::test]
    async fn spans_are_batched_and_flushed() {
        let rec = Recorder::default();
        let (p, handle) = spawn(
            rec.clone(),
            queue(16),
            "test".into(),
            &tokio::runtime::Handle::current(),
        );
        for i in 0..5 {
            p.queue(span(&format!("s{i}")));
        }
        assert!(handle.flush(Duration::from_secs(5)).await);
        assert_eq!(rec.got.lock().map(|g| g.len()).unwrap_or(0), 5);
        assert_eq!(handle.stats().exported, 5);
        assert!(handle.shutdown(Duration::from_secs(5)).await);
        p.queue(span("late"));
        assert_eq!(
            handle.stats().dropped,
            1,
            "a span after shutdown is counted"
        );
    }

    #[tokio::test]
    async fn a_stalled_collector_drops_and_counts_without_blocking() {
        let rec = Recorder::default();
        rec.stall.store(true, Ordering::SeqCst);
        let (p, handle) = spawn(
            rec.clone(),
            queue(4),
            "test".into(),
            &tokio::runtime::Handle::current(),
        );
        let started = std::time::Instant::now();
        for i in 0..1000 {
            p.queue(span(&format!("s{i}")));
        }
        assert!(
            started.elapsed() < Duration::from_secs(1),
            "on_end never waits"
        );
        let dropped = handle.stats().dropped;
        assert!(dropped >= 1000 - 8, "dropped {dropped}");
        // The stalled export keeps shutdown from finishing, but it is bounded.
        let started = std::time::Instant::now();
        assert!(!handle.shutdown(Duration::from_millis(200)).await);
        assert!(started.elapsed() < Duration::from_secs(2));
    }

    #[tokio::test]
    async fn failures_are_counted_and_recovery_resumes_export() {
        let rec = Recorder::default();
        rec.fail.store(true, Ordering::SeqCst);
        let (p, handle) = spawn(
            rec.clone(),
            queue(8),
            "test".into(),
            &tokio::runtime::Handle::current(),
        );
        p.queue(span("a"));
        assert!(handle.flush(Duration::from_secs(5)).await);
        p.queue(span("b"));
        assert!(handle.flush(Duration::from_secs(5)).await);
        let stats = handle.stats();
        assert_eq!((stats.failed, stats.failed_batches), (2, 2));
        rec.fail.store(false, Ordering::SeqCst);
        p.queue(span("c"));
        assert!(handle.flush(Duration::from_secs(5)).await);
        assert_eq!(handle.stats().exported, 1);
        assert!(handle.shutdown(Duration::from_secs(5)).await);
    }

    #[derive(Debug, Clone, Default)]
    struct Keep(Arc<Mutex<Vec<SpanData>>>);

    impl SpanSink for Keep {
        fn export(
            &mut self,
            batch: Vec<SpanData>,
        ) -> impl Future<Output = Result<(), String>> + Send + 'static {
            self.0
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .extend(batch);
            std::future::ready(Ok(()))
        }
    }

    #[tokio::test]
    async fn integer_attributes_handed_over_as_text_are_exported_as_integers() {
        let keep = Keep::default();
        let (p, handle) = spawn(
            keep.clone(),
            queue(8),
            "test".into(),
            &tokio::runtime::Handle::current(),
        );
        p.queue(span("jvm.event Breakpoint"));
        assert!(handle.shutdown(Duration::from_secs(5)).await);
        let spans = keep.0.lock().unwrap_or_else(|e| e.into_inner()).clone();
        assert_eq!(spans.len(), 1);
        assert_eq!(
            spans[0].attributes,
            vec![KeyValue::new("jvm.event.count", 3i64)]
        );
    }
}
