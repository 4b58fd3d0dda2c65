//! Where code is, as every label says it: `com.acme.Foo.bar:42`,
//! `com.acme.Foo.bar:native`, `com.acme.Foo.bar:?` (line unknown), or
//! without the line part where none is meant. Built here alone, so a hit, a
//! frame, a probe record and a refusal name a place in one way.

use std::fmt;

/// The line part of a label.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LineAt {
    /// `:42`.
    At(i64),
    /// `:native`: a native method has no lines.
    Native,
    /// `:?`: the line is not known.
    Unknown,
    /// No line part at all (`Class.method`).
    Omitted,
}

impl LineAt {
    /// `At` a known line, else `Unknown`.
    pub fn known(line: Option<i64>) -> LineAt {
        line.map_or(LineAt::Unknown, LineAt::At)
    }
}

/// A place in code: `class.method:line`. Renders with `Display`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CodeLabel<'a> {
    /// The class's Java name (`com.acme.Foo`), or the already qualified
    /// `class.method` when `method` is `None`.
    pub class: &'a str,
    pub method: Option<&'a str>,
    pub line: LineAt,
}

impl<'a> CodeLabel<'a> {
    pub fn new(class: &'a str, method: Option<&'a str>, line: LineAt) -> Self {
        CodeLabel {
            class,
            method,
            line,
        }
    }

    /// A frame's label: `?` for a method that cannot be read, `native`
    /// for a native method, `?` for a line that cannot be.
    pub fn frame(class: &'a str, method: Option<&'a str>, native: bool, line: Option<i64>) -> Self {
        let line = if native {
            LineAt::Native
        } else {
            LineAt::known(line)
        };
        CodeLabel::new(class, Some(method.unwrap_or("?")), line)
    }
}

impl fmt::Display for CodeLabel<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.class)?;
        if let Some(m) = self.method {
            write!(f, ".{m}")?;
        }
        match self.line {
            LineAt::At(l) => write!(f, ":{l}"),
            LineAt::Native => f.write_str(":native"),
            LineAt::Unknown => f.write_str(":?"),
            LineAt::Omitted => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    #[test]
    fn every_line_part() {
        let at = |line| CodeLabel::new("com.acme.Foo", Some("bar"), line).to_string();
        assert_eq!(at(LineAt::At(42)), "com.acme.Foo.bar:42");
        assert_eq!(at(LineAt::Native), "com.acme.Foo.bar:native");
        assert_eq!(at(LineAt::Unknown), "com.acme.Foo.bar:?");
        assert_eq!(at(LineAt::Omitted), "com.acme.Foo.bar");
        assert_eq!(
            CodeLabel::new("Foo", None, LineAt::At(3)).to_string(),
            "Foo:3"
        );
        assert_eq!(
            CodeLabel::frame("a.B", None, false, Some(7)).to_string(),
            "a.B.?:7"
        );
        assert_eq!(
            CodeLabel::frame("a.B", Some("run"), true, Some(7)).to_string(),
            "a.B.run:native"
        );
        assert_eq!(
            CodeLabel::frame("a.B", Some("run"), false, None).to_string(),
            "a.B.run:?"
        );
    }

    proptest! {
        #[test]
        fn a_label_splits_back_into_its_parts(
            class in "[a-z]{1,5}(\\.[A-Z][a-z$]{0,5}){1,3}",
            method in "[a-z<>]{1,8}",
            line in 0i64..100_000,
        ) {
            let text = CodeLabel::new(&class, Some(&method), LineAt::At(line)).to_string();
            let (qualified, l) = text.rsplit_once(':').expect("a line part");
            prop_assert_eq!(l.parse::<i64>().ok(), Some(line));
            prop_assert_eq!(qualified.rsplit_once('.'), Some((class.as_str(), method.as_str())));
        }
    }
}
