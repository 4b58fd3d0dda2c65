//! The loaded-class listing as plain data: which types the JVM has loaded
//! (one entry per name, however many class loaders hold a copy), and the
//! filter and page an agent asks for. Pure: the actors read the JVM, the
//! MCP layer renders.

use super::stop_point::glob_matches;

/// What kind of type a loaded class is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum TypeKind {
    Class,
    Interface,
    Array,
}

/// One loaded type, by its dotted name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LoadedClass {
    /// `com.example.Order`, `int[]`.
    pub name: String,
    pub kind: TypeKind,
    /// How many class loaders hold a copy (each with its own statics).
    pub copies: usize,
}

/// How a listing is narrowed, matched against the dotted name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NameFilter {
    /// Everything.
    Any,
    /// A pattern with `*` (`com.example.*`, `*.OrderService`, `*Order*`).
    Glob(String),
    /// A bare string, matched anywhere in the name.
    Contains(String),
}

impl NameFilter {
    /// Reads a filter as an agent writes it; empty means everything.
    pub fn parse(raw: Option<&str>) -> Self {
        match raw.map(str::trim) {
            None | Some("") | Some("*") => NameFilter::Any,
            Some(p) if p.contains('*') => NameFilter::Glob(p.to_string()),
            Some(p) => NameFilter::Contains(p.to_string()),
        }
    }

    pub fn matches(&self, name: &str) -> bool {
        match self {
            NameFilter::Any => true,
            NameFilter::Glob(p) => glob_matches(p, name),
            NameFilter::Contains(s) => name.contains(s.as_str()),
        }
    }
}

/// One page of a filtered listing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClassPage {
    /// Types loaded (arrays included only when asked for).
    pub loaded: usize,
    /// Of those, how many the filter matched.
    pub matched: usize,
    /// Index of the first one shown.
    pub offset: usize,
    pub shown: Vec<LoadedClass>,
}

/// Filters `classes` (sorted by name) and cuts the page
/// `offset..offset + limit`.
pub fn page(
    mut classes: Vec<LoadedClass>,
    filter: &NameFilter,
    include_arrays: bool,
    offset: usize,
    limit: usize,
) -> ClassPage {
    classes.retain(|c| include_arrays || c.kind != TypeKind::Array);
    let loaded = classes.len();
    classes.retain(|c| filter.matches(&c.name));
    classes.sort_by(|a, b| a.name.cmp(&b.name));
    let matched = classes.len();
    let shown = classes.into_iter().skip(offset).take(limit).collect();
    ClassPage {
        loaded,
        matched,
        offset,
        shown,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn class(name: &str, kind: TypeKind) -> LoadedClass {
        LoadedClass {
            name: name.into(),
            kind,
            copies: 1,
        }
    }

    fn names(p: &ClassPage) -> Vec<&str> {
        p.shown.iter().map(|c| c.name.as_str()).collect()
    }

    #[test]
    fn filters_read_as_prefix_suffix_or_substring() {
        let all = || {
            vec![
                class("com.example.OrderService", TypeKind::Class),
                class("com.example.Order", TypeKind::Class),
                class("org.other.OrderService", TypeKind::Interface),
                class("com.example.Order[]", TypeKind::Array),
            ]
        };
        let p = page(
            all(),
            &NameFilter::parse(Some("com.example.*")),
            false,
            0,
            10,
        );
        assert_eq!(names(&p), ["com.example.Order", "com.example.OrderService"]);
        assert_eq!((p.loaded, p.matched), (3, 2));
        let p = page(
            all(),
            &NameFilter::parse(Some("*.OrderService")),
            false,
            0,
            10,
        );
        assert_eq!(
            names(&p),
            ["com.example.OrderService", "org.other.OrderService"]
        );
        let p = page(all(), &NameFilter::parse(Some("Order")), true, 0, 10);
        assert_eq!((p.loaded, p.matched), (4, 4));
        let p = page(all(), &NameFilter::parse(None), false, 1, 1);
        assert_eq!(names(&p), ["com.example.OrderService"]);
        assert_eq!((p.matched, p.offset), (3, 1));
    }
}
