//! A HotSpot `hsperfdata` file decoded, and the vital signs read from it.
//! The JVM maps this file and keeps its counters current (what `jstat`
//! reads), so reading it touches nothing in the JVM. Pure: the bytes come
//! in, counters and vital signs go out; every offset and length is
//! checked against the bytes, so a torn or hostile file gives an error,
//! never a panic.

use std::collections::BTreeMap;

/// The file's magic number, as its first four bytes read big-endian.
const MAGIC: u32 = 0xcafe_c0c0;
/// Bytes of the prologue (magic .. num_entries).
const PROLOGUE: usize = 32;
/// Bytes of an entry's fixed header.
const ENTRY_HEADER: usize = 20;
/// Entries read at most: a real JVM has a few hundred.
const MAX_ENTRIES: usize = 10_000;

/// Why a perfdata file could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PerfDataError {
    #[error("perfdata file too short ({0} bytes)")]
    Short(usize),
    #[error("not a perfdata file (magic {0:#x})")]
    Magic(u32),
    #[error("perfdata entry {index} lies outside the file")]
    Entry { index: usize },
    #[error("the JVM has not finished writing its perfdata")]
    NotAccessible,
}

/// One counter's value.
#[derive(Debug, Clone, PartialEq)]
pub enum Counter {
    Long(i64),
    Text(String),
}

/// Every counter of one reading, by name.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Counters(pub BTreeMap<String, Counter>);

impl Counters {
    /// A long counter.
    pub fn long(&self, name: &str) -> Option<i64> {
        match self.0.get(name)? {
            Counter::Long(v) => Some(*v),
            Counter::Text(_) => None,
        }
    }

    /// A string counter.
    pub fn text(&self, name: &str) -> Option<&str> {
        match self.0.get(name)? {
            Counter::Text(t) => Some(t),
            Counter::Long(_) => None,
        }
    }

    fn sum(&self, names: impl Iterator<Item = String>) -> i64 {
        names.filter_map(|n| self.long(&n)).sum()
    }
}

/// Little helper over the file's bytes in its declared byte order.
struct Bytes<'a> {
    b: &'a [u8],
    little: bool,
}

impl Bytes<'_> {
    fn slice(&self, at: usize, len: usize) -> Option<&[u8]> {
        self.b.get(at..at.checked_add(len)?)
    }
    fn i32(&self, at: usize) -> Option<i32> {
        let s: [u8; 4] = self.slice(at, 4)?.try_into().ok()?;
        Some(if self.little {
            i32::from_le_bytes(s)
        } else {
            i32::from_be_bytes(s)
        })
    }
    fn i64(&self, at: usize) -> Option<i64> {
        let s: [u8; 8] = self.slice(at, 8)?.try_into().ok()?;
        Some(if self.little {
            i64::from_le_bytes(s)
        } else {
            i64::from_be_bytes(s)
        })
    }
    fn usize(&self, at: usize) -> Option<usize> {
        usize::try_from(self.i32(at)?).ok()
    }
}

/// Decodes a whole perfdata file.
pub fn decode(bytes: &[u8]) -> Result<Counters, PerfDataError> {
    if bytes.len() < PROLOGUE {
        return Err(PerfDataError::Short(bytes.len()));
    }
    let magic = u32::from_be_bytes([bytes[0], bytes[1], bytes[2], bytes[3]]);
    if magic != MAGIC {
        return Err(PerfDataError::Magic(magic));
    }
    let b = Bytes {
        b: bytes,
        little: bytes[4] == 1,
    };
    if bytes[7] == 0 {
        return Err(PerfDataError::NotAccessible);
    }
    let used = b.usize(8).unwrap_or(bytes.len()).min(bytes.len());
    let b = Bytes {
        b: &bytes[..used],
        little: b.little,
    };
    let first = b.usize(24).ok_or(PerfDataError::Entry { index: 0 })?;
    let count = b.usize(28).unwrap_or(0).min(MAX_ENTRIES);
    let mut out = BTreeMap::new();
    let mut at = first;
    for index in 0..count {
        let bad = PerfDataError::Entry { index };
        let len = b.usize(at).ok_or(bad.clone())?;
        if len < ENTRY_HEADER || b.slice(at, len).is_none() {
            return Err(bad);
        }
        if let Some((name, value)) = entry(&b, at, len) {
            out.insert(name, value);
        }
        at += len;
    }
    Ok(Counters(out))
}

/// One entry's name and value; `None` for a kind this reader skips.
fn entry(b: &Bytes<'_>, at: usize, len: usize) -> Option<(String, Counter)> {
    let name_at = at + b.usize(at + 4)?;
    let vector = b.usize(at + 8)?;
    let kind = *b.slice(at + 12, 1)?.first()?;
    let data_at = at + b.usize(at + 16)?;
    let end = at + len;
    let name_bytes = b.b.get(name_at..end)?;
    let name_len = name_bytes.iter().position(|c| *c == 0)?;
    let name = String::from_utf8_lossy(&name_bytes[..name_len]).into_owned();
    let value = match (kind, vector) {
        (b'J', 0) if data_at + 8 <= end => Counter::Long(b.i64(data_at)?),
        (b'B', n) if n > 0 => {
            let raw = b.b.get(data_at..end.min(data_at.checked_add(n)?))?;
            let text = raw.split(|c| *c == 0).next().unwrap_or_default();
            Counter::Text(String::from_utf8_lossy(text).into_owned())
        }
        _ => return None,
    };
    Some((name, value))
}

/// Used and committed bytes of one memory area.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Area {
    pub used: i64,
    pub committed: i64,
}

impl Area {
    /// Used as a percentage of committed (jstat's `-gcutil` figure).
    pub fn pct(&self) -> f64 {
        if self.committed <= 0 {
            0.0
        } else {
            100.0 * self.used as f64 / self.committed as f64
        }
    }
}

/// One garbage collector's counts.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Collector {
    pub name: String,
    pub count: i64,
    pub secs: f64,
}

/// A JVM's vital signs at one instant.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Vitals {
    /// Seconds since the JVM started (its own clock).
    pub uptime: f64,
    pub heap: Area,
    /// Eden, survivors and old, each as jstat names them (E, S0, S1, O).
    pub spaces: Vec<(&'static str, Area)>,
    pub metaspace: Area,
    pub class_space: Area,
    pub collectors: Vec<Collector>,
    pub threads_live: i64,
    pub threads_daemon: i64,
    pub threads_peak: i64,
    pub threads_started: i64,
    pub classes_loaded: i64,
    pub classes_unloaded: i64,
    pub safepoints: i64,
    pub safepoint_secs: f64,
    pub compilations: i64,
    pub compile_secs: f64,
}

impl Vitals {
    /// The vital signs in a set of counters (missing ones read as 0).
    /// `now_ms` (milliseconds since the epoch) dates the reading when the
    /// JVM keeps no running clock of its own (JDK 25 dropped the sampler
    /// that kept `sun.os.hrt.ticks`).
    pub fn from(c: &Counters, now_ms: i64) -> Vitals {
        let hz = c
            .long("sun.os.hrt.frequency")
            .filter(|f| *f > 0)
            .unwrap_or(1) as f64;
        let secs = |name: &str| c.long(name).unwrap_or(0) as f64 / hz;
        let area = |p: &str| Area {
            used: c.long(&format!("{p}.used")).unwrap_or(0),
            committed: c.long(&format!("{p}.capacity")).unwrap_or(0),
        };
        let space = |g: usize, s: usize| area(&format!("sun.gc.generation.{g}.space.{s}"));
        let spaces = vec![
            ("E", space(0, 0)),
            ("S0", space(0, 1)),
            ("S1", space(0, 2)),
            ("O", space(1, 0)),
        ];
        let generations = (0..3).map(|g| format!("sun.gc.generation.{g}.capacity"));
        let heap = Area {
            used: spaces.iter().map(|(_, a)| a.used).sum(),
            committed: c.sum(generations),
        };
        let collectors = (0..4)
            .filter_map(|i| {
                let p = format!("sun.gc.collector.{i}");
                Some(Collector {
                    name: c.text(&format!("{p}.name"))?.to_string(),
                    count: c.long(&format!("{p}.invocations")).unwrap_or(0),
                    secs: secs(&format!("{p}.time")),
                })
            })
            .collect();
        let long = |n: &str| c.long(n).unwrap_or(0);
        let uptime = match c.long("sun.os.hrt.ticks") {
            Some(_) => secs("sun.os.hrt.ticks"),
            None => (now_ms - long("sun.rt.createVmBeginTime")).max(0) as f64 / 1000.0,
        };
        Vitals {
            uptime,
            heap,
            spaces,
            metaspace: area("sun.gc.metaspace"),
            class_space: area("sun.gc.compressedclassspace"),
            collectors,
            threads_live: long("java.threads.live"),
            threads_daemon: long("java.threads.daemon"),
            threads_peak: long("java.threads.livePeak"),
            threads_started: long("java.threads.started"),
            classes_loaded: long("java.cls.loadedClasses") + long("java.cls.sharedLoadedClasses"),
            classes_unloaded: long("java.cls.unloadedClasses")
                + long("java.cls.sharedUnloadedClasses"),
            safepoints: long("sun.rt.safepoints"),
            safepoint_secs: secs("sun.rt.safepointTime"),
            compilations: long("sun.ci.totalCompiles"),
            compile_secs: secs("java.ci.totalTime"),
        }
    }

    /// Rates between an earlier reading and this one, per second of the
    /// JVM's own clock; `None` when no time passed (or it went back: a
    /// restarted JVM under the same pid).
    pub fn rates_since(&self, earlier: &Vitals) -> Option<Rates> {
        let dt = self.uptime - earlier.uptime;
        if dt <= 0.0 {
            return None;
        }
        let per = |now: i64, then: i64| (now - then) as f64 / dt;
        let gc_secs: f64 = self.collectors.iter().map(|c| c.secs).sum::<f64>()
            - earlier.collectors.iter().map(|c| c.secs).sum::<f64>();
        Some(Rates {
            over: dt,
            gcs: per(
                self.collectors.iter().map(|c| c.count).sum(),
                earlier.collectors.iter().map(|c| c.count).sum(),
            ),
            gc_pct: 100.0 * gc_secs / dt,
            safepoint_pct: 100.0 * (self.safepoint_secs - earlier.safepoint_secs) / dt,
            threads_started: per(self.threads_started, earlier.threads_started),
            classes_loaded: per(self.classes_loaded, earlier.classes_loaded),
            compilations: per(self.compilations, earlier.compilations),
            heap_used: per(self.heap.used, earlier.heap.used),
        })
    }
}

/// What changed per second between two readings.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Rates {
    /// Seconds between the readings.
    pub over: f64,
    pub gcs: f64,
    /// Share of the time spent in collections.
    pub gc_pct: f64,
    /// Share of the time spent at safepoints.
    pub safepoint_pct: f64,
    pub threads_started: f64,
    pub classes_loaded: f64,
    pub compilations: f64,
    /// Bytes (can be negative: a collection freed more than was allocated).
    pub heap_used: f64,
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Builds a little-endian perfdata file from (name, value) pairs.
    pub(crate) fn file(entries: &[(&str, Counter)]) -> Vec<u8> {
        let mut body = Vec::new();
        for (name, value) in entries {
            let name_off = ENTRY_HEADER;
            let mut name_bytes = name.as_bytes().to_vec();
            name_bytes.push(0);
            while !(name_off + name_bytes.len()).is_multiple_of(8) {
                name_bytes.push(0);
            }
            let data_off = name_off + name_bytes.len();
            let (kind, vector, data) = match value {
                Counter::Long(v) => (b'J', 0, v.to_le_bytes().to_vec()),
                Counter::Text(t) => {
                    let mut d = t.as_bytes().to_vec();
                    d.push(0);
                    (b'B', d.len() as i32, d)
                }
            };
            let len = data_off + data.len();
            body.extend((len as i32).to_le_bytes());
            body.extend((name_off as i32).to_le_bytes());
            body.extend(vector.to_le_bytes());
            body.extend([kind, 0, 1, 3]);
            body.extend((data_off as i32).to_le_bytes());
            body.extend(name_bytes);
            body.extend(data);
        }
        let mut out = MAGIC.to_be_bytes().to_vec();
        out.extend([1, 2, 0, 1]);
        out.extend(((PROLOGUE + body.len()) as i32).to_le_bytes());
        out.extend(0i32.to_le_bytes());
        out.extend(0i64.to_le_bytes());
        out.extend((PROLOGUE as i32).to_le_bytes());
        out.extend((entries.len() as i32).to_le_bytes());
        out.extend(body);
        out
    }

    fn long(n: &str, v: i64) -> (&str, Counter) {
        (n, Counter::Long(v))
    }

    #[test]
    fn counters_and_vitals_read_back() {
        let bytes = file(&[
            long("sun.os.hrt.frequency", 1_000_000_000),
            long("sun.os.hrt.ticks", 5_000_000_000),
            long("sun.gc.generation.0.space.0.used", 30),
            long("sun.gc.generation.0.space.0.capacity", 100),
            long("sun.gc.generation.1.space.0.used", 50),
            long("sun.gc.generation.0.capacity", 120),
            long("sun.gc.generation.1.capacity", 200),
            (
                "sun.gc.collector.0.name",
                Counter::Text("G1 Young Generation".into()),
            ),
            long("sun.gc.collector.0.invocations", 7),
            long("sun.gc.collector.0.time", 250_000_000),
            long("java.threads.live", 12),
            long("java.threads.daemon", 10),
        ]);
        let c = decode(&bytes).expect("decodes");
        assert_eq!(c.long("java.threads.live"), Some(12));
        let v = Vitals::from(&c, 0);
        assert_eq!(v.uptime, 5.0);
        assert_eq!(
            v.heap,
            Area {
                used: 80,
                committed: 320
            }
        );
        assert_eq!(v.spaces[0].1.pct(), 30.0);
        assert_eq!(v.collectors[0].name, "G1 Young Generation");
        assert_eq!(v.collectors[0].secs, 0.25);
        assert_eq!(v.threads_daemon, 10);
    }

    #[test]
    fn without_a_running_clock_uptime_comes_from_the_start_time() {
        let c = decode(&file(&[long("sun.rt.createVmBeginTime", 1_000)])).expect("decodes");
        assert_eq!(Vitals::from(&c, 3_500).uptime, 2.5);
    }

    #[test]
    fn rates_need_time_to_pass() {
        let a = Vitals {
            uptime: 10.0,
            compilations: 100,
            ..Vitals::default()
        };
        let b = Vitals {
            uptime: 12.0,
            compilations: 110,
            ..Vitals::default()
        };
        assert_eq!(b.rates_since(&a).map(|r| r.compilations), Some(5.0));
        assert_eq!(a.rates_since(&b), None);
    }

    #[test]
    fn bad_files_are_errors() {
        assert_eq!(decode(&[0; 4]), Err(PerfDataError::Short(4)));
        assert!(matches!(decode(&[0; 40]), Err(PerfDataError::Magic(0))));
        let mut bytes = file(&[long("a", 1)]);
        bytes.truncate(bytes.len() - 4);
        assert!(decode(&bytes).is_err());
    }

    proptest! {
        #[test]
        fn never_panics(bytes in proptest::collection::vec(any::<u8>(), 0..512)) {
            let _ = decode(&bytes);
        }

        #[test]
        fn never_panics_on_a_damaged_real_shape(flip in 0usize..200, to in any::<u8>()) {
            let mut bytes = file(&[long("sun.os.hrt.ticks", 9), ("x", Counter::Text("yz".into()))]);
            let i = flip % bytes.len();
            bytes[i] = to;
            let _ = decode(&bytes);
        }
    }
}
