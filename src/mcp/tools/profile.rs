//! debug_profile: where the whole JVM spends CPU over a duration. The
//! actors return the samples as counts (`ProfileView`); this file words
//! them (top methods by self and total share, the hottest stacks, the
//! split by thread, what the sampler cost), draws the flame graph with
//! `inferno` from the collapsed stacks, and keeps the last few graphs as
//! resources (`jdwp://profile/<n>/flame.svg` and `…/collapsed.txt`).

use std::collections::VecDeque;
use std::sync::Mutex;
use std::time::Duration;

use rmcp::model::Resource;
use schemars::JsonSchema;
use serde::Deserialize;

use super::{Call, Ctx, Effect, Reply, Route};
use crate::actors::{
    JDWP_PERIOD, JFR_PERIOD, ProfileSpec, ProfileView, SELF_STOP_MARGIN, Sampler, SamplerChoice,
};
use crate::mcp::error::ToolError;
use crate::model::profile::share;

/// The longest profile one call takes.
pub const MAX_DURATION: Duration = Duration::from_secs(120);
/// Where the stored profiles are served.
pub const PREFIX: &str = "jdwp://profile/";
/// Profiles kept as resources (the oldest goes first).
const KEPT: usize = 8;
/// Frames shown of one hot stack, from the running method outwards.
const STACK_FRAMES: usize = 10;

/// Arguments of debug_profile.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ProfileParams {
    pub session_id: Option<String>,
    /// How long to sample, at most 120000.
    pub duration_ms: u64,
    /// auto, jfr or jdwp.
    pub channel: Option<String>,
    /// Rows per table (default 10).
    pub top: Option<usize>,
}

pub fn routes() -> Vec<Route> {
    vec![
        Route::new(
            "debug_profile",
            "CPU profile",
            "Where the JVM spends CPU over duration_ms: top methods by self and total share, \
             hottest stacks, threads, and a flame graph (SVG) as a resource. A local JVM records \
             with JFR (about 1% CPU, nothing suspended); else threads are sampled over JDWP.",
            Effect::Read,
            profile,
        )
        .with_guide(
            "JFR path (channel auto on a JVM on this machine, or jfr): through HotSpot's attach socket, \
             as jcmd does, JFR.start name=jvmscope-<pid>-<n> settings=profile duration=<duration_ms + 10 s> \
             filename=<a scratch file of ours>, so a recording whose jvmscope died ends by itself; after \
             duration_ms, JFR.stop writes the file and JFR.check confirms nothing of ours still records; the \
             JVM's own <java.home>/bin/jfr print reads jdk.ExecutionSample (64 frames a stack) and the \
             file is deleted. HotSpot samples each thread running Java every 10 ms without a safepoint; threads \
             in native code or blocked are not samples. JDWP path (a remote JVM, an attach socket that \
             refuses, a JVM this session holds suspended, or channel jdwp): every 20 ms the status of every \
             thread is read, and each running thread is suspended alone, its frames read and resumed, the \
             three requests back to back; the reply gives the mean and longest hold. A thread stops only at \
             a safepoint, so samples land on loop back edges and returns (safepoint bias), and a thread in \
             native code counts as running. Shares are of all samples; self is the running method, total \
             any frame (once per sample). Read-only sessions may profile: nothing is redefined or written. \
             A cancel stops the recording (discarded) and removes its file, and resumes what a sample \
             suspended. The last 8 flame graphs are kept as resources.",
        )
        .runs_long_when(|_| true),
    ]
}

/// A profile kept as resources.
struct Stored {
    id: u64,
    svg: String,
    collapsed: String,
}

struct Store {
    next: u64,
    kept: VecDeque<Stored>,
}

static STORE: Mutex<Store> = Mutex::new(Store {
    next: 1,
    kept: VecDeque::new(),
});

fn store() -> std::sync::MutexGuard<'static, Store> {
    STORE
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// Keeps a profile's graph and stacks; returns its number.
fn keep(svg: String, collapsed: String) -> u64 {
    let mut s = store();
    let id = s.next;
    s.next += 1;
    s.kept.push_back(Stored { id, svg, collapsed });
    while s.kept.len() > KEPT {
        s.kept.pop_front();
    }
    id
}

fn flame_uri(id: u64) -> String {
    format!("{PREFIX}{id}/flame.svg")
}

fn collapsed_uri(id: u64) -> String {
    format!("{PREFIX}{id}/collapsed.txt")
}

/// The kept profiles' resources, newest first.
pub fn resources() -> Vec<Resource> {
    store()
        .kept
        .iter()
        .rev()
        .flat_map(|p| {
            [
                Resource::new(flame_uri(p.id), format!("profile-{}-flame", p.id))
                    .with_title(format!("Flame graph of profile {}", p.id))
                    .with_mime_type("image/svg+xml"),
                Resource::new(collapsed_uri(p.id), format!("profile-{}-collapsed", p.id))
                    .with_title(format!("Collapsed stacks of profile {}", p.id))
                    .with_mime_type("text/plain"),
            ]
        })
        .collect()
}

/// A kept profile's resource: its text and MIME type.
pub fn resource(uri: &str) -> Option<(String, &'static str)> {
    let rest = uri.strip_prefix(PREFIX)?;
    let (id, what) = rest.split_once('/')?;
    let id: u64 = id.parse().ok()?;
    let s = store();
    let p = s.kept.iter().find(|p| p.id == id)?;
    match what {
        "flame.svg" => Some((p.svg.clone(), "image/svg+xml")),
        "collapsed.txt" => Some((p.collapsed.clone(), "text/plain")),
        _ => None,
    }
}

fn channel(tool: &str, raw: Option<&str>) -> Result<SamplerChoice, ToolError> {
    match raw.unwrap_or("auto") {
        "auto" => Ok(SamplerChoice::Auto),
        "jfr" => Ok(SamplerChoice::Only(Sampler::Jfr)),
        "jdwp" => Ok(SamplerChoice::Only(Sampler::Jdwp)),
        other => Err(ToolError::bad_argument(
            tool,
            format!("channel {other:?} is not auto, jfr or jdwp"),
        )),
    }
}

async fn profile(ctx: Ctx, call: Call<ProfileParams>) -> Reply {
    let (tool, p) = (call.tool, call.params?);
    let duration = Duration::from_millis(p.duration_ms);
    if duration > MAX_DURATION || p.duration_ms < 100 {
        return Err(ToolError::bad_argument(
            tool,
            format!(
                "duration_ms {} is outside 100..={}: one call profiles at most {} s",
                p.duration_ms,
                MAX_DURATION.as_millis(),
                MAX_DURATION.as_secs()
            ),
        ));
    }
    let sampler = channel(tool, p.channel.as_deref())?;
    let handle = ctx.live(p.session_id.as_deref())?;
    let spec = ProfileSpec { duration, sampler };
    let view = tokio::select! {
        v = handle.profile(spec) => v?,
        () = super::cancelled() => return Err(ToolError::new(
            "CANCELLED",
            "cancelled; the JFR recording is stopped and discarded and its file removed, and a thread \
             suspended for a sample is resumed",
        )),
    };
    let collapsed = view.profile.collapsed();
    let svg = flame_graph(&view, &collapsed);
    let id = keep(svg, collapsed);
    Ok(super::text(render(
        &view,
        duration,
        p.top.unwrap_or(10),
        id,
    )))
}

/// The flame graph of a profile, or a note of why there is none.
fn flame_graph(view: &ProfileView, collapsed: &str) -> String {
    let mut opt = inferno::flamegraph::Options::default();
    opt.title = format!(
        "CPU profile ({}, {} samples)",
        sampler_name(view.sampler),
        view.profile.total()
    );
    opt.count_name = "samples".into();
    opt.hash = true;
    let mut svg = Vec::new();
    let drawn = if collapsed.is_empty() {
        Err(std::io::Error::other("no samples"))
    } else {
        inferno::flamegraph::from_lines(&mut opt, collapsed.lines(), &mut svg)
    };
    match drawn {
        Ok(()) => String::from_utf8_lossy(&svg).into_owned(),
        Err(e) => format!(
            "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"600\" height=\"40\">\
             <text x=\"10\" y=\"24\">No flame graph: {e}</text></svg>"
        ),
    }
}

fn sampler_name(s: Sampler) -> &'static str {
    match s {
        Sampler::Jfr => "JFR",
        Sampler::Jdwp => "JDWP",
    }
}

fn ms(d: Duration) -> String {
    format!("{:.1} ms", d.as_secs_f64() * 1000.0)
}

/// How the samples were taken and what that cost the JVM.
fn header(view: &ProfileView, duration: Duration) -> String {
    let total = view.profile.total();
    let of = match view.pid {
        Some(pid) => format!("JVM {pid}"),
        None => "the JVM".into(),
    };
    let mut out = match (&view.jfr, &view.jdwp) {
        (Some(run), _) => format!(
            "CPU profile of {of} for {:.1} s via JFR (jdk.ExecutionSample, settings=profile: each thread \
             running Java sampled every {} ms, no safepoint, nothing suspended); {total} samples.\n\
             Recording {} stopped{}; scratch file {} {}; read with {} in {}.",
            duration.as_secs_f64(),
            JFR_PERIOD.as_millis(),
            run.recording,
            match run.left_running {
                Some(false) => ", JFR.check lists it no more".to_string(),
                Some(true) => format!(
                    ", yet JFR.check still lists it (it ends by itself within {} s)",
                    SELF_STOP_MARGIN.as_secs()
                ),
                None => ", JFR.check could not be asked".to_string(),
            },
            run.file.display(),
            if run.file_removed {
                "removed"
            } else {
                "NOT removed"
            },
            run.tool.display(),
            ms(run.read_took),
        ),
        (None, Some(run)) => format!(
            "CPU profile of {of} for {:.1} s via JDWP: every {} ms ({} rounds) each running thread was \
             suspended alone for its stack; {} holds, {} mean, {} longest{}. Samples land where a \
             thread reached a safepoint (loop back edges, returns): safepoint-biased, and a thread in \
             native code counts as running. {total} samples.",
            duration.as_secs_f64(),
            JDWP_PERIOD.as_millis(),
            run.rounds,
            run.holds,
            ms(run.mean_hold()),
            ms(run.longest),
            if run.failed > 0 {
                format!(", {} reads failed (thread ended)", run.failed)
            } else {
                String::new()
            },
        ),
        (None, None) => format!("CPU profile of {of}: no sampler ran."),
    };
    if let Some(e) = &view.jfr_refused {
        out.push_str(&format!("\nJFR not used: {e}."));
    }
    if view.read_only {
        out.push_str("\nRead-only session: profiling is allowed, it changes no code and no value.");
    }
    if view.profile.truncated > 0 {
        out.push_str(&format!(
            "\n{} samples had stacks deeper than 64 frames, cut at the root side.",
            view.profile.truncated
        ));
    }
    out
}

/// The whole reply.
fn render(view: &ProfileView, duration: Duration, top: usize, id: u64) -> String {
    let top = top.max(1);
    let total = view.profile.total();
    let mut out = header(view, duration);
    if total == 0 {
        out.push_str(
            "\nNo samples: no thread ran Java code while sampling (idle, blocked or in native code).",
        );
        return out;
    }
    out.push_str(&format!(
        "\nTop methods by self samples (share of {total}):\n   self%  total%  method"
    ));
    for m in view.profile.methods().iter().take(top) {
        out.push_str(&format!(
            "\n  {:5.1}%  {:5.1}%  {}",
            share(m.self_samples, total),
            share(m.total_samples, total),
            m.method
        ));
    }
    out.push_str("\nTop methods by total samples:\n  total%   self%  method");
    for m in view.profile.methods_by_total().iter().take(top) {
        out.push_str(&format!(
            "\n  {:5.1}%  {:5.1}%  {}",
            share(m.total_samples, total),
            share(m.self_samples, total),
            m.method
        ));
    }
    out.push_str("\nHottest stacks (running method first):");
    for (i, s) in view.profile.stacks().iter().take(top.min(5)).enumerate() {
        let shown: Vec<&str> = s
            .frames
            .iter()
            .rev()
            .take(STACK_FRAMES)
            .map(String::as_str)
            .collect();
        let more = s.frames.len().saturating_sub(STACK_FRAMES);
        out.push_str(&format!(
            "\n  {}. {:.1}% ({} samples)  {}{}",
            i + 1,
            share(s.samples, total),
            s.samples,
            shown.join(" < "),
            if more > 0 {
                format!(" < … {more} more")
            } else {
                String::new()
            }
        ));
    }
    out.push_str("\nThreads:");
    let threads = view.profile.threads();
    for t in threads.iter().take(top) {
        let most = t
            .top_method
            .as_ref()
            .map(|(m, n)| format!("  mostly {m} ({:.0}%)", share(*n, t.samples)))
            .unwrap_or_default();
        out.push_str(&format!(
            "\n  {:5.1}% ({} samples)  \"{}\"{most}",
            share(t.samples, total),
            t.samples,
            t.thread
        ));
    }
    if threads.len() > top {
        out.push_str(&format!("\n  … {} more threads", threads.len() - top));
    }
    out.push_str(&format!(
        "\nFlame graph: {} (image/svg+xml); collapsed stacks: {} (text/plain).",
        flame_uri(id),
        collapsed_uri(id)
    ));
    out
}
