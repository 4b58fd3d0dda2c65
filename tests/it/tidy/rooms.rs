//! The rooms of `actors/` and who imports whom, read from the code itself.
//! `actors/` is a crate of its own (`jvmscope-actors`), so the compiler
//! keeps it below the MCP layer and above the core; inside it, a room is a
//! first-level module (`actors/session.rs` and everything under
//! `actors/session/`), and an edge is a path in one room that names another
//! (`crate::jvm::…`, or `super::…` climbing out of the room). The facade
//! (`actors/lib.rs`) sits above every room and is not one. Rooms name each
//! other explicitly: a room that reached another through a facade
//! re-export (`crate::JdwpError`) would hide an edge, so that is refused
//! too.
//!
//! `tests/rooms` prints the graph; the tests below keep it acyclic.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// Room → the rooms it imports.
pub type Graph = BTreeMap<String, BTreeSet<String>>;

/// A source file of the actor layer: its path under `actors/` (with
/// `/` separators, e.g. `session/handle.rs`) and its text.
pub struct Source {
    pub rel: String,
    pub text: String,
}

/// Every `.rs` file under `dir`, as [`Source`]s relative to it.
pub fn read_sources(dir: &Path) -> Vec<Source> {
    let mut files = Vec::new();
    super::rust_files(dir, &mut files);
    files
        .into_iter()
        .filter_map(|p| {
            let rel = p
                .strip_prefix(dir)
                .ok()?
                .to_string_lossy()
                .replace('\\', "/");
            let text = std::fs::read_to_string(&p).ok()?;
            Some(Source { rel, text })
        })
        .collect()
}

/// The module path of a file: `session/handle.rs` → `[session, handle]`,
/// `session.rs` → `[session]`, `lib.rs` (the crate root) → `[]`.
fn module_of(rel: &str) -> Vec<String> {
    let stem = rel.strip_suffix(".rs").unwrap_or(rel);
    let mut parts: Vec<String> = stem.split('/').map(str::to_string).collect();
    if parts.last().is_some_and(|p| p == "mod") || parts == ["lib"] {
        parts.pop();
    }
    parts
}

/// The rooms: every first-level module of the layer.
fn rooms(sources: &[Source]) -> BTreeSet<String> {
    sources
        .iter()
        .filter_map(|s| module_of(&s.rel).into_iter().next())
        .collect()
}

/// The first segments of each path on `line` that starts at the actors'
/// root, at `self` or at `super`, resolved against `module` to a path
/// from the actors' root. `use super::{a, b::c}` yields `a` and `b`.
fn resolved_paths(line: &str, module: &[String]) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    let bytes = line.as_bytes();
    let mut i = 0;
    while i < line.len() {
        let rest = &line[i..];
        let boundary = i == 0 || !(bytes[i - 1].is_ascii_alphanumeric() || bytes[i - 1] == b'_');
        let start = if !boundary {
            None
        } else if let Some(r) = rest.strip_prefix("crate::") {
            Some((Vec::new(), r))
        } else if rest.starts_with("super::") || rest.starts_with("self::") {
            let mut base: Vec<String> = module.to_vec();
            let mut r = rest;
            if let Some(after) = r.strip_prefix("self::") {
                r = after;
            } else {
                while let Some(after) = r.strip_prefix("super::") {
                    base.pop();
                    r = after;
                }
            }
            Some((base, r))
        } else {
            None
        };
        let Some((base, r)) = start else {
            i += rest.chars().next().map_or(1, char::len_utf8);
            continue;
        };
        let names: Vec<&str> = match r.strip_prefix('{') {
            Some(group) => group
                .split('}')
                .next()
                .unwrap_or("")
                .split(',')
                .map(|n| n.trim().split("::").next().unwrap_or("").trim())
                .filter(|n| !n.is_empty())
                .collect(),
            None => vec![
                r.split(|c: char| !(c.is_alphanumeric() || c == '_'))
                    .next()
                    .unwrap_or(""),
            ],
        };
        for n in names {
            let mut full = base.clone();
            full.push(n.to_string());
            out.push(full);
        }
        i += line.len() - r.len() - i;
    }
    out
}

/// Lines of code: `//` comments dropped.
fn code(text: &str) -> impl Iterator<Item = (usize, &str)> {
    text.lines()
        .enumerate()
        .map(|(n, l)| (n + 1, l.split("//").next().unwrap_or("")))
}

/// The room graph of `sources`.
pub fn graph(sources: &[Source]) -> Graph {
    let rooms = rooms(sources);
    let mut g: Graph = rooms.iter().map(|r| (r.clone(), BTreeSet::new())).collect();
    for s in sources {
        let module = module_of(&s.rel);
        let Some(room) = module.first() else { continue };
        for (_, line) in code(&s.text) {
            for path in resolved_paths(line, &module) {
                if let Some(target) = path.first()
                    && target != room
                    && rooms.contains(target)
                    && let Some(edges) = g.get_mut(room)
                {
                    edges.insert(target.clone());
                }
            }
        }
    }
    g
}

/// Places where a room reaches another through the facade's re-exports.
pub fn facade_uses(sources: &[Source]) -> Vec<String> {
    let mut hits = Vec::new();
    for s in sources {
        if module_of(&s.rel).is_empty() {
            continue;
        }
        for (n, line) in code(&s.text) {
            let mut rest = line;
            while let Some(at) = rest.find("crate::") {
                let before = rest[..at].chars().last();
                rest = &rest[at + "crate::".len()..];
                if before != Some('$') && rest.starts_with(|c: char| c.is_ascii_uppercase()) {
                    hits.push(format!("actors/{}:{n}: names the facade", s.rel));
                }
            }
        }
    }
    hits
}

/// Every cycle of `g`, each as the rooms on it (one per strongly
/// connected component of more than one room, or a room importing
/// itself).
pub fn cycles(g: &Graph) -> Vec<Vec<String>> {
    // Tarjan's algorithm over the (small) room graph.
    struct T<'a> {
        g: &'a Graph,
        index: BTreeMap<&'a str, usize>,
        low: BTreeMap<&'a str, usize>,
        stack: Vec<&'a str>,
        on: BTreeSet<&'a str>,
        out: Vec<Vec<String>>,
    }
    fn visit<'a>(t: &mut T<'a>, v: &'a str) {
        let n = t.index.len();
        t.index.insert(v, n);
        t.low.insert(v, n);
        t.stack.push(v);
        t.on.insert(v);
        for w in t.g.get(v).into_iter().flatten() {
            let w = w.as_str();
            if !t.index.contains_key(w) {
                visit(t, w);
                let lw = t.low[w];
                let lv = t.low[v];
                t.low.insert(v, lv.min(lw));
            } else if t.on.contains(w) {
                let iw = t.index[w];
                let lv = t.low[v];
                t.low.insert(v, lv.min(iw));
            }
        }
        if t.low[v] == t.index[v] {
            let mut scc = Vec::new();
            while let Some(w) = t.stack.pop() {
                t.on.remove(w);
                scc.push(w.to_string());
                if w == v {
                    break;
                }
            }
            let self_loop = t.g.get(v).is_some_and(|e| e.contains(v));
            if scc.len() > 1 || self_loop {
                scc.sort();
                t.out.push(scc);
            }
        }
    }
    let mut t = T {
        g,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on: BTreeSet::new(),
        out: Vec::new(),
    };
    for v in g.keys() {
        if !t.index.contains_key(v.as_str()) {
            visit(&mut t, v);
        }
    }
    t.out
}

/// The graph as text, lowest rooms first: each room with what it imports.
pub fn render(g: &Graph) -> String {
    let mut order: Vec<&String> = g.keys().collect();
    // Rooms that import fewer rooms (transitively) come first.
    let reach = |r: &String| {
        let mut seen = BTreeSet::new();
        let mut todo = vec![r];
        while let Some(x) = todo.pop() {
            for y in g.get(x).into_iter().flatten() {
                if seen.insert(y) {
                    todo.push(y);
                }
            }
        }
        seen.len()
    };
    order.sort_by_key(|r| (reach(r), r.as_str()));
    let mut out = String::new();
    for r in order {
        let deps: Vec<&str> = g[r].iter().map(String::as_str).collect();
        let deps = if deps.is_empty() {
            "(nothing)".to_string()
        } else {
            deps.join(", ")
        };
        out.push_str(&format!("{r:<12} imports {deps}\n"));
    }
    out
}

fn actors() -> Vec<Source> {
    read_sources(&super::root().join("actors"))
}

fn src(rel: &str, text: &str) -> Source {
    Source {
        rel: rel.to_string(),
        text: text.to_string(),
    }
}

#[test]
fn the_rooms_of_the_actor_layer_import_each_other_in_no_circle() {
    let g = graph(&actors());
    assert!(g.contains_key("session") && g.contains_key("jvm"), "{g:?}");
    let found = cycles(&g);
    assert!(
        found.is_empty(),
        "rooms importing each other in a circle: {found:?}\n{}",
        render(&g)
    );
    let facade = facade_uses(&actors());
    assert!(facade.is_empty(), "{}", facade.join("\n"));
}

#[test]
fn a_deliberate_cycle_is_caught_through_every_kind_of_path() {
    // `a` imports `b` by its full path, `b` imports `c` from inside a
    // nested module with `super::super`, `c` imports `a` in a group.
    let sources = [
        src("lib.rs", "mod a;\nmod b;\nmod c;\n"),
        src("a.rs", "use crate::b::Thing;\n"),
        src("b.rs", "mod inner;\n"),
        src("b/inner.rs", "use super::super::c::Other; // c\n"),
        src("c.rs", "use crate::{a::X, error};\n"),
        src("error.rs", "// crate::a is only a comment here\n"),
    ];
    let g = graph(&sources);
    assert_eq!(
        cycles(&g),
        vec![vec!["a".to_string(), "b".into(), "c".into()]]
    );
    assert!(g["error"].is_empty(), "a comment is no edge: {g:?}");
    // Inside a room, paths stay in it.
    let inside = [src("b.rs", "mod x;\n"), src("b/x.rs", "use super::y;\n")];
    assert!(cycles(&graph(&inside)).is_empty());
    // The facade hides edges, so a room may not name it.
    let facade = [src("a.rs", "use crate::JdwpError;\n")];
    assert_eq!(facade_uses(&facade).len(), 1);
}

/// Prints the graph (`tests/rooms` runs this with the output shown).
#[test]
#[expect(clippy::print_stdout, reason = "the graph is this test's output")]
fn print_the_room_graph() {
    let out = render(&graph(&actors()));
    assert!(!out.is_empty());
    println!("{out}");
}
