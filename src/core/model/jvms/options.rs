//! Where a running JVM's options come from besides its command line: the
//! environment the JVM or its launcher reads (`JAVA_TOOL_OPTIONS`,
//! `JDK_JAVA_OPTIONS`, `_JAVA_OPTIONS`) and the `@argfile`s the launcher
//! expands. A JDWP agent loaded from any of them is as real as one on the
//! command line, and a JVM that waits for its debugger must be recognised
//! whichever way its agent came. Pure: the actors read `/proc` and hand
//! the environment and the files in through closures.

use super::{AgentSyntax, JavaCommand, JdwpAgent, TAKES_VALUE};

/// Largest argfile read, in bytes; a longer one is not expanded.
pub const MAX_ARGFILE: u64 = 256 * 1024;

/// Where the JVM read an option from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Origin {
    CommandLine,
    /// An `@argfile` the launcher expanded, as the command line names it.
    ArgFile(String),
    /// An environment variable (`JAVA_TOOL_OPTIONS`, `JDK_JAVA_OPTIONS`,
    /// `_JAVA_OPTIONS`).
    Env(&'static str),
}

impl std::fmt::Display for Origin {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Origin::CommandLine => f.write_str("the command line"),
            Origin::ArgFile(p) => write!(f, "@{p}"),
            Origin::Env(v) => f.write_str(v),
        }
    }
}

/// The environment variables that carry JVM options, in the order the JVM
/// sees them: the JVM reads `JAVA_TOOL_OPTIONS` first and `_JAVA_OPTIONS`
/// last; the `java` launcher puts `JDK_JAVA_OPTIONS` before its own
/// arguments.
pub const OPTION_VARS: [&str; 3] = ["JAVA_TOOL_OPTIONS", "JDK_JAVA_OPTIONS", "_JAVA_OPTIONS"];

/// What could not be read while looking for a JVM's options: with any of
/// these, an agent may hide where discovery cannot see it.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Unseen {
    /// The process's environment could not be read.
    pub environment: bool,
    /// Argfiles named on the command line that could not be read.
    pub argfiles: Vec<String>,
}

impl Unseen {
    pub fn is_empty(&self) -> bool {
        !self.environment && self.argfiles.is_empty()
    }
}

impl std::fmt::Display for Unseen {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut parts = Vec::new();
        if self.environment {
            parts.push("its environment".to_string());
        }
        parts.extend(self.argfiles.iter().map(|a| format!("@{a}")));
        f.write_str(&parts.join(", "))
    }
}

/// An environment variable's value, by name.
pub type Lookup<'a> = &'a dyn Fn(&str) -> Option<String>;

/// A JVM's command line read with its environment and argfiles: `env`
/// gives an option variable's value (`None` when the environment cannot
/// be read), `argfile` an argfile's text (`None` when it cannot be read).
pub fn read_command(
    argv: &[String],
    env: Option<Lookup<'_>>,
    argfile: &mut dyn FnMut(&str) -> Option<String>,
) -> (JavaCommand, Unseen) {
    let mut unseen = Unseen {
        environment: env.is_none(),
        argfiles: Vec::new(),
    };
    let var = |name: &str| env.and_then(|e| e(name));
    let launcher = super::looks_like_java(argv);
    // The launcher's arguments: JDK_JAVA_OPTIONS first, then the command
    // line, each argfile expanded in place (up to the main class).
    let mut tagged: Vec<(String, Origin)> = Vec::new();
    if launcher && let Some(v) = var("JDK_JAVA_OPTIONS") {
        let origin = Origin::Env("JDK_JAVA_OPTIONS");
        tagged.extend(split_options(&v).into_iter().map(|a| (a, origin.clone())));
    }
    tagged.extend(
        argv.iter()
            .skip(1)
            .map(|a| (a.clone(), Origin::CommandLine)),
    );
    let expanded = expand_argfiles(tagged, argfile, &mut unseen);
    let mut line: Vec<String> = argv.first().cloned().into_iter().collect();
    line.extend(expanded.iter().map(|(a, _)| a.clone()));
    let mut cmd = JavaCommand::parse(&line);
    if cmd.agent.is_some() || cmd.agent_error.is_some() {
        // The position of the agent argument among the launcher's options
        // tells where it came from.
        let origin = expanded
            .iter()
            .find(|(a, _)| agent_argument(a).is_some())
            .map_or(Origin::CommandLine, |(_, o)| o.clone());
        if let Some(a) = &mut cmd.agent {
            a.origin = origin;
        }
        return (cmd, unseen);
    }
    // The JVM's own variables: HotSpot refuses a second JDWP agent, so at
    // most one of these places holds it.
    for name in ["JAVA_TOOL_OPTIONS", "_JAVA_OPTIONS"] {
        let Some(v) = var(name) else { continue };
        for a in split_options(&v) {
            match agent_argument(&a) {
                Some(Ok(mut agent)) => {
                    agent.origin = Origin::Env(name);
                    cmd.agent = Some(agent);
                    return (cmd, unseen);
                }
                Some(Err(e)) => {
                    cmd.agent_error = Some(e);
                    return (cmd, unseen);
                }
                None => {}
            }
        }
    }
    (cmd, unseen)
}

/// The JDWP agent an argument loads, if it loads one.
pub fn agent_argument(a: &str) -> Option<Result<JdwpAgent, String>> {
    if let Some(opts) = a.strip_prefix("-agentlib:jdwp=") {
        Some(JdwpAgent::parse(AgentSyntax::Agentlib, opts))
    } else {
        a.strip_prefix("-Xrunjdwp:")
            .map(|opts| JdwpAgent::parse(AgentSyntax::Xrun, opts))
    }
}

/// Expands each `@file` among the launcher's options (not after the main
/// class, jar or module, where they are the program's; `@@x` is the
/// literal `@x`; `--disable-@files` stops it), as the `java` launcher
/// does.
fn expand_argfiles(
    args: Vec<(String, Origin)>,
    read: &mut dyn FnMut(&str) -> Option<String>,
    unseen: &mut Unseen,
) -> Vec<(String, Origin)> {
    let mut out = Vec::with_capacity(args.len());
    let mut expand = true;
    let mut main_seen = false;
    let mut takes_value = false;
    for (a, origin) in args {
        if main_seen {
            out.push((a, origin));
            continue;
        }
        if a == "--disable-@files" {
            expand = false;
        }
        let inner: Vec<(String, Origin)> = match a.strip_prefix('@') {
            Some(lit) if lit.starts_with('@') => vec![(lit.to_string(), origin)],
            Some(path) if expand && !path.is_empty() => match read(path) {
                Some(text) => {
                    let o = Origin::ArgFile(path.to_string());
                    split_options(&text)
                        .into_iter()
                        .map(|t| (t, o.clone()))
                        .collect()
                }
                None => {
                    unseen.argfiles.push(path.to_string());
                    Vec::new()
                }
            },
            _ => vec![(a, origin)],
        };
        for (t, o) in inner {
            if !main_seen {
                if takes_value {
                    takes_value = false;
                } else if t == "-jar" || t == "-m" || t == "--module" {
                    takes_value = true;
                    main_seen = true;
                } else if TAKES_VALUE.contains(&t.as_str()) {
                    takes_value = true;
                } else if !t.starts_with('-') {
                    main_seen = true;
                }
            }
            out.push((t, o));
        }
    }
    out
}

/// Splits option text as the launcher splits an argfile (and as the JVM
/// splits `JAVA_TOOL_OPTIONS`): whitespace separates; single or double
/// quotes group, with `\` escapes inside them; a `#` starting a token
/// comments out the rest of its line.
pub fn split_options(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut in_token = false;
    let mut quote: Option<char> = None;
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), '\\') => match chars.next() {
                Some('n') => cur.push('\n'),
                Some('t') => cur.push('\t'),
                Some('r') => cur.push('\r'),
                Some('f') => cur.push('\u{c}'),
                // A line continuation: the break and the next line's
                // leading blanks are dropped.
                Some('\n') | Some('\r') => {
                    while chars.peek().is_some_and(|c| c.is_whitespace()) {
                        chars.next();
                    }
                }
                Some(o) => cur.push(o),
                None => {}
            },
            (Some(_), c) => cur.push(c),
            (None, '"' | '\'') => {
                quote = Some(c);
                in_token = true;
            }
            (None, '#') if !in_token => {
                for c in chars.by_ref() {
                    if c == '\n' {
                        break;
                    }
                }
            }
            (None, c) if c.is_whitespace() => {
                if in_token {
                    out.push(std::mem::take(&mut cur));
                    in_token = false;
                }
            }
            (None, c) => {
                cur.push(c);
                in_token = true;
            }
        }
    }
    if in_token {
        out.push(cur);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn argv(s: &str) -> Vec<String> {
        s.split(' ').map(String::from).collect()
    }

    const AGENT: &str = "-agentlib:jdwp=transport=dt_socket,server=y,suspend=y,address=5005";

    fn no_files(_: &str) -> Option<String> {
        None
    }

    #[test]
    fn option_text_splits_as_the_launcher_splits_it() {
        assert_eq!(
            split_options("-Xmx1g  \"-Dname=a b\" '-Dq=\"x\"'\n# a comment -Dnot\n-cp a:b Main"),
            ["-Xmx1g", "-Dname=a b", "-Dq=\"x\"", "-cp", "a:b", "Main"]
        );
        assert_eq!(split_options("\"a\\tb\" \"c\\\n   d\""), ["a\tb", "cd"]);
        assert!(split_options("  \n ").is_empty());
        assert_eq!(split_options("a#b"), ["a#b"]);
    }

    #[test]
    fn an_agent_in_the_environment_is_found_and_named() {
        for var in OPTION_VARS {
            let env = |n: &str| (n == var).then(|| format!("-Xss1m {AGENT}"));
            let (cmd, unseen) = read_command(
                &argv("/opt/jdk/bin/java -cp x Main"),
                Some(&env),
                &mut no_files,
            );
            let agent = cmd.agent.unwrap_or_else(|| panic!("{var}: no agent"));
            assert!(agent.suspend && agent.server, "{var}");
            assert_eq!(agent.origin, Origin::Env(var));
            assert_eq!(cmd.launch, super::super::Launch::Class("Main".into()));
            assert!(unseen.is_empty());
        }
        // The launcher's arguments are read before the JVM's variable.
        let env = |n: &str| (n == "JAVA_TOOL_OPTIONS").then(|| format!("{AGENT}9"));
        let (cmd, _) = read_command(
            &argv(&format!("java {AGENT} Main")),
            Some(&env),
            &mut no_files,
        );
        let agent = cmd.agent.expect("agent");
        assert_eq!(agent.origin, Origin::CommandLine);
        assert_eq!(agent.address.map(|a| a.port), Some(5005));
    }

    #[test]
    fn an_agent_in_an_argfile_is_found_and_an_unreadable_one_is_named() {
        let mut files = |p: &str| match p {
            "opts" => Some(format!("# JVM options\n-Xmx64m\n\"{AGENT}\"\n-cp lib\n")),
            "main" => Some("com.x.Main".to_string()),
            _ => None,
        };
        let (cmd, unseen) = read_command(
            &argv("java @opts @main @missing"),
            Some(&|_: &str| None),
            &mut files,
        );
        let agent = cmd.agent.expect("agent from the argfile");
        assert_eq!(agent.origin, Origin::ArgFile("opts".into()));
        assert_eq!(cmd.launch, super::super::Launch::Class("com.x.Main".into()));
        // `@missing` comes after the main class: the program's argument.
        assert!(unseen.is_empty(), "{unseen}");
        let (cmd, unseen) =
            read_command(&argv("java @gone Main"), Some(&|_: &str| None), &mut files);
        assert!(cmd.agent.is_none());
        assert_eq!(unseen.argfiles, ["gone"]);
        let (_, unseen) = read_command(&argv("java Main"), None, &mut files);
        assert_eq!(unseen.to_string(), "its environment");
        // `@@x` is literal, `--disable-@files` stops expansion.
        let (cmd, unseen) = read_command(
            &argv("java --disable-@files @opts @@Main"),
            Some(&|_: &str| None),
            &mut files,
        );
        assert!(cmd.agent.is_none() && unseen.is_empty());
        assert_eq!(cmd.launch, super::super::Launch::Class("@opts".into()));
    }

    proptest! {
        #[test]
        fn reading_options_never_panics(text in ".{0,80}", args in proptest::collection::vec("[@a-z\\-: ]{0,12}", 0..6)) {
            let _ = split_options(&text);
            let mut argv = vec!["java".to_string()];
            argv.extend(args);
            let t = text.clone();
            let _ = read_command(&argv, Some(&|_: &str| Some(t.clone())), &mut |_| Some(text.clone()));
        }
    }
}
