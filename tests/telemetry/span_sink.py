"""Rotel trace processor for jvmscope's end-to-end telemetry check.

Rotel (the collector packaged on PyPI as `rotel`) runs this file inside its
embedded Python for every batch of spans it receives (flag
`--otlp-with-trace-processor`). Each span is appended as one JSON line to
the file named by JVMSCOPE_SPAN_SINK, with attribute types kept (an int
stays an int), so the Rust test can check the tree and the attributes the
collector really received. Spans pass through unchanged.
"""

import json
import os

SINK = os.environ.get("JVMSCOPE_SPAN_SINK", "")


def _value(any_value):
    """(type, value) of an OTLP AnyValue; bool is checked before int."""
    if any_value is None:
        return ("none", None)
    v = any_value.value
    if isinstance(v, bool):
        return ("bool", v)
    if isinstance(v, int):
        return ("int", v)
    if isinstance(v, float):
        return ("double", v)
    if isinstance(v, str):
        return ("string", v)
    return ("other", repr(v))


_NAMED = {
    "unset": 0, "ok": 1, "error": 2,
    "unspecified": 0, "internal": 1, "server": 2, "client": 3, "producer": 4, "consumer": 5,
}


def _number(x):
    """An enum field as its OTLP number, whether rotel hands an int or an enum."""
    if x is None:
        return 0
    try:
        return int(x)
    except (TypeError, ValueError):
        name = str(x).rsplit(".", 1)[-1].lower()
        for key, number in _NAMED.items():
            if name.endswith(key):
                return number
        return -1


def _attributes(key_values):
    out = []
    for kv in key_values:
        kind, value = _value(kv.value)
        out.append({"key": kv.key, "type": kind, "value": value})
    return out


def process_spans(resource_spans):
    if not SINK:
        return
    resource = []
    if resource_spans.resource is not None:
        resource = _attributes(resource_spans.resource.attributes)
    lines = []
    for scope_spans in resource_spans.scope_spans:
        scope = scope_spans.scope.name if scope_spans.scope is not None else ""
        for span in scope_spans.spans:
            status = _number(span.status.code) if span.status is not None else 0
            lines.append(
                json.dumps(
                    {
                        "trace_id": bytes(span.trace_id).hex(),
                        "span_id": bytes(span.span_id).hex(),
                        "parent_span_id": bytes(span.parent_span_id).hex(),
                        "name": span.name,
                        "start_time_unix_nano": int(span.start_time_unix_nano or 0),
                        "kind": _number(span.kind),
                        "status_code": status,
                        "attributes": _attributes(span.attributes),
                        "resource": resource,
                        "scope": scope,
                    }
                )
            )
    if lines:
        with open(SINK, "a", encoding="utf-8") as f:
            f.write("\n".join(lines) + "\n")
