//! `cargo xtask`: the project's chores that are not the server itself.
//!
//! - `cargo xtask setup` installs or locates everything jvmscope's tests
//!   need on a Debian-like machine (JDK 17, Temurin 25, Debian's framework
//!   jars, libpython3.11 and the rotel collector), prints what it found,
//!   and fails naming each part it could not have. `--check` only looks.
//! - `cargo xtask check-install` runs `cargo install --path .` into a
//!   temporary root and checks that the installed binary answers MCP
//!   `initialize` over stdio.
//!
//! Standard library only, so it builds in seconds on a fresh machine.

mod install;
mod setup;
mod system;

use std::process::ExitCode;

const USAGE: &str = "\
usage: cargo xtask <task>

tasks:
  setup [--check]   install or locate what the tests need (JDK 17, Temurin 25,
                    Debian's framework jars, libpython3.11, rotel); --check
                    only looks and installs nothing
  check-install     `cargo install --locked --path .` into a temporary root,
                    then check the binary answers MCP initialize over stdio
";

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let outcome = match args.as_slice() {
        ["setup"] => setup::run(setup::Mode::Install),
        ["setup", "--check"] => setup::run(setup::Mode::Check),
        ["check-install"] => install::run(),
        ["help" | "--help" | "-h"] => {
            print!("{USAGE}");
            return ExitCode::SUCCESS;
        }
        _ => {
            eprint!("{USAGE}");
            return ExitCode::from(2);
        }
    };
    match outcome {
        Ok(()) => ExitCode::SUCCESS,
        Err(why) => {
            eprintln!("\nxtask: FAILED: {why}");
            ExitCode::FAILURE
        }
    }
}
