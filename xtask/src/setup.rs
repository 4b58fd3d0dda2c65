//! `cargo xtask setup`: installs or locates what the tests need, prints
//! what it found, and fails naming each part it could not have. The tests
//! look for the same things in the same places: `tests/it/support/java.rs`
//! (JDK, Temurin 25), `frameworks.rs` (the jars), `otlp.rs` (rotel) and
//! `http.rs` (the MCP Python SDK that `tests/http/client.py` runs).

use std::path::{Path, PathBuf};

use crate::system::{Apt, capture, first_line, on_path};

/// Whether the set-up may install what is missing, or only looks.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    Install,
    Check,
}

/// Debian's package for the default JDK when none is found.
const JDK_PACKAGE: &str = "openjdk-17-jdk-headless";

/// The package a Temurin 25 JDK comes in, where a package source offers it.
const TEMURIN_PACKAGE: &str = "temurin-25-jdk";

/// Where Debian installs Java libraries.
const SHARE: &str = "/usr/share/java";

/// Each jar the framework fixtures need, with the Debian package that ships it
/// (the list of `tests/it/support/frameworks.rs`).
const JARS: &[(&str, &str)] = &[
    ("spring3-core.jar", "libspring-core-java"),
    ("spring3-beans.jar", "libspring-beans-java"),
    ("spring3-context.jar", "libspring-context-java"),
    ("spring3-aop.jar", "libspring-aop-java"),
    ("spring3-expression.jar", "libspring-expression-java"),
    ("commons-logging.jar", "libcommons-logging-java"),
    ("eclipselink.jar", "libeclipselink-java"),
    ("eclipselink-jpa-2.1-spec.jar", "libjpa-2.1-spec-java"),
    ("h2.jar", "libh2-java"),
];

/// The rotel collector release the telemetry test runs (from PyPI).
const ROTEL_VERSION: &str = "0.0.1a15";

/// The MCP Python SDK release the HTTP tests' client runs (from PyPI).
const MCP_SDK_VERSION: &str = "2.3.0";

/// The CPython library rotel's agent embeds.
const LIBPYTHON: &str = "libpython3.11.so.1.0";

/// Where the rotel agent sits inside its Python package (the lookup of
/// `tests/it/support/otlp.rs`).
const ROTEL_AGENT: &str =
    "import os, rotel; print(os.path.join(os.path.dirname(rotel.__file__), 'rotel-agent'))";

type Check = fn(&mut Setup) -> Result<String, String>;

struct Setup {
    mode: Mode,
    apt: Apt,
}

pub fn run(mode: Mode) -> Result<(), String> {
    println!(
        "setup: what jvmscope's tests need ({})",
        match mode {
            Mode::Install => "installing what is missing",
            Mode::Check => "looking only",
        }
    );
    let checks: [(&str, Check); 6] = [
        ("JDK 17+", Setup::jdk),
        ("Temurin 25", Setup::temurin25),
        ("framework jars", Setup::framework_jars),
        ("libpython3.11", Setup::libpython),
        ("rotel", Setup::rotel),
        ("MCP Python SDK", Setup::mcp_sdk),
    ];
    let mut setup = Setup {
        mode,
        apt: Apt::default(),
    };
    let mut missing = Vec::new();
    for (what, check) in checks {
        match check(&mut setup) {
            Ok(found) => println!("  ok       {what}: {found}"),
            Err(why) => {
                println!("  MISSING  {what}: {why}");
                missing.push(what);
            }
        }
    }
    if missing.is_empty() {
        println!("setup: everything the tests need is here");
        Ok(())
    } else {
        Err(format!(
            "the tests cannot run without {} (they never skip)",
            missing.join(", ")
        ))
    }
}

impl Setup {
    /// Installs `packages` in install mode; in check mode says which
    /// packages the install would bring.
    fn install(&mut self, packages: &[&str]) -> Result<(), String> {
        match self.mode {
            Mode::Install => self.apt.install(packages),
            Mode::Check => Err(format!(
                "`cargo xtask setup` installs {}",
                packages.join(" ")
            )),
        }
    }

    /// `javac` and `java` of one JDK 17 or newer, found as the tests find
    /// it (`$JAVA_HOME/bin/javac`, else `javac` on `PATH`).
    fn jdk(&mut self) -> Result<String, String> {
        if find_javac().is_none() {
            self.install(&[JDK_PACKAGE])
                .map_err(|why| format!("no javac in $JAVA_HOME/bin or on PATH; {why}"))?;
        }
        let javac = find_javac().ok_or("no javac in $JAVA_HOME/bin or on PATH")?;
        let out = capture(&javac, &["-version"])
            .filter(|o| o.ok)
            .ok_or_else(|| format!("{} -version failed", javac.display()))?;
        let version = first_line(&out.text).to_string();
        let major = version
            .split_whitespace()
            .nth(1)
            .and_then(|v| v.split('.').next())
            .and_then(|v| v.parse::<u32>().ok())
            .unwrap_or(0);
        if major < 17 {
            return Err(format!(
                "{} is `{version}`; the tests need 17 or newer (apt-get install {JDK_PACKAGE}, \
                 or point JAVA_HOME at one)",
                javac.display()
            ));
        }
        let java = javac.with_file_name("java");
        let runtime = capture(&java, &["-version"])
            .filter(|o| o.ok)
            .ok_or_else(|| format!("{} -version failed", java.display()))?;
        Ok(format!(
            "{version} ({}), {}",
            javac.display(),
            first_line(&runtime.text)
        ))
    }

    /// A JDK under `/usr/lib/jvm/*temurin-25*`.
    fn temurin25(&mut self) -> Result<String, String> {
        if find_temurin25().is_none() {
            let missing = "no JDK in /usr/lib/jvm/*temurin-25*";
            match self.mode {
                Mode::Check => return Err(format!("{missing}; it is not in Debian's archive")),
                Mode::Install => match self.apt.candidate(TEMURIN_PACKAGE) {
                    Ok(Some(_)) => self.apt.install(&[TEMURIN_PACKAGE])?,
                    Ok(None) => {
                        return Err(format!(
                            "{missing}, and this machine's package sources offer no \
                             {TEMURIN_PACKAGE} (Eclipse Adoptium's apt repository has it, \
                             or unpack a Temurin 25 JDK as /usr/lib/jvm/temurin-25-jdk-amd64)"
                        ));
                    }
                    Err(why) => {
                        return Err(format!("{missing}; looking for {TEMURIN_PACKAGE}: {why}"));
                    }
                },
            }
        }
        let home =
            find_temurin25().ok_or("no JDK in /usr/lib/jvm/*temurin-25* after the install")?;
        let java = home.join("bin/java");
        let out = capture(&java, &["-version"])
            .filter(|o| o.ok)
            .ok_or_else(|| format!("{} -version failed", java.display()))?;
        Ok(format!("{} ({})", home.display(), first_line(&out.text)))
    }

    /// Debian's Spring 4.3, EclipseLink, JPA 2.1, H2 and commons-logging jars.
    fn framework_jars(&mut self) -> Result<String, String> {
        let missing = missing_jars();
        if !missing.is_empty() {
            let packages: Vec<&str> = missing.iter().map(|(_, p)| *p).collect();
            self.install(&packages).map_err(|why| {
                let jars: Vec<&str> = missing.iter().map(|(j, _)| *j).collect();
                format!("{SHARE} lacks {}; {why}", jars.join(" "))
            })?;
        }
        let still: Vec<String> = missing_jars()
            .iter()
            .map(|(jar, package)| format!("{SHARE}/{jar} ({package})"))
            .collect();
        if !still.is_empty() {
            return Err(format!(
                "still missing after the install: {}",
                still.join(", ")
            ));
        }
        let versions: Vec<String> = ["libspring-core-java", "libeclipselink-java", "libh2-java"]
            .iter()
            .map(|p| format!("{p} {}", package_version(p)))
            .collect();
        Ok(format!(
            "{} jars in {SHARE}; {}",
            JARS.len(),
            versions.join(", ")
        ))
    }

    /// The CPython 3.11 shared library rotel's agent loads.
    fn libpython(&mut self) -> Result<String, String> {
        if find_libpython().is_none() {
            self.install(&["libpython3.11"])
                .map_err(|why| format!("{LIBPYTHON} is not in the linker cache; {why}"))?;
        }
        find_libpython()
            .map(|p| p.display().to_string())
            .ok_or_else(|| format!("{LIBPYTHON} is still not in the linker cache"))
    }

    /// The rotel collector from PyPI, with its agent binary working.
    fn rotel(&mut self) -> Result<String, String> {
        let python = on_path("python3").ok_or("python3 (with pip) is not on PATH")?;
        if rotel_version(&python).as_deref() != Some(ROTEL_VERSION) {
            match self.mode {
                Mode::Check => {
                    return Err(format!(
                        "rotel {ROTEL_VERSION} is not installed for {}; `cargo xtask setup` \
                         runs pip install rotel=={ROTEL_VERSION}",
                        python.display()
                    ));
                }
                Mode::Install => pip_install(&python, &format!("rotel=={ROTEL_VERSION}"))?,
            }
        }
        let version = rotel_version(&python)
            .ok_or_else(|| format!("rotel is not importable by {}", python.display()))?;
        let agent = capture(&python, &["-c", ROTEL_AGENT])
            .filter(|o| o.ok)
            .map(|o| PathBuf::from(o.text.trim()))
            .filter(|p| p.is_file())
            .ok_or("the rotel package has no rotel-agent binary")?;
        let out = capture(&agent, &["version"])
            .filter(|o| o.ok)
            .ok_or_else(|| format!("{} version failed (it needs {LIBPYTHON})", agent.display()))?;
        Ok(format!(
            "{version}, agent {} ({}); the tests find it through python3, or set ROTEL to it",
            agent.display(),
            first_line(&out.text)
        ))
    }
}

impl Setup {
    /// The official MCP Python SDK (`mcp` on PyPI), importable by the
    /// `python3` the HTTP tests run.
    fn mcp_sdk(&mut self) -> Result<String, String> {
        let python = on_path("python3").ok_or("python3 (with pip) is not on PATH")?;
        if python_package_version(&python, "mcp").as_deref() != Some(MCP_SDK_VERSION) {
            match self.mode {
                Mode::Check => {
                    return Err(format!(
                        "mcp {MCP_SDK_VERSION} is not installed for {}; `cargo xtask setup` \
                         runs pip install mcp=={MCP_SDK_VERSION}",
                        python.display()
                    ));
                }
                Mode::Install => pip_install(&python, &format!("mcp=={MCP_SDK_VERSION}"))?,
            }
        }
        let version = python_package_version(&python, "mcp")
            .ok_or_else(|| format!("mcp is not importable by {}", python.display()))?;
        capture(
            &python,
            &[
                "-c",
                "from mcp.client.streamable_http import streamable_http_client",
            ],
        )
        .filter(|o| o.ok)
        .ok_or("the mcp package has no streamable HTTP client")?;
        Ok(format!("{version} ({})", python.display()))
    }
}

/// The installed version of a Python distribution.
fn python_package_version(python: &Path, name: &str) -> Option<String> {
    let code = format!("import importlib.metadata as m; print(m.version('{name}'))");
    capture(python, &["-c", &code])
        .filter(|o| o.ok)
        .map(|o| o.text.trim().to_string())
}

/// `$JAVA_HOME/bin/javac`, else `javac` on `PATH`, with links resolved.
fn find_javac() -> Option<PathBuf> {
    let from_home = std::env::var_os("JAVA_HOME")
        .filter(|home| !home.is_empty())
        .map(|home| PathBuf::from(home).join("bin/javac"))
        .filter(|javac| javac.is_file());
    let found = from_home.or_else(|| on_path("javac"))?;
    Some(std::fs::canonicalize(&found).unwrap_or(found))
}

fn find_temurin25() -> Option<PathBuf> {
    let mut homes: Vec<PathBuf> = std::fs::read_dir("/usr/lib/jvm")
        .ok()?
        .filter_map(Result::ok)
        .filter(|entry| entry.file_name().to_string_lossy().contains("temurin-25"))
        .map(|entry| entry.path())
        .filter(|home| home.join("bin/java").is_file())
        .collect();
    homes.sort();
    homes.into_iter().next()
}

fn missing_jars() -> Vec<(&'static str, &'static str)> {
    JARS.iter()
        .filter(|(jar, _)| !Path::new(SHARE).join(jar).is_file())
        .copied()
        .collect()
}

fn package_version(package: &str) -> String {
    capture("dpkg-query", &["-W", "-f=${Version}", package])
        .filter(|o| o.ok)
        .map_or_else(|| "?".into(), |o| o.text.trim().to_string())
}

/// `libpython3.11.so.1.0` as the dynamic linker's cache lists it.
fn find_libpython() -> Option<PathBuf> {
    let out = ["ldconfig", "/sbin/ldconfig", "/usr/sbin/ldconfig"]
        .iter()
        .find_map(|ldconfig| capture(ldconfig, &["-p"]).filter(|o| o.ok))?;
    out.text
        .lines()
        .filter(|l| l.trim_start().starts_with(LIBPYTHON))
        .find_map(|l| l.split("=>").nth(1))
        .map(|p| PathBuf::from(p.trim()))
}

fn rotel_version(python: &Path) -> Option<String> {
    let code = "import importlib.metadata as m; print(m.version('rotel'))";
    capture(python, &["-c", code])
        .filter(|o| o.ok)
        .map(|o| o.text.trim().to_string())
}

/// `pip install` of one exact requirement; as a plain user, into the
/// user's site when the interpreter's own is not writable.
fn pip_install(python: &Path, requirement: &str) -> Result<(), String> {
    let base = [
        "-m",
        "pip",
        "install",
        "--quiet",
        "--disable-pip-version-check",
    ];
    println!("  .. {} -m pip install {requirement}", python.display());
    let plain = capture(python, &[&base[..], &[requirement]].concat());
    if plain.as_ref().is_some_and(|o| o.ok) {
        return Ok(());
    }
    if !crate::system::is_root() {
        let user = capture(python, &[&base[..], &["--user", requirement]].concat());
        if user.as_ref().is_some_and(|o| o.ok) {
            return Ok(());
        }
    }
    let why = plain.map_or_else(|| "pip did not start".into(), |o| o.text.trim().to_string());
    Err(format!(
        "pip install {requirement} failed with {}: {why}",
        python.display()
    ))
}
