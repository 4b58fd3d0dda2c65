//! The machine's own tools as the xtask uses them: a command whose output
//! is read, programs on `PATH`, and Debian's apt, run as root or through
//! passwordless `sudo` (a developer's machine), never asking for input.

use std::ffi::OsStr;
use std::path::PathBuf;
use std::process::{Command, Stdio};

/// What a finished command printed, standard output then standard error.
pub struct Output {
    pub ok: bool,
    pub text: String,
}

/// Runs `program args…` with no input and reads what it prints; `None`
/// when it cannot be started at all (not installed).
pub fn capture(program: impl AsRef<OsStr>, args: &[&str]) -> Option<Output> {
    let out = Command::new(program)
        .args(args)
        .stdin(Stdio::null())
        .output()
        .ok()?;
    let mut text = String::from_utf8_lossy(&out.stdout).into_owned();
    text.push_str(&String::from_utf8_lossy(&out.stderr));
    Some(Output {
        ok: out.status.success(),
        text,
    })
}

/// The first line of `text` that has anything on it, trimmed.
pub fn first_line(text: &str) -> &str {
    text.lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .unwrap_or("")
}

/// `program` in a directory of `PATH`, if there is one.
pub fn on_path(program: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|dir| dir.join(program))
        .find(|candidate| candidate.is_file())
}

/// Whether this process runs as root (its effective user id is 0).
pub fn is_root() -> bool {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("Uid:"))
        .and_then(|ids| ids.split_whitespace().nth(1))
        .is_some_and(|euid| euid == "0")
}

/// Debian's package manager, updated at most once per run.
#[derive(Default)]
pub struct Apt {
    updated: bool,
}

impl Apt {
    /// `apt-get` as root, or through `sudo -n` when that needs no
    /// password; otherwise why neither can be had.
    fn apt_get(&self) -> Result<Command, String> {
        if on_path("apt-get").is_none() {
            return Err("this machine has no apt-get (the set-up knows Debian and Ubuntu)".into());
        }
        let mut cmd = if is_root() {
            Command::new("apt-get")
        } else if capture("sudo", &["-n", "true"]).is_some_and(|o| o.ok) {
            let mut sudo = Command::new("sudo");
            sudo.args(["-n", "env", "DEBIAN_FRONTEND=noninteractive", "apt-get"]);
            sudo
        } else {
            return Err("installing needs root, and `sudo -n` asks for a password here".into());
        };
        cmd.env("DEBIAN_FRONTEND", "noninteractive")
            .stdin(Stdio::null());
        Ok(cmd)
    }

    fn update(&mut self) -> Result<(), String> {
        if self.updated {
            return Ok(());
        }
        println!("  .. apt-get update");
        let status = self
            .apt_get()?
            .args(["update", "-q"])
            .status()
            .map_err(|e| format!("apt-get update did not start: {e}"))?;
        if !status.success() {
            return Err(format!("apt-get update failed ({status})"));
        }
        self.updated = true;
        Ok(())
    }

    /// Installs `packages`; the error names every one of them and the
    /// command that would install them.
    pub fn install(&mut self, packages: &[&str]) -> Result<(), String> {
        let list = packages.join(" ");
        let named = |why: String| format!("{why}; as root: apt-get install -y {list}");
        self.update().map_err(named)?;
        println!("  .. apt-get install {list}");
        let status = self
            .apt_get()
            .map_err(named)?
            .args(["install", "-y", "-q", "--no-upgrade"])
            .args(packages)
            .status()
            .map_err(|e| named(format!("apt-get did not start: {e}")))?;
        if status.success() {
            Ok(())
        } else {
            Err(named(format!("apt-get install failed ({status})")))
        }
    }

    /// The version of `package` the machine's package sources offer, if
    /// any (after refreshing the lists, which needs root or sudo).
    pub fn candidate(&mut self, package: &str) -> Result<Option<String>, String> {
        self.update()?;
        let out = capture("apt-cache", &["policy", package]).ok_or("apt-cache did not start")?;
        Ok(out
            .text
            .lines()
            .find_map(|l| l.trim().strip_prefix("Candidate:"))
            .map(str::trim)
            .filter(|v| !v.is_empty() && *v != "(none)")
            .map(str::to_string))
    }
}
