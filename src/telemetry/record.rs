//! The compact form of a finished span, as the bridge hands it to the
//! export queue: ids as plain integers, times as nanoseconds since the Unix
//! epoch, short strings stored inline, and the attributes already in
//! their protobuf form (`otlp::Attributes`: recording one writes its bytes
//! once). `otlp` encodes a batch of these straight into an OTLP request.

use std::fmt;

use super::otlp::Attributes;

/// Longest string kept inline in an attribute value, without a heap
/// allocation. JDWP span values (`jdwp`, `VirtualMachine`,
/// `ThreadReference.Frames`, `127.0.0.1`, error names) fit.
pub const INLINE: usize = 30;

/// A string that lives inline when short and on the heap otherwise.
#[derive(Clone, PartialEq, Eq)]
pub enum Text {
    Inline { len: u8, bytes: [u8; INLINE] },
    Heap(Box<str>),
}

impl Text {
    /// Copies `s` (inline when it fits).
    pub fn new(s: &str) -> Self {
        if s.len() <= INLINE {
            let mut bytes = [0u8; INLINE];
            bytes[..s.len()].copy_from_slice(s.as_bytes());
            Text::Inline {
                len: s.len() as u8,
                bytes,
            }
        } else {
            Text::Heap(s.into())
        }
    }

    /// `a` followed by `b`, without formatting (inline when it fits).
    pub fn joined(a: &str, b: &str) -> Self {
        let len = a.len() + b.len();
        if len <= INLINE {
            let mut bytes = [0u8; INLINE];
            bytes[..a.len()].copy_from_slice(a.as_bytes());
            bytes[a.len()..len].copy_from_slice(b.as_bytes());
            Text::Inline {
                len: len as u8,
                bytes,
            }
        } else {
            let mut s = String::with_capacity(len);
            s.push_str(a);
            s.push_str(b);
            Text::Heap(s.into_boxed_str())
        }
    }

    /// Formats `value` with `Debug` (as `tracing` hands `%`/`?` fields
    /// over), inline when the text fits.
    pub fn debug(value: &dyn fmt::Debug) -> Self {
        let mut w = TextWriter::default();
        if fmt::write(&mut w, format_args!("{value:?}")).is_err() {
            return Text::new("");
        }
        w.finish()
    }

    /// The UTF-8 bytes, without checking them again (the encoder's view).
    pub fn as_bytes(&self) -> &[u8] {
        match self {
            Text::Inline { len, bytes } => &bytes[..*len as usize],
            Text::Heap(s) => s.as_bytes(),
        }
    }

    pub fn as_str(&self) -> &str {
        match self {
            // Only ever filled from whole `&str`s or whole `write_str` calls.
            Text::Inline { len, bytes } => {
                std::str::from_utf8(&bytes[..*len as usize]).unwrap_or_default()
            }
            Text::Heap(s) => s,
        }
    }
}

impl fmt::Debug for Text {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self.as_str(), f)
    }
}

impl From<String> for Text {
    fn from(s: String) -> Self {
        if s.len() <= INLINE {
            Text::new(&s)
        } else {
            Text::Heap(s.into_boxed_str())
        }
    }
}

/// Collects formatted text inline until it no longer fits.
#[derive(Default)]
struct TextWriter {
    len: usize,
    bytes: [u8; INLINE],
    spilled: Option<String>,
}

impl TextWriter {
    fn finish(self) -> Text {
        match self.spilled {
            Some(s) => Text::Heap(s.into_boxed_str()),
            None => Text::Inline {
                len: self.len as u8,
                bytes: self.bytes,
            },
        }
    }
}

impl fmt::Write for TextWriter {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        if let Some(spilled) = &mut self.spilled {
            spilled.push_str(s);
        } else if self.len + s.len() <= INLINE {
            self.bytes[self.len..self.len + s.len()].copy_from_slice(s.as_bytes());
            self.len += s.len();
        } else {
            let mut spilled = String::with_capacity(self.len + s.len() + 16);
            spilled.push_str(std::str::from_utf8(&self.bytes[..self.len]).unwrap_or_default());
            spilled.push_str(s);
            self.spilled = Some(spilled);
        }
        Ok(())
    }
}

/// An attribute value, typed as OTLP's `AnyValue` keeps it.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    Str(Text),
    Int(i64),
    Double(f64),
    Bool(bool),
}

/// OTLP's span kinds, by their protobuf numbers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum Kind {
    Internal = 1,
    Server = 2,
    Client = 3,
    Producer = 4,
    Consumer = 5,
}

impl Kind {
    /// `otel.kind`'s values, any case.
    pub fn parse(value: &str) -> Option<Kind> {
        const KINDS: [(&str, Kind); 5] = [
            ("server", Kind::Server),
            ("client", Kind::Client),
            ("producer", Kind::Producer),
            ("consumer", Kind::Consumer),
            ("internal", Kind::Internal),
        ];
        KINDS
            .iter()
            .find(|(name, _)| name.eq_ignore_ascii_case(value))
            .map(|(_, kind)| *kind)
    }
}

/// A span's status, by OTLP's status codes.
#[derive(Debug, Clone, PartialEq, Default)]
pub enum Status {
    #[default]
    Unset,
    Ok,
    Error(String),
}

/// A span event (a log line inside a sampled span).
#[derive(Debug, Clone, PartialEq)]
pub struct EventRecord {
    pub time_ns: u64,
    pub name: String,
    pub attributes: Attributes,
}

/// A finished span.
#[derive(Debug, Clone, PartialEq)]
pub struct SpanRecord {
    pub trace_id: u128,
    pub span_id: u64,
    /// 0 for a root.
    pub parent_span_id: u64,
    pub name: Text,
    pub kind: Kind,
    pub status: Status,
    pub start_ns: u64,
    pub end_ns: u64,
    pub attributes: Attributes,
    pub events: Vec<EventRecord>,
}

/// Nanoseconds since the Unix epoch, now.
pub fn now_ns() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos() as u64)
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_text_is_inline_and_long_text_is_kept_whole() {
        let short = Text::new("ThreadReference.Frames");
        assert!(matches!(short, Text::Inline { .. }));
        assert_eq!(short.as_str(), "ThreadReference.Frames");
        let long = "x".repeat(INLINE + 1);
        assert_eq!(Text::new(&long).as_str(), long);
        assert_eq!(Text::from(long.clone()).as_str(), long);
        let joined = Text::joined("jdwp ", "ThreadReference.Frames");
        assert!(matches!(joined, Text::Inline { .. }));
        assert_eq!(joined.as_str(), "jdwp ThreadReference.Frames");
        let long = Text::joined("jdwp ", "VirtualMachine.ClassesBySignature");
        assert_eq!(long.as_str(), "jdwp VirtualMachine.ClassesBySignature");
        let formatted = Text::debug(&format_args!("jdwp {}", "VirtualMachine.Version"));
        assert_eq!(formatted.as_str(), "jdwp VirtualMachine.Version");
        let spilled = Text::debug(&format_args!("{} {}", "a".repeat(20), "b".repeat(20)));
        assert_eq!(
            spilled.as_str(),
            format!("{} {}", "a".repeat(20), "b".repeat(20))
        );
        assert!(matches!(spilled, Text::Heap(_)));
    }

    #[test]
    fn kinds_parse_in_any_case() {
        assert_eq!(Kind::parse("SERVER"), Some(Kind::Server));
        assert_eq!(Kind::parse("client"), Some(Kind::Client));
        assert_eq!(Kind::parse("sideways"), None);
    }
}
