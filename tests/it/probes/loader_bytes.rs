//! A probe armed with no class root reads its class's bytes through the
//! class's own loader, and hands its helper the JVM's copy of them (not a
//! second one sent back over the wire): after a SIGKILL of jvmscope, the
//! next attach restores exactly the class file from that copy.

use std::path::PathBuf;

use serde_json::json;

use super::{LEDGER, WAIT, attach_on, instrumented, line_probe, load, server};

fn a_probe_armed_without_class_roots_is_restored_from_the_loaders_bytes(java_home: PathBuf) {
    let jvm = load(Some(java_home));
    let doomed = server();
    attach_on(&doomed, jvm.port(), json!({"class_roots": []}));
    line_probe(&doomed, "amountCents < 0");
    assert!(instrumented(&doomed, LEDGER));
    doomed.kill();
    let next = server();
    let reply = attach_on(
        &next,
        jvm.listening_port(2, WAIT),
        json!({"class_roots": []}),
    );
    assert!(
        reply.text.contains(&format!("RESTORED: {LEDGER}")),
        "{}",
        reply.text
    );
    assert!(!instrumented(&next, LEDGER), "the class file's own bytes");
    assert!(jvm.is_alive());
}

crate::support::on_both_jdks! {
    a_probe_armed_without_class_roots_is_restored_from_the_loaders_bytes:
        a_probe_armed_without_class_roots_is_restored_from_the_loaders_bytes_jdk17,
        a_probe_armed_without_class_roots_is_restored_from_the_loaders_bytes_temurin25;
}
