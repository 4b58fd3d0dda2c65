//! HPROF heap dumps (`JAVA PROFILE 1.0.2`, what HotSpot's `GC.heap_dump`
//! writes) read into an index over the dump's own bytes: the names, the
//! classes with their fields and statics, where each object's record
//! starts, and the GC roots. Objects are read lazily from their records
//! (`references`), so the index costs a few words per object. Pure: bytes
//! in, values out. A dump is untrusted input: every length is checked
//! against what is left, nothing is allocated from a count before the
//! bytes behind it are known to be there, and nothing panics.

use std::collections::HashMap;

/// Why a dump could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum HprofError {
    #[error("not an HPROF heap dump (no `JAVA PROFILE` header)")]
    NotHprof,
    #[error("identifier size {0} is neither 4 nor 8")]
    IdSize(u32),
    #[error("the dump ends inside a record at byte {at}")]
    Truncated { at: usize },
    #[error("unknown heap dump record tag {tag:#04x} at byte {at}")]
    Tag { tag: u8, at: usize },
    #[error("unknown value type {ty} at byte {at}")]
    Type { ty: u8, at: usize },
}

/// HPROF's object value type; the others are primitives.
pub const OBJECT: u8 = 2;

/// The bytes one value of an HPROF basic type takes.
fn type_size(ty: u8, id_size: usize) -> Option<usize> {
    match ty {
        OBJECT => Some(id_size),
        4 | 8 => Some(1),
        5 | 9 => Some(2),
        6 | 10 => Some(4),
        7 | 11 => Some(8),
        _ => None,
    }
}

/// The Java name of a primitive array's element type.
pub fn prim_array_name(ty: u8) -> &'static str {
    match ty {
        4 => "boolean[]",
        5 => "char[]",
        6 => "float[]",
        7 => "double[]",
        8 => "byte[]",
        9 => "short[]",
        10 => "int[]",
        11 => "long[]",
        _ => "?[]",
    }
}

/// What holds an object without being on the heap, as the dump lists it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RootKind {
    Unknown,
    JniGlobal,
    /// A local of a thread's frame (Java or JNI), or its native stack, or
    /// a thread blocked on it; the thread's serial number.
    Stack {
        thread: u32,
    },
    StickyClass,
    MonitorUsed,
    /// A thread's own `Thread` object.
    ThreadObject {
        thread: u32,
    },
}

/// One GC root.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GcRoot {
    pub object: u64,
    pub kind: RootKind,
}

/// One field a class declares (instance) or holds (static, object only).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Field {
    /// Id of the name's UTF8 record.
    pub name: u64,
    pub ty: u8,
    /// A static's value when it is an object (0 for instance fields).
    pub value: u64,
}

/// One class as dumped.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClassDump {
    pub id: u64,
    pub super_id: u64,
    /// Statics of object type only.
    pub statics: Vec<Field>,
    /// Instance fields this class declares, in record order.
    pub fields: Vec<Field>,
}

/// What kind of record an object has.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Class,
    Instance,
    ObjectArray,
    PrimArray,
}

/// A heap dump's index over its bytes.
#[derive(Debug)]
pub struct Dump<'a> {
    bytes: &'a [u8],
    id_size: usize,
    names: HashMap<u64, &'a [u8]>,
    /// Class object id → name id (LOAD CLASS records).
    class_names: HashMap<u64, u64>,
    classes: HashMap<u64, ClassDump>,
    /// Sorted by id: (object id, offset of its heap record's tag).
    objects: Vec<(u64, usize)>,
    roots: Vec<GcRoot>,
    /// Thread serial → its `Thread` object.
    threads: HashMap<u32, u64>,
    /// Class → its instances' fields in record order.
    layouts: HashMap<u64, Vec<Field>>,
}

/// A bounds-checked reader over the dump.
#[derive(Clone, Copy)]
struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
    id_size: usize,
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8], HprofError> {
        let end = self
            .at
            .checked_add(n)
            .filter(|e| *e <= self.bytes.len())
            .ok_or(HprofError::Truncated { at: self.at })?;
        let out = &self.bytes[self.at..end];
        self.at = end;
        Ok(out)
    }

    fn u1(&mut self) -> Result<u8, HprofError> {
        Ok(self.take(1)?[0])
    }

    fn u2(&mut self) -> Result<u16, HprofError> {
        let b = self.take(2)?;
        Ok(u16::from_be_bytes([b[0], b[1]]))
    }

    fn u4(&mut self) -> Result<u32, HprofError> {
        let b = self.take(4)?;
        Ok(u32::from_be_bytes([b[0], b[1], b[2], b[3]]))
    }

    fn id(&mut self) -> Result<u64, HprofError> {
        let b = self.take(self.id_size)?;
        Ok(b.iter().fold(0u64, |acc, x| (acc << 8) | u64::from(*x)))
    }

    /// Skips `count` values of `size` bytes each.
    fn skip(&mut self, count: u32, size: usize) -> Result<(), HprofError> {
        let n = (count as usize)
            .checked_mul(size)
            .ok_or(HprofError::Truncated { at: self.at })?;
        self.take(n).map(|_| ())
    }

    fn value_size(&self, ty: u8) -> Result<usize, HprofError> {
        type_size(ty, self.id_size).ok_or(HprofError::Type { ty, at: self.at })
    }
}

impl<'a> Dump<'a> {
    /// Indexes a whole dump.
    pub fn parse(bytes: &'a [u8]) -> Result<Dump<'a>, HprofError> {
        let header_end = bytes
            .iter()
            .position(|b| *b == 0)
            .filter(|_| bytes.starts_with(b"JAVA PROFILE"))
            .ok_or(HprofError::NotHprof)?;
        let mut r = Reader {
            bytes,
            at: header_end + 1,
            id_size: 4,
        };
        let id_size = r.u4()?;
        if id_size != 4 && id_size != 8 {
            return Err(HprofError::IdSize(id_size));
        }
        r.id_size = id_size as usize;
        r.take(8)?;
        let mut dump = Dump {
            bytes,
            id_size: r.id_size,
            names: HashMap::new(),
            class_names: HashMap::new(),
            classes: HashMap::new(),
            objects: Vec::new(),
            roots: Vec::new(),
            threads: HashMap::new(),
            layouts: HashMap::new(),
        };
        while r.at < bytes.len() {
            let tag = r.u1()?;
            r.u4()?;
            let len = r.u4()? as usize;
            let mut body = Reader {
                bytes: &bytes[..r.at.saturating_add(len).min(bytes.len())],
                ..r
            };
            r.take(len)?;
            match tag {
                0x01 => {
                    let id = body.id()?;
                    let rest = body.bytes.len() - body.at;
                    dump.names.insert(id, body.take(rest)?);
                }
                0x02 => {
                    body.u4()?;
                    let class = body.id()?;
                    body.u4()?;
                    let name = body.id()?;
                    dump.class_names.insert(class, name);
                }
                0x0C | 0x1C => dump.heap_segment(body)?,
                _ => {}
            }
        }
        dump.objects.sort_unstable();
        dump.layouts = dump
            .classes
            .keys()
            .map(|c| (*c, dump.flatten(*c)))
            .collect();
        Ok(dump)
    }

    /// Indexes the sub-records of one heap dump (segment) record.
    fn heap_segment(&mut self, mut r: Reader<'a>) -> Result<(), HprofError> {
        while r.at < r.bytes.len() {
            let start = r.at;
            let tag = r.u1()?;
            let stack = |r: &mut Reader<'a>, object: u64| -> Result<GcRoot, HprofError> {
                Ok(GcRoot {
                    object,
                    kind: RootKind::Stack { thread: r.u4()? },
                })
            };
            let root = match tag {
                0xFF => Some(GcRoot {
                    object: r.id()?,
                    kind: RootKind::Unknown,
                }),
                0x01 => {
                    let object = r.id()?;
                    r.id()?;
                    Some(GcRoot {
                        object,
                        kind: RootKind::JniGlobal,
                    })
                }
                0x02 | 0x03 => {
                    let object = r.id()?;
                    let root = stack(&mut r, object)?;
                    r.u4()?;
                    Some(root)
                }
                0x04 | 0x06 => {
                    let object = r.id()?;
                    Some(stack(&mut r, object)?)
                }
                0x05 => Some(GcRoot {
                    object: r.id()?,
                    kind: RootKind::StickyClass,
                }),
                0x07 => Some(GcRoot {
                    object: r.id()?,
                    kind: RootKind::MonitorUsed,
                }),
                0x08 => {
                    let object = r.id()?;
                    let thread = r.u4()?;
                    r.u4()?;
                    self.threads.insert(thread, object);
                    Some(GcRoot {
                        object,
                        kind: RootKind::ThreadObject { thread },
                    })
                }
                0x20 => {
                    let class = class_dump(&mut r)?;
                    self.objects.push((class.id, start));
                    self.classes.insert(class.id, class);
                    None
                }
                0x21 => {
                    let id = r.id()?;
                    r.u4()?;
                    r.id()?;
                    let n = r.u4()?;
                    r.skip(n, 1)?;
                    self.objects.push((id, start));
                    None
                }
                0x22 => {
                    let id = r.id()?;
                    r.u4()?;
                    let n = r.u4()?;
                    r.id()?;
                    r.skip(n, r.id_size)?;
                    self.objects.push((id, start));
                    None
                }
                0x23 => {
                    let id = r.id()?;
                    r.u4()?;
                    let n = r.u4()?;
                    let ty = r.u1()?;
                    let size = r.value_size(ty)?;
                    r.skip(n, size)?;
                    self.objects.push((id, start));
                    None
                }
                tag => return Err(HprofError::Tag { tag, at: start }),
            };
            self.roots.extend(root);
        }
        Ok(())
    }

    /// The GC roots in dump order.
    pub fn roots(&self) -> &[GcRoot] {
        &self.roots
    }

    /// Every class dumped, in no particular order.
    pub fn classes(&self) -> impl Iterator<Item = &ClassDump> {
        self.classes.values()
    }

    pub fn class(&self, id: u64) -> Option<&ClassDump> {
        self.classes.get(&id)
    }

    /// The `Thread` object of a thread serial number.
    pub fn thread_object(&self, serial: u32) -> Option<u64> {
        self.threads.get(&serial).copied()
    }

    /// How many objects the dump holds (classes and arrays included).
    pub fn len(&self) -> usize {
        self.objects.len()
    }

    pub fn is_empty(&self) -> bool {
        self.objects.is_empty()
    }

    /// The position of an object in the index.
    pub fn index_of(&self, id: u64) -> Option<usize> {
        self.objects.binary_search_by_key(&id, |(i, _)| *i).ok()
    }

    /// The object id at a position.
    pub fn id_at(&self, index: usize) -> u64 {
        self.objects.get(index).map_or(0, |(id, _)| *id)
    }

    /// A name (a field's, a class's) as text.
    pub fn name(&self, id: u64) -> String {
        self.names
            .get(&id)
            .map(|b| String::from_utf8_lossy(b).into_owned())
            .unwrap_or_else(|| "?".into())
    }

    /// A class's Java name (`java.util.HashMap`, `java.lang.Object[]`).
    pub fn class_name(&self, class: u64) -> String {
        let raw = self.class_names.get(&class).map(|n| self.name(*n));
        match raw {
            Some(n) if n.starts_with('[') => super::signature::java_name(&n),
            Some(n) => n.replace('/', "."),
            None => format!("class@{class:#x}"),
        }
    }

    fn reader(&self, at: usize) -> Reader<'a> {
        Reader {
            bytes: self.bytes,
            at,
            id_size: self.id_size,
        }
    }

    /// The kind of the object at `index` and its class (the array's
    /// class; a primitive array's element type; 0 for a class).
    pub fn kind_at(&self, index: usize) -> Option<(Kind, u64)> {
        let (_, at) = *self.objects.get(index)?;
        let mut r = self.reader(at);
        let tag = r.u1().ok()?;
        r.id().ok()?;
        match tag {
            0x20 => Some((Kind::Class, 0)),
            0x21 => {
                r.u4().ok()?;
                Some((Kind::Instance, r.id().ok()?))
            }
            0x22 => {
                r.take(8).ok()?;
                Some((Kind::ObjectArray, r.id().ok()?))
            }
            0x23 => {
                r.take(8).ok()?;
                Some((Kind::PrimArray, u64::from(r.u1().ok()?)))
            }
            _ => None,
        }
    }

    /// The Java class name of the object at `index`.
    pub fn class_name_at(&self, index: usize) -> String {
        match self.kind_at(index) {
            Some((Kind::Class, _)) => "java.lang.Class".into(),
            Some((Kind::PrimArray, ty)) => prim_array_name(ty as u8).into(),
            Some((_, class)) => self.class_name(class),
            None => "?".into(),
        }
    }

    /// An instance's fields in record order (its class's first, then its
    /// superclasses'), bounded against a superclass loop.
    fn flatten(&self, class: u64) -> Vec<Field> {
        let mut out = Vec::new();
        let mut c = class;
        for _ in 0..256 {
            let Some(dump) = self.classes.get(&c) else {
                break;
            };
            out.extend_from_slice(&dump.fields);
            c = dump.super_id;
        }
        out
    }

    fn layout(&self, class: u64) -> &[Field] {
        self.layouts.get(&class).map_or(&[], Vec::as_slice)
    }

    /// Calls `each(link, referent)` for every non-null reference the object
    /// at `index` holds, in record order; `each` returns false to stop. A
    /// link is a field (instance field or static) or an array index.
    pub fn references(&self, index: usize, each: &mut dyn FnMut(Ref, u64) -> bool) {
        let Some((kind, class)) = self.kind_at(index) else {
            return;
        };
        let Some((_, at)) = self.objects.get(index).copied() else {
            return;
        };
        let mut r = self.reader(at);
        match kind {
            Kind::Class => {
                let _ = r.u1();
                let Some(c) = r.id().ok().and_then(|id| self.classes.get(&id)) else {
                    return;
                };
                for f in &c.statics {
                    if f.value != 0 && !each(Ref::Field(f.name), f.value) {
                        return;
                    }
                }
            }
            Kind::Instance => {
                let _ = r.take(1 + self.id_size * 2 + 4 + 4);
                for f in self.layout(class) {
                    let Ok(size) = r.value_size(f.ty) else {
                        return;
                    };
                    if f.ty == OBJECT {
                        match r.id() {
                            Ok(0) => {}
                            Ok(v) if each(Ref::Field(f.name), v) => {}
                            _ => return,
                        }
                    } else if r.take(size).is_err() {
                        return;
                    }
                }
            }
            Kind::ObjectArray => {
                let _ = r.take(1 + self.id_size + 4);
                let n = r.u4().unwrap_or(0);
                let _ = r.id();
                for i in 0..n {
                    match r.id() {
                        Ok(0) => {}
                        Ok(v) if each(Ref::Index(i as usize), v) => {}
                        _ => return,
                    }
                }
            }
            Kind::PrimArray => {}
        }
    }

    /// A `java.lang.String`'s text (compact Latin-1, UTF-16 or `char[]`).
    pub fn string(&self, id: u64) -> Option<String> {
        let (value, coder) = {
            let mut value = None;
            let mut coder = 0u8;
            let index = self.index_of(id)?;
            let (Kind::Instance, class) = self.kind_at(index)? else {
                return None;
            };
            let (_, at) = self.objects.get(index).copied()?;
            let mut r = self.reader(at);
            r.take(1 + self.id_size * 2 + 4 + 4).ok()?;
            for f in self.layout(class) {
                let name = self.names.get(&f.name).copied().unwrap_or_default();
                match (name, f.ty) {
                    (b"value", OBJECT) => value = Some(r.id().ok()?),
                    (b"coder", 8) => coder = r.u1().ok()?,
                    (_, ty) => {
                        r.take(r.value_size(ty).ok()?).ok()?;
                    }
                }
            }
            (value?, coder)
        };
        let (_, at) = self.objects.get(self.index_of(value)?).copied()?;
        let mut r = self.reader(at);
        if r.u1().ok()? != 0x23 {
            return None;
        }
        r.id().ok()?;
        r.u4().ok()?;
        let n = r.u4().ok()? as usize;
        let ty = r.u1().ok()?;
        let units: Vec<u16> = match (ty, coder) {
            (8, 0) => return Some(r.take(n).ok()?.iter().map(|b| char::from(*b)).collect()),
            // Compact strings keep UTF-16 in the platform's order: little-endian.
            (8, _) => r
                .take(n)
                .ok()?
                .chunks_exact(2)
                .map(|c| u16::from_le_bytes([c[0], c[1]]))
                .collect(),
            (5, _) => r
                .take(n.checked_mul(2)?)
                .ok()?
                .chunks_exact(2)
                .map(|c| u16::from_be_bytes([c[0], c[1]]))
                .collect(),
            _ => return None,
        };
        Some(String::from_utf16_lossy(&units))
    }

    /// A thread's name, read from its `Thread` object.
    pub fn thread_name(&self, thread: u64) -> Option<String> {
        let index = self.index_of(thread)?;
        let mut name = None;
        self.references(index, &mut |link, v| {
            if let Ref::Field(f) = link
                && self.names.get(&f).copied() == Some(b"name".as_slice())
            {
                name = Some(v);
                return false;
            }
            true
        });
        self.string(name?)
    }
}

/// How one object refers to another in a dump.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ref {
    /// A field, by its name's id (a static field when the holder is a class).
    Field(u64),
    Index(usize),
}

/// Reads one CLASS DUMP sub-record after its tag.
fn class_dump(r: &mut Reader<'_>) -> Result<ClassDump, HprofError> {
    let id = r.id()?;
    r.u4()?;
    let super_id = r.id()?;
    for _ in 0..5 {
        r.id()?;
    }
    r.u4()?;
    let pool = r.u2()?;
    for _ in 0..pool {
        r.u2()?;
        let ty = r.u1()?;
        let size = r.value_size(ty)?;
        r.take(size)?;
    }
    let mut statics = Vec::new();
    for _ in 0..r.u2()? {
        let name = r.id()?;
        let ty = r.u1()?;
        if ty == OBJECT {
            let value = r.id()?;
            statics.push(Field { name, ty, value });
        } else {
            let size = r.value_size(ty)?;
            r.take(size)?;
        }
    }
    let mut fields = Vec::new();
    for _ in 0..r.u2()? {
        let name = r.id()?;
        let ty = r.u1()?;
        r.value_size(ty)?;
        fields.push(Field { name, ty, value: 0 });
    }
    Ok(ClassDump {
        id,
        super_id,
        statics,
        fields,
    })
}
