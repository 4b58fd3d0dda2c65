//! The bounded, asynchronous span export path. A finished span is handed to
//! a bounded queue without waiting (a full queue drops the span and counts
//! it); one task on the tokio runtime batches the queue and calls the OTLP
//! exporter, so a collector that is down or slow costs tool calls nothing.
//! A failed export is logged once per outage, never per span.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

use opentelemetry::Context;
use opentelemetry_sdk::Resource;
use opentelemetry_sdk::error::{OTelSdkError, OTelSdkResult};
use opentelemetry_sdk::trace::{Span, SpanData, SpanExporter, SpanProcessor};
use tokio::sync::{mpsc, oneshot};

use super::config::QueueConfig;

/// Counters of the export path, shared by the processor and its task.
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

    fn count_drop(&self) {
        self.dropped.fetch_add(1, Ordering::Relaxed);
    }
}

/// What the export task is asked to do besides exporting.
enum Control {
    /// Export everything queued, then answer.
    Flush(oneshot::Sender<()>),
    /// Export everything queued, shut the exporter down, answer and end.
    Shutdown(oneshot::Sender<()>),
    /// The resource every span is exported with.
    Resource(Resource),
}

/// The span processor: hands finished spans to the export task through a
/// bounded queue. `on_end` never blocks and never allocates beyond the
/// queue slot.
#[derive(Debug)]
pub struct QueueProcessor {
    spans: mpsc::Sender<SpanData>,
    control: mpsc::UnboundedSender<Control>,
    stats: Arc<ExportStats>,
}

/// The caller's side of the export task: flush and shut down, async.
#[derive(Debug, Clone)]
pub struct ExportHandle {
    control: mpsc::UnboundedSender<Control>,
    stats: Arc<ExportStats>,
}

impl ExportHandle {
    /// The counters.
    pub fn stats(&self) -> ExportSnapshot {
        self.stats.snapshot()
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

    /// Exports everything queued, then stops the task and the exporter;
    /// gives up after `within`. Spans ending later are dropped and counted.
    pub async fn shutdown(&self, within: Duration) -> bool {
        let (tx, rx) = oneshot::channel();
        if self.control.send(Control::Shutdown(tx)).is_err() {
            return true; // already stopped
        }
        matches!(tokio::time::timeout(within, rx).await, Ok(Ok(())))
    }
}

/// Starts the export task on `runtime` and returns the processor to
/// register with the tracer provider plus the caller's handle.
pub fn spawn<E>(
    exporter: E,
    queue: QueueConfig,
    endpoint: String,
    runtime: &tokio::runtime::Handle,
) -> (QueueProcessor, ExportHandle)
where
    E: SpanExporter + 'static,
{
    let (spans_tx, spans_rx) = mpsc::channel(queue.max_queue_size.max(1));
    let (control_tx, control_rx) = mpsc::unbounded_channel();
    let stats = Arc::new(ExportStats::default());
    let task = ExportTask {
        exporter,
        queue,
        endpoint,
        stats: stats.clone(),
        failing: false,
        drop_reported: false,
    };
    runtime.spawn(task.run(spans_rx, control_rx));
    (
        QueueProcessor {
            spans: spans_tx,
            control: control_tx.clone(),
            stats: stats.clone(),
        },
        ExportHandle {
            control: control_tx,
            stats,
        },
    )
}

impl SpanProcessor for QueueProcessor {
    fn on_start(&self, _span: &mut Span, _cx: &Context) {}

    fn on_end(&self, span: SpanData) {
        if self.spans.try_send(span).is_err() {
            // Full (the collector is slower than we are) or closed (after
            // shutdown). Never wait: count it; the task reports it.
            self.stats.count_drop();
            self.stats.drop_noticed.store(true, Ordering::Relaxed);
        }
    }

    fn force_flush(&self) -> OTelSdkResult {
        // Synchronous callers cannot wait on the runtime safely; the async
        // `ExportHandle::flush` is the supported path. Ask without waiting.
        let (tx, _rx) = oneshot::channel();
        self.control
            .send(Control::Flush(tx))
            .map_err(|_| OTelSdkError::AlreadyShutdown)
    }

    fn shutdown_with_timeout(&self, timeout: Duration) -> OTelSdkResult {
        // Reached when the provider shuts down or is dropped. Telemetry
        // shuts the task down first (async); if it has not, ask it to stop
        // and wait a bounded time on a plain channel, which is safe from a
        // blocking thread.
        let (tx, rx) = oneshot::channel();
        if self.control.send(Control::Shutdown(tx)).is_err() {
            return Ok(());
        }
        let (done_tx, done_rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let _ = done_tx.send(futures::executor::block_on(rx).is_ok());
        });
        match done_rx.recv_timeout(timeout) {
            Ok(_) => Ok(()),
            Err(_) => Err(OTelSdkError::Timeout(timeout)),
        }
    }

    fn set_resource(&mut self, resource: &Resource) {
        let _ = self.control.send(Control::Resource(resource.clone()));
    }
}

/// The task that owns the exporter.
struct ExportTask<E> {
    exporter: E,
    queue: QueueConfig,
    endpoint: String,
    stats: Arc<ExportStats>,
    /// The last export failed (an outage is in progress).
    failing: bool,
    drop_reported: bool,
}

impl<E: SpanExporter> ExportTask<E> {
    async fn run(
        mut self,
        mut spans: mpsc::Receiver<SpanData>,
        mut control: mpsc::UnboundedReceiver<Control>,
    ) {
        let mut batch: Vec<SpanData> = Vec::with_capacity(self.queue.max_export_batch_size);
        let mut tick = tokio::time::interval(self.queue.scheduled_delay);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        let mut spans_open = true;
        loop {
            tokio::select! {
                biased;
                message = control.recv() => match message {
                    Some(Control::Resource(resource)) => self.exporter.set_resource(&resource),
                    Some(Control::Flush(done)) => {
                        self.drain(&mut spans, &mut batch).await;
                        let _ = done.send(());
                    }
                    Some(Control::Shutdown(done)) => {
                        spans.close();
                        self.drain(&mut spans, &mut batch).await;
                        let _ = self.exporter.shutdown();
                        self.report_drops();
                        let _ = done.send(());
                        return;
                    }
                    None => {
                        spans.close();
                        self.drain(&mut spans, &mut batch).await;
                        let _ = self.exporter.shutdown();
                        return;
                    }
                },
                span = spans.recv(), if spans_open => match span {
                    Some(span) => {
                        batch.push(span);
                        if batch.len() >= self.queue.max_export_batch_size {
                            self.export(&mut batch).await;
                        }
                    }
                    None => {
                        // Every producer is gone; export what is left and
                        // keep answering flush and shutdown requests.
                        spans_open = false;
                        self.export(&mut batch).await;
                    }
                },
                _ = tick.tick() => {
                    self.report_drops();
                    if !batch.is_empty() {
                        self.export(&mut batch).await;
                    }
                }
            }
        }
    }

    /// Exports the batch and everything queued behind it.
    async fn drain(&mut self, spans: &mut mpsc::Receiver<SpanData>, batch: &mut Vec<SpanData>) {
        while let Ok(span) = spans.try_recv() {
            batch.push(span);
            if batch.len() >= self.queue.max_export_batch_size {
                self.export(batch).await;
            }
        }
        self.export(batch).await;
    }

    async fn export(&mut self, batch: &mut Vec<SpanData>) {
        if batch.is_empty() {
            return;
        }
        let spans = std::mem::take(batch);
        let count = spans.len() as u64;
        let result = match tokio::time::timeout(
            self.queue.export_timeout,
            self.exporter.export(spans),
        )
        .await
        {
            Ok(result) => result,
            Err(_) => Err(OTelSdkError::Timeout(self.queue.export_timeout)),
        };
        match result {
            Ok(()) => {
                self.stats.exported.fetch_add(count, Ordering::Relaxed);
                if self.failing {
                    self.failing = false;
                    tracing::info!(
                        endpoint = %self.endpoint,
                        "OTLP export recovered"
                    );
                }
            }
            Err(error) => {
                self.stats.failed.fetch_add(count, Ordering::Relaxed);
                self.stats.failed_batches.fetch_add(1, Ordering::Relaxed);
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
        if !self.drop_reported && self.stats.drop_noticed.load(Ordering::Relaxed) {
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

    use opentelemetry::trace::{
        SpanContext, SpanId, SpanKind, Status, TraceFlags, TraceId, TraceState,
    };
    use opentelemetry_sdk::trace::{SpanEvents, SpanLinks};

    /// Records batches; optionally fails or stalls.
    #[derive(Debug, Clone, Default)]
    struct Recorder {
        got: Arc<Mutex<Vec<String>>>,
        fail: Arc<AtomicBool>,
        stall: Arc<AtomicBool>,
    }

    impl SpanExporter for Recorder {
        async fn export(&self, batch: Vec<SpanData>) -> OTelSdkResult {
            if self.stall.load(Ordering::SeqCst) {
                std::future::pending::<()>().await;
            }
            if self.fail.load(Ordering::SeqCst) {
                return Err(OTelSdkError::InternalFailure("down".into()));
            }
            let mut got = self.got.lock().unwrap_or_else(|e| e.into_inner());
            got.extend(batch.into_iter().map(|s| s.name.to_string()));
            Ok(())
        }
    }

    fn span(name: &str) -> SpanData {
        SpanData {
            span_context: SpanContext::new(
                TraceId::from(1u128),
                SpanId::from(1u64),
                TraceFlags::SAMPLED,
                false,
                TraceState::default(),
            ),
            parent_span_id: SpanId::INVALID,
            parent_span_is_remote: false,
            span_kind: SpanKind::Internal,
            name: name.to_string().into(),
            start_time: std::time::SystemTime::now(),
            end_time: std::time::SystemTime::now(),
            attributes: Vec::new(),
            dropped_attributes_count: 0,
            events: SpanEvents::default(),
            links: SpanLinks::default(),
            status: Status::Unset,
            instrumentation_scope: Default::default(),
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
            p.on_end(span(&format!("s{i}")));
        }
        assert!(handle.flush(Duration::from_secs(5)).await);
        assert_eq!(rec.got.lock().map(|g| g.len()).unwrap_or(0), 5);
        assert_eq!(handle.stats().exported, 5);
        assert!(handle.shutdown(Duration::from_secs(5)).await);
        p.on_end(span("late"));
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
            p.on_end(span(&format!("s{i}")));
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
        p.on_end(span("a"));
        assert!(handle.flush(Duration::from_secs(5)).await);
        p.on_end(span("b"));
        assert!(handle.flush(Duration::from_secs(5)).await);
        let stats = handle.stats();
        assert_eq!((stats.failed, stats.failed_batches), (2, 2));
        rec.fail.store(false, Ordering::SeqCst);
        p.on_end(span("c"));
        assert!(handle.flush(Duration::from_secs(5)).await);
        assert_eq!(handle.stats().exported, 1);
        assert!(handle.shutdown(Duration::from_secs(5)).await);
    }

    #[test]
    fn sync_shutdown_is_bounded_and_idempotent() {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .unwrap_or_else(|e| panic!("runtime: {e}"));
        let rec = Recorder::default();
        let (p, _handle) = spawn(rec.clone(), queue(8), "test".into(), runtime.handle());
        p.on_end(span("a"));
        assert!(p.shutdown_with_timeout(Duration::from_secs(5)).is_ok());
        assert!(p.shutdown_with_timeout(Duration::from_secs(5)).is_ok());
        assert_eq!(rec.got.lock().map(|g| g.len()).unwrap_or(0), 1);
    }
}
