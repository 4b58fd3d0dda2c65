//! Local JVMs as discovery reads them, as plain data: a Java command line
//! split into what matters (main class or jar, the JDWP agent and every
//! one of its options), secrets masked out of it, and — in `jvms/` — the
//! lines of `/proc/net/tcp` and the verdict on an endpoint. Pure: the
//! actors read `/proc` and dial, the MCP layer renders.

pub mod mask;
pub mod options;
pub mod tcp;
pub mod verdict;

pub use mask::{MASK, is_secret_key, mask_argv, mask_text};
pub use options::{Origin, Unseen, read_command};
pub use tcp::{Ip, TcpSocket, TcpState};
pub use verdict::{Detail, JdwpState, Plan, Sight, Verdict, plan};

/// Where a JDWP agent listens (or, with `server=n`, what it dials).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Address {
    /// `None` for a bare port (the agent binds loopback) or `*` (every
    /// interface, written `Some("*")`).
    pub host: Option<String>,
    /// 0: the agent picks a free port and prints it.
    pub port: u16,
}

impl Address {
    /// Reads `*:5005`, `host:5005`, `[::1]:5005` or a bare `5005`.
    pub fn parse(raw: &str) -> Result<Address, String> {
        let raw = raw.trim();
        let (host, port) = match raw.rsplit_once(':') {
            Some((h, p)) => {
                let h = h.trim_start_matches('[').trim_end_matches(']');
                (Some(h.to_string()), p)
            }
            None => (None, raw),
        };
        let port = port
            .parse::<u16>()
            .map_err(|_| format!("address {raw:?} has no valid port"))?;
        Ok(Address {
            host: host.filter(|h| !h.is_empty()),
            port,
        })
    }

    /// Whether dialling this address stays on this machine: a bare port,
    /// `*`, `0.0.0.0`, `localhost`, `127.x`, `::1` or `::`.
    pub fn is_local(&self) -> bool {
        self.host.as_deref().is_none_or(is_loopback_host)
    }
}

/// Whether a host name, as written in a command line or a probe request,
/// names this machine's loopback (or every interface, which includes it).
pub fn is_loopback_host(host: &str) -> bool {
    let h = host.trim_start_matches('[').trim_end_matches(']');
    h == "*"
        || h.eq_ignore_ascii_case("localhost")
        || h == "0.0.0.0"
        || h == "::1"
        || h == "::"
        || h.strip_prefix("127.")
            .is_some_and(|rest| rest.split('.').count() == 3 && rest.split('.').all(is_octet))
}

fn is_octet(s: &str) -> bool {
    !s.is_empty() && s.len() <= 3 && s.parse::<u8>().is_ok()
}

/// How the agent was written on the command line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AgentSyntax {
    /// `-agentlib:jdwp=…`
    Agentlib,
    /// `-Xrunjdwp:…` (the old form).
    Xrun,
}

/// The JDWP agent of a command line, every option read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JdwpAgent {
    pub syntax: AgentSyntax,
    /// `dt_socket` for TCP; `dt_shmem` exists on Windows only.
    pub transport: Option<String>,
    /// `server=y`: the JVM listens (default `n`: it dials a debugger).
    pub server: bool,
    /// `suspend=y` (the default): the JVM waits for a debugger before main.
    pub suspend: bool,
    pub address: Option<Address>,
    /// Every option as written, in order (`onthrow`, `timeout`, …).
    pub options: Vec<(String, String)>,
    /// Where the JVM read it: its command line, an argfile or the
    /// environment.
    pub origin: Origin,
}

impl JdwpAgent {
    /// Reads the options of one agent argument: `transport=dt_socket,
    /// server=y,suspend=n,address=*:5005`. An unknown option is kept; a
    /// malformed address is an error.
    pub fn parse(syntax: AgentSyntax, opts: &str) -> Result<JdwpAgent, String> {
        let mut agent = JdwpAgent {
            syntax,
            transport: None,
            server: false,
            suspend: true,
            address: None,
            options: Vec::new(),
            origin: Origin::CommandLine,
        };
        for part in opts.split(',').filter(|p| !p.is_empty()) {
            let (k, v) = part.split_once('=').unwrap_or((part, ""));
            let yes = |v: &str| v.eq_ignore_ascii_case("y") || v.eq_ignore_ascii_case("yes");
            match k {
                "transport" => agent.transport = Some(v.to_string()),
                "server" => agent.server = yes(v),
                "suspend" => agent.suspend = yes(v),
                "address" => agent.address = Some(Address::parse(v)?),
                _ => {}
            }
            agent.options.push((k.to_string(), v.to_string()));
        }
        Ok(agent)
    }

    /// The TCP transport: the only one discovery can say anything about.
    pub fn is_socket(&self) -> bool {
        self.transport.as_deref() == Some("dt_socket")
    }

    /// The option list as written after `=` / `:`.
    pub fn options_text(&self) -> String {
        self.options
            .iter()
            .map(|(k, v)| {
                if v.is_empty() {
                    k.clone()
                } else {
                    format!("{k}={v}")
                }
            })
            .collect::<Vec<_>>()
            .join(",")
    }
}

/// What a Java command line runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Launch {
    Class(String),
    Jar(String),
    /// `-m module/class`.
    Module(String),
    /// A source-file launch, `--version`, or argv cut short.
    Unknown,
}

/// A Java command line, read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JavaCommand {
    pub launch: Launch,
    /// The JDWP agent, when the command line loads one.
    pub agent: Option<JdwpAgent>,
    /// Why an agent argument could not be read, if one could not.
    pub agent_error: Option<String>,
}

/// JVM options whose value is the next argument.
const TAKES_VALUE: &[&str] = &[
    "-cp",
    "-classpath",
    "--class-path",
    "-p",
    "--module-path",
    "--upgrade-module-path",
    "--add-modules",
    "--limit-modules",
    "--add-exports",
    "--add-opens",
    "--add-reads",
    "--patch-module",
    "--enable-native-access",
];

/// Whether a command line starts a Java launcher: `java`, `javaw`, or a
/// path ending in one.
pub fn looks_like_java(argv: &[String]) -> bool {
    argv.first().is_some_and(|a| {
        let base = a.rsplit('/').next().unwrap_or(a);
        base == "java" || base == "javaw"
    })
}

impl JavaCommand {
    /// Reads the launcher's options up to the main class (or jar, or
    /// module); what follows is the program's and is not looked at.
    pub fn parse(argv: &[String]) -> JavaCommand {
        let mut cmd = JavaCommand {
            launch: Launch::Unknown,
            agent: None,
            agent_error: None,
        };
        let mut args = argv.iter().skip(1);
        while let Some(a) = args.next() {
            if let Some(agent) = options::agent_argument(a) {
                cmd.take_agent(agent);
            } else if a == "-jar" {
                cmd.launch = args
                    .next()
                    .map_or(Launch::Unknown, |j| Launch::Jar(j.clone()));
                break;
            } else if a == "-m" || a == "--module" {
                cmd.launch = args
                    .next()
                    .map_or(Launch::Unknown, |m| Launch::Module(m.clone()));
                break;
            } else if let Some(m) = a.strip_prefix("--module=") {
                cmd.launch = Launch::Module(m.to_string());
                break;
            } else if TAKES_VALUE.contains(&a.as_str()) {
                args.next();
            } else if !a.starts_with('-') {
                if !a.ends_with(".java") {
                    cmd.launch = Launch::Class(a.clone());
                }
                break;
            }
        }
        cmd
    }

    fn take_agent(&mut self, parsed: Result<JdwpAgent, String>) {
        match parsed {
            Ok(agent) => self.agent = Some(agent),
            Err(e) => self.agent_error = Some(e),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn argv(s: &str) -> Vec<String> {
        s.split(' ').map(String::from).collect()
    }

    #[test]
    fn agent_options_are_all_read() {
        let check = |opts: &str, server, suspend, host: Option<&str>, port| {
            let a = JdwpAgent::parse(AgentSyntax::Agentlib, opts).expect(opts);
            assert_eq!((a.server, a.suspend), (server, suspend), "{opts}");
            let addr = a.address.clone().expect("address");
            assert_eq!((addr.host.as_deref(), addr.port), (host, port), "{opts}");
            assert!(a.is_socket());
        };
        check(
            "transport=dt_socket,server=y,suspend=n,address=*:5005",
            true,
            false,
            Some("*"),
            5005,
        );
        check(
            "transport=dt_socket,server=y,address=127.0.0.1:0",
            true,
            true,
            Some("127.0.0.1"),
            0,
        );
        check("transport=dt_socket,address=8000", false, true, None, 8000);
        check(
            "server=y,transport=dt_socket,address=[::1]:9000,suspend=y,onthrow=java.lang.Error",
            true,
            true,
            Some("::1"),
            9000,
        );
        let a = JdwpAgent::parse(
            AgentSyntax::Xrun,
            "transport=dt_socket,timeout=5000,launch=x",
        )
        .expect("xrun");
        assert_eq!(a.options.len(), 3);
        assert_eq!(
            a.options_text(),
            "transport=dt_socket,timeout=5000,launch=x"
        );
        assert!(JdwpAgent::parse(AgentSyntax::Agentlib, "address=host:notaport").is_err());
    }

    #[test]
    fn command_lines_name_their_main_and_agent() {
        let c = JavaCommand::parse(&argv(
            "/usr/lib/jvm/x/bin/java -Xmx64m -agentlib:jdwp=transport=dt_socket,server=y,suspend=n,address=*:5005 -cp a:b com.example.Main -cp x",
        ));
        assert_eq!(c.launch, Launch::Class("com.example.Main".into()));
        assert!(c.agent.as_ref().is_some_and(|a| a.server && !a.suspend));
        let c = JavaCommand::parse(&argv(
            "java -Xdebug -Xrunjdwp:transport=dt_socket,server=y,address=9 -jar app.jar -agentlib:jdwp=x",
        ));
        assert_eq!(c.launch, Launch::Jar("app.jar".into()));
        assert_eq!(c.agent.map(|a| a.syntax), Some(AgentSyntax::Xrun));
        let c = JavaCommand::parse(&argv("java -m mod/com.x.Main"));
        assert_eq!(c.launch, Launch::Module("mod/com.x.Main".into()));
        let c = JavaCommand::parse(&argv("java Hello.java"));
        assert_eq!(c.launch, Launch::Unknown);
        // The program's own arguments are not the launcher's.
        let c = JavaCommand::parse(&argv(
            "java Main -agentlib:jdwp=transport=dt_socket,server=y,address=1",
        ));
        assert!(c.agent.is_none());
        let c = JavaCommand::parse(&argv("java -agentlib:jdwp=address=:x Main"));
        assert!(c.agent_error.is_some());
        assert!(looks_like_java(&argv("/opt/jdk/bin/java -version")));
        assert!(!looks_like_java(&argv("/usr/bin/javac X.java")));
    }

    #[test]
    fn loopback_hosts() {
        for h in [
            "*",
            "localhost",
            "127.0.0.1",
            "127.1.2.3",
            "::1",
            "[::1]",
            "0.0.0.0",
        ] {
            assert!(is_loopback_host(h), "{h}");
        }
        for h in [
            "10.0.0.1",
            "example.com",
            "127.0.0.1.evil.com",
            "192.0.2.1",
            "128.0.0.1",
        ] {
            assert!(!is_loopback_host(h), "{h}");
        }
        assert!(Address::parse("5005").expect("bare").is_local());
    }

    proptest! {
        #[test]
        fn parsing_never_panics(args in proptest::collection::vec(".{0,40}", 0..8)) {
            let _ = JavaCommand::parse(&args);
            let _ = mask_argv(&args);
            for a in &args {
                let _ = Address::parse(a);
                let _ = JdwpAgent::parse(AgentSyntax::Agentlib, a);
            }
        }
    }
}
