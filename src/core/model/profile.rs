//! A CPU profile as counts: how many samples saw each stack on each
//! thread, and what follows from them (methods by self and total samples,
//! the hottest stacks, the split by thread, the collapsed stacks a flame
//! graph is drawn from). Whoever samples (JFR, JDWP) only adds samples;
//! the shares are the same arithmetic for both. No I/O, no words.

use std::collections::{HashMap, HashSet};

/// Frames kept per sample, from the running method outwards (JFR's own
/// default stack depth); deeper frames are cut at the root side.
pub const MAX_FRAMES: usize = 64;

/// Samples counted per thread and stack.
#[derive(Debug, Clone, Default)]
pub struct Profile {
    /// (thread, frames root first) → samples.
    stacks: HashMap<(String, Vec<String>), u64>,
    total: u64,
    /// Samples whose stack was cut (deeper than the sampler reads).
    pub truncated: u64,
    /// Samples that carried no frame at all (not counted in `total`).
    pub empty: u64,
}

/// One method's samples: where it was running (`self_samples`) and where it
/// was anywhere on the stack (`total_samples`, once per sample however
/// often it recurses).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MethodRow {
    pub method: String,
    pub self_samples: u64,
    pub total_samples: u64,
}

/// One distinct stack (all threads merged), root first.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StackRow {
    pub frames: Vec<String>,
    pub samples: u64,
}

/// One thread's samples and the method it ran most.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ThreadRow {
    pub thread: String,
    pub samples: u64,
    pub top_method: Option<(String, u64)>,
}

impl Profile {
    /// Counts one sample of `thread`, its frames given from the running
    /// method outwards (as both JFR and JDWP list them).
    pub fn add(&mut self, thread: &str, leaf_first: Vec<String>, truncated: bool) {
        if leaf_first.is_empty() {
            self.empty += 1;
            return;
        }
        let mut frames = leaf_first;
        let cut = frames.len() > MAX_FRAMES;
        frames.truncate(MAX_FRAMES);
        frames.reverse();
        if truncated || cut {
            self.truncated += 1;
        }
        self.total += 1;
        *self.stacks.entry((thread.to_string(), frames)).or_default() += 1;
    }

    /// Samples counted (those with at least one frame).
    pub fn total(&self) -> u64 {
        self.total
    }

    /// Every method seen, most self samples first (then most total).
    pub fn methods(&self) -> Vec<MethodRow> {
        let mut rows: HashMap<&str, (u64, u64)> = HashMap::new();
        for ((_, frames), &n) in &self.stacks {
            if let Some(leaf) = frames.last() {
                rows.entry(leaf).or_default().0 += n;
            }
            let distinct: HashSet<&str> = frames.iter().map(String::as_str).collect();
            for m in distinct {
                rows.entry(m).or_default().1 += n;
            }
        }
        let mut out: Vec<MethodRow> = rows
            .into_iter()
            .map(|(m, (s, t))| MethodRow {
                method: m.to_string(),
                self_samples: s,
                total_samples: t,
            })
            .collect();
        out.sort_by(|a, b| {
            (b.self_samples, b.total_samples, &a.method).cmp(&(
                a.self_samples,
                a.total_samples,
                &b.method,
            ))
        });
        out
    }

    /// The same rows, most total samples first.
    pub fn methods_by_total(&self) -> Vec<MethodRow> {
        let mut out = self.methods();
        out.sort_by(|a, b| {
            (b.total_samples, b.self_samples, &a.method).cmp(&(
                a.total_samples,
                a.self_samples,
                &b.method,
            ))
        });
        out
    }

    /// Distinct stacks over all threads, most samples first.
    pub fn stacks(&self) -> Vec<StackRow> {
        let mut merged: HashMap<&[String], u64> = HashMap::new();
        for ((_, frames), &n) in &self.stacks {
            *merged.entry(frames.as_slice()).or_default() += n;
        }
        let mut out: Vec<StackRow> = merged
            .into_iter()
            .map(|(f, n)| StackRow {
                frames: f.to_vec(),
                samples: n,
            })
            .collect();
        out.sort_by(|a, b| (b.samples, &a.frames).cmp(&(a.samples, &b.frames)));
        out
    }

    /// Threads, most samples first, each with its top self method.
    pub fn threads(&self) -> Vec<ThreadRow> {
        let mut per: HashMap<&str, (u64, HashMap<&str, u64>)> = HashMap::new();
        for ((thread, frames), &n) in &self.stacks {
            let e = per.entry(thread).or_default();
            e.0 += n;
            if let Some(leaf) = frames.last() {
                *e.1.entry(leaf).or_default() += n;
            }
        }
        let mut out: Vec<ThreadRow> = per
            .into_iter()
            .map(|(t, (n, methods))| ThreadRow {
                thread: t.to_string(),
                samples: n,
                top_method: methods
                    .into_iter()
                    .max_by(|a, b| (a.1, b.0).cmp(&(b.1, a.0)))
                    .map(|(m, c)| (m.to_string(), c)),
            })
            .collect();
        out.sort_by(|a, b| (b.samples, &a.thread).cmp(&(a.samples, &b.thread)));
        out
    }

    /// The collapsed ("folded") stacks a flame graph is drawn from: one
    /// line per distinct stack, `root;…;leaf count`, sorted.
    pub fn collapsed(&self) -> String {
        let mut lines: Vec<String> = self
            .stacks()
            .iter()
            .map(|s| format!("{} {}", s.frames.join(";"), s.samples))
            .collect();
        lines.sort();
        let mut out = lines.join("\n");
        if !out.is_empty() {
            out.push('\n');
        }
        out
    }
}

/// `part` as a percentage of `whole` (0 when there is nothing).
pub fn share(part: u64, whole: u64) -> f64 {
    if whole == 0 {
        0.0
    } else {
        part as f64 * 100.0 / whole as f64
    }
}

/// `Class.method` from a class name as either sampler gives it (JVM
/// internal `a/b/C` or dotted), the address HotSpot appends to a hidden
/// class (a lambda's `Foo$$Lambda$14+0x…/0x…`) removed so the same lambda
/// reads the same in every run, and characters the folded format uses
/// (`;`, spaces) replaced.
pub fn method_label(class: &str, method: &str) -> String {
    let mut class = class.replace('/', ".");
    if let Some(at) = class.find("$$Lambda") {
        let tail = &class[at + "$$Lambda".len()..];
        if let Some(cut) = tail.find(['+', '.']) {
            class.truncate(at + "$$Lambda".len() + cut);
        }
    }
    format!("{class}.{method}").replace([';', ' '], "_")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(frames: &[&str]) -> Vec<String> {
        frames.iter().map(|s| s.to_string()).collect()
    }

    fn sample() -> Profile {
        let mut p = Profile::default();
        for _ in 0..6 {
            p.add("busy", v(&["B.spin", "B.loop", "Thread.run"]), false);
        }
        for _ in 0..3 {
            p.add("busy", v(&["B.loop", "Thread.run"]), false);
        }
        p.add("other", v(&["R.f", "R.f", "R.main"]), true);
        p.add("other", v(&[]), false);
        p
    }

    #[test]
    fn methods_count_self_and_total_once_per_sample() {
        let p = sample();
        assert_eq!(p.total(), 10);
        assert_eq!((p.truncated, p.empty), (1, 1));
        let m = p.methods();
        assert_eq!(
            m[0],
            MethodRow {
                method: "B.spin".into(),
                self_samples: 6,
                total_samples: 6
            }
        );
        let f = m.iter().find(|r| r.method == "R.f").expect("R.f");
        assert_eq!((f.self_samples, f.total_samples), (1, 1));
        let by_total = p.methods_by_total();
        assert_eq!(by_total[0].method, "B.loop");
        assert_eq!(by_total[0].total_samples, 9);
    }

    #[test]
    fn stacks_threads_and_folded_lines() {
        let p = sample();
        let s = p.stacks();
        assert_eq!(s[0].frames, v(&["Thread.run", "B.loop", "B.spin"]));
        assert_eq!(s[0].samples, 6);
        let t = p.threads();
        assert_eq!(t[0].thread, "busy");
        assert_eq!(t[0].top_method, Some(("B.spin".into(), 6)));
        assert_eq!(
            p.collapsed(),
            "R.main;R.f;R.f 1\nThread.run;B.loop 3\nThread.run;B.loop;B.spin 6\n"
        );
        assert_eq!(share(6, 10), 60.0);
        assert_eq!(share(1, 0), 0.0);
    }

    #[test]
    fn deep_stacks_are_cut_at_the_root() {
        let mut p = Profile::default();
        let deep: Vec<String> = (0..100).map(|i| format!("C.m{i}")).collect();
        p.add("t", deep, false);
        let s = p.stacks();
        assert_eq!(s[0].frames.len(), MAX_FRAMES);
        assert_eq!(s[0].frames.last().map(String::as_str), Some("C.m0"));
        assert_eq!(p.truncated, 1);
    }

    #[test]
    fn labels_are_dotted_and_lambdas_stable() {
        assert_eq!(
            method_label("java/lang/Thread", "run"),
            "java.lang.Thread.run"
        );
        assert_eq!(
            method_label("Spinner$$Lambda$1+0x00007fd0e8000a08/112810359", "run"),
            "Spinner$$Lambda$1.run"
        );
        assert_eq!(
            method_label("Spinner$$Lambda/0x000001c0d8003200", "run"),
            "Spinner$$Lambda.run"
        );
        assert_eq!(method_label("a.B", "x y;z"), "a.B.x_y_z");
    }
}
