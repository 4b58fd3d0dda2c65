//! `jvmscope demo`: compiles the bundled Java program, then drives a short
//! session through the real tool layer (the same dispatch an MCP client
//! reaches), printing each call and its reply. A newcomer's first command.

use std::io::Write;
use std::path::PathBuf;
use std::time::Duration;

use anyhow::{Context, Result, bail};
use serde_json::{Value, json};

use jvmscope::actors::{Engine, EngineConfig};
use jvmscope::mcp::JvmScope;

const SOURCE: &str = include_str!("demo/Warehouse.java");

fn javac() -> PathBuf {
    std::env::var_os("JAVA_HOME")
        .map(|h| PathBuf::from(h).join("bin").join("javac"))
        .filter(|p| p.exists())
        .unwrap_or_else(|| PathBuf::from("javac"))
}

fn say(line: &str) -> Result<()> {
    let mut out = std::io::stdout().lock();
    writeln!(out, "{line}")?;
    out.flush()?;
    Ok(())
}

async fn step(server: &JvmScope, tool: &str, args: Value) -> Result<String> {
    say(&format!("\n>>> {tool} {args}"))?;
    let reply = server.call(tool, args).await;
    let text: Vec<String> = reply
        .content
        .iter()
        .filter_map(|c| c.as_text().map(|t| t.text.clone()))
        .collect();
    let text = text.join("\n");
    for line in text.lines() {
        say(&format!("    {line}"))?;
    }
    if reply.is_error == Some(true) {
        bail!("{tool} failed: {text}");
    }
    Ok(text)
}

/// Runs the demo end to end.
pub async fn run() -> Result<()> {
    let dir = std::env::temp_dir().join(format!("jvmscope-demo-{}", std::process::id()));
    std::fs::create_dir_all(&dir)?;
    std::fs::write(dir.join("Warehouse.java"), SOURCE)?;
    say(&format!("Compiling the demo program in {}", dir.display()))?;
    let status = std::process::Command::new(javac())
        .args(["-g", "-d"])
        .arg(&dir)
        .arg(dir.join("Warehouse.java"))
        .status()
        .context(
            "running javac (a JDK 17+ must be installed: javac and java on PATH, or JAVA_HOME)",
        )?;
    if !status.success() {
        bail!("javac failed: {status}");
    }
    let engine = Engine::start(EngineConfig::from_env())
        .await
        .map_err(anyhow::Error::msg)?;
    let server = JvmScope::new(engine.clone());
    let result = script(&server, &dir).await;
    engine.shutdown().await;
    let _ = std::fs::remove_dir_all(&dir);
    result?;
    say(
        "\nDemo finished: the JVM was launched held before main, inspected, traced without stopping, stopped on a condition, resumed, and released.",
    )?;
    Ok(())
}

async fn script(server: &JvmScope, dir: &std::path::Path) -> Result<()> {
    step(
        server,
        "debug_launch",
        json!({ "main_class": "Warehouse", "classpath": dir.display().to_string(), "suspend": true }),
    )
    .await?;
    step(server, "debug_list_sessions", json!({})).await?;
    step(server, "debug_list_threads", json!({})).await?;
    step(server, "debug_continue", json!({})).await?;
    let session = server.engine().session(None).map_err(anyhow::Error::msg)?;
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    let output = loop {
        let lines = session.launched_output(5);
        if lines.iter().any(|l| l.starts_with("order ")) || tokio::time::Instant::now() > deadline {
            break lines;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    say("\n--- the program's latest output ---")?;
    for line in output {
        say(&format!("    {line}"))?;
    }
    step(
        server,
        "debug_evaluate",
        json!({ "expression": "Warehouse.filled > 0 && Warehouse.stock[\"apple\"] < 100" }),
    )
    .await?;
    let threads = step(
        server,
        "debug_list_threads",
        json!({ "name_contains": "picker" }),
    )
    .await?;
    let picker = threads
        .lines()
        .find(|l| l.contains("\"picker-1\""))
        .and_then(|l| l.split_whitespace().next())
        .map(String::from);
    if let Some(picker) = picker {
        step(
            server,
            "debug_thread",
            json!({"kind": "suspend", "thread_id": picker }),
        )
        .await?;
        let stack = step(
            server,
            "debug_get_stack",
            json!({ "thread_id": picker, "max_frames": 4 }),
        )
        .await?;
        // The picker's own frame: evaluate in it. Where the picker stands
        // is a race (usually in Thread.sleep, sometimes inside `pick`, before
        // `left` is assigned), so the expression names only what is in scope
        // on every line of the loop.
        let frame = stack
            .lines()
            .find(|l| l.contains("Warehouse.lambda"))
            .and_then(|l| l.trim().trim_start_matches('#').split_whitespace().next())
            .and_then(|n| n.parse::<usize>().ok())
            .unwrap_or(1);
        step(
            server,
            "debug_evaluate",
            json!({ "thread_id": picker, "frame_index": frame, "expression": "skus[i % skus.length] + \" x\" + (1 + i % 3)" }),
        )
        .await?;
        step(
            server,
            "debug_thread",
            json!({"kind": "resume", "thread_id": picker }),
        )
        .await?;
    }
    stop_points(server).await?;
    step(server, "debug_disconnect", json!({})).await?;
    Ok(())
}

/// The 1-based line of the demo program that carries `marker`.
fn line_of(marker: &str) -> Result<usize> {
    SOURCE
        .lines()
        .position(|l| l.contains(marker))
        .map(|i| i + 1)
        .with_context(|| format!("the demo program has no {marker:?} line"))
}

/// Watching without stopping, then stopping on a condition: a trace on
/// `pick` snapshots a few calls while the picker runs on; a conditional
/// stop point suspends it once, to be inspected and released.
async fn stop_points(server: &JvmScope) -> Result<()> {
    step(
        server,
        "debug_set_stop",
        json!({
            "kind": "line",
            "class_pattern": "Warehouse",
            "line": line_of("demo: trace")?,
            "trace": true,
            "trace_frames": 1,
            "trace_locals": ["sku", "qty", "after"],
            "trace_expr": ["before - after", "stock.size"],
            // Arithmetic and a HashMap's size: the wire's evaluator (a
            // probe records field paths only).
            "engine": "wire",
            "trace_max_hits": 3,
        }),
    )
    .await?;
    // Traces arrive as the picker runs (every 20 ms); the budget of 3 is
    // spent within a second.
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    while tokio::time::Instant::now() < deadline {
        let listing = server.call("debug_list_stop_points", json!({})).await;
        let text = listing
            .content
            .iter()
            .filter_map(|c| c.as_text().map(|t| t.text.clone()))
            .collect::<String>();
        if text.contains("snapshots: 3") {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    step(server, "debug_get_traces", json!({ "clear": true })).await?;
    let stop = step(
        server,
        "debug_set_stop",
        json!({
            "kind": "line",
            "class_pattern": "Warehouse",
            "line": line_of("demo: stop")?,
            "condition": "sku == \"plum\" && after < 95",
        }),
    )
    .await?;
    step(
        server,
        "debug_wait_for_event",
        json!({ "timeout_ms": 10000 }),
    )
    .await?;
    step(server, "debug_get_stack", json!({ "max_frames": 2 })).await?;
    step(server, "debug_evaluate", json!({ "expression": "stock" })).await?;
    step(server, "debug_list_stop_points", json!({})).await?;
    let id = stop
        .split_whitespace()
        .find(|w| w.starts_with("bp_"))
        .map(|w| w.trim_matches(|c: char| !c.is_alphanumeric() && c != '_'))
        .unwrap_or("bp_2")
        .to_string();
    step(
        server,
        "debug_update_stop_point",
        json!({"kind": "clear", "id": id }),
    )
    .await?;
    step(server, "debug_continue", json!({})).await?;
    Ok(())
}
