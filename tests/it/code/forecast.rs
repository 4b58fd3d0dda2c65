//! A redefinition forecast against the very build that runs: a sealed
//! interface and its permitted class forecast nothing (HotSpot compares
//! the PermittedSubclasses it keeps, and they are equal), on JDK 17 and
//! Temurin 25, with and without debug information. A class file just
//! installed by debug_reload_class compares identical to the JVM.

use std::path::PathBuf;

use serde_json::json;

use super::{
    Scratch, WAIT, attached, body_edit, build, dir, edit, moved_line, started_swap, swap_source,
};
use crate::support::java::{Jvm, JvmOpts};

fn sealed_source() -> String {
    edit(
        &swap_source(),
        "public class Swap {\n",
        "public class Swap {\n    sealed interface Shape permits Circle {}\n    static final class Circle implements Shape {}\n    static final Shape SHAPE = new Circle();\n",
    )
}

fn unchanged_sealed_types_forecast_nothing(java_home: Option<PathBuf>, flags: &[&str]) {
    let scratch = Scratch::new("sealed");
    let classes = build(&scratch, "s", &sealed_source(), flags);
    let jvm = Jvm::start(
        "Swap",
        JvmOpts {
            java_home,
            classpath: Some(classes.clone()),
            ..JvmOpts::default()
        },
    );
    jvm.wait_for_line("swap v1 14 h", WAIT);
    let server = attached(&jvm, json!({}));
    for class in ["Swap$Shape", "Swap$Circle", "Swap"] {
        let reply = server
            .call(
                "debug_check_stale",
                json!({"class_name": class, "class_roots": [dir(&classes)], "bytecode": true}),
            )
            .expect_ok();
        assert!(!reply.text.contains("REFUSED"), "{class}: {}", reply.text);
        assert!(!reply.text.contains("STALE"), "{class}: {}", reply.text);
    }
}

#[test]
fn an_unchanged_sealed_hierarchy_forecasts_no_refusal() {
    unchanged_sealed_types_forecast_nothing(None, &["-g"]);
    unchanged_sealed_types_forecast_nothing(None, &["-g:none"]);
}

#[test]
fn an_unchanged_sealed_hierarchy_forecasts_no_refusal_on_temurin_25() {
    let home = crate::support::java::temurin25_required();
    unchanged_sealed_types_forecast_nothing(Some(home.clone()), &["-g"]);
    unchanged_sealed_types_forecast_nothing(Some(home), &["-g:none"]);
}

/// HotSpot merges the constant pools of the old and new class when it
/// redefines one, so the code it then reports names its constants by other
/// indices than the file it came from: compared by what each index names,
/// the file just installed is the code that runs.
#[test]
fn the_class_file_just_installed_compares_identical() {
    let scratch = Scratch::new("installed");
    let jvm = started_swap(JvmOpts::default());
    let server = attached(&jvm, json!({}));
    for (name, text) in [
        ("b", body_edit(&swap_source())),
        ("a", moved_line(&swap_source())),
    ] {
        let classes = build(&scratch, name, &text, &["-g"]);
        server
            .call(
                "debug_reload_class",
                json!({"class_name": "Swap", "class_roots": [dir(&classes)]}),
            )
            .expect_ok();
        let reply = server
            .call(
                "debug_check_stale",
                json!({"class_name": "Swap", "class_roots": [dir(&classes)], "bytecode": true}),
            )
            .expect_ok();
        assert!(!reply.text.contains("STALE"), "{name}: {}", reply.text);
        assert!(
            reply.text.contains("Bytecode: identical"),
            "{name}: {}",
            reply.text
        );
    }
}
