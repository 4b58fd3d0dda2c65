//! debug_list_members and debug_list_instances against
//! real JVMs through the real binary: a generic class, an inner class and a
//! class loaded by two class loaders, rendered as Java source; instance
//! counts of three types in one call matching what the fixture printed;
//! and nothing left suspended.

use std::time::Duration;

use serde_json::json;

use crate::dump::attached;
use crate::support::java::{Jvm, JvmOpts};
use crate::support::mcp::Server;
use crate::support::text::number_after;

/// The members a listing shows, one Java source line each (indented).
fn sources(text: &str) -> Vec<String> {
    text.lines()
        .filter_map(|l| l.strip_prefix("  "))
        .map(String::from)
        .collect()
}

/// The class-loader copies a listing names (`Plugin@0x…`).
fn copies(text: &str) -> Vec<String> {
    text.split_once(" class-loader copies, each with its own statics: ")
        .and_then(|(_, rest)| rest.split_once(". This is "))
        .map(|(list, _)| list.split(", ").map(String::from).collect())
        .unwrap_or_default()
}

#[test]
fn members_of_a_generic_and_an_inner_class_read_as_java_and_instances_are_counted() {
    let jvm = Jvm::start("Shapes", JvmOpts::default());
    let counts = jvm.wait_for_line("counts ", Duration::from_secs(10));
    let server = attached(&jvm);

    let methods = server
        .call(
            "debug_list_members",
            json!({"kind": "methods", "class_name": "Box"}),
        )
        .expect_ok();
    let m = sources(&methods.text);
    let has = |want: &str| m.iter().any(|l| l == want);
    assert!(
        methods
            .text
            .starts_with("class Box<T extends java.lang.Comparable<T>>"),
        "{}",
        methods.text
    );
    assert!(has("Box(T content)"), "{}", methods.text);
    assert!(has("public T content()"), "{}", methods.text);
    assert!(
        has("public static <U extends java.lang.Comparable<U>> Box<U> of(U value, int copies)"),
        "{}",
        methods.text
    );
    // JDWP carries no throws clause unless the generic signature names one.
    assert!(
        has(
            "public <R> java.util.List<R> mapAll(java.util.function.Function<? super T, ? extends R> f, R... extra)"
        ),
        "{}",
        methods.text
    );
    assert!(
        has("public int compareTo(Box<T> other)"),
        "{}",
        methods.text
    );
    // The bridge compareTo(Object) is compiler-made and left out, said so.
    assert!(methods.text.contains("compiler-made"), "{}", methods.text);
    assert!(
        !m.iter().any(|l| l.contains("<clinit>")),
        "{}",
        methods.text
    );

    // Inherited members name their origin.
    let inherited = server
        .call(
            "debug_list_members",
            json!({"kind": "methods", "class_name": "Box", "inherited": true, "name_filter": "compareTo"}),
        )
        .expect_ok();
    assert!(
        inherited
            .text
            .contains("from interface java.lang.Comparable:"),
        "{}",
        inherited.text
    );
    // Under that origin, its compareTo.
    let origin = inherited
        .text
        .split_once("from interface java.lang.Comparable:\n")
        .map(|(_, rest)| rest.lines().next().unwrap_or(""))
        .unwrap_or("");
    assert!(
        origin.starts_with("  ") && origin.contains("compareTo("),
        "{}",
        inherited.text
    );

    fields_of_box(&server);
    inner_class(&server);
    // A class not loaded points at debug_list_classes.
    let missing = server
        .call(
            "debug_list_members",
            json!({"kind": "methods", "class_name": "NoSuchThing"}),
        )
        .expect_tool_error();
    assert!(missing.text.contains("[NOT_LOADED]"), "{}", missing.text);
    assert!(
        missing.text.contains("debug_list_classes"),
        "{}",
        missing.text
    );

    three_types_in_one_walk(&server, &counts);
    crate::dump::assert_none_suspended(&server);
}

/// Box's fields: statics first, generic types, modifiers.
fn fields_of_box(server: &Server) {
    let fields = server
        .call(
            "debug_list_members",
            json!({"kind": "fields", "class_name": "Box"}),
        )
        .expect_ok();
    let f = sources(&fields.text);
    assert_eq!(
        f.first().map(String::as_str),
        Some("public static final java.lang.String KIND"),
        "{}",
        fields.text
    );
    assert!(
        f.contains(&"private static int made".to_string()),
        "{}",
        fields.text
    );
    assert!(
        f.contains(&"private final T content".to_string()),
        "{}",
        fields.text
    );
    assert!(
        f.contains(
            &"protected volatile java.util.Map<java.lang.String, java.util.List<T>> index"
                .to_string()
        ),
        "{}",
        fields.text
    );
}

#[test]
fn copies_from_two_class_loaders_are_named_and_one_can_be_pinned() {
    let jvm = Jvm::start("TwoLoaders", JvmOpts::default());
    jvm.wait_for_line("two loaders ready", Duration::from_secs(10));
    let server = attached(&jvm);
    let classes = server
        .call("debug_list_classes", json!({"filter": "Plugin"}))
        .expect_ok();
    assert!(
        classes.text.contains("Plugin (2 copies"),
        "{}",
        classes.text
    );

    let fields = server
        .call(
            "debug_list_members",
            json!({"kind": "fields", "class_name": "Plugin"}),
        )
        .expect_ok();
    let copies = copies(&fields.text);
    assert_eq!(copies.len(), 2, "{}", fields.text);
    assert!(
        copies.iter().all(|c| c.starts_with("Plugin@0x")),
        "{copies:?}"
    );
    assert!(
        fields.text.contains("2 class-loader copies"),
        "{}",
        fields.text
    );
    assert_eq!(
        sources(&fields.text),
        ["public static java.lang.String NAME"]
    );
    // Pin the second copy by its loader.
    let pinned = server
        .call(
            "debug_list_members",
            json!({"kind": "methods", "class_name": copies[1]}),
        )
        .expect_ok();
    assert!(
        pinned.text.contains(&format!(". This is {};", copies[1])),
        "{}",
        pinned.text
    );
    assert!(
        sources(&pinned.text).contains(&"public Plugin()".to_string()),
        "{}",
        pinned.text
    );
    let wrong = server
        .call(
            "debug_list_members",
            json!({"kind": "methods", "class_name": "Plugin@0x1"}),
        )
        .expect_tool_error();
    assert!(wrong.text.contains("[NO_SUCH_COPY]"), "{}", wrong.text);
    assert!(wrong.text.contains(&copies[0]), "{}", wrong.text);
    // Both copies are counted, each on its own.
    let instances = server
        .call(
            "debug_list_instances",
            json!({"class_names": ["Plugin", "TwoLoaders"]}),
        )
        .expect_ok();
    let rows = instances
        .text
        .lines()
        .filter(|l| l.starts_with("  Plugin") || l.starts_with("  TwoLoaders"))
        .count();
    assert_eq!(rows, 3, "{}", instances.text);
    crate::dump::assert_none_suspended(&server);
}

/// An inner class: its constructor takes the outer instance first.
fn inner_class(server: &Server) {
    let lid = server
        .call(
            "debug_list_members",
            json!({"kind": "methods", "class_name": "Box$Lid"}),
        )
        .expect_ok();
    let l = sources(&lid.text);
    assert!(
        l.iter()
            .any(|s| s.starts_with("Box$Lid(Box") && s.ends_with("int size)")),
        "{}",
        lid.text
    );
    assert!(l.contains(&"T owner()".to_string()), "{}", lid.text);
    let lid_fields = server
        .call(
            "debug_list_members",
            json!({"kind": "fields", "class_name": "Box$Lid"}),
        )
        .expect_ok();
    assert!(
        sources(&lid_fields.text).contains(&"final int size".to_string()),
        "{}",
        lid_fields.text
    );
}

/// Three types in one walk: exactly the counts the fixture printed.
fn three_types_in_one_walk(server: &Server, counts: &str) {
    let instances = server
        .call(
            "debug_list_instances",
            json!({"class_names": ["Box", "Box$Lid", "Widget"], "max_instances": 4}),
        )
        .expect_ok();
    let text = &instances.text;
    for (class, want) in [
        ("Box", "Box="),
        ("Box$Lid", "Box$Lid="),
        ("Widget", "Widget="),
    ] {
        let printed: i64 = counts
            .split_whitespace()
            .find_map(|w| w.strip_prefix(want))
            .and_then(|n| n.parse().ok())
            .expect("the fixture printed its count");
        let row = text
            .lines()
            .find_map(|l| l.strip_prefix(&format!("  {class}: ")))
            .unwrap_or_else(|| panic!("{class}: {text}"));
        assert_eq!(
            number_after(row, "").map(|n| n as i64),
            Some(printed),
            "{text}"
        );
        let handles = row
            .split_whitespace()
            .filter(|w| w.starts_with("@0x"))
            .count();
        assert_eq!(handles as i64, printed.min(4), "{text}");
    }
    assert!(text.contains("(4 heap walks in all"), "{text}");
    assert!(
        instances.text.contains("exact type only"),
        "{}",
        instances.text
    );
    assert!(
        instances.text.contains("Stop-the-world"),
        "{}",
        instances.text
    );
    assert!(
        number_after(text, "paused its threads for ").is_some(),
        "{text}"
    );
}
