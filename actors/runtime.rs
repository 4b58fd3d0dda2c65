//! The tokio runtime the engine is built for: one worker thread by default
//! (ADR 0014).
//!
//! A hit on a traced line crosses five tasks: the Connection's reader, the
//! EventDispatch actor, the capture task, the Connection actor and its
//! writer, and back through the reader for each reply. On a multi-threaded runtime with an
//! idle second worker, nearly every such hand-over wakes that worker to
//! steal the task just made runnable: a futex wake, a context switch and
//! cold caches per hop, for work that takes microseconds. On one worker
//! the hand-over is a queue push, and the worker parks in epoll only when
//! nothing is runnable. Measured on the contended trace bench (2 vCPUs,
//! JDK 17, 4 threads, light workload): 184 µs of CPU per captured hit on
//! two workers, 113–128 µs on one (ADR 0014, docs/PERFORMANCE.md).
//!
//! Work that really blocks or burns CPU leaves the worker: `/proc` scans
//! and source walks run on `spawn_blocking`, `javac` is a child process,
//! and the OTLP exporter can be given a thread of its own. The runtime
//! stays multi-threaded (with one worker), so `spawn_blocking` and
//! `block_in_place` keep working.
//!
//! `TOKIO_WORKER_THREADS`, tokio's own variable, still sets the count.

use std::io;

/// tokio's variable for the number of workers, honoured here too.
pub const WORKERS_VAR: &str = "TOKIO_WORKER_THREADS";

/// Workers when the environment says nothing.
pub const DEFAULT_WORKERS: usize = 1;

/// The number of workers `build` gives the runtime: `TOKIO_WORKER_THREADS`
/// when it is a positive number, else one.
pub fn workers() -> usize {
    workers_from(std::env::var(WORKERS_VAR).ok().as_deref())
}

/// `workers` from the variable's value (pure, for tests).
pub fn workers_from(value: Option<&str>) -> usize {
    value
        .and_then(|v| v.trim().parse::<usize>().ok())
        .filter(|n| *n > 0)
        .unwrap_or(DEFAULT_WORKERS)
}

/// Builds the runtime the binary, the demo and the benches run the engine
/// on.
pub fn build() -> io::Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(workers())
        .thread_name("jvmscope-worker")
        .enable_all()
        .build()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_worker_unless_the_variable_names_a_positive_count() {
        assert_eq!(workers_from(None), 1);
        assert_eq!(workers_from(Some("3")), 3);
        assert_eq!(workers_from(Some(" 2 ")), 2);
        assert_eq!(workers_from(Some("0")), 1);
        assert_eq!(workers_from(Some("many")), 1);
    }

    #[test]
    fn the_built_runtime_runs_tasks_and_blocking_work() {
        let rt = build().expect("runtime");
        let n = rt.block_on(async {
            let a = tokio::spawn(async { 20 });
            let b = tokio::task::spawn_blocking(|| 22);
            a.await.expect("task") + b.await.expect("blocking")
        });
        assert_eq!(n, 42);
    }
}
