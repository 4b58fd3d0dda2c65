//! Who holds an object: the chain of referrers from a root JDWP can see
//! (a static field, a `Thread`, a class loader) down to the object, each
//! link named by its field or array index, and the insides of JDK
//! collections folded into one step (`HashMap.table[12] → HashMap$Node.value`
//! reads as one step into a `HashMap`'s values). Pure: the actors walk
//! the heap, this names what they found; `from_dump` finds the chain in
//! a heap dump in one pass.

pub mod from_dump;

/// How one object refers to the next.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Link {
    Field(String),
    Index(usize),
    /// The referrer holds it by a reference the reader could not place
    /// (a field of a type it could not read, an array past the read bound).
    Unknown,
}

/// One object on the chain and how it refers to the next one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hop {
    /// Dotted class name of the referring object.
    pub class: String,
    pub object: u64,
    pub link: Link,
}

/// Where the chain starts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Root {
    /// `class.field`, a static field.
    Static { class: String, field: String },
    /// A `Thread` object (its fields, or its stack through it).
    Thread { name: String, object: u64 },
    /// A class loader (the classes and objects it keeps).
    Loader { class: String, object: u64 },
    /// A local of a thread's stack (a Java or JNI frame, its native stack,
    /// or a thread blocked on the object), as a heap dump lists it.
    Stack { thread: String },
    /// A root of the JVM's own (a JNI global reference, a monitor in use,
    /// one a dump does not explain), as a heap dump lists it.
    Jvm(JvmRoot),
    /// Nothing on the heap refers to the first object of the chain: it is
    /// held from a stack frame or by JNI (or it is garbage not yet freed).
    NoHeapReferrer,
    /// The walk stopped before reaching a root.
    Stopped(StopReason),
}

/// A root the JVM itself keeps.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum JvmRoot {
    JniGlobal,
    Monitor,
    Other,
}

/// Why a walk ended without a root.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StopReason {
    /// `max_pause_ms` was spent.
    Budget,
    /// Every path went deeper than the depth bound.
    Depth,
    /// Every referrer was visited already, or had none (a cycle of garbage).
    Exhausted,
}

/// A walk's answer: the root, then the hops from it to the object.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Chain {
    pub root: Root,
    /// Root side first; the last hop refers to the object itself.
    pub hops: Vec<Hop>,
}

/// One step of a chain as shown.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Step {
    Plain(Hop),
    /// A collection entered and left in one step: the collection, what its
    /// insides hold the next object as (`value`, `key`, `[3]`), and how
    /// many hops were folded.
    Collection {
        class: String,
        object: u64,
        role: String,
        folded: usize,
    },
}

/// Whether a class is a JDK collection whose insides are folded.
fn is_collection(class: &str) -> bool {
    (class.starts_with("java.util.") && !class.contains('$') && !class.ends_with("[]"))
        || class.starts_with("java.util.Collections$")
        || class.starts_with("java.util.ImmutableCollections$")
}

/// Whether a class is part of a collection's insides: its nodes, entries,
/// tables and the arrays it keeps elements in.
fn is_inside(class: &str) -> bool {
    class.starts_with("java.util.") || class == "java.lang.Object[]"
}

/// How a link reads as a role.
fn role(link: &Link) -> String {
    match link {
        Link::Field(f) => f.clone(),
        Link::Index(i) => format!("[{i}]"),
        Link::Unknown => "?".into(),
    }
}

/// Folds each collection's insides into one step.
pub fn fold(hops: &[Hop]) -> Vec<Step> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < hops.len() {
        let hop = &hops[i];
        if is_collection(&hop.class) {
            let mut end = i;
            while end + 1 < hops.len() && is_inside(&hops[end + 1].class) {
                end += 1;
            }
            out.push(Step::Collection {
                class: hop.class.clone(),
                object: hop.object,
                role: role(&hops[end].link),
                folded: end - i + 1,
            });
            i = end + 1;
        } else {
            out.push(Step::Plain(hop.clone()));
            i += 1;
        }
    }
    out
}

/// The whole chain in one line, ending at `target`, after `root` (the
/// root as the caller words it): `Leak.CACHE → HashMap{value} → Leak$Payload@0x1f`;
/// without a handle (`None`: the object was found in a dump) the class alone.
pub fn chain_line(root: &str, chain: &Chain, target_class: &str, target: Option<u64>) -> String {
    let mut parts = vec![root.to_string()];
    for step in fold(&chain.hops) {
        parts.push(match step {
            Step::Plain(h) => match &h.link {
                Link::Field(f) => format!("{}.{f}", short(&h.class)),
                Link::Index(i) => format!("{}[{i}]", short(&h.class)),
                Link::Unknown => format!("{}@{:#x}", short(&h.class), h.object),
            },
            Step::Collection { class, role, .. } => format!("{}{{{role}}}", short(&class)),
        });
    }
    parts.push(match target {
        Some(t) => format!("{}@{t:#x}", short(target_class)),
        None => short(target_class).to_string(),
    });
    parts.join(" → ")
}

/// The whole chain hop by hop, nothing folded, ending at the class of
/// the object held: `static Cache.ENTRIES → HashMap.table → [1234] →
/// HashMap$Node.value → Cache$Item`. An array hop shows its index alone.
pub fn path_line(root: &str, chain: &Chain, target_class: &str) -> String {
    let mut parts = vec![root.to_string()];
    for h in &chain.hops {
        parts.push(match &h.link {
            Link::Field(f) => format!("{}.{f}", short(&h.class)),
            Link::Index(i) => format!("[{i}]"),
            Link::Unknown => short(&h.class).to_string(),
        });
    }
    parts.push(short(target_class).to_string());
    parts.join(" → ")
}

/// `java.util.HashMap$Node` → `HashMap$Node`; `com.acme.Tile[]` → `Tile[]`.
pub fn short(class: &str) -> &str {
    class.rsplit('.').next().unwrap_or(class)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hop(class: &str, link: Link) -> Hop {
        Hop {
            class: class.into(),
            object: 1,
            link,
        }
    }

    #[test]
    fn a_hash_map_folds_into_one_step() {
        let chain = Chain {
            root: Root::Static {
                class: "Leak".into(),
                field: "CACHE".into(),
            },
            hops: vec![
                hop("java.util.HashMap", Link::Field("table".into())),
                hop("java.util.HashMap$Node[]", Link::Index(12)),
                hop("java.util.HashMap$Node", Link::Field("next".into())),
                hop("java.util.HashMap$Node", Link::Field("value".into())),
                hop("Leak$Payload", Link::Field("data".into())),
            ],
        };
        let steps = fold(&chain.hops);
        assert_eq!(steps.len(), 2);
        assert!(matches!(&steps[0], Step::Collection { role, folded: 4, .. } if role == "value"));
        assert_eq!(
            chain_line("Leak.CACHE", &chain, "byte[]", Some(0x2a)),
            "Leak.CACHE → HashMap{value} → Leak$Payload.data → byte[]@0x2a"
        );
    }

    #[test]
    fn a_set_of_a_map_and_a_list_fold_too() {
        let hops = vec![
            hop("java.util.HashSet", Link::Field("map".into())),
            hop("java.util.HashMap", Link::Field("table".into())),
            hop("java.util.HashMap$Node[]", Link::Index(3)),
            hop("java.util.HashMap$Node", Link::Field("key".into())),
            hop("com.acme.Holder", Link::Field("items".into())),
            hop("java.util.ArrayList", Link::Field("elementData".into())),
            hop("java.lang.Object[]", Link::Index(7)),
        ];
        let steps = fold(&hops);
        assert_eq!(steps.len(), 3);
        assert!(
            matches!(&steps[0], Step::Collection { class, role, .. } if class == "java.util.HashSet" && role == "key")
        );
        assert!(matches!(&steps[2], Step::Collection { role, .. } if role == "[7]"));
    }
}
