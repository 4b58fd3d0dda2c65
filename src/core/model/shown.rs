//! Values as read from a JVM for someone to look at: plain data, already
//! bounded by the reader's budgets (string length, elements, depth), with
//! nothing left to fetch. The actors build these; the MCP layer turns them
//! into text.

use super::Prim;

/// A primitive value, null, or the void a method returned.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Scalar {
    Prim(Prim),
    Null,
    /// A method that returned nothing.
    Void,
}

/// A string's characters, cut to the reader's budget.
#[derive(Debug, Clone, PartialEq)]
pub struct Cut {
    /// The characters kept, from the start.
    pub text: String,
    /// How many characters were left out after `text`.
    pub omitted: usize,
}

impl Cut {
    /// Keeps the first `max` characters of `s`.
    pub fn new(s: &str, max: usize) -> Self {
        let total = s.chars().count();
        if total <= max {
            return Self {
                text: s.to_string(),
                omitted: 0,
            };
        }
        Self {
            text: s.chars().take(max).collect(),
            omitted: total - max,
        }
    }
}

/// Why a `toString()` shown beside an object gave no text.
#[derive(Debug, Clone, PartialEq)]
pub enum ToStringFailure {
    /// It threw.
    Threw,
    /// It had not returned within the invoke budget, and was cancelled
    /// (or, when `cancelled` is false, could not be and still runs).
    Late { ms: u128, cancelled: bool },
    /// The JVM refused or failed the call.
    Failed(String),
}

/// Elements read from an array, or why they could not be.
#[derive(Debug, Clone, PartialEq)]
pub enum Elements {
    /// Not read (a rendering that reads only the length).
    NotRead,
    Read(Vec<Shown>),
    Unreadable(String),
}

/// One value, as read.
#[derive(Debug, Clone, PartialEq)]
pub enum Shown {
    Scalar(Scalar),
    /// A string (in the JVM, or a literal of the expression).
    Text(Cut),
    /// A class, for static members, and its loader when known.
    Class {
        name: String,
        loader: Option<u64>,
    },
    /// A boxed primitive, unboxed.
    Boxed {
        value: Scalar,
        type_name: String,
        id: u64,
    },
    /// An enum constant, by its name.
    Enum {
        constant: String,
        type_name: String,
        id: u64,
    },
    /// Any other object, with its `toString()` when one was asked for.
    Object {
        type_name: String,
        id: u64,
        to_string: Option<Result<Cut, ToStringFailure>>,
    },
    /// An array: its length and the first elements.
    Array {
        elem: String,
        id: u64,
        len: i32,
        elements: Elements,
    },
    /// A `byte[]` or `char[]` decoded as text.
    Decoded {
        elem: String,
        id: u64,
        len: i32,
        encoding: &'static str,
        text: Cut,
    },
    /// The elements of a slice or a collection.
    Many {
        total: usize,
        items: Vec<Shown>,
    },
    /// The entries of a map or a slice of one.
    Entries {
        total: usize,
        entries: Vec<(Shown, Shown)>,
    },
    /// The object was collected: handles are weak references.
    Vanished {
        id: u64,
    },
    /// The object could not be read; `type_name` when that much was known.
    Unreadable {
        id: u64,
        type_name: Option<String>,
        why: String,
    },
    /// A value of no kind the reader knows.
    Unknown,
}

impl Shown {
    /// Methods the reading ran in the JVM: an object's `toString()`,
    /// which is application code and may change state like any call.
    pub fn invocations(&self) -> usize {
        match self {
            Shown::Object {
                to_string: Some(_), ..
            } => 1,
            Shown::Many { items, .. } => items.iter().map(Shown::invocations).sum(),
            Shown::Entries { entries, .. } => entries
                .iter()
                .map(|(k, v)| k.invocations() + v.invocations())
                .sum(),
            Shown::Array {
                elements: Elements::Read(items),
                ..
            } => items.iter().map(Shown::invocations).sum(),
            _ => 0,
        }
    }
}

/// How a child of a tree node is reached from its parent.
#[derive(Debug, Clone, PartialEq)]
pub enum Edge {
    Field(String),
    Index(usize),
    Key(Shown),
    /// The one value a wrapper (`Optional`) holds.
    Held,
}

/// A field tree: a value, the values below it, and what the budgets cut.
#[derive(Debug, Clone, PartialEq)]
pub struct Tree {
    pub head: Shown,
    /// The object was already shown higher up.
    pub cycle: bool,
    pub children: Vec<(Edge, Tree)>,
    /// Fields left out by the breadth budget.
    pub more_fields: usize,
}

impl Tree {
    /// A node with nothing below it.
    pub fn leaf(head: Shown) -> Self {
        Self {
            head,
            cycle: false,
            children: Vec::new(),
            more_fields: 0,
        }
    }
}

/// A value reported beside an event or a trace snapshot.
#[derive(Debug, Clone, PartialEq)]
pub enum Detail {
    /// A value read from the JVM.
    Value(Shown),
    /// A field's value before and after a write (`None`: not known).
    Change { old: Option<Shown>, new: Shown },
    /// An exception: its type and id.
    Exception { type_name: String, id: u64 },
    /// An exception's message, computed by HotSpot's helpful NPE text.
    HelpfulMessage(Shown),
    /// Why an exception's message could not be shown.
    NoMessage(MessageGap),
    /// A name or a code location, already in Java terms.
    Text(String),
    /// A yes or no the event carries.
    Flag(bool),
    /// The time between the two events of a pair, in ms, or why unknown.
    Duration(Result<u128, Unmeasured>),
    /// How long a call took, in ns, timed in the JVM by a probe.
    CallTime(u64),
    /// Where a timed call's time went, by call site.
    Callees(super::callees::Callees),
    /// The timeout passed to `Object.wait`, in ms.
    WaitTimeout(i64),
    /// The same exception thrown again: how often, and the first sites.
    Rethrown { count: u64, sites: Vec<String> },
    /// A trace expression that failed, with the evaluator's reason.
    Failed(String),
}

/// How an evaluation read what it read, when the agent should know.
#[derive(Debug, Clone, PartialEq)]
pub enum EvalNote {
    /// Several class loaders hold the class; the first copy answered.
    SeveralLoaders {
        class: String,
        copies: usize,
        loader: u64,
    },
    /// A static was missing from the first copy and read from another.
    FromOtherCopy {
        class: String,
        member: String,
        copy: usize,
        copies: usize,
        loader: u64,
    },
    /// A list read by walking its fields.
    WalkedList { class: String },
    /// A map read by walking its fields, without its lock.
    WalkedMap { class: String },
    /// A map of a kind not read structurally: `get()` was called.
    CalledGet { class: String },
    /// A collection not read structurally: `toArray()` was called.
    CalledToArray { class: String },
    /// The map was being resized: moved entries were not read.
    MapResizing,
}

/// What a reported hit held, when it is not what its stop point asked.
#[derive(Debug, Clone, PartialEq)]
pub enum HitNote {
    /// Suspending the VM after the hit matched failed; the application may
    /// still be running.
    EscalationFailed(String),
    /// Matched on the hit thread, then the VM was suspended: other threads
    /// ran for one round trip.
    Escalated,
    /// A suspending probe's condition matched in the JVM; the hit thread
    /// stepped out of the probe's helper, then the VM was suspended.
    EscalatedFromProbe,
    /// The condition gave neither true nor false: nothing was suspended.
    Undecided,
    /// A resume released its thread before the agent read the event.
    ReleasedUnread,
    /// The VM was already held for the agent by another hit: this hit's
    /// own suspension was undone, so one continue releases both.
    Stacked,
}

/// Why a snapshot has no locals.
#[derive(Debug, Clone, PartialEq)]
pub enum LocalsGap {
    /// The class has no local variable table (compiled without `-g`?).
    NoVariableTable,
    /// Reading them failed.
    Unreadable(String),
}

/// Why an exception carries no message to show.
#[derive(Debug, Clone, PartialEq)]
pub enum MessageGap {
    /// HotSpot computes an NPE's helpful text only in `getMessage()`, and
    /// read-only mode refuses the invocation.
    ReadOnly,
    /// The trace holds no thread to invoke `getMessage()` on.
    NoHeldThread,
    /// `getMessage()` failed.
    Failed(String),
}

/// Why a pair's duration is not known.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Unmeasured {
    /// The opening event was not seen.
    OpeningNotSeen,
    /// Only this half of the pair is armed.
    HalfArmed,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cut_counts_characters_not_bytes() {
        assert_eq!(
            Cut::new("héllo", 2),
            Cut {
                text: "hé".into(),
                omitted: 3
            }
        );
        assert_eq!(Cut::new("ab", 2).omitted, 0);
    }
}
