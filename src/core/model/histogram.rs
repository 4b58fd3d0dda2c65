//! A class histogram as plain data: live instances (and bytes, where the
//! channel gives them) per class, ranked, filtered by package, and the
//! growth since an earlier histogram of the same JVM, per class and per
//! second. Also the reader of HotSpot's own histogram text (what the
//! attach socket's `inspectheap` and `jmap -histo` print). Pure.

use std::collections::HashMap;

use super::signature::java_name;

/// One class's row.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClassCount {
    /// Dotted name (`byte[]`, `java.util.HashMap$Node`).
    pub class: String,
    pub instances: i64,
    /// Shallow bytes of those instances, when the channel knows them.
    pub bytes: Option<i64>,
}

/// A histogram taken at one instant (`at`: seconds on any steady clock).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Histogram {
    pub rows: Vec<ClassCount>,
    pub at: f64,
}

/// One ranked row, with its growth when an earlier histogram is known.
#[derive(Debug, Clone, PartialEq)]
pub struct Ranked {
    pub row: ClassCount,
    /// Instances more (or fewer) than in the earlier histogram.
    pub growth: Option<i64>,
    /// Growth per second.
    pub per_sec: Option<f64>,
}

/// How to rank.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RankBy {
    Instances,
    Bytes,
    Growth,
}

/// What a ranking kept.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Ranking {
    pub top: Vec<Ranked>,
    /// Classes matching the filter, before the cut to `top`.
    pub matched: usize,
    pub total_instances: i64,
    pub total_bytes: Option<i64>,
    /// Seconds between the two histograms compared, when two were.
    pub over: Option<f64>,
}

impl Histogram {
    /// The top `n` rows whose class starts with `package` (any when empty),
    /// ranked by `by`, each with its growth since `earlier`.
    pub fn rank(
        &self,
        earlier: Option<&Histogram>,
        package: &str,
        by: RankBy,
        n: usize,
    ) -> Ranking {
        let before: HashMap<&str, i64> = earlier
            .map(|e| {
                e.rows
                    .iter()
                    .map(|r| (r.class.as_str(), r.instances))
                    .collect()
            })
            .unwrap_or_default();
        let over = earlier.map(|e| self.at - e.at).filter(|d| *d > 0.0);
        let mut ranked: Vec<Ranked> = self
            .rows
            .iter()
            .filter(|r| r.class.starts_with(package))
            .map(|r| {
                let growth = earlier
                    .map(|_| r.instances - before.get(r.class.as_str()).copied().unwrap_or(0));
                Ranked {
                    row: r.clone(),
                    growth,
                    per_sec: growth.zip(over).map(|(g, d)| g as f64 / d),
                }
            })
            .collect();
        let by = if by == RankBy::Growth && earlier.is_none() {
            RankBy::Instances
        } else {
            by
        };
        let key = |r: &Ranked| match by {
            RankBy::Instances => r.row.instances,
            RankBy::Bytes => r.row.bytes.unwrap_or(0),
            RankBy::Growth => r.growth.unwrap_or(0),
        };
        ranked.sort_by(|a, b| {
            key(b)
                .cmp(&key(a))
                .then_with(|| b.row.instances.cmp(&a.row.instances))
                .then_with(|| a.row.class.cmp(&b.row.class))
        });
        let matched = ranked.len();
        let total_instances = ranked.iter().map(|r| r.row.instances).sum();
        let total_bytes = ranked
            .iter()
            .map(|r| r.row.bytes)
            .try_fold(0i64, |acc, b| b.map(|b| acc + b));
        ranked.truncate(n);
        Ranking {
            top: ranked,
            matched,
            total_instances,
            total_bytes,
            over,
        }
    }
}

/// Reads HotSpot's histogram text: rows `  1:  12345  678900  [B (java.base@17)`
/// and a `Total` line; anything else is skipped. Class names are given as
/// Java writes them (`byte[]`, `java.lang.Object[]`), module suffix dropped.
pub fn parse_hotspot(text: &str) -> Vec<ClassCount> {
    text.lines().filter_map(parse_row).collect()
}

fn parse_row(line: &str) -> Option<ClassCount> {
    let mut parts = line.split_whitespace();
    let rank = parts.next()?;
    rank.strip_suffix(':')?.parse::<u64>().ok()?;
    let instances = parts.next()?.parse().ok()?;
    let bytes = parts.next()?.parse().ok()?;
    let name = parts.next()?;
    let class = if name.starts_with('[') {
        java_name(name)
    } else {
        name.to_string()
    };
    Some(ClassCount {
        class,
        instances,
        bytes: Some(bytes),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn row(class: &str, instances: i64) -> ClassCount {
        ClassCount {
            class: class.into(),
            instances,
            bytes: None,
        }
    }

    #[test]
    fn growth_is_per_class_and_per_second() {
        let a = Histogram {
            rows: vec![row("Leak$Key", 1000), row("java.lang.String", 5000)],
            at: 10.0,
        };
        let b = Histogram {
            rows: vec![
                row("Leak$Key", 3000),
                row("java.lang.String", 5100),
                row("New", 7),
            ],
            at: 12.0,
        };
        let r = b.rank(Some(&a), "", RankBy::Growth, 2);
        assert_eq!(r.top[0].row.class, "Leak$Key");
        assert_eq!(r.top[0].growth, Some(2000));
        assert_eq!(r.top[0].per_sec, Some(1000.0));
        assert_eq!(r.top[1].row.class, "java.lang.String");
        assert_eq!(r.matched, 3);
        assert_eq!(r.over, Some(2.0));
        let only = b.rank(None, "Leak", RankBy::Growth, 5);
        assert_eq!(only.top.len(), 1);
        assert_eq!(only.top[0].growth, None);
        assert_eq!(only.total_bytes, None);
    }

    #[test]
    fn hotspot_rows_read() {
        let text = " num     #instances         #bytes  class name (module)\n\
            -------------------------------------------------------\n\
               1:          4211         422856  [B (java.base@17.0.9)\n\
               2:          3958          94992  java.lang.String (java.base@17.0.9)\n\
               3:            12            384  [Ljava.lang.Object;\n\
            Total         8181         518232\n";
        let rows = parse_hotspot(text);
        assert_eq!(rows.len(), 3);
        assert_eq!(rows[0].class, "byte[]");
        assert_eq!(rows[0].bytes, Some(422_856));
        assert_eq!(rows[1].class, "java.lang.String");
        assert_eq!(rows[2].class, "java.lang.Object[]");
    }

    proptest! {
        #[test]
        fn any_text_parses_without_panic(text in ".{0,300}") {
            let _ = parse_hotspot(&text);
            let _ = java_name(&text);
        }
    }
}
