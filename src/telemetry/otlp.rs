//! Encodes a batch of [`SpanRecord`]s as the protobuf bytes of one OTLP
//! `ExportTraceServiceRequest` (opentelemetry-proto's
//! `collector/trace/v1`), by hand: one resource, one instrumentation scope,
//! the spans, attributes as `AnyValue` strings, integers, doubles and
//! booleans. The resource and the scope are encoded once, when export
//! starts. Sizes are computed before bytes are written, so each message is
//! written once, straight into the output buffer, with no intermediate
//! structs. Tests decode the bytes with the `opentelemetry-proto` types.

use super::record::{EventRecord, SpanRecord, Status, Value};

// Wire types.
const VARINT: u8 = 0;
const FIXED64: u8 = 1;
const LEN: u8 = 2;
const FIXED32: u8 = 5;

/// `SpanFlags`: the W3C sampled flag, and "we know whether the parent is
/// remote" (it never is: no context comes in from outside).
const SPAN_FLAGS: u32 = 0x01 | 0x100;

fn varint_len(mut v: u64) -> usize {
    let mut n = 1;
    while v >= 0x80 {
        v >>= 7;
        n += 1;
    }
    n
}

fn put_varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// A field's key: one byte for fields 1–15, two from 16 on.
fn put_key(out: &mut Vec<u8>, field: u8, wire: u8) {
    put_varint(out, (u64::from(field) << 3) | u64::from(wire));
}

/// Size of a length-delimited field whose content is `len` bytes.
fn len_field(len: usize) -> usize {
    1 + varint_len(len as u64) + len
}

fn put_len(out: &mut Vec<u8>, field: u8, len: usize) {
    put_key(out, field, LEN);
    put_varint(out, len as u64);
}

fn put_bytes(out: &mut Vec<u8>, field: u8, bytes: &[u8]) {
    put_len(out, field, bytes.len());
    out.extend_from_slice(bytes);
}

fn put_fixed64(out: &mut Vec<u8>, field: u8, v: u64) {
    put_key(out, field, FIXED64);
    out.extend_from_slice(&v.to_le_bytes());
}

fn any_value_len(v: &Value) -> usize {
    match v {
        Value::Str(s) => len_field(s.as_bytes().len()),
        Value::Int(i) => 1 + varint_len(*i as u64),
        Value::Double(_) => 9,
        Value::Bool(_) => 2,
    }
}

fn put_any_value(out: &mut Vec<u8>, v: &Value) {
    match v {
        Value::Str(s) => put_bytes(out, 1, s.as_bytes()),
        Value::Bool(b) => {
            put_key(out, 2, VARINT);
            out.push(u8::from(*b));
        }
        Value::Int(i) => {
            put_key(out, 3, VARINT);
            put_varint(out, *i as u64);
        }
        Value::Double(d) => put_fixed64(out, 4, d.to_bits()),
    }
}

fn key_value_len(key: &str, value: &Value) -> usize {
    len_field(key.len()) + len_field(any_value_len(value))
}

/// A `KeyValue` as field `field` of its parent.
fn put_key_value(out: &mut Vec<u8>, field: u8, key: &str, value: &Value) {
    put_len(out, field, key_value_len(key, value));
    put_bytes(out, 1, key.as_bytes());
    put_len(out, 2, any_value_len(value));
    put_any_value(out, value);
}

/// Keys and string values this short take the stack path of
/// [`Attributes::push_str`]: every length of the `KeyValue` then fits in
/// one varint byte (2 + 40 + 2 + 2 + 60 < 128).
const SHORT_KEY: usize = 40;
const SHORT_STR: usize = 60;

/// Writes `v` as a varint at `buf[at..]`; returns the end.
fn varint_at(buf: &mut [u8], mut at: usize, mut v: u64) -> usize {
    while v >= 0x80 {
        buf[at] = (v as u8) | 0x80;
        v >>= 7;
        at += 1;
    }
    buf[at] = v as u8;
    at + 1
}

/// `Span.attributes` and `Event.attributes`.
const SPAN_ATTRIBUTES: u8 = 9;
const EVENT_ATTRIBUTES: u8 = 3;

/// Attributes already in their wire form: `KeyValue` fields, each tagged
/// with the field number of the message they belong in. Recording an
/// attribute writes its bytes once; the batch encoder copies the run
/// whole.
#[derive(Debug, Clone, PartialEq)]
pub struct Attributes {
    field: u8,
    bytes: Vec<u8>,
}

impl Attributes {
    /// A span's attributes, room for about `expected` of them.
    pub fn for_span(expected: usize) -> Self {
        Self {
            field: SPAN_ATTRIBUTES,
            bytes: Vec::with_capacity(expected * 32),
        }
    }

    /// An event's attributes.
    pub fn for_event() -> Self {
        Self {
            field: EVENT_ATTRIBUTES,
            bytes: Vec::new(),
        }
    }

    /// Appends a string attribute (`value` is UTF-8).
    pub fn push_str(&mut self, key: &str, value: &[u8]) {
        // The usual case, a short key and value, is assembled on the stack
        // and copied once: every length then fits in one byte.
        if key.len() <= SHORT_KEY && value.len() <= SHORT_STR {
            let mut buf = [0u8; 8 + SHORT_KEY + SHORT_STR];
            let mut at = self.short_head(&mut buf, key, 2 + value.len());
            buf[at] = (1 << 3) | LEN; // AnyValue.string_value
            buf[at + 1] = value.len() as u8;
            buf[at + 2..at + 2 + value.len()].copy_from_slice(value);
            at += 2 + value.len();
            self.bytes.extend_from_slice(&buf[..at]);
            return;
        }
        let any = len_field(value.len());
        let out = &mut self.bytes;
        put_len(out, self.field, len_field(key.len()) + len_field(any));
        put_bytes(out, 1, key.as_bytes());
        put_len(out, 2, any);
        put_bytes(out, 1, value);
    }

    /// Appends an integer attribute.
    pub fn push_int(&mut self, key: &str, value: i64) {
        if key.len() <= SHORT_KEY {
            let v = value as u64;
            let mut buf = [0u8; 8 + SHORT_KEY + 11];
            let mut at = self.short_head(&mut buf, key, 1 + varint_len(v));
            buf[at] = (3 << 3) | VARINT; // AnyValue.int_value
            at = varint_at(&mut buf, at + 1, v);
            self.bytes.extend_from_slice(&buf[..at]);
        } else {
            self.push(key, &Value::Int(value));
        }
    }

    /// Writes a short `KeyValue`'s head into `buf`: its tag and length,
    /// the key, and the value's tag and length (`any` bytes follow).
    /// Returns where the value's content goes.
    fn short_head(&self, buf: &mut [u8], key: &str, any: usize) -> usize {
        let kv = 2 + key.len() + 2 + any;
        buf[0] = (self.field << 3) | LEN;
        buf[1] = kv as u8;
        buf[2] = (1 << 3) | LEN; // KeyValue.key
        buf[3] = key.len() as u8;
        buf[4..4 + key.len()].copy_from_slice(key.as_bytes());
        let at = 4 + key.len();
        buf[at] = (2 << 3) | LEN; // KeyValue.value
        buf[at + 1] = any as u8;
        at + 2
    }

    /// Appends an attribute of any type.
    pub fn push(&mut self, key: &str, value: &Value) {
        put_key_value(&mut self.bytes, self.field, key, value);
    }

    /// The encoded `KeyValue` fields.
    pub fn as_bytes(&self) -> &[u8] {
        &self.bytes
    }

    /// The attributes decoded again with the `opentelemetry-proto` types.
    #[cfg(test)]
    pub fn decoded(&self) -> Vec<(String, Value)> {
        use opentelemetry_proto::tonic::trace::v1::{Span, span::Event};
        use prost::Message;
        let kvs = if self.field == SPAN_ATTRIBUTES {
            Span::decode(self.bytes.as_slice()).map(|s| s.attributes)
        } else {
            Event::decode(self.bytes.as_slice()).map(|e| e.attributes)
        }
        .unwrap_or_else(|e| panic!("attributes do not decode: {e}"));
        kvs.into_iter()
            .map(|kv| (kv.key, tests::decoded_value(&kv.value)))
            .collect()
    }
}

fn event_len(e: &EventRecord) -> usize {
    9 + if e.name.is_empty() {
        0
    } else {
        len_field(e.name.len())
    } + e.attributes.as_bytes().len()
}

fn status_len(s: &Status) -> usize {
    match s {
        Status::Unset => 0,
        Status::Ok => 2,
        Status::Error(message) if message.is_empty() => 2,
        Status::Error(message) => 2 + len_field(message.len()),
    }
}

/// The size of one `Span` message's content.
fn span_len(s: &SpanRecord) -> usize {
    let mut n = len_field(16) + len_field(8); // trace_id, span_id
    if s.parent_span_id != 0 {
        n += len_field(8);
    }
    n += len_field(s.name.as_bytes().len());
    n += 2; // kind
    n += 9 + 9; // start, end
    n += s.attributes.as_bytes().len();
    n += s
        .events
        .iter()
        .map(|e| len_field(event_len(e)))
        .sum::<usize>();
    let status = status_len(&s.status);
    if status > 0 {
        n += len_field(status);
    }
    n + 2 + 4 // flags: field 16 takes a two-byte key
}

fn put_span(out: &mut Vec<u8>, s: &SpanRecord, len: usize) {
    put_len(out, 2, len); // ScopeSpans.spans
    let body = out.len();
    put_bytes(out, 1, &s.trace_id.to_be_bytes());
    put_bytes(out, 2, &s.span_id.to_be_bytes());
    if s.parent_span_id != 0 {
        put_bytes(out, 4, &s.parent_span_id.to_be_bytes());
    }
    put_bytes(out, 5, s.name.as_bytes());
    put_key(out, 6, VARINT);
    out.push(s.kind as u8);
    put_fixed64(out, 7, s.start_ns);
    put_fixed64(out, 8, s.end_ns);
    out.extend_from_slice(s.attributes.as_bytes());
    for e in &s.events {
        put_len(out, 11, event_len(e));
        put_fixed64(out, 1, e.time_ns);
        if !e.name.is_empty() {
            put_bytes(out, 2, e.name.as_bytes());
        }
        out.extend_from_slice(e.attributes.as_bytes());
    }
    let status = status_len(&s.status);
    if status > 0 {
        put_len(out, 15, status);
        let (code, message) = match &s.status {
            Status::Ok => (1, ""),
            Status::Error(m) => (2, m.as_str()),
            Status::Unset => (0, ""),
        };
        if !message.is_empty() {
            put_bytes(out, 2, message.as_bytes());
        }
        put_key(out, 3, VARINT);
        out.push(code);
    }
    put_key(out, 16, FIXED32);
    out.extend_from_slice(&SPAN_FLAGS.to_le_bytes());
    debug_assert_eq!(out.len() - body, len, "span size");
}

/// The parts of every request that do not change: the resource and the
/// instrumentation scope, encoded once.
#[derive(Debug, Clone)]
pub struct Encoder {
    /// `Resource` content (its attributes).
    resource: Vec<u8>,
    /// `InstrumentationScope` content.
    scope: Vec<u8>,
    /// Scratch: each span's size, computed before writing.
    sizes: Vec<usize>,
}

impl Encoder {
    /// `resource`: the resource attributes, in order. `scope`: the
    /// instrumentation scope's name and version.
    pub fn new(resource: &[(String, Value)], scope: (&str, &str)) -> Self {
        let mut res = Vec::new();
        for (key, value) in resource {
            put_key_value(&mut res, 1, key, value);
        }
        let mut sc = Vec::new();
        put_bytes(&mut sc, 1, scope.0.as_bytes());
        if !scope.1.is_empty() {
            put_bytes(&mut sc, 2, scope.1.as_bytes());
        }
        Self {
            resource: res,
            scope: sc,
            sizes: Vec::new(),
        }
    }

    /// Writes one `ExportTraceServiceRequest` holding `spans` into `out`
    /// (cleared first).
    pub fn encode(&mut self, spans: &[SpanRecord], out: &mut Vec<u8>) {
        out.clear();
        self.sizes.clear();
        self.sizes.extend(spans.iter().map(span_len));
        let spans_len: usize = self.sizes.iter().map(|&n| len_field(n)).sum();
        let scope_spans = len_field(self.scope.len()) + spans_len;
        let resource_spans = len_field(self.resource.len()) + len_field(scope_spans);
        out.reserve(len_field(resource_spans));
        put_len(out, 1, resource_spans); // ExportTraceServiceRequest.resource_spans
        put_bytes(out, 1, &self.resource); // ResourceSpans.resource
        put_len(out, 2, scope_spans); // ResourceSpans.scope_spans
        put_bytes(out, 1, &self.scope); // ScopeSpans.scope
        for (span, &len) in spans.iter().zip(&self.sizes) {
            put_span(out, span, len);
        }
    }
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;
    use crate::telemetry::record::{Kind, Text};
    use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
    use opentelemetry_proto::tonic::common::v1::any_value;
    use opentelemetry_proto::tonic::trace::v1::span::SpanKind;
    use opentelemetry_proto::tonic::trace::v1::status::StatusCode;
    use proptest::prelude::*;
    use prost::Message;

    const KEYS: [&str; 5] = [
        "rpc.method",
        "server.port",
        "jdwp.error",
        "a.flag",
        "a.key.longer.than.forty.bytes.takes.the.general.path",
    ];

    fn value() -> impl Strategy<Value = Value> {
        prop_oneof![
            ".{0,80}".prop_map(|s: String| Value::Str(Text::from(s))),
            any::<i64>().prop_map(Value::Int),
            any::<f64>()
                .prop_filter("NaN never equals itself", |d| !d.is_nan())
                .prop_map(Value::Double),
            any::<bool>().prop_map(Value::Bool),
        ]
    }

    fn attr_list() -> impl Strategy<Value = Vec<(String, Value)>> {
        prop::collection::vec(
            (0..KEYS.len(), value()).prop_map(|(k, value)| (KEYS[k].to_string(), value)),
            0..6,
        )
    }

    /// The attributes as the bridge records them: strings through
    /// `push_str`, the rest through `push`.
    fn encoded(mut into: Attributes, list: &[(String, Value)]) -> Attributes {
        for (key, value) in list {
            match value {
                Value::Str(s) => into.push_str(key, s.as_bytes()),
                Value::Int(i) => into.push_int(key, *i),
                other => into.push(key, other),
            }
        }
        into
    }

    fn status() -> impl Strategy<Value = Status> {
        prop_oneof![
            Just(Status::Unset),
            Just(Status::Ok),
            ".{0,20}".prop_map(Status::Error),
        ]
    }

    fn kind() -> impl Strategy<Value = Kind> {
        prop_oneof![
            Just(Kind::Internal),
            Just(Kind::Server),
            Just(Kind::Client),
            Just(Kind::Producer),
            Just(Kind::Consumer),
        ]
    }

    prop_compose! {
        fn span()(
            trace_id in any::<u128>(),
            span_id in 1..u64::MAX,
            parent_span_id in prop_oneof![Just(0u64), 1..u64::MAX],
            name in ".{0,60}",
            kind in kind(),
            status in status(),
            start_ns in any::<u64>(),
            end_ns in any::<u64>(),
            attributes in attr_list(),
            events in prop::collection::vec((any::<u64>(), ".{0,20}", attr_list()), 0..3),
        ) -> (SpanRecord, Vec<(String, Value)>, Vec<Vec<(String, Value)>>) {
            let record = SpanRecord {
                trace_id, span_id, parent_span_id, name: Text::from(name), kind, status,
                start_ns, end_ns,
                attributes: encoded(Attributes::for_span(4), &attributes),
                events: events.iter().map(|(time_ns, name, list)| EventRecord {
                    time_ns: *time_ns,
                    name: name.clone(),
                    attributes: encoded(Attributes::for_event(), list),
                }).collect(),
            };
            (record, attributes, events.into_iter().map(|(_, _, list)| list).collect())
        }
    }

    pub fn decoded_value(v: &Option<opentelemetry_proto::tonic::common::v1::AnyValue>) -> Value {
        match v.as_ref().and_then(|v| v.value.clone()) {
            Some(any_value::Value::StringValue(s)) => Value::Str(Text::from(s)),
            Some(any_value::Value::IntValue(i)) => Value::Int(i),
            Some(any_value::Value::DoubleValue(d)) => Value::Double(d),
            Some(any_value::Value::BoolValue(b)) => Value::Bool(b),
            // An empty string is the protobuf default: it decodes as "".
            None => Value::Str(Text::new("")),
            other => panic!("unexpected value {other:?}"),
        }
    }

    fn same_attrs(
        got: &[opentelemetry_proto::tonic::common::v1::KeyValue],
        want: &[(String, Value)],
    ) {
        assert_eq!(got.len(), want.len());
        for (g, (key, value)) in got.iter().zip(want) {
            assert_eq!(&g.key, key);
            assert_eq!(&decoded_value(&g.value), value, "{key}");
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(200))]

        #[test]
        fn every_batch_decodes_as_the_spans_it_was_made_of(
            spans in prop::collection::vec(span(), 0..8),
            service in "[a-z]{0,12}",
        ) {
            let resource = vec![
                ("service.name".to_string(), Value::Str(Text::from(service.clone()))),
                ("pid".to_string(), Value::Int(-7)),
            ];
            let mut encoder = Encoder::new(&resource, ("jvmscope", "0.1.0"));
            let mut bytes = Vec::new();
            let records: Vec<SpanRecord> = spans.iter().map(|(r, _, _)| r.clone()).collect();
            encoder.encode(&records, &mut bytes);
            let request = ExportTraceServiceRequest::decode(bytes.as_slice())
                .unwrap_or_else(|e| panic!("decode: {e}"));
            prop_assert_eq!(request.resource_spans.len(), 1);
            let rs = &request.resource_spans[0];
            let res = rs.resource.as_ref().unwrap_or_else(|| panic!("resource"));
            prop_assert_eq!(res.attributes.len(), 2);
            prop_assert_eq!(&res.attributes[0].key, "service.name");
            prop_assert_eq!(decoded_value(&res.attributes[0].value), resource[0].1.clone());
            prop_assert_eq!(decoded_value(&res.attributes[1].value), Value::Int(-7));
            prop_assert_eq!(rs.scope_spans.len(), 1);
            let ss = &rs.scope_spans[0];
            let scope = ss.scope.as_ref().unwrap_or_else(|| panic!("scope"));
            prop_assert_eq!(&scope.name, "jvmscope");
            prop_assert_eq!(&scope.version, "0.1.0");
            prop_assert_eq!(ss.spans.len(), spans.len());
            for (got, (want, want_attrs, want_events)) in ss.spans.iter().zip(&spans) {
                prop_assert_eq!(got.trace_id.clone(), want.trace_id.to_be_bytes().to_vec());
                prop_assert_eq!(got.span_id.clone(), want.span_id.to_be_bytes().to_vec());
                if want.parent_span_id == 0 {
                    prop_assert!(got.parent_span_id.is_empty());
                } else {
                    prop_assert_eq!(
                        got.parent_span_id.clone(),
                        want.parent_span_id.to_be_bytes().to_vec()
                    );
                }
                prop_assert_eq!(got.name.as_str(), want.name.as_str());
                prop_assert_eq!(got.kind, want.kind as i32);
                prop_assert_eq!(got.start_time_unix_nano, want.start_ns);
                prop_assert_eq!(got.end_time_unix_nano, want.end_ns);
                prop_assert_eq!(got.flags, 0x101);
                same_attrs(&got.attributes, want_attrs);
                prop_assert_eq!(got.events.len(), want.events.len());
                for ((ge, we), we_attrs) in got.events.iter().zip(&want.events).zip(want_events) {
                    prop_assert_eq!(ge.time_unix_nano, we.time_ns);
                    prop_assert_eq!(&ge.name, &we.name);
                    same_attrs(&ge.attributes, we_attrs);
                }
                let (code, message) = match &want.status {
                    Status::Unset => (StatusCode::Unset as i32, ""),
                    Status::Ok => (StatusCode::Ok as i32, ""),
                    Status::Error(m) => (StatusCode::Error as i32, m.as_str()),
                };
                let got_status = got.status.clone().unwrap_or_default();
                prop_assert_eq!(got_status.code, code);
                prop_assert_eq!(got_status.message.as_str(), message);
            }
        }
    }

    #[test]
    fn a_jdwp_span_decodes_with_integer_attributes_and_client_kind() {
        let span = SpanRecord {
            trace_id: 0x0102_0304_0506_0708_090a_0b0c_0d0e_0f10,
            span_id: 42,
            parent_span_id: 7,
            name: Text::new("jdwp VirtualMachine.Version"),
            kind: Kind::Client,
            status: Status::Error(String::new()),
            start_ns: 1_700_000_000_000_000_000,
            end_ns: 1_700_000_000_000_050_000,
            attributes: encoded(
                Attributes::for_span(2),
                &[
                    ("server.port".into(), Value::Int(5005)),
                    ("jdwp.error".into(), Value::Str(Text::new("TIMEOUT"))),
                ],
            ),
            events: Vec::new(),
        };
        let mut encoder = Encoder::new(&[], ("jvmscope", ""));
        let mut bytes = Vec::new();
        encoder.encode(std::slice::from_ref(&span), &mut bytes);
        let request = ExportTraceServiceRequest::decode(bytes.as_slice())
            .unwrap_or_else(|e| panic!("decode: {e}"));
        let got = &request.resource_spans[0].scope_spans[0].spans[0];
        assert_eq!(got.kind, SpanKind::Client as i32);
        assert_eq!(
            got.status.as_ref().map(|s| s.code),
            Some(StatusCode::Error as i32)
        );
        assert_eq!(
            got.attributes[0]
                .value
                .as_ref()
                .and_then(|v| v.value.clone()),
            Some(any_value::Value::IntValue(5005))
        );
        // The same bytes again after reuse of the encoder's scratch.
        let mut again = Vec::new();
        encoder.encode(std::slice::from_ref(&span), &mut again);
        assert_eq!(bytes, again);
    }
}
