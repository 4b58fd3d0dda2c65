//! Group sessions in words: `debug_attach {targets}` opens one, and the
//! session tools name its members. How a tool runs across a group is
//! `fan_out`'s business.

use futures::future::join_all;

use super::fan_out::label;
use super::{Ctx, Reply};
use crate::actors::{Group, GroupError};
use crate::mcp::error::ToolError;
use crate::model::AttachSpec;

/// `host:port` (an IPv6 host in brackets) as a host and a port.
pub fn target(t: &str) -> Option<(String, u16)> {
    let (host, port) = t.trim().rsplit_once(':')?;
    let port = port.parse::<u16>().ok().filter(|p| *p != 0)?;
    let host = host.trim_start_matches('[').trim_end_matches(']');
    (!host.is_empty()).then(|| (host.to_string(), port))
}

/// The members, labelled: `s1 127.0.0.1:5005 pid 41, s2 …`.
pub fn members_line(g: &Group) -> String {
    g.members.iter().map(label).collect::<Vec<_>>().join(", ")
}

/// debug_list_sessions' lines for the groups: `* g1 group: s1 …`.
pub fn listed(ctx: &Ctx, current: Option<&crate::model::SessionId>) -> Vec<String> {
    ctx.engine
        .groups()
        .iter()
        .map(|g| {
            let mark = if current == Some(&g.id) { "*" } else { " " };
            format!("{mark} {} group: {}", g.id, members_line(g))
        })
        .collect()
}

/// Attaches every target concurrently; the reply names each member,
/// each target that did not answer (with why) and each given twice.
pub async fn attach(ctx: &Ctx, specs: Vec<AttachSpec>) -> Reply {
    let asked = specs.len();
    let opened = ctx.engine.attach_group(specs).await.map_err(refused)?;
    let g = &opened.group;
    let asked = asked - opened.duplicates.len();
    let members = join_all(g.members.iter().map(|m| async move {
        let reply = super::session::opened(&m.session, "Attached", m.pid, None).await;
        format!(
            "=== {} ===\n{}",
            label(m),
            super::fan_out::texts(&reply.content)
        )
    }))
    .await;
    let mut out = format!(
        "Attached group {} ({} member{} of {asked} target{}; it is the current session)",
        g.id,
        g.members.len(),
        if g.members.len() == 1 { "" } else { "s" },
        if asked == 1 { "" } else { "s" },
    );
    for (addr, e) in &opened.failed {
        let e = ToolError::from(e.clone());
        out.push_str(&format!(
            "\nNOT ATTACHED {addr}: [{}] {}",
            e.label, e.message
        ));
    }
    for addr in &opened.duplicates {
        out.push_str(&format!(
            "\nDUPLICATE {addr}: given more than once, attached once"
        ));
    }
    for m in members {
        out.push('\n');
        out.push_str(&m);
    }
    out.push_str(&format!(
        "\nNext: debug_set_stop, debug_get_traces, debug_list_stop_points, debug_thread_dump, \
         debug_heap, debug_hot_threads, debug_profile and debug_disconnect act on every member \
         of {}; other tools take one member's session_id",
        g.id
    ));
    Ok(super::text(out))
}

fn refused(e: GroupError) -> ToolError {
    match e {
        GroupError::TooMany { .. } => ToolError::new("GROUP_TOO_LARGE", e.to_string())
            .next("split the targets into several groups"),
        GroupError::Empty => ToolError::new("BAD_ARGUMENT", e.to_string()),
        GroupError::NoneAttached { failed } => {
            let why: Vec<String> = failed
                .into_iter()
                .map(|(addr, e)| {
                    let e = ToolError::from(e);
                    format!("{addr}: [{}] {}", e.label, e.message)
                })
                .collect();
            ToolError::new(
                "ATTACH_FAILED",
                format!("no target of the group answered:\n{}", why.join("\n")),
            )
            .next("debug_list_jvms shows the local JVMs and their JDWP ports")
        }
    }
}

#[cfg(test)]
mod tests {
    use super::target;

    #[test]
    fn targets_are_host_colon_port() {
        assert_eq!(target("127.0.0.1:5005"), Some(("127.0.0.1".into(), 5005)));
        assert_eq!(target("[::1]:5005"), Some(("::1".into(), 5005)));
        assert_eq!(target(" box:1 "), Some(("box".into(), 1)));
        for bad in ["5005", ":5005", "h:0", "h:99999", "h:x", ""] {
            assert_eq!(target(bad), None, "{bad:?}");
        }
    }
}
