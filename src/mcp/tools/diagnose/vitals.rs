//! The vital-signs block of debug_diagnose and the `jdwp://vitals`
//! resource: each local JVM's heap, metaspace, collectors, threads,
//! classes, safepoints and JIT, read from its hsperfdata (nothing
//! attaches), with the rates since the previous reading of that JVM.

use crate::model::perfdata::{Area, Rates, Vitals};

use super::super::Ctx;
use crate::actors::JvmListing;

fn mb(b: i64) -> String {
    format!("{:.1}", b as f64 / 1_048_576.0)
}

fn area(a: &Area) -> String {
    format!("{}/{} MB", mb(a.used), mb(a.committed))
}

/// One JVM's vital signs, in a few lines; the figures `jstat -gcutil`
/// prints (S0 S1 E O M CCS as percent, collections and their seconds)
/// are spelt as it spells them.
pub fn vitals_text(pid: u32, name: &str, v: &Vitals, rates: Option<&Rates>) -> String {
    let spaces: Vec<String> = v
        .spaces
        .iter()
        .map(|(n, a)| format!("{n} {:.1}%", a.pct()))
        .collect();
    let gcs: Vec<String> = v
        .collectors
        .iter()
        .map(|c| format!("{} {} in {:.3} s", c.name, c.count, c.secs))
        .collect();
    let mut out = format!(
        "pid {pid} {name}: up {:.1} s\n  heap {} used/committed ({}); metaspace {} (M {:.1}%), class space {} (CCS {:.1}%)\n  GC: {}\n  threads {} live, {} daemon, {} peak, {} started; classes {} loaded, {} unloaded\n  safepoints {} in {:.3} s; JIT {} compilations in {:.3} s",
        v.uptime,
        area(&v.heap),
        spaces.join(" "),
        area(&v.metaspace),
        v.metaspace.pct(),
        area(&v.class_space),
        v.class_space.pct(),
        if gcs.is_empty() {
            "-".to_string()
        } else {
            gcs.join("; ")
        },
        v.threads_live,
        v.threads_daemon,
        v.threads_peak,
        v.threads_started,
        v.classes_loaded,
        v.classes_unloaded,
        v.safepoints,
        v.safepoint_secs,
        v.compilations,
        v.compile_secs,
    );
    match rates {
        Some(r) => out.push_str(&format!(
            "\n  per s over the last {:.1} s: {:.2} GCs ({:.2}% of the time), safepoints {:.2}% of the time, heap {:+.1} MB, {:.1} threads started, {:.1} classes loaded, {:.1} compilations",
            r.over,
            r.gcs,
            r.gc_pct,
            r.safepoint_pct,
            r.heap_used / 1_048_576.0,
            r.threads_started,
            r.classes_loaded,
            r.compilations
        )),
        None => out.push_str("\n  (rates from the next reading on)"),
    }
    out
}

/// Every listed JVM's vital signs (JVMs without hsperfdata say so).
pub async fn block(ctx: &Ctx, listing: &JvmListing) -> String {
    let mut out = String::from("== vital signs (hsperfdata; nothing attached)");
    if listing.jvms.is_empty() {
        out.push_str("\nno local JVM");
    }
    for j in &listing.jvms {
        let name = super::jvms::main_of(j);
        match ctx.engine.vitals(j.pid, None).await {
            Ok((v, rates)) => {
                out.push('\n');
                out.push_str(&vitals_text(j.pid, &name, &v, rates.as_ref()));
            }
            Err(e) => out.push_str(&format!("\npid {} {name}: {e}", j.pid)),
        }
    }
    out
}
