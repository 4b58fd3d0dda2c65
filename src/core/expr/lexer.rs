//! The hand-written lexer: source text to tokens with byte spans.
//!
//! It never fails outright: a lexical error becomes a final `Tok::Error`
//! token, so the parser reports whichever mistake comes first in the source.
//! Numbers keep their unsigned magnitude; the parser applies a unary minus
//! and checks the range, which is how `-2147483648` is an int.

use super::ast::{Charset, Span};
use super::parser::ParseError;

/// What a token is.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Tok {
    /// A Java identifier that is not one of the keywords below.
    Ident(String),
    /// `this`.
    This,
    /// `true`.
    True,
    /// `false`.
    False,
    /// `null`.
    Null,
    /// An integer literal without its sign.
    Int {
        /// The value as written, unsigned.
        magnitude: u64,
        /// Had an `L`/`l` suffix.
        long: bool,
        /// Was written in hex (`0x…`), which Java reads as two's complement.
        hex: bool,
    },
    /// `2.0f`.
    Float(f32),
    /// `1.5`, `1e3`, `2d`.
    Double(f64),
    /// `'a'`.
    Char(u16),
    /// `"…"`, escapes decoded.
    Str(String),
    /// `@0x1f`.
    Handle(u64),
    /// `#UTF-8` and friends.
    Charset(Charset),
    /// `.`
    Dot,
    /// `..`
    DotDot,
    /// `,`
    Comma,
    /// `(`
    LParen,
    /// `)`
    RParen,
    /// `[`
    LBracket,
    /// `]`
    RBracket,
    /// `?`
    Question,
    /// `!`
    Bang,
    /// `+`
    Plus,
    /// `-`
    Minus,
    /// `*`
    Star,
    /// `/`
    Slash,
    /// `%`
    Percent,
    /// `==`
    EqEq,
    /// `!=`
    NotEq,
    /// `<`
    Lt,
    /// `<=`
    Le,
    /// `>`
    Gt,
    /// `>=`
    Ge,
    /// `&&`
    AndAnd,
    /// `||`
    OrOr,
    /// The end of the source.
    Eof,
    /// A lexical error; always the last token.
    Error(Box<ParseError>),
}

/// A token and where it sits.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Token {
    /// What it is.
    pub kind: Tok,
    /// Byte offsets in the source.
    pub span: Span,
}

/// Splits `src` into tokens. The result always ends with exactly one
/// `Tok::Eof` or `Tok::Error`, and nothing follows it.
pub(crate) fn tokenize(src: &str) -> Vec<Token> {
    let mut lx = Lexer {
        src,
        chars: src.char_indices().collect(),
        i: 0,
    };
    let mut out = Vec::new();
    loop {
        match lx.next_token() {
            Ok(t) => {
                let end = t.kind == Tok::Eof;
                out.push(t);
                if end {
                    return out;
                }
            }
            Err(e) => {
                let span = e.span;
                out.push(Token {
                    kind: Tok::Error(Box::new(e)),
                    span,
                });
                return out;
            }
        }
    }
}

/// How many characters of source a `found` quotes before eliding the rest.
const FOUND_CHARS: usize = 32;

/// Quotes source text for a `found`: backticks, control characters escaped,
/// long text cut with `…`.
pub(crate) fn quote(text: &str) -> String {
    let mut out = String::from("`");
    for (n, c) in text.chars().enumerate() {
        if n == FOUND_CHARS {
            out.push('…');
            break;
        }
        if c.is_control() {
            out.extend(c.escape_default());
        } else {
            out.push(c);
        }
    }
    out.push('`');
    out
}

fn is_ident_start(c: char) -> bool {
    c.is_alphabetic() || c == '_' || c == '$'
}

fn is_ident_part(c: char) -> bool {
    c.is_alphanumeric() || c == '_' || c == '$'
}

struct Lexer<'s> {
    src: &'s str,
    chars: Vec<(usize, char)>,
    /// Index into `chars` of the next character.
    i: usize,
}

impl Lexer<'_> {
    fn ch(&self, i: usize) -> Option<char> {
        self.chars.get(i).map(|c| c.1)
    }

    /// Byte offset of character index `i` (the source length past the end).
    fn off(&self, i: usize) -> usize {
        self.chars.get(i).map_or(self.src.len(), |c| c.0)
    }

    fn span(&self, from: usize, to: usize) -> Span {
        Span::new(self.off(from), self.off(to))
    }

    fn err(&self, from: usize, to: usize, expected: &str, found: String) -> ParseError {
        ParseError::new(self.src, self.span(from, to), expected, found)
    }

    /// Describes the character at `i` (or the end of input) for a `found`.
    fn found_at(&self, i: usize) -> String {
        match self.ch(i) {
            Some(c) => quote(&c.to_string()),
            None => "end of input".to_string(),
        }
    }

    /// An error about the single character at `i`.
    fn err_at(&self, i: usize, expected: &str) -> ParseError {
        let to = if self.ch(i).is_some() { i + 1 } else { i };
        self.err(i, to, expected, self.found_at(i))
    }

    fn next_token(&mut self) -> Result<Token, ParseError> {
        while self.ch(self.i).is_some_and(char::is_whitespace) {
            self.i += 1;
        }
        let start = self.i;
        let Some(c) = self.ch(start) else {
            return Ok(Token {
                kind: Tok::Eof,
                span: self.span(start, start),
            });
        };
        let next = self.ch(start + 1);
        let (kind, len) = match c {
            '.' if next == Some('.') => (Tok::DotDot, 2),
            '.' => (Tok::Dot, 1),
            ',' => (Tok::Comma, 1),
            '(' => (Tok::LParen, 1),
            ')' => (Tok::RParen, 1),
            '[' => (Tok::LBracket, 1),
            ']' => (Tok::RBracket, 1),
            '?' => (Tok::Question, 1),
            '+' => (Tok::Plus, 1),
            '-' => (Tok::Minus, 1),
            '*' => (Tok::Star, 1),
            '/' => (Tok::Slash, 1),
            '%' => (Tok::Percent, 1),
            '!' if next == Some('=') => (Tok::NotEq, 2),
            '!' => (Tok::Bang, 1),
            '<' if next == Some('=') => (Tok::Le, 2),
            '<' => (Tok::Lt, 1),
            '>' if next == Some('=') => (Tok::Ge, 2),
            '>' => (Tok::Gt, 1),
            '=' if next == Some('=') => (Tok::EqEq, 2),
            '=' => {
                return Err(self.err_at(start, "`==` (assignment is not supported)"));
            }
            '&' if next == Some('&') => (Tok::AndAnd, 2),
            '&' => return Err(self.err_at(start, "`&&`")),
            '|' if next == Some('|') => (Tok::OrOr, 2),
            '|' => return Err(self.err_at(start, "`||`")),
            '\'' => return self.char_literal(),
            '"' => return self.string_literal(),
            '@' => return self.handle(),
            '#' => return self.charset(),
            c if c.is_ascii_digit() => return self.number(),
            c if is_ident_start(c) => return Ok(self.ident()),
            _ => {
                return Err(
                    self.err_at(start, "a name, literal, operator, bracket or `@0x…` handle")
                );
            }
        };
        self.i = start + len;
        Ok(Token {
            kind,
            span: self.span(start, self.i),
        })
    }

    fn ident(&mut self) -> Token {
        let start = self.i;
        while self.ch(self.i).is_some_and(is_ident_part) {
            self.i += 1;
        }
        let span = self.span(start, self.i);
        let text = span.text(self.src);
        let kind = match text {
            "this" => Tok::This,
            "true" => Tok::True,
            "false" => Tok::False,
            "null" => Tok::Null,
            _ => Tok::Ident(text.to_string()),
        };
        Token { kind, span }
    }

    /// Consumes digits of `radix` (with `_` allowed between digits) into
    /// `out`; returns how many digits it took.
    fn digits(&mut self, radix: u32, out: &mut String) -> usize {
        let mut count = 0;
        loop {
            match self.ch(self.i) {
                Some(d) if d.is_digit(radix) => {
                    out.push(d);
                    count += 1;
                    self.i += 1;
                }
                Some('_') if count > 0 => {
                    let mut j = self.i;
                    while self.ch(j) == Some('_') {
                        j += 1;
                    }
                    if self.ch(j).is_some_and(|d| d.is_digit(radix)) {
                        self.i = j;
                    } else {
                        return count;
                    }
                }
                _ => return count,
            }
        }
    }

    fn number(&mut self) -> Result<Token, ParseError> {
        let start = self.i;
        let hex = self.ch(start) == Some('0') && matches!(self.ch(start + 1), Some('x' | 'X'));
        if hex {
            self.i += 2;
            let mut text = String::new();
            if self.digits(16, &mut text) == 0 {
                return Err(self.err_at(self.i, "hex digits after `0x`"));
            }
            let magnitude = u64::from_str_radix(&text, 16).map_err(|_| {
                self.err(
                    start,
                    self.i,
                    "a hex number of at most 16 digits",
                    quote(self.span(start, self.i).text(self.src)),
                )
            })?;
            let long = matches!(self.ch(self.i), Some('l' | 'L'));
            if long {
                self.i += 1;
            }
            return Ok(Token {
                kind: Tok::Int {
                    magnitude,
                    long,
                    hex: true,
                },
                span: self.span(start, self.i),
            });
        }

        let mut text = String::new();
        self.digits(10, &mut text);
        let mut fractional = false;
        if self.ch(self.i) == Some('.') && self.ch(self.i + 1).is_some_and(|d| d.is_ascii_digit()) {
            fractional = true;
            text.push('.');
            self.i += 1;
            self.digits(10, &mut text);
        }
        let mantissa_nonzero = text.chars().any(|d| matches!(d, '1'..='9'));
        if matches!(self.ch(self.i), Some('e' | 'E')) {
            let sign = matches!(self.ch(self.i + 1), Some('+' | '-'));
            let first = self.i + 1 + usize::from(sign);
            if self.ch(first).is_some_and(|d| d.is_ascii_digit()) {
                fractional = true;
                text.push('e');
                if let Some(s) = self.ch(self.i + 1).filter(|_| sign) {
                    text.push(s);
                }
                self.i = first;
                self.digits(10, &mut text);
            }
        }
        let kind = match self.ch(self.i) {
            Some('f' | 'F') => {
                self.i += 1;
                let v: f32 = text.parse().map_err(|_| self.bad_number(start))?;
                self.check_float(
                    start,
                    v.is_infinite(),
                    v == 0.0 && mantissa_nonzero,
                    "float",
                )?;
                Tok::Float(v)
            }
            Some('d' | 'D') => {
                self.i += 1;
                Tok::Double(self.double(start, &text, mantissa_nonzero)?)
            }
            _ if fractional => Tok::Double(self.double(start, &text, mantissa_nonzero)?),
            Some('l' | 'L') => {
                self.i += 1;
                Tok::Int {
                    magnitude: self.magnitude(start, &text)?,
                    long: true,
                    hex: false,
                }
            }
            _ => Tok::Int {
                magnitude: self.magnitude(start, &text)?,
                long: false,
                hex: false,
            },
        };
        Ok(Token {
            kind,
            span: self.span(start, self.i),
        })
    }

    fn bad_number(&self, start: usize) -> ParseError {
        self.err(
            start,
            self.i,
            "a number",
            quote(self.span(start, self.i).text(self.src)),
        )
    }

    fn double(&self, start: usize, text: &str, nonzero: bool) -> Result<f64, ParseError> {
        let v: f64 = text.parse().map_err(|_| self.bad_number(start))?;
        self.check_float(start, v.is_infinite(), v == 0.0 && nonzero, "double")?;
        Ok(v)
    }

    fn check_float(
        &self,
        start: usize,
        too_big: bool,
        too_small: bool,
        ty: &str,
    ) -> Result<(), ParseError> {
        let what = if too_big {
            "large"
        } else if too_small {
            "small"
        } else {
            return Ok(());
        };
        Err(self.err(
            start,
            self.i,
            &format!("a {ty} literal that is not too {what} to represent"),
            quote(self.span(start, self.i).text(self.src)),
        ))
    }

    /// The value of a decimal integer literal's digits.
    fn magnitude(&self, start: usize, digits: &str) -> Result<u64, ParseError> {
        let found = || quote(self.span(start, self.i).text(self.src));
        if digits.len() > 1 && digits.starts_with('0') {
            return Err(self.err(
                start,
                self.i,
                "a number without a leading zero (Java reads `010` as octal; use `0x…` for hex)",
                found(),
            ));
        }
        digits
            .parse::<u64>()
            .map_err(|_| self.err(start, self.i, "a number that fits in a long", found()))
    }

    /// After a `\`: decodes one escape into a UTF-16 code unit.
    fn escape(&mut self) -> Result<u16, ParseError> {
        let backslash = self.i;
        self.i += 1;
        let unit = match self.ch(self.i) {
            Some('n') => u16::from(b'\n'),
            Some('t') => u16::from(b'\t'),
            Some('r') => u16::from(b'\r'),
            Some('b') => 8,
            Some('f') => 12,
            Some('s') => u16::from(b' '),
            Some('\'') => u16::from(b'\''),
            Some('"') => u16::from(b'"'),
            Some('\\') => u16::from(b'\\'),
            Some('u') => {
                while self.ch(self.i) == Some('u') {
                    self.i += 1;
                }
                let mut v: u16 = 0;
                for _ in 0..4 {
                    match self.ch(self.i).and_then(|d| d.to_digit(16)) {
                        // Four hex digits fit a u16, so neither step can overflow.
                        Some(d) => v = v.wrapping_mul(16).wrapping_add(d as u16),
                        None => {
                            return Err(self.err_at(self.i, "four hex digits after `\\u`"));
                        }
                    }
                    self.i += 1;
                }
                return Ok(v);
            }
            Some(d @ '0'..='7') => {
                // Java octal escape: up to three digits when the first is 0-3.
                let max = if d <= '3' { 3 } else { 2 };
                let mut v: u16 = 0;
                let mut n = 0;
                while n < max {
                    match self.ch(self.i).and_then(|d| d.to_digit(8)) {
                        Some(o) => v = v * 8 + o as u16,
                        None => break,
                    }
                    self.i += 1;
                    n += 1;
                }
                return Ok(v);
            }
            _ => {
                let to = if self.ch(self.i).is_some() {
                    self.i + 1
                } else {
                    self.i
                };
                return Err(self.err(
                    backslash,
                    to,
                    "an escape: `\\n` `\\t` `\\r` `\\b` `\\f` `\\s` `\\'` `\\\"` `\\\\` `\\uXXXX` or octal",
                    quote(self.span(backslash, to).text(self.src)),
                ));
            }
        };
        self.i += 1;
        Ok(unit)
    }

    fn char_literal(&mut self) -> Result<Token, ParseError> {
        let start = self.i;
        self.i += 1;
        let unit = match self.ch(self.i) {
            None => return Err(self.err_at(self.i, "a character after `'`")),
            Some('\'') => {
                return Err(self.err(
                    start,
                    self.i + 1,
                    "a character between the quotes",
                    quote("''"),
                ));
            }
            Some('\\') => self.escape()?,
            Some(c) => {
                let v = u16::try_from(u32::from(c)).map_err(|_| {
                    self.err_at(
                        self.i,
                        "a character that fits a Java char (16 bits; use a String)",
                    )
                })?;
                self.i += 1;
                v
            }
        };
        if self.ch(self.i) != Some('\'') {
            return Err(self.err_at(
                self.i,
                "`'` to close the char literal (a char holds one character; use `\"` for a String)",
            ));
        }
        self.i += 1;
        Ok(Token {
            kind: Tok::Char(unit),
            span: self.span(start, self.i),
        })
    }

    fn string_literal(&mut self) -> Result<Token, ParseError> {
        let start = self.i;
        self.i += 1;
        let mut units: Vec<u16> = Vec::new();
        loop {
            match self.ch(self.i) {
                None => {
                    return Err(self.err(
                        start,
                        start + 1,
                        "`\"` to close the string",
                        "end of input".to_string(),
                    ));
                }
                Some('"') => {
                    self.i += 1;
                    break;
                }
                Some('\\') => units.push(self.escape()?),
                Some(c) => {
                    let mut buf = [0u16; 2];
                    units.extend_from_slice(c.encode_utf16(&mut buf));
                    self.i += 1;
                }
            }
        }
        let text = String::from_utf16(&units).map_err(|_| {
            self.err(
                start,
                self.i,
                "a string without unpaired surrogate escapes",
                quote(self.span(start, self.i).text(self.src)),
            )
        })?;
        Ok(Token {
            kind: Tok::Str(text),
            span: self.span(start, self.i),
        })
    }

    fn handle(&mut self) -> Result<Token, ParseError> {
        let start = self.i;
        let well_formed = self.ch(start + 1) == Some('0')
            && matches!(self.ch(start + 2), Some('x' | 'X'))
            && self.ch(start + 3).is_some_and(|d| d.is_ascii_hexdigit());
        if !well_formed {
            let mut end = start + 1;
            while self.ch(end).is_some_and(is_ident_part) {
                end += 1;
            }
            return Err(self.err(
                start,
                end,
                "a handle like `@0x1f4c` after `@`",
                quote(self.span(start, end).text(self.src)),
            ));
        }
        self.i = start + 3;
        let mut text = String::new();
        self.digits(16, &mut text);
        let value = u64::from_str_radix(&text, 16).map_err(|_| {
            self.err(
                start,
                self.i,
                "a handle of at most 16 hex digits",
                quote(self.span(start, self.i).text(self.src)),
            )
        })?;
        Ok(Token {
            kind: Tok::Handle(value),
            span: self.span(start, self.i),
        })
    }

    fn charset(&mut self) -> Result<Token, ParseError> {
        let start = self.i;
        let name_start = start + 1;
        let mut end = name_start;
        while self
            .ch(end)
            .is_some_and(|c| c.is_alphanumeric() || c == '-' || c == '_')
        {
            end += 1;
        }
        const EXPECTED: &str = "a charset after `#`: `UTF-8`, `ISO-8859-1` (or `latin1`) or `raw`";
        if end == name_start {
            return Err(self.err_at(name_start, EXPECTED));
        }
        let name = self.span(name_start, end).text(self.src);
        let Some(charset) = Charset::from_name(name) else {
            return Err(self.err(name_start, end, EXPECTED, quote(name)));
        };
        self.i = end;
        Ok(Token {
            kind: Tok::Charset(charset),
            span: self.span(start, end),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kinds(src: &str) -> Vec<Tok> {
        tokenize(src).into_iter().map(|t| t.kind).collect()
    }

    fn check(src: &str, expect: &[Tok]) {
        let mut want = expect.to_vec();
        want.push(Tok::Eof);
        assert_eq!(kinds(src), want, "lexing {src:?}");
    }

    fn int(magnitude: u64) -> Tok {
        Tok::Int {
            magnitude,
            long: false,
            hex: false,
        }
    }

    #[test]
    fn numbers_and_dots() {
        use Tok::*;
        check("1..3", &[int(1), DotDot, int(3)]);
        check("1.foo", &[int(1), Dot, Ident("foo".into())]);
        check("1.5.x", &[Double(1.5), Dot, Ident("x".into())]);
        check("1e3", &[Double(1000.0)]);
        check("1E-2", &[Double(0.01)]);
        check("1e", &[int(1), Ident("e".into())]);
        check("2f 2.5F 2d", &[Float(2.0), Float(2.5), Double(2.0)]);
        check(
            "42L 0x1F 0x1fL",
            &[
                Int {
                    magnitude: 42,
                    long: true,
                    hex: false,
                },
                Int {
                    magnitude: 31,
                    long: false,
                    hex: true,
                },
                Int {
                    magnitude: 31,
                    long: true,
                    hex: true,
                },
            ],
        );
        check("1_000_000", &[int(1_000_000)]);
        check("1_", &[int(1), Ident("_".into())]);
        check("0", &[int(0)]);
    }

    #[test]
    fn punctuation() {
        use Tok::*;
        check(
            "a.b..c[?x]!= ! == <= < >= > && || + - * / % ,",
            &[
                Ident("a".into()),
                Dot,
                Ident("b".into()),
                DotDot,
                Ident("c".into()),
                LBracket,
                Question,
                Ident("x".into()),
                RBracket,
                NotEq,
                Bang,
                EqEq,
                Le,
                Lt,
                Ge,
                Gt,
                AndAnd,
                OrOr,
                Plus,
                Minus,
                Star,
                Slash,
                Percent,
                Comma,
            ],
        );
    }

    #[test]
    fn words_handles_charsets() {
        use Tok::*;
        check(
            "this$0 val$order _x this true false null",
            &[
                Ident("this$0".into()),
                Ident("val$order".into()),
                Ident("_x".into()),
                This,
                True,
                False,
                Null,
            ],
        );
        check("@0x1F.y", &[Handle(0x1f), Dot, Ident("y".into())]);
        check("#utf8", &[Charset(super::Charset::Utf8)]);
        check("#Latin1", &[Charset(super::Charset::Latin1)]);
        check("#RAW", &[Charset(super::Charset::Raw)]);
    }

    #[test]
    fn strings_and_chars() {
        use Tok::*;
        check(
            r#"'a' '\n' '\'' '\u0041' '\101'"#,
            &[Char(97), Char(10), Char(39), Char(65), Char(65)],
        );
        check(
            r#""a\"b\\c\n\t\r\u00e9\uD83D\uDE00""#,
            &[Str("a\"b\\c\n\t\ré😀".into())],
        );
    }

    #[test]
    fn errors_end_the_stream() {
        let toks = kinds("a = b");
        assert!(matches!(toks.last(), Some(Tok::Error(_))));
        assert_eq!(toks.len(), 2);
        for bad in [
            "'ab'", "\"x", "@zz", "#utf16", "#", "0x", "'", "''", "&", "|", "~",
        ] {
            let toks = kinds(bad);
            assert!(
                matches!(toks.last(), Some(Tok::Error(_))),
                "{bad:?} lexed as {toks:?}"
            );
        }
    }
}
