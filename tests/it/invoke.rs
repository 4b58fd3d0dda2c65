//! Calling the application through the real binary against a real JVM
//! running real frameworks (Spring 4.3, EclipseLink over H2, from Debian's
//! jars): a Spring bean invoked with JSON arguments and its argument
//! template, the context's readiness and Environment keys, a JPA named
//! query, and `new` building the object a program was missing. One
//! fixture JVM serves each test (framework start-up is the slow part).

use std::time::Duration;

use serde_json::json;

use crate::support::frameworks;
use crate::support::java::{Jvm, line_of};
use crate::support::mcp::Server;
use crate::support::poll_until;

const READY: Duration = Duration::from_secs(60);

fn shop() -> (Jvm, Server) {
    let jvm = frameworks::start("Shop");
    jvm.wait_for_line("READY", READY);
    let server = Server::spawn();
    server.initialize();
    server
        .call("debug_attach", json!({"port": jvm.port()}))
        .expect_ok();
    (jvm, server)
}

#[test]
fn a_spring_bean_is_invoked_with_json_arguments_and_the_context_is_read() {
    let (_jvm, server) = shop();

    the_template_names_the_declared_types(&server);

    // No event holds a thread, so one is parked for the call: 30 × 2 less
    // 10 % plus the context's 20 % VAT from shop.properties.
    let r = server
        .call(
            "debug_invoke",
            json!({"bean": "pricingService", "method": "quote",
                   "args": ["P1", 2, {"discount": 10, "note": "gift"}]}),
        )
        .expect_ok();
    assert_eq!(returned(&r.text), "P1 x2 = 64.80 (gift)", "{}", r.text);
    assert!(r.text.contains("parked for the call"), "{}", r.text);
    assert!(r.text.contains("single-threaded"), "{}", r.text);

    // A whole number prefers widening to long over boxing, as Java does;
    // param_types picks the boxed one. Null fits two: ambiguous.
    let widened = server
        .call(
            "debug_invoke",
            json!({"bean_type": "PricingService", "method": "quote", "args": ["P2", 7]}),
        )
        .expect_ok();
    assert_eq!(returned(&widened.text), "7", "{}", widened.text);
    let typed = server
        .call(
            "debug_invoke",
            json!({"bean_type": "PricingService", "method": "quote", "args": ["P2", 7],
                   "param_types": ["String", "java.lang.Integer"]}),
        )
        .expect_ok();
    assert_eq!(returned(&typed.text), "1007", "{}", typed.text);
    let amb = server
        .call(
            "debug_invoke",
            json!({"bean": "pricingService", "method": "describe", "args": [null]}),
        )
        .expect_tool_error();
    assert!(amb.text.contains("[AMBIGUOUS_OVERLOAD]"), "{}", amb.text);
    assert!(
        amb.text.contains("describe(java.lang.String)")
            && amb.text.contains("describe(java.lang.Integer)"),
        "{}",
        amb.text
    );

    // Enums, Lists of boxes, primitive arrays, boxes and doubles; a static.
    let mixed = server
        .call(
            "debug_invoke",
            json!({"bean": "pricingService", "method": "tiers",
                   "args": ["GOLD", [1, 2, 3], [10, 20], 5, 0.5]}),
        )
        .expect_ok();
    assert_eq!(returned(&mixed.text), "GOLD:36:5:0.5", "{}", mixed.text);
    let stat = server
        .call(
            "debug_invoke",
            json!({"class": "PricingService", "method": "version"}),
        )
        .expect_ok();
    assert_eq!(returned(&stat.text), "pricing-1", "{}", stat.text);

    the_context_is_ready_and_resolves_keys(&server);

    // Past its budget the call is given up; the late return is undone and
    // the thread can be parked again once it comes.
    let late = server
        .call(
            "debug_invoke",
            json!({"class": "PricingService", "method": "slow", "args": [1500], "timeout_ms": 200}),
        )
        .expect_tool_error();
    assert!(late.text.contains("[INVOKE_TIMEOUT]"), "{}", late.text);
    poll_until(READY, || {
        let again = server.call(
            "debug_invoke",
            json!({"class": "PricingService", "method": "version"}),
        );
        (!again.is_error).then_some(())
    });

    // A missing bean names the ones there are.
    let missing = server
        .call(
            "debug_invoke",
            json!({"bean": "nope", "method": "quote", "args": []}),
        )
        .expect_tool_error();
    assert!(
        missing.text.contains("[NO_BEAN]") && missing.text.contains("pricingService"),
        "{}",
        missing.text
    );
}

/// The argument template of `quote`: names, declared types, placeholders.
fn the_template_names_the_declared_types(server: &Server) {
    // The template names the three declared types, generics included.
    let t = server
        .call(
            "debug_invoke",
            json!({"bean": "pricingService", "method": "quote", "template": true}),
        )
        .expect_ok();
    // One overload of three parameters: its types, names and placeholders.
    assert!(
        t.text.contains(
            "\n  params: java.lang.String sku, int quantity, \
             java.util.Map<java.lang.String, java.lang.Object> options\n"
        ),
        "{}",
        t.text
    );
    assert!(
        t.text
            .contains(&format!("\n  args: {}", json!(["", 0, {"": null}]))),
        "{}",
        t.text
    );
}

/// debug_spring: ready, beans by type, keys with their source, secrets masked.
fn the_context_is_ready_and_resolves_keys(server: &Server) {
    // The context: ready, beans by type, keys with their source, secrets masked.
    let s = server
        .call(
            "debug_spring",
            json!({"beans": "Service",
                   "keys": ["shop.vat.percent", "shop.db.password", "shop.missing"]}),
        )
        .expect_ok();
    let text = &s.text;
    assert!(
        text.contains(": READY (active, refresh finished)"),
        "{text}"
    );
    // One bean matches, by name and type.
    assert!(
        text.lines()
            .any(|l| l.starts_with("1 of ") && l.ends_with(" beans match:")),
        "{text}"
    );
    assert!(
        text.contains("\n  pricingService: PricingService\n"),
        "{text}"
    );
    assert!(
        text.contains("\nshop.vat.percent = \"20\" (from class path resource [shop.properties])"),
        "{text}"
    );
    assert!(
        text.lines().any(|l| l.starts_with("shop.db.password = ")
            && l.contains(" masked: the key names a secret")),
        "{text}"
    );
    assert!(!text.contains("hunter2"), "{text}");
    assert!(
        text.contains("\nshop.missing: not resolved by the Environment"),
        "{text}"
    );
}

#[test]
fn a_named_query_returns_the_known_rows_and_new_repairs_the_program() {
    let (jvm, server) = shop();

    let q = server
        .call(
            "debug_run_named_query",
            json!({"name": "Product.byCategory", "parameters": {"category": "kitchen"}}),
        )
        .expect_ok();
    let text = &q.text;
    assert!(text.starts_with("3 row(s) from "), "{text}");
    // Each row's fields, read without invoking, in the query's order.
    let at = |sku: &str| text.find(&format!("sku = {sku:?}"));
    let (p1, p2, p4) = (at("P1"), at("P2"), at("P4"));
    assert!(p1.is_some() && p1 < p2 && p2 < p4, "{text}");
    assert!(at("P3").is_none(), "{text}");
    assert!(
        text.lines()
            .any(|l| l.starts_with("[0] ") && l.contains("Product")),
        "{text}"
    );
    assert!(!text.contains("\n[3] "), "{text}");
    assert!(q.text.contains("sku = \"P1\""), "{}", q.text);
    assert!(
        q.text.contains(":category bound as java.lang.String"),
        "{}",
        q.text
    );
    assert!(q.text.contains("COMMIT"), "{}", q.text);

    // `new` at a stop point: checkout() then takes the coupon path.
    jvm.wait_for_line("PATH no coupon", READY);
    let line = line_of("../java-frameworks/Shop.java", "checkout");
    let bp = server
        .call(
            "debug_set_stop",
            json!({"kind": "line", "class_pattern": "Shop", "line": line}),
        )
        .expect_ok();
    let id = bp.json()["outcomes"][0]["id"]
        .as_str()
        .map(str::to_string)
        .unwrap_or_else(|| panic!("{}", bp.text));
    server
        .call("debug_wait_for_event", json!({"timeout_ms": 10000}))
        .expect_ok();
    // With a thread held by the stop point, calls run there; none is parked.
    let held = server
        .call(
            "debug_invoke",
            json!({"bean": "greeter", "method": "greet", "args": ["ann"]}),
        )
        .expect_ok();
    assert_eq!(returned(&held.text), "hello ann", "{}", held.text);
    assert!(
        held.text.contains("which an event had suspended")
            && !held.text.contains("parked for the call"),
        "{}",
        held.text
    );
    assert!(
        held.text.contains("which an event had suspended"),
        "{}",
        held.text
    );
    let set = server
        .call(
            "debug_set_value",
            json!({"target": "Shop.coupon", "value": "new Coupon(\"SAVE10\", 10)"}),
        )
        .expect_ok();
    assert!(set.text.contains("Coupon"), "{}", set.text);
    server
        .call(
            "debug_update_stop_point",
            json!({"kind": "clear", "id": id}),
        )
        .expect_ok();
    server.call("debug_continue", json!({})).expect_ok();
    jvm.wait_for_line("PATH coupon SAVE10 -10%", READY);
}

/// What a debug_invoke reply's first line says the call returned: its
/// toString, or its value when there is none.
fn returned(text: &str) -> String {
    let first = text.lines().next().unwrap_or("");
    let value = first
        .split_once(" returned ")
        .map(|(_, v)| v)
        .unwrap_or_else(|| panic!("no return value: {text}"));
    let value = value.rsplit_once(": ").map_or(value, |(_, v)| v);
    serde_json::from_str::<String>(value).unwrap_or_else(|_| value.to_string())
}
