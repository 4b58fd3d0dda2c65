//! Small dumps built by hand, the way HotSpot lays them out, and arbitrary
//! bytes that must never make the reader panic.

use proptest::prelude::*;

use super::*;
use crate::model::holders::path_line;
use crate::model::hprof::{Dump, HprofError, OBJECT};

const INT: u8 = 10;
const BYTE: u8 = 8;

/// Writes an HPROF file: top-level records, and one heap dump segment.
struct Builder {
    id_size: usize,
    out: Vec<u8>,
    heap: Vec<u8>,
    next_name: u64,
}

impl Builder {
    fn new(id_size: usize) -> Builder {
        let mut out = b"JAVA PROFILE 1.0.2\0".to_vec();
        out.extend((id_size as u32).to_be_bytes());
        out.extend([0u8; 8]);
        Builder {
            id_size,
            out,
            heap: Vec::new(),
            next_name: 0x9000,
        }
    }

    fn id(&self, buf: &mut Vec<u8>, v: u64) {
        buf.extend(&v.to_be_bytes()[8 - self.id_size..]);
    }

    fn record(&mut self, tag: u8, body: &[u8]) {
        self.out.push(tag);
        self.out.extend(0u32.to_be_bytes());
        self.out.extend((body.len() as u32).to_be_bytes());
        self.out.extend(body);
    }

    /// A UTF8 record; returns its id.
    fn name(&mut self, text: &str) -> u64 {
        self.next_name += 1;
        let mut body = Vec::new();
        self.id(&mut body, self.next_name);
        body.extend(text.as_bytes());
        self.record(0x01, &body);
        self.next_name
    }

    /// A LOAD CLASS record and a CLASS DUMP: `statics` are object statics
    /// (name, value); `fields` the declared instance fields (name, type).
    fn class(
        &mut self,
        id: u64,
        name: &str,
        sup: u64,
        statics: &[(&str, u64)],
        fields: &[(&str, u8)],
    ) {
        let name_id = self.name(name);
        let mut body = 1u32.to_be_bytes().to_vec();
        self.id(&mut body, id);
        body.extend(0u32.to_be_bytes());
        self.id(&mut body, name_id);
        self.record(0x02, &body);
        let statics: Vec<(u64, u64)> = statics.iter().map(|(n, v)| (self.name(n), *v)).collect();
        let fields: Vec<(u64, u8)> = fields.iter().map(|(n, t)| (self.name(n), *t)).collect();
        let mut h = vec![0x20];
        self.id(&mut h, id);
        h.extend(0u32.to_be_bytes());
        self.id(&mut h, sup);
        for _ in 0..5 {
            self.id(&mut h, 0);
        }
        h.extend(16u32.to_be_bytes());
        h.extend(1u16.to_be_bytes());
        h.extend([0, 1, INT, 0, 0, 0, 7]);
        h.extend((statics.len() as u16 + 1).to_be_bytes());
        let count = self.name("COUNT");
        self.id(&mut h, count);
        h.extend([INT, 0, 0, 0, 3]);
        for (n, v) in statics {
            self.id(&mut h, n);
            h.push(OBJECT);
            self.id(&mut h, v);
        }
        h.extend((fields.len() as u16).to_be_bytes());
        for (n, t) in fields {
            self.id(&mut h, n);
            h.push(t);
        }
        self.heap.extend(h);
    }

    /// An INSTANCE DUMP; `values` are the field bytes in record order.
    fn instance(&mut self, id: u64, class: u64, values: &[u8]) {
        let mut h = vec![0x21];
        self.id(&mut h, id);
        h.extend(0u32.to_be_bytes());
        self.id(&mut h, class);
        h.extend((values.len() as u32).to_be_bytes());
        h.extend(values);
        self.heap.extend(h);
    }

    /// Field bytes of object references.
    fn refs(&self, ids: &[u64]) -> Vec<u8> {
        let mut b = Vec::new();
        for v in ids {
            self.id(&mut b, *v);
        }
        b
    }

    fn object_array(&mut self, id: u64, class: u64, elements: &[u64]) {
        let mut h = vec![0x22];
        self.id(&mut h, id);
        h.extend(0u32.to_be_bytes());
        h.extend((elements.len() as u32).to_be_bytes());
        self.id(&mut h, class);
        for e in elements {
            self.id(&mut h, *e);
        }
        self.heap.extend(h);
    }

    fn bytes(&mut self, id: u64, data: &[u8]) {
        let mut h = vec![0x23];
        self.id(&mut h, id);
        h.extend(0u32.to_be_bytes());
        h.extend((data.len() as u32).to_be_bytes());
        h.push(BYTE);
        h.extend(data);
        self.heap.extend(h);
    }

    /// A `Thread` named `name` (a compact Latin-1 string), its root, and
    /// the classes it needs; `string_class` and `thread_class` are free ids.
    fn thread(&mut self, object: u64, serial: u32, name: &str, base: u64) {
        let (string_class, thread_class, string, value) = (base, base + 1, base + 2, base + 3);
        self.class(
            string_class,
            "java/lang/String",
            0,
            &[],
            &[("value", OBJECT), ("coder", BYTE)],
        );
        self.class(
            thread_class,
            "java/lang/Thread",
            0,
            &[],
            &[("tid", INT), ("name", OBJECT)],
        );
        self.bytes(value, name.as_bytes());
        let mut s = self.refs(&[value]);
        s.push(0);
        self.instance(string, string_class, &s);
        let mut t = 1u32.to_be_bytes().to_vec();
        t.extend(self.refs(&[string]));
        self.instance(object, thread_class, &t);
        let mut h = vec![0x08];
        self.id(&mut h, object);
        h.extend(serial.to_be_bytes());
        h.extend(0u32.to_be_bytes());
        self.heap.extend(h);
    }

    /// A local of thread `serial`'s frame 0 holds `object`.
    fn frame_root(&mut self, object: u64, serial: u32) {
        let mut h = vec![0x03];
        self.id(&mut h, object);
        h.extend(serial.to_be_bytes());
        h.extend(0u32.to_be_bytes());
        self.heap.extend(h);
    }

    fn finish(mut self) -> Vec<u8> {
        let heap = std::mem::take(&mut self.heap);
        self.record(0x1C, &heap);
        self.record(0x2C, &[]);
        self.out
    }
}

/// `Cache.ENTRIES` → a `HashMap` whose table's slot 2 holds a node whose
/// `next` node holds an `Item` as its value. `held_by_stack` also puts
/// the item in a local of thread "main"; `static_too` false leaves the
/// map out of the static (the item is then held by the stack alone).
fn cache_dump(id_size: usize, static_too: bool, held_by_stack: bool) -> Vec<u8> {
    let mut b = Builder::new(id_size);
    b.class(
        0x100,
        "java/util/HashMap",
        0,
        &[],
        &[("size", INT), ("table", OBJECT)],
    );
    b.class(0x101, "[Ljava/util/HashMap$Node;", 0, &[], &[]);
    b.class(
        0x102,
        "java/util/HashMap$Node",
        0,
        &[],
        &[
            ("hash", INT),
            ("key", OBJECT),
            ("value", OBJECT),
            ("next", OBJECT),
        ],
    );
    b.class(0x103, "Cache$Item", 0x104, &[], &[("id", INT)]);
    b.class(0x104, "Cache$Base", 0, &[], &[("payload", OBJECT)]);
    let map = if static_too { 0x1000 } else { 0 };
    b.class(0x105, "Cache", 0, &[("ENTRIES", map), ("OTHER", 0)], &[]);
    let mut m = 2u32.to_be_bytes().to_vec();
    m.extend(b.refs(&[0x2000]));
    b.instance(0x1000, 0x100, &m);
    b.object_array(0x2000, 0x101, &[0, 0, 0x3000, 0]);
    for (node, key, value, next) in [
        (0x3000, 0x5000, 0x5001, 0x3001),
        (0x3001, 0x5002, 0x4000, 0),
    ] {
        let mut n = 9u32.to_be_bytes().to_vec();
        n.extend(b.refs(&[key, value, next]));
        b.instance(node, 0x102, &n);
    }
    for (item, payload) in [(0x4000, 0x6000), (0x4001, 0)] {
        let mut i = 5u32.to_be_bytes().to_vec();
        i.extend(b.refs(&[payload]));
        b.instance(item, 0x103, &i);
    }
    b.bytes(0x6000, &[1, 2, 3]);
    b.thread(0x7000, 1, "main", 0x800);
    if held_by_stack {
        b.frame_root(0x4000, 1);
    }
    b.finish()
}

fn hop(class: &str, link: Link) -> (String, Link) {
    (class.to_string(), link)
}

fn check(dump: &[u8], class: &str, root: Root, hops: &[(String, Link)]) -> DumpHolders {
    let dump = Dump::parse(dump).expect("the dump parses");
    let found = holders_in_dump(&dump, class).expect("an instance");
    assert_eq!(found.chain.root, root);
    let got: Vec<(String, Link)> = found
        .chain
        .hops
        .iter()
        .map(|h| (h.class.clone(), h.link.clone()))
        .collect();
    assert_eq!(got, hops);
    found
}

fn cache_hops() -> Vec<(String, Link)> {
    vec![
        hop("java.util.HashMap", Link::Field("table".into())),
        hop("java.util.HashMap$Node[]", Link::Index(2)),
        hop("java.util.HashMap$Node", Link::Field("next".into())),
        hop("java.util.HashMap$Node", Link::Field("value".into())),
    ]
}

fn entries() -> Root {
    Root::Static {
        class: "Cache".into(),
        field: "ENTRIES".into(),
    }
}

#[test]
fn holders_of_a_map_value_name_the_static_and_every_hop() {
    for id_size in [8, 4] {
        let found = check(
            &cache_dump(id_size, true, false),
            "Cache$Item",
            entries(),
            &cache_hops(),
        );
        assert_eq!(found.target, 0x4000);
        assert_eq!(found.target_class, "Cache$Item");
        assert_eq!(found.instances, 2, "the unreachable item is counted too");
        assert_eq!(
            path_line("static Cache.ENTRIES", &found.chain, &found.target_class),
            "static Cache.ENTRIES → HashMap.table → [2] → HashMap$Node.next → HashMap$Node.value → Cache$Item"
        );
    }
}

#[test]
fn holders_prefer_a_static_to_a_threads_local() {
    check(
        &cache_dump(8, true, true),
        "Cache$Item",
        entries(),
        &cache_hops(),
    );
}

#[test]
fn holders_fall_back_to_the_stack_that_holds_it() {
    let root = Root::Stack {
        thread: "main".into(),
    };
    check(&cache_dump(8, false, true), "Cache$Item", root, &[]);
}

#[test]
fn holders_read_inherited_fields_and_primitive_arrays() {
    // Item's own `id` comes first, then Base's `payload`.
    let mut hops = cache_hops();
    hops.push(hop("Cache$Item", Link::Field("payload".into())));
    check(&cache_dump(8, true, false), "byte[]", entries(), &hops);
}

#[test]
fn holders_of_a_thread_start_at_the_thread() {
    let dump = cache_dump(8, true, false);
    let dump = Dump::parse(&dump).expect("parses");
    let found = holders_in_dump(&dump, "java.lang.String").expect("the name");
    assert_eq!(
        found.chain.root,
        Root::Thread {
            name: "main".into(),
            object: 0x7000
        }
    );
    assert_eq!(found.chain.hops.len(), 1);
    assert_eq!(found.chain.hops[0].link, Link::Field("name".into()));
}

#[test]
fn holders_of_an_unreachable_or_absent_class() {
    let bytes = cache_dump(8, false, false);
    let dump = Dump::parse(&bytes).expect("parses");
    let found = holders_in_dump(&dump, "Cache$Item").expect("two instances");
    assert_eq!(found.chain.root, Root::Stopped(StopReason::Exhausted));
    assert!(holders_in_dump(&dump, "NoSuch").is_none());
}

#[test]
fn holders_dump_reader_refuses_what_is_not_a_dump() {
    assert_eq!(Dump::parse(b"PK\x03\x04").err(), Some(HprofError::NotHprof));
    let mut bad = b"JAVA PROFILE 1.0.2\0".to_vec();
    bad.extend(3u32.to_be_bytes());
    bad.extend([0u8; 8]);
    assert_eq!(Dump::parse(&bad).err(), Some(HprofError::IdSize(3)));
    let whole = cache_dump(8, true, false);
    let cut = &whole[..whole.len() - 40];
    assert!(matches!(
        Dump::parse(cut),
        Err(HprofError::Truncated { .. })
    ));
}

/// Reads whatever parses and walks it for a class it names.
fn read_all(bytes: &[u8]) {
    if let Ok(dump) = Dump::parse(bytes) {
        for class in ["Cache$Item", "byte[]", "java.lang.String"] {
            let _ = holders_in_dump(&dump, class);
        }
        for r in dump.roots() {
            let _ = dump.thread_name(r.object);
        }
    }
}

proptest! {
    #[test]
    fn holders_dump_reader_never_panics_on_arbitrary_bytes(bytes in proptest::collection::vec(any::<u8>(), 0..512)) {
        read_all(&bytes);
        let mut framed = b"JAVA PROFILE 1.0.2\0\0\0\0\x08\0\0\0\0\0\0\0\0".to_vec();
        framed.extend(&bytes);
        read_all(&framed);
    }

    #[test]
    fn holders_dump_reader_never_panics_on_a_damaged_dump(
        edits in proptest::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..8),
        cut in any::<prop::sample::Index>(),
        id_size in prop::sample::select(vec![4usize, 8]),
    ) {
        let mut bytes = cache_dump(id_size, true, true);
        for (at, v) in edits {
            let i = at.index(bytes.len());
            bytes[i] = v;
        }
        read_all(&bytes);
        let keep = cut.index(bytes.len());
        read_all(&bytes[..keep]);
    }
}
