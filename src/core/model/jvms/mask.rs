//! Secret masking, as data: the words that make a key a secret, the
//! authorization schemes whose credential follows them, and the shapes a
//! secret takes in one argument (a URL's userinfo, `Bearer …`,
//! `key=value`), each a rule applied in turn. Everything a listing, a
//! report or a log shows of a command line goes through here; the tests
//! are a table of shapes and what each must become.

/// What replaces a masked value.
pub const MASK: &str = "****";

/// A key names a secret when, lowercased with `.`, `-` and `_` removed,
/// it contains one of these.
const SECRET_WORDS: &[&str] = &[
    "password",
    "passwd",
    "passphrase",
    "pwd",
    "secret",
    "token",
    "apikey",
    "credential",
    "privatekey",
];

/// A key also names a secret when one of its parts between `.`, `-` and
/// `_` is one of these (as a part only: `author` is not `auth`).
const SECRET_PARTS: &[&str] = &["pass", "auth", "authorization", "cookie"];

/// HTTP authorization schemes: the word after one is a credential.
const AUTH_SCHEMES: &[&str] = &["bearer", "basic", "digest", "negotiate"];

/// A rule: what shape it masks, and the masking.
type Rule = (&'static str, fn(&str) -> String);

/// The rules one argument goes through, in order.
const RULES: &[Rule] = &[
    ("userinfo of a URL", mask_userinfo),
    ("credential after an authorization scheme", mask_schemes),
    ("value of a key that names a secret", mask_pairs),
];

/// Characters that end a value or a credential.
fn ends_value(c: char) -> bool {
    c.is_whitespace() || matches!(c, ',' | ';' | '&' | '"' | '\'')
}

/// Whether a key names a secret (see [`SECRET_WORDS`], [`SECRET_PARTS`]).
pub fn is_secret_key(key: &str) -> bool {
    let lower = key.to_lowercase();
    let joined: String = lower
        .chars()
        .filter(|c| !matches!(c, '.' | '-' | '_'))
        .collect();
    SECRET_WORDS.iter().any(|w| joined.contains(w))
        || lower
            .split(['.', '-', '_'])
            .any(|part| SECRET_PARTS.contains(&part))
}

/// A command line with every secret replaced by [`MASK`]: each argument
/// through [`mask_text`], and the argument after a `--key` or `-key` that
/// names a secret.
pub fn mask_argv(argv: &[String]) -> Vec<String> {
    let mut out = Vec::with_capacity(argv.len());
    let mut mask_next = false;
    for a in argv {
        if mask_next && !a.starts_with('-') {
            out.push(MASK.to_string());
            mask_next = false;
            continue;
        }
        mask_next = false;
        if let Some(flag) = a.strip_prefix('-').map(|f| f.trim_start_matches('-'))
            && !flag.contains('=')
            && is_secret_key(flag)
        {
            mask_next = true;
        }
        out.push(mask_text(a));
    }
    out
}

/// One argument (or any line of text) with every secret shape masked.
pub fn mask_text(text: &str) -> String {
    RULES.iter().fold(text.to_string(), |t, (_, rule)| rule(&t))
}

/// `scheme://user:password@host` → `scheme://user:****@host`, and
/// `scheme://token@host` → `scheme://****@host`; also Oracle's
/// `jdbc:oracle:thin:user/password@host`.
fn mask_userinfo(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some((at, kind)) = find_authority(rest) {
        let (head, tail) = rest.split_at(at);
        out.push_str(head);
        let end = tail
            .find(|c: char| c.is_whitespace() || matches!(c, '?' | '#' | ',' | '"' | '\''))
            .unwrap_or(tail.len());
        let (segment, after) = tail.split_at(end);
        out.push_str(&mask_segment(segment, kind));
        rest = after;
    }
    out.push_str(rest);
    out
}

/// How the user and the password of an authority are written.
#[derive(Clone, Copy)]
enum Userinfo {
    /// `scheme://user:password@host`, or `scheme://token@host`.
    Url,
    /// Oracle's `jdbc:oracle:thin:user/password@host`.
    Oracle,
}

/// Where the authority of the next URL starts, and how it is written.
fn find_authority(text: &str) -> Option<(usize, Userinfo)> {
    const ORACLE: &str = "jdbc:oracle:thin:";
    let url = text.find("://").map(|i| (i + 3, Userinfo::Url));
    let oracle = text
        .to_ascii_lowercase()
        .find(ORACLE)
        .map(|i| (i + ORACLE.len(), Userinfo::Oracle));
    match (url, oracle) {
        (Some(a), Some(b)) => Some(if a.0 < b.0 { a } else { b }),
        (a, b) => a.or(b),
    }
}

/// One authority (and what follows up to the end of the URL) with the
/// password of its userinfo masked (a lone token: all of it).
fn mask_segment(segment: &str, kind: Userinfo) -> String {
    let Some(at) = segment.find('@') else {
        return segment.to_string();
    };
    let (info, host) = segment.split_at(at);
    let sep = match kind {
        Userinfo::Url if info.contains('/') => return segment.to_string(),
        Userinfo::Url => ':',
        Userinfo::Oracle => '/',
    };
    match info.find(sep) {
        Some(i) if i + 1 < info.len() => format!("{}{MASK}{host}", &info[..=i]),
        None if !info.is_empty() && matches!(kind, Userinfo::Url) => format!("{MASK}{host}"),
        _ => segment.to_string(),
    }
}

/// `Bearer abc` → `Bearer ****` (any scheme of [`AUTH_SCHEMES`], any
/// case), wherever the scheme starts a word and a credential follows.
fn mask_schemes(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut words = text.split_inclusive(char::is_whitespace).peekable();
    while let Some(w) = words.next() {
        out.push_str(w);
        let word = w
            .trim_end()
            .rsplit(['=', ':', '"', '\''])
            .next()
            .unwrap_or_default();
        let spaced = w.ends_with(char::is_whitespace);
        if spaced
            && AUTH_SCHEMES.contains(&word.to_lowercase().as_str())
            && let Some(next) = words.next()
        {
            let cut = next.find(ends_value).unwrap_or(next.len());
            if cut > 0 {
                out.push_str(MASK);
            }
            out.push_str(&next[cut..]);
        }
    }
    out
}

/// Masks the value of every `key=value` whose key names a secret. A key
/// that starts its argument (`-Dkey=`, `--key=`) owns the rest of it, as
/// a property's value does (`-DAPI_KEY=k1,k2` is one value); inside an
/// argument (`a=1,password=x`, a query) the value ends at `,`, `;`, `&`,
/// a quote or whitespace. A scheme and its credential (`auth=Bearer abc`)
/// are left to [`mask_schemes`].
fn mask_pairs(arg: &str) -> String {
    let mut out = String::with_capacity(arg.len());
    let mut rest = arg;
    while let Some(eq) = rest.find('=') {
        let (before, after) = rest.split_at(eq);
        let key_start = before
            .rfind(|c: char| !(c.is_alphanumeric() || matches!(c, '.' | '-' | '_')))
            .map_or(0, |i| {
                i + before[i..].chars().next().map_or(1, char::len_utf8)
            });
        let key = before[key_start..].trim_start_matches('-');
        out.push_str(before);
        out.push('=');
        let value = &after[1..];
        let starts_argument = key_start == 0 || before[..key_start].ends_with(char::is_whitespace);
        let end = if starts_argument && is_secret_key(key) {
            value.find(|c: char| c.is_whitespace() || matches!(c, '"' | '\''))
        } else {
            value.find(ends_value)
        }
        .unwrap_or(value.len());
        let first_word = value[..end].split(ends_value).next().unwrap_or_default();
        let scheme = AUTH_SCHEMES.contains(&first_word.to_lowercase().as_str());
        if is_secret_key(key) && end > 0 && !scheme {
            out.push_str(MASK);
        } else {
            out.push_str(&value[..end]);
        }
        rest = &value[end..];
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Each shape a secret takes in one argument, and what it becomes.
    const SHAPES: &[(&str, &str, &str)] = &[
        ("a property", "-Dapi.token=s3cret", "-Dapi.token=****"),
        ("a short key", "-Dpwd=hunter2", "-Dpwd=****"),
        (
            "a private key",
            "-Dssl.private.key=abc",
            "-Dssl.private.key=****",
        ),
        (
            "a passphrase",
            "-Dssl.passphrase=abc",
            "-Dssl.passphrase=****",
        ),
        ("a pass part", "-Ddb.pass=abc", "-Ddb.pass=****"),
        (
            "a bearer header",
            "-Dauth.header=Bearer abc.def",
            "-Dauth.header=Bearer ****",
        ),
        (
            "a basic header",
            "-Dhttp.authorization=Basic dXNlcg==",
            "-Dhttp.authorization=Basic ****",
        ),
        (
            "a bearer in text",
            "Authorization: Bearer abc",
            "Authorization: Bearer ****",
        ),
        ("a list value", "-DAPI_KEY=k1,k2", "-DAPI_KEY=****"),
        (
            "a secret inside an option list",
            "-Dopts=x=1,password=p1,y=2",
            "-Dopts=x=1,password=****,y=2",
        ),
        ("a long option", "--apiKey=zz", "--apiKey=****"),
        (
            "a query parameter",
            "-Ddb.url=jdbc:x?user=a&password=hunter2",
            "-Ddb.url=jdbc:x?user=a&password=****",
        ),
        (
            "jdbc userinfo",
            "-Ddb.url=jdbc:postgresql://app:hunter2@db:5432/orders",
            "-Ddb.url=jdbc:postgresql://app:****@db:5432/orders",
        ),
        (
            "mongodb userinfo",
            "mongodb://root:pw1@mongo:27017/admin",
            "mongodb://root:****@mongo:27017/admin",
        ),
        (
            "mongodb+srv userinfo",
            "--uri=mongodb+srv://root:pw1@c.example.net/x",
            "--uri=mongodb+srv://root:****@c.example.net/x",
        ),
        (
            "postgres userinfo",
            "postgres://u:p%40ss@h/db?sslmode=require",
            "postgres://u:****@h/db?sslmode=require",
        ),
        (
            "https userinfo",
            "-Drepo=https://alice:ghp_x1@git.example.com/r.git",
            "-Drepo=https://alice:****@git.example.com/r.git",
        ),
        (
            "a token as user",
            "https://ghp_x1@git.example.com/r.git",
            "https://****@git.example.com/r.git",
        ),
        (
            "oracle thin",
            "jdbc:oracle:thin:scott/tiger@db:1521:orcl",
            "jdbc:oracle:thin:scott/****@db:1521:orcl",
        ),
        (
            "a URL without userinfo",
            "-Durl=https://example.com/a@b",
            "-Durl=https://example.com/a@b",
        ),
        (
            "an agent option",
            "-agentlib:jdwp=transport=dt_socket,address=5005",
            "-agentlib:jdwp=transport=dt_socket,address=5005",
        ),
        (
            "an author is no auth",
            "-Dapp.author=Ann",
            "-Dapp.author=Ann",
        ),
        ("a plain property", "-Dname=ok", "-Dname=ok"),
        ("the classpath", "-cp", "-cp"),
    ];

    fn argv(s: &str) -> Vec<String> {
        s.split(' ').map(String::from).collect()
    }

    #[test]
    fn every_shape_is_masked_as_the_table_says() {
        for (shape, input, want) in SHAPES {
            assert_eq!(mask_text(input), *want, "{shape}: {input}");
            // Masking twice changes nothing more.
            assert_eq!(mask_text(want), *want, "{shape} again");
        }
    }

    #[test]
    fn a_secret_flag_masks_the_argument_after_it() {
        for (line, want) in [
            ("java --password hunter3 Main", "java --password **** Main"),
            ("java Main --secret v4", "java Main --secret ****"),
            // A value-less secret flag followed by an option masks nothing.
            ("java --token -v", "java --token -v"),
        ] {
            assert_eq!(mask_argv(&argv(line)), argv(want), "{line}");
        }
        let split = mask_argv(&["java".into(), "-Dauth.header=Bearer abc".into()]);
        assert_eq!(split[1], "-Dauth.header=Bearer ****");
    }

    proptest! {
        #[test]
        fn masking_never_panics(arg in ".{0,60}") {
            let _ = mask_text(&arg);
        }

        #[test]
        fn a_secret_value_never_survives_masking(
            prefix in "(-D|--|-Dapp\\.|x,)",
            key in "(password|db\\.Password|api_key|APIKEY|auth-token|client\\.secret|pwd|ssl\\.passphrase)",
            value in "[a-zA-Z0-9]{6,20}",
            after in "(|,other=1|&x=y)",
        ) {
            let arg = format!("{prefix}{key}={value}{after}");
            let masked = mask_argv(&["java".to_string(), arg.clone()]).join(" ");
            prop_assert!(!masked.contains(&value), "{arg} -> {masked}");
            let split = mask_argv(&["java".into(), format!("--{key}"), value.clone()]).join(" ");
            prop_assert!(!split.contains(&value), "{split}");
        }

        #[test]
        fn a_password_in_a_url_never_survives(
            scheme in "(jdbc:postgresql|jdbc:mysql|mongodb|postgres|https|amqp)",
            user in "[a-z]{1,8}",
            password in "[a-zA-Z0-9]{6,20}",
        ) {
            let url = format!("-Durl={scheme}://{user}:{password}@host:1/db");
            let masked = mask_text(&url);
            prop_assert!(!masked.contains(&password), "{url} -> {masked}");
            prop_assert!(masked.contains(&format!("//{user}:****@host")), "{masked}");
        }
    }
}
