//! Execution tools: see the threads, resume the JVM.

use schemars::JsonSchema;
use serde::Deserialize;

use super::kinds::Kind;
use super::session::SessionParams;
use super::{Call, Ctx, Effect, Reply, Route};
use crate::actors::{DEFAULT_EXCLUDES, PauseOutcome, StepFilter, StepKind};
use crate::actors::{SessionError, ThreadUse};
use crate::mcp::error::ToolError;
use crate::model::threads;

/// Arguments of debug_list_threads.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ListThreadsParams {
    /// Session id; default: the current session.
    pub session_id: Option<String>,
    pub name_contains: Option<String>,
    /// Threads to show; default 100.
    pub limit: Option<usize>,
}

/// Default number of threads debug_list_threads shows.
const THREADS_SHOWN: usize = 100;

/// Arguments naming one thread.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ThreadParams {
    /// Session id; default: the current session.
    pub session_id: Option<String>,
    pub thread_id: String,
}

/// Arguments of debug_step (every kind).
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct StepParams {
    /// Session id; default: the current session.
    pub session_id: Option<String>,
    pub thread_id: Option<String>,
    /// Class patterns to skip (replaces the default list).
    #[serde(default, deserialize_with = "crate::mcp::tools::args::strings")]
    pub exclude_classes: Option<Vec<String>>,
    /// Stop only in classes matching these.
    #[serde(default, deserialize_with = "crate::mcp::tools::args::strings")]
    pub only_classes: Option<Vec<String>>,
    /// Wait for the landing, ms; default 10000.
    pub timeout_ms: Option<u64>,
}

pub fn routes() -> Vec<Route> {
    vec![
        {
            let tool = "debug_step";
            let kind = |name, k: StepKind, guide| {
                Kind::answered(tool, name, Effect::Changes, guide, move |ctx, call| {
                    step(ctx, call, k)
                })
            };
            Route::by_kind(
                tool,
                "Step",
                "Step the current thread: over (next line here), into (into a call), out (to the \
                 caller). Only that thread runs until it lands. JDK and container packages are \
                 skipped unless exclude_classes replaces the list ([] for none) or only_classes \
                 says where to stop.",
                Effect::Changes,
                vec![
                    kind("over", StepKind::Over, "Step to the next line of the current method, over calls."),
                    kind("into", StepKind::Into, "Step to the next line, entering a called method when the line calls one."),
                    kind("out", StepKind::Out, "Run until the current method returns, and stop in its caller."),
                ],
            )
        },
        {
            let tool = "debug_thread";
            let kind = |name, suspend: bool, guide| {
                Kind::answered(tool, name, Effect::Changes, guide, move |ctx, call| {
                    suspend_thread(ctx, call, suspend)
                })
            };
            Route::by_kind(
                tool,
                "Hold one thread",
                "Suspend one thread while the others run on (kind suspend), the cheap way to read \
                 a live frame, or take one suspension off it (kind resume). Suspends are counted. \
                 Methods cannot be invoked on a thread held this way (JDWP allows that only after \
                 an event).",
                Effect::Changes,
                vec![
                    kind(
                        "suspend",
                        true,
                        "Suspend one named thread; every other thread keeps running. The cheap way \
                         to read a live frame (debug_get_stack, debug_evaluate of locals and \
                         fields). Suspends are counted: the reply reads the count back. A thread \
                         held this way cannot run invoked methods (JDWP allows that only after an \
                         event).",
                    ),
                    kind(
                        "resume",
                        false,
                        "Take one suspension off one thread and report the count left (a thread \
                         held by a stop point and by debug_thread kind suspend needs two).",
                    ),
                ],
            )
        },
        Route::new(
            "debug_pause",
            "Pause the JVM",
            "Suspend every thread. Idempotent: on a JVM that is already fully suspended it changes nothing and says what holds it. Resume with debug_continue.",
            Effect::Idempotent,
            pause,
        ),
        Route::new(
            "debug_list_threads",
            "List threads",
            "Live threads: id, name, status, suspend count, sorted by name (worker-2 before \
             worker-10); a list cut by limit shows one per name family first. Suspends nothing.",
            Effect::Read,
            list_threads,
        )
            .with_guide(
                "Every live thread: id (@0x…), name, status, suspend count, sorted by name with numbers read as \
                  numbers (worker-2 before worker-10). A list cut by limit shows one thread of every name family \
                  (digits collapsed) before a second of any, and names the biggest groups left out. Reads only; \
                  suspends nothing.",
            ),
        Route::new(
            "debug_continue",
            "Resume the JVM",
            "Resume every thread until no suspend count is left, verified per thread. Says when a \
             new event suspended the JVM again at once.",
            Effect::Changes,
            resume,
        )
            .with_guide(
                "Resume every thread, repeating until no suspend count is left, then verify by reading each \
                  thread's count back. Says when a new event re-suspended the JVM right away.",
            ),
    ]
}

async fn list_threads(ctx: Ctx, call: Call<ListThreadsParams>) -> Reply {
    let p = call.params?;
    let handle = ctx.engine.session(p.session_id.as_deref())?;
    let all = handle.threads().await?;
    let matching: Vec<_> = all
        .iter()
        .filter(|t| {
            p.name_contains
                .as_deref()
                .is_none_or(|needle| t.name.contains(needle))
        })
        .collect();
    let names: Vec<&str> = matching.iter().map(|t| t.name.as_str()).collect();
    let (picked, left_out) = threads::pick(&names, p.limit.unwrap_or(THREADS_SHOWN).max(1));
    let shown: Vec<_> = picked.iter().map(|&i| matching[i]).collect();
    let mut out = format!(
        "{} thread{}",
        shown.len(),
        if shown.len() == 1 { "" } else { "s" }
    );
    if shown.len() != all.len() {
        out.push_str(&format!(" (of {})", all.len()));
    }
    let held = handle.held_threads().await;
    for t in &shown {
        let by_you = held
            .iter()
            .find(|h| h.thread == t.id)
            .map(|h| {
                format!(
                    " (held by you x{} for {:.0} s)",
                    h.count,
                    h.since.elapsed().as_secs_f64()
                )
            })
            .unwrap_or_default();
        out.push_str(&format!(
            "\n@{:#x} {:?}{} {}{}{}",
            t.id.0,
            t.name,
            if t.is_virtual { " (virtual)" } else { "" },
            t.status,
            if t.suspend_count > 0 {
                format!(" suspended x{}", t.suspend_count)
            } else {
                String::new()
            },
            by_you
        ));
    }
    if !left_out.is_empty() {
        let groups: Vec<String> = left_out
            .iter()
            .take(5)
            .map(|(family, n)| format!("{family} ×{n}"))
            .collect();
        out.push_str(&format!(
            "\n… {} more left out, biggest groups: {}; raise limit or narrow with name_contains",
            matching.len() - shown.len(),
            groups.join(", ")
        ));
    }
    let knows_virtual = handle.vm().is_some_and(|v| v.jdwp_major >= 19);
    if let Some(note) = super::dump::virtual_note(knows_virtual, all.iter().any(|t| t.is_virtual)) {
        out.push('\n');
        out.push_str(note);
    }
    Ok(super::text(out))
}

async fn resume(ctx: Ctx, call: Call<SessionParams>) -> Reply {
    let p = call.params?;
    let handle = ctx.live(p.session_id.as_deref())?;
    let report = handle.resume_all().await?;
    let held = handle.held_threads().await;
    let invoking = handle.invoking();
    if report.resumes == 0 && report.still_held == 0 && held.is_empty() {
        return Ok(super::text(format!(
            "Nothing was suspended in session {}: {} already; nothing was sent.",
            handle.id(),
            crate::mcp::render::threads_run(report.total, &invoking, false)
        )));
    }
    let mut out = format!(
        "Resumed session {} ({} resume{} sent).",
        handle.id(),
        report.resumes,
        if report.resumes == 1 { "" } else { "s" }
    );
    if report.still_held == 0 && held.is_empty() {
        out.push_str(&format!(
            "\nVerified: {}.",
            crate::mcp::render::threads_run(report.total, &invoking, false)
        ));
    } else if report.still_held == 0 {
        out.push_str(&format!(
            "\nVerified: {}. Still held by you (debug_thread): {}; debug_thread kind resume releases them.",
            crate::mcp::render::threads_run(
                report.total.saturating_sub(held.len()),
                &invoking,
                true
            ),
            held.iter()
                .map(|h| format!(
                    "@{:#x} x{} for {:.0} s",
                    h.thread.0,
                    h.count,
                    h.since.elapsed().as_secs_f64()
                ))
                .collect::<Vec<_>>()
                .join(", ")
        ));
    } else if report.resuspended_by_event {
        out.push_str(&format!(
            "\nA new event suspended {} threads again right after the resume (a stop point was hit); debug_list_threads shows them.",
            report.still_held
        ));
    } else {
        out.push_str(&format!(
            "\nWARNING: {} of {} threads are still suspended after {} resumes.",
            report.still_held, report.total, report.resumes
        ));
    }
    Ok(super::text(out))
}

async fn suspend_thread(ctx: Ctx, call: Call<ThreadParams>, suspend: bool) -> Reply {
    let (tool, p) = (call.tool, call.params?);
    let handle = ctx.engine.session(p.session_id.as_deref())?;
    let Some(thread) = super::args::thread_id(tool, Some(&p.thread_id))? else {
        return Err(ToolError::bad_argument(tool, "thread_id is required"));
    };
    let change = if suspend {
        handle.suspend_thread(thread).await?
    } else {
        handle.resume_thread(thread).await?
    };
    let (name, count) = (&change.name, change.count);
    let verb = if suspend { "Suspended" } else { "Resumed" };
    let mut out = format!(
        "{verb} thread @{:#x} {name:?}: suspend count now {count}",
        thread.0
    );
    if !suspend && count > 0 {
        out.push_str(&format!(
            " (still suspended: {count} more resume{} needed)",
            if count == 1 { "" } else { "s" }
        ));
    }
    if suspend {
        out.push_str("\nNext: debug_get_stack / debug_evaluate with this thread_id; debug_thread kind resume releases it");
    }
    Ok(super::text(out))
}

async fn pause(ctx: Ctx, call: Call<SessionParams>) -> Reply {
    let p = call.params?;
    let handle = ctx.engine.session(p.session_id.as_deref())?;
    let watchdog = match ctx.engine.config().suspend_limit {
        Some(limit) => format!(
            "the watchdog resumes it {:.0} s after it was suspended (JDWP_WATCHDOG_SECS)",
            limit.as_secs_f64()
        ),
        None => "the watchdog is off (JDWP_WATCHDOG_SECS=0): nothing resumes it but you".into(),
    };
    match handle.pause().await? {
        PauseOutcome::AlreadyHeld {
            total,
            max_depth,
            by_events,
            by_agent,
            since,
        } => {
            let mut holders = Vec::new();
            if by_events > 0 {
                holders.push(format!("a stop point hit ({by_events} thread(s))"));
            }
            if by_agent > 0 {
                holders.push(format!("{by_agent} thread(s) you hold"));
            }
            if holders.is_empty() {
                holders.push("an earlier pause (or suspend=y at launch)".into());
            }
            let since = since
                .map(|d| format!(" for {:.1} s", d.as_secs_f64()))
                .unwrap_or_default();
            Ok(super::text(format!(
                "Already suspended{since}: all {total} threads are held (deepest count {max_depth}) by {}; nothing changed.\n{watchdog}.\nNext: debug_continue resumes everything",
                holders.join(" and ")
            )))
        }
        PauseOutcome::Paused { held, total } => Ok(super::text(format!(
            "Paused: {held} of {total} threads suspended; {watchdog}.\nNext: debug_continue resumes everything"
        ))),
    }
}

async fn step(ctx: Ctx, call: Call<StepParams>, kind: StepKind) -> Reply {
    let (tool, p) = (call.tool, call.params?);
    let handle = ctx.live(p.session_id.as_deref())?;
    let filter = match (p.only_classes, p.exclude_classes) {
        (Some(_), Some(_)) => {
            return Err(ToolError::bad_argument(
                tool,
                "give only_classes or exclude_classes, not both",
            ));
        }
        (Some(only), None) if !only.is_empty() => StepFilter::Only(only),
        (_, Some(exclude)) => StepFilter::Exclude(exclude),
        _ => StepFilter::Exclude(DEFAULT_EXCLUDES.iter().map(|s| s.to_string()).collect()),
    };
    let thread = match super::args::thread_id(tool, p.thread_id.as_deref())? {
        Some(t) => t,
        None => match handle.event_threads().await.last() {
            Some(t) => *t,
            None => {
                return Err(SessionError::NoThreadSuspended {
                    purpose: ThreadUse::Step,
                }
                .into());
            }
        },
    };
    let timeout = std::time::Duration::from_millis(p.timeout_ms.unwrap_or(10_000));
    let landing = handle.step(thread, kind, &filter, timeout).await?;
    let at = landing
        .frame
        .as_ref()
        .map(|f| f.label())
        .unwrap_or_else(|| "an unknown location".into());
    Ok(super::text(format!(
        "Stepped thread @{:#x} to {at} ({}).\nThe thread is suspended there; debug_get_stack reads it, debug_continue resumes.",
        thread.0,
        filter_words(&filter)
    )))
}

/// The class filter a step used, as its reply states it.
fn filter_words(filter: &StepFilter) -> String {
    match filter {
        StepFilter::Exclude(p) if p.is_empty() => "no class filter".into(),
        StepFilter::Exclude(p) => format!("skipping {}", p.join(", ")),
        StepFilter::Only(p) => format!("stopping only in {}", p.join(", ")),
    }
}
