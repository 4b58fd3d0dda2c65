//! The execution samples of a flight recording, read from `jfr print
//! --json` as the tool writes them: the events array is walked one event
//! at a time (a two-minute recording prints hundreds of MB of JSON), only
//! the sampled thread's name and each frame's class and method are kept,
//! and each sample goes straight into the profile. The JDK's own reader
//! understands every recording format it can write, so jvmscope parses no
//! JFR chunk itself.

use std::fmt;
use std::io::Read;

use serde::Deserialize;
use serde::de::{self, DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};

use crate::model::profile::{Profile, method_label};

/// One `jdk.ExecutionSample`, as much of it as the profile needs.
#[derive(Deserialize)]
struct Event {
    #[serde(rename = "type", default)]
    kind: String,
    #[serde(default)]
    values: Option<Values>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Values {
    #[serde(default)]
    sampled_thread: Option<JThread>,
    #[serde(default)]
    stack_trace: Option<JStack>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct JThread {
    #[serde(default)]
    java_name: Option<String>,
    #[serde(default)]
    os_name: Option<String>,
}

#[derive(Deserialize)]
struct JStack {
    #[serde(default)]
    truncated: bool,
    #[serde(default)]
    frames: Vec<JFrame>,
}

#[derive(Deserialize)]
struct JFrame {
    #[serde(default)]
    method: Option<JMethod>,
}

#[derive(Deserialize)]
struct JMethod {
    #[serde(rename = "type", default)]
    class: Option<JType>,
    #[serde(default)]
    name: String,
}

#[derive(Deserialize)]
struct JType {
    #[serde(default)]
    name: String,
}

/// What reading stopped on.
#[derive(Debug)]
pub enum DecodeError {
    /// `go_on` answered false.
    Stopped,
    /// The text is not the JSON `jfr print --json` writes.
    Json(String),
}

/// Reads every execution sample of `input` into `profile`; `go_on` is
/// asked before each event (false ends the read: the call was cancelled).
/// Returns the number of execution samples read.
pub fn read_samples(
    input: impl Read,
    profile: &mut Profile,
    go_on: &mut dyn FnMut() -> bool,
) -> Result<u64, DecodeError> {
    let mut de = serde_json::Deserializer::from_reader(std::io::BufReader::new(input));
    let mut sink = Sink {
        profile,
        go_on,
        read: 0,
        stopped: false,
    };
    let outcome = Nested(&["recording", "events"], &mut sink).deserialize(&mut de);
    match outcome {
        Ok(()) => Ok(sink.read),
        Err(_) if sink.stopped => Err(DecodeError::Stopped),
        Err(e) => Err(DecodeError::Json(e.to_string())),
    }
}

struct Sink<'a> {
    profile: &'a mut Profile,
    go_on: &'a mut dyn FnMut() -> bool,
    read: u64,
    stopped: bool,
}

impl Sink<'_> {
    fn take(&mut self, event: Event) {
        if event.kind != "jdk.ExecutionSample" {
            return;
        }
        let Some(values) = event.values else { return };
        let thread = values
            .sampled_thread
            .and_then(|t| t.java_name.or(t.os_name))
            .unwrap_or_else(|| "?".into());
        let (frames, truncated) = match values.stack_trace {
            Some(s) => (s.frames, s.truncated),
            None => (Vec::new(), false),
        };
        let labels = frames
            .into_iter()
            .filter_map(|f| f.method)
            .map(|m| {
                let class = m.class.map(|c| c.name).unwrap_or_default();
                method_label(&class, &m.name)
            })
            .collect();
        self.read += 1;
        self.profile.add(&thread, labels, truncated);
    }
}

/// Descends through the objects named by `path` to the events array.
struct Nested<'p, 's, 'a>(&'p [&'static str], &'s mut Sink<'a>);

impl<'de> DeserializeSeed<'de> for Nested<'_, '_, '_> {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        match self.0.split_first() {
            Some(_) => d.deserialize_map(self),
            None => d.deserialize_seq(Events(self.1)),
        }
    }
}

impl<'de> Visitor<'de> for Nested<'_, '_, '_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        write!(f, "an object with {:?}", self.0.first())
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let Some((want, rest)) = self.0.split_first() else {
            return Err(de::Error::custom("no key left to look for"));
        };
        let sink = self.1;
        while let Some(key) = map.next_key::<String>()? {
            if key == *want {
                map.next_value_seed(Nested(rest, sink))?;
                // What follows the events is ignored.
                while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
                return Ok(());
            }
            map.next_value::<IgnoredAny>()?;
        }
        Ok(())
    }
}

struct Events<'s, 'a>(&'s mut Sink<'a>);

impl<'de> Visitor<'de> for Events<'_, '_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("an array of events")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        loop {
            if !(self.0.go_on)() {
                self.0.stopped = true;
                return Err(de::Error::custom("stopped"));
            }
            match seq.next_element::<Event>()? {
                Some(e) => self.0.take(e),
                None => return Ok(()),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const TWO: &str = r#"{
      "recording": {
        "events": [{
          "type": "jdk.ExecutionSample",
          "values": {
            "startTime": "2026-12-07T05:35:55.725594290Z",
            "sampledThread": {"osName": "busy-spinner-wo", "javaName": "busy-spinner-worker", "group": {"name": "main"}},
            "stackTrace": {"truncated": false, "frames": [
              {"method": {"type": {"classLoader": {"name": "app"}, "name": "Spinner", "package": null},
                          "name": "burn", "descriptor": "(J)J"}, "lineNumber": 11, "type": "JIT compiled"},
              {"method": {"type": {"name": "java/lang/Thread"}, "name": "run"}, "lineNumber": 833}
            ]},
            "state": "STATE_RUNNABLE"
          }
        }, {
          "type": "jdk.ExecutionSample",
          "values": {"sampledThread": {"osName": "main"}, "stackTrace": {"truncated": true, "frames": [
              {"method": {"type": {"name": "Main"}, "name": "main"}}]}}
        }, {"type": "jdk.CPULoad", "values": {}}]
      },
      "trailing": [1, 2]
    }"#;

    #[test]
    fn samples_stream_into_the_profile() {
        let mut p = Profile::default();
        let n = read_samples(TWO.as_bytes(), &mut p, &mut || true).expect("reads");
        assert_eq!(n, 2);
        assert_eq!(p.total(), 2);
        assert_eq!(p.truncated, 1);
        let stacks = p.stacks();
        assert!(
            stacks
                .iter()
                .any(|s| s.frames == ["java.lang.Thread.run", "Spinner.burn"]),
            "{stacks:?}"
        );
        let threads: Vec<String> = p.threads().into_iter().map(|t| t.thread).collect();
        assert!(threads.contains(&"busy-spinner-worker".to_string()));
        assert!(threads.contains(&"main".to_string()));
    }

    #[test]
    fn a_stop_and_garbage_are_told_apart() {
        let mut p = Profile::default();
        let stopped = read_samples(TWO.as_bytes(), &mut p, &mut || false);
        assert!(matches!(stopped, Err(DecodeError::Stopped)));
        for bad in [
            "",
            "[]",
            "{\"recording\": {\"events\": 3}}",
            "{\"recording\": {\"events\": [{",
        ] {
            let r = read_samples(bad.as_bytes(), &mut Profile::default(), &mut || true);
            assert!(matches!(r, Err(DecodeError::Json(_))), "{bad}: {r:?}");
        }
        // No events array at all is an empty recording, not an error.
        let empty = read_samples("{\"recording\": {}}".as_bytes(), &mut p, &mut || true);
        assert_eq!(empty.ok(), Some(0));
    }
}
