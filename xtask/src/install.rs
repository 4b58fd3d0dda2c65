//! `cargo xtask check-install`: `cargo install --locked --path .` into a
//! temporary root (built in the workspace's `target/`, so a later
//! `cargo run --release` reuses it), then the installed binary is started
//! as an MCP client would start it and must answer `initialize` on stdout
//! with its name and version. Prints the binary's size and the build time.

use std::ffi::OsStr;
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// How long the installed server may take to answer `initialize`.
const ANSWER_TIMEOUT: Duration = Duration::from_secs(30);

/// The package name and version the binary must report (the workspace's
/// main package, read from its manifest).
struct Expected {
    name: String,
    version: String,
}

/// A temporary directory removed when dropped.
struct TempRoot(PathBuf);

impl Drop for TempRoot {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

pub fn run() -> Result<(), String> {
    let workspace = workspace_root();
    let expected = expected(&workspace)?;
    let root = TempRoot(std::env::temp_dir().join(format!(
        "{}-install-{}",
        expected.name,
        std::process::id()
    )));
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    println!(
        "check-install: cargo install --locked --path . --root {}",
        root.0.display()
    );
    let started = Instant::now();
    let mut install = Command::new(&cargo);
    as_from_a_shell(&mut install, &cargo, &workspace);
    let status = install
        .args(["install", "--locked", "--path", "."])
        .arg("--root")
        .arg(&root.0)
        .current_dir(&workspace)
        .stdin(Stdio::null())
        .status()
        .map_err(|e| format!("cargo install did not start: {e}"))?;
    let took = started.elapsed();
    if !status.success() {
        return Err(format!("cargo install --path . failed ({status})"));
    }
    let binary = root.0.join("bin").join(&expected.name);
    let size = std::fs::metadata(&binary)
        .map_err(|e| format!("no installed binary at {}: {e}", binary.display()))?
        .len();
    let answered = initialize(&binary)?;
    if answered.name != expected.name || answered.version != expected.version {
        return Err(format!(
            "the installed binary answered initialize as {} {}, not {} {}",
            answered.name, answered.version, expected.name, expected.version
        ));
    }
    println!(
        "check-install: the installed {} ({size} bytes) answered initialize as {} {}; \
         build and install took {:.0} s",
        binary.display(),
        answered.name,
        answered.version,
        took.as_secs_f64()
    );
    Ok(())
}

/// Undoes what `cargo run` added to this process's environment, so the
/// install sees the environment the user's shell gave `cargo xtask`: build
/// scripts that watch a variable (ring's watches `CARGO_MANIFEST_DIR`)
/// would otherwise rebuild, and a later `cargo run --release` would
/// rebuild them back.
fn as_from_a_shell(cmd: &mut Command, cargo: &OsStr, workspace: &Path) {
    for (name, _) in std::env::vars_os() {
        let name_str = name.to_string_lossy();
        if name_str.starts_with("CARGO_PKG_")
            || [
                "CARGO",
                "CARGO_MANIFEST_DIR",
                "CARGO_MANIFEST_PATH",
                "CARGO_CRATE_NAME",
            ]
            .contains(&name_str.as_ref())
        {
            cmd.env_remove(&name);
        }
    }
    // cargo prepends the target directory and the toolchain's libraries.
    let toolchain_lib = Path::new(cargo)
        .parent()
        .and_then(Path::parent)
        .map(|sysroot| sysroot.join("lib"));
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| workspace.join("target"));
    if let Some(paths) = std::env::var_os("LD_LIBRARY_PATH") {
        let kept: Vec<PathBuf> = std::env::split_paths(&paths)
            .filter(|p| {
                !p.starts_with(&target)
                    && !toolchain_lib
                        .as_ref()
                        .is_some_and(|lib| p == lib || p.starts_with(lib.join("rustlib")))
            })
            .collect();
        match std::env::join_paths(&kept) {
            Ok(joined) if !kept.is_empty() => cmd.env("LD_LIBRARY_PATH", joined),
            _ => cmd.env_remove("LD_LIBRARY_PATH"),
        };
    }
}

/// The workspace root: the directory above this crate's.
fn workspace_root() -> PathBuf {
    let xtask = Path::new(env!("CARGO_MANIFEST_DIR"));
    xtask.parent().unwrap_or(xtask).to_path_buf()
}

/// `name` and `version` of the `[package]` table of the root manifest; a
/// field the package inherits (`version.workspace = true`) is read from
/// `[workspace.package]`.
fn expected(workspace: &Path) -> Result<Expected, String> {
    let manifest = workspace.join("Cargo.toml");
    let text = std::fs::read_to_string(&manifest)
        .map_err(|e| format!("cannot read {}: {e}", manifest.display()))?;
    let field = |key: &str| {
        let package = table(&text, "[package]");
        let inherited = value(&package, &format!("{key}.workspace")).as_deref() == Some("true");
        let found = if inherited {
            value(&table(&text, "[workspace.package]"), key)
        } else {
            value(&package, key)
        };
        found.ok_or_else(|| format!("{} has no package {key}", manifest.display()))
    };
    Ok(Expected {
        name: field("name")?,
        version: field("version")?,
    })
}

/// The value of `key = "…"` among `lines`.
fn value(lines: &str, key: &str) -> Option<String> {
    lines.lines().find_map(|l| {
        let (k, v) = l.split_once('=')?;
        (k.trim() == key).then(|| v.trim().trim_matches('"').to_string())
    })
}

/// The lines of the manifest's table headed `header`.
fn table(manifest: &str, header: &str) -> String {
    manifest
        .lines()
        .skip_while(|l| l.trim() != header)
        .skip(1)
        .take_while(|l| !l.trim_start().starts_with('['))
        .collect::<Vec<_>>()
        .join("\n")
}

/// What a server said about itself in its `initialize` result.
struct ServerInfo {
    name: String,
    version: String,
}

/// Starts `binary` with piped stdio, sends one `initialize` request and
/// reads the reply line; the server is killed afterwards.
fn initialize(binary: &Path) -> Result<ServerInfo, String> {
    let mut child = Command::new(binary)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| format!("cannot start {}: {e}", binary.display()))?;
    let request = concat!(
        r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"#,
        r#""protocolVersion":"2025-06-18","capabilities":{},"#,
        r#""clientInfo":{"name":"xtask-check-install","version":"0"}}}"#,
        "\n"
    );
    let mut stdin = child.stdin.take().ok_or("no stdin pipe")?;
    let stdout = child.stdout.take().ok_or("no stdout pipe")?;
    let sent = stdin
        .write_all(request.as_bytes())
        .and_then(|()| stdin.flush());
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let mut line = String::new();
        let read = BufReader::new(stdout).read_line(&mut line);
        let _ = tx.send(read.map(|_| line));
    });
    let reply = rx.recv_timeout(ANSWER_TIMEOUT);
    let _ = child.kill();
    let _ = child.wait();
    drop(stdin);
    sent.map_err(|e| format!("cannot send initialize: {e}"))?;
    let line = match reply {
        Ok(Ok(line)) if !line.trim().is_empty() => line,
        Ok(Ok(_)) => return Err("the server closed stdout without answering initialize".into()),
        Ok(Err(e)) => return Err(format!("reading the initialize reply: {e}")),
        Err(_) => return Err(format!("no initialize reply within {ANSWER_TIMEOUT:?}")),
    };
    server_info(&line).ok_or_else(|| format!("not an initialize result with serverInfo: {line}"))
}

/// `result.serverInfo.{name,version}` of a compact JSON-RPC reply to id 1.
fn server_info(line: &str) -> Option<ServerInfo> {
    let line = line.trim();
    if !line.contains(r#""jsonrpc":"2.0""#) || !line.contains(r#""id":1"#) {
        return None;
    }
    let result = &line[line.find(r#""result":{"#)?..];
    let info = &result[result.find(r#""serverInfo":{"#)?..];
    let info = &info[..info.find('}')?];
    let string = |key: &str| {
        let start = info.find(&format!(r#""{key}":""#))? + key.len() + 4;
        let len = info[start..].find('"')?;
        Some(info[start..start + len].to_string())
    };
    Some(ServerInfo {
        name: string("name")?,
        version: string("version")?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_server_info_from_a_compact_reply() {
        let reply = r#"{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-06-18","capabilities":{"tools":{}},"serverInfo":{"name":"jvmscope","version":"0.1.0","title":"x"},"instructions":"hi"}}"#;
        let info = server_info(reply).expect("a server info");
        assert_eq!(
            (info.name.as_str(), info.version.as_str()),
            ("jvmscope", "0.1.0")
        );
        assert!(server_info(r#"{"jsonrpc":"2.0","id":1,"error":{"code":-1}}"#).is_none());
    }

    #[test]
    fn reads_the_package_table_only() {
        let manifest = "[package]\nname = \"jvmscope\"\nversion = \"0.1.0\"\n\n[dependencies]\nname = \"other\"\n";
        let e = expected_from(manifest);
        assert_eq!((e.0.as_str(), e.1.as_str()), ("jvmscope", "0.1.0"));
    }

    #[test]
    fn reads_a_version_the_package_inherits_from_the_workspace() {
        let manifest = "[workspace.package]\nversion = \"0.2.0\"\n\n[package]\nname = \"jvmscope\"\nversion.workspace = true\n";
        let e = expected_from(manifest);
        assert_eq!((e.0.as_str(), e.1.as_str()), ("jvmscope", "0.2.0"));
    }

    fn expected_from(manifest: &str) -> (String, String) {
        // Tests run in parallel: each manifest gets its own directory.
        static N: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        let n = N.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        let dir = std::env::temp_dir().join(format!("xtask-manifest-{}-{n}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("temp dir");
        std::fs::write(dir.join("Cargo.toml"), manifest).expect("manifest");
        let e = expected(&dir).expect("name and version");
        let _ = std::fs::remove_dir_all(&dir);
        (e.name, e.version)
    }
}
