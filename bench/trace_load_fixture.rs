//! The program the trace bench loads (`Shape`), started with a JDWP agent
//! and read for its own throughput (`Fixture`), and the process's CPU time
//! (`Cpu`): shared by bench/trace_load.rs and its raw clients.

use std::path::{Path, PathBuf};
use std::process::Child;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::{Context, Result};

use super::support;

/// Which program the bench loads (`--shape`).
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Shape {
    /// `TraceLoad`: busy threads contending on one monitor around the hot
    /// line.
    Trace,
    /// `ProbeLoadBench named`: the shape of #41's hidden check, four
    /// threads of ~1 µs calls with no lock, each writing a shared static
    /// field (the CPU is the application's, all of it).
    Named,
}

pub static SHAPE: std::sync::OnceLock<Shape> = std::sync::OnceLock::new();

impl Shape {
    pub fn get() -> Shape {
        *SHAPE.get_or_init(|| Shape::Trace)
    }

    /// The program's main class.
    pub fn main_class(self) -> &'static str {
        match self {
            Shape::Trace => "TraceLoad",
            Shape::Named => "ProbeLoadBench",
        }
    }

    /// The class of the hot line, as jvmscope names it.
    pub fn class(self) -> &'static str {
        match self {
            Shape::Trace => "TraceLoad",
            Shape::Named => "ProbeLoadBench$Named",
        }
    }

    /// The hot line's marker in the source.
    pub fn marker(self) -> &'static str {
        match self {
            Shape::Trace => "// LINE: hot",
            Shape::Named => "// LINE: named-hot",
        }
    }

    /// The hot line's primitive locals, which the light workload reads.
    pub fn light_locals(self) -> [&'static str; 3] {
        match self {
            Shape::Trace => ["id", "i", "mixed"],
            Shape::Named => ["id", "n", "mixed"],
        }
    }

    /// The program's arguments after the thread count.
    pub fn args(self) -> &'static [&'static str] {
        match self {
            Shape::Trace => &[],
            Shape::Named => &["200", "named"],
        }
    }
}

/// The fixture, compiled and running with a JDWP agent.
pub struct Fixture {
    child: Child,
    /// Every port the agent announced: it listens again, on a new ephemeral
    /// port, after each debugger detaches.
    ports: Arc<Mutex<Vec<u16>>>,
    used: AtomicU32,
    ops: Arc<Mutex<Vec<(Instant, u64)>>>,
    pub version: String,
    _classes: tempfile::TempDir,
}

impl Drop for Fixture {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Fixture {
    pub fn start(threads: usize, home: Option<&Path>) -> Result<Fixture> {
        let tool = |name: &str| match home {
            Some(h) if h.join("bin").join(name).is_file() => h.join("bin").join(name),
            _ => PathBuf::from(name),
        };
        let shape = Shape::get();
        let mut args = vec![threads.to_string()];
        args.extend(shape.args().iter().map(|a| a.to_string()));
        let (mut child, classes, version) =
            support::spawn_agent_fixture(tool, shape.main_class(), &args)
                .map_err(anyhow::Error::msg)?;
        let stdout = child.stdout.take().context("stdout")?;
        let ops = Arc::new(Mutex::new(Vec::new()));
        let ports = Arc::new(Mutex::new(Vec::new()));
        let announced = ports.clone();
        let sink = ops.clone();
        std::thread::spawn(move || {
            use std::io::BufRead;
            for line in std::io::BufReader::new(stdout)
                .lines()
                .map_while(Result::ok)
            {
                if let Some(p) = line.strip_prefix("Listening for transport dt_socket at address:")
                {
                    if let (Ok(p), Ok(mut v)) = (p.trim().parse::<u16>(), announced.lock()) {
                        v.push(p);
                    }
                } else if let Some(n) = line.strip_prefix("ops/s ")
                    && let (Ok(n), Ok(mut v)) = (n.trim().parse(), sink.lock())
                {
                    v.push((Instant::now(), n));
                } else if let Some(w) = line.strip_prefix("w ")
                    && let Some((calls, ns)) = w.split_once(' ')
                    && let (Ok(calls), Ok(ns), Ok(mut v)) =
                        (calls.parse::<f64>(), ns.trim().parse::<f64>(), sink.lock())
                    && ns > 0.0
                {
                    // ProbeLoadBench's 100 ms windows, as a rate per second.
                    v.push((Instant::now(), (calls * 1e9 / ns) as u64));
                }
            }
        });
        Ok(Fixture {
            child,
            ports,
            used: AtomicU32::new(0),
            ops,
            version,
            _classes: classes,
        })
    }

    /// The port of the next attach (waits for the agent to listen again).
    pub async fn port(&self) -> Result<u16> {
        let want = self.used.fetch_add(1, Ordering::Relaxed) as usize + 1;
        support::announced_port(&self.ports, want)
            .await
            .map_err(anyhow::Error::msg)
    }

    /// Mean ops/s reported between two instants.
    pub fn ops_between(&self, from: Instant, to: Instant) -> Option<f64> {
        let v = self.ops.lock().ok()?;
        let inside: Vec<u64> = v
            .iter()
            .filter(|(t, _)| *t > from + Duration::from_millis(900) && *t <= to)
            .map(|(_, n)| *n)
            .collect();
        (!inside.is_empty()).then(|| inside.iter().sum::<u64>() as f64 / inside.len() as f64)
    }

    pub fn hot_line() -> Result<u32> {
        let shape = Shape::get();
        Ok(support::marked_line(shape.main_class(), shape.marker()))
    }
}

/// CPU time this process has used, in user space and in the kernel.
#[derive(Clone, Copy, Default)]
pub struct Cpu {
    pub user: Duration,
    pub sys: Duration,
}

impl std::ops::Sub for Cpu {
    type Output = Cpu;
    fn sub(self, o: Cpu) -> Cpu {
        Cpu {
            user: self.user.saturating_sub(o.user),
            sys: self.sys.saturating_sub(o.sys),
        }
    }
}

impl Cpu {
    /// User + system µs per hit, and user µs per hit, over `n` hits.
    pub fn per_hit(self, n: u64) -> (Option<f64>, Option<f64>) {
        let per = |d: Duration| (n > 0).then(|| d.as_secs_f64() * 1e6 / n as f64);
        (per(self.user + self.sys), per(self.user))
    }
}

/// CPU time this process has used, from /proc (clock ticks of 10 ms:
/// phases last seconds).
pub fn cpu_time() -> Cpu {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    // Fields after the command name (which is in parentheses).
    let rest = stat.rsplit_once(')').map(|(_, r)| r).unwrap_or("");
    let f: Vec<u64> = rest
        .split_whitespace()
        .map(|x| x.parse().unwrap_or(0))
        .collect();
    // utime and stime are fields 14 and 15 of the line, 12 and 13 here.
    let ticks = |i: usize| Duration::from_millis(f.get(i).copied().unwrap_or(0) * 10);
    Cpu {
        user: ticks(11),
        sys: ticks(12),
    }
}
