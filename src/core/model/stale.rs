//! Is the JVM running this build? The loaded type as the JVM describes it
//! set against a compiled class file: per-method line tables (and, when
//! asked, code bytes), members present on one side only, and the redefine
//! forecast — every HotSpot restriction the swap would trip, with its JDWP
//! error code. Pure: the actors read both sides, the MCP layer renders.

use super::classfile::ClassShape;

mod pool;

pub use pool::{PoolText, names_class, pool_text, pool_text_of_jdwp};

/// A declared method of the loaded type.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LoadedMethod {
    pub name: String,
    pub signature: String,
    pub modifiers: i32,
    /// Line numbers in code order (`None`: no line information, or no code).
    pub lines: Option<Vec<i32>>,
    /// The code bytes, when read (`Method.Bytecodes`).
    pub code: Option<Vec<u8>>,
}

/// A declared field of the loaded type.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LoadedField {
    pub name: String,
    pub signature: String,
    pub modifiers: i32,
}

/// The loaded type as the JVM describes it.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct LoadedShape {
    pub name: String,
    pub modifiers: i32,
    pub super_name: Option<String>,
    pub interfaces: Vec<String>,
    pub fields: Vec<LoadedField>,
    pub methods: Vec<LoadedMethod>,
    /// The class's constant pool as text (`ReferenceType.ConstantPool`),
    /// read when code bytes differ: a redefinition renumbers constants.
    pub pool: Option<PoolText>,
}

/// How one method's line table compares.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Lines {
    Same,
    /// The lines differ: the build moved a line.
    Moved {
        running: Vec<i32>,
        built: Vec<i32>,
    },
    /// One side has no line table: nothing to compare.
    Unknown,
}

/// How one method's code bytes compare.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Code {
    Same,
    Differs,
    /// Not read, or one side has no code.
    Unknown,
}

/// One method present on both sides.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MethodVerdict {
    pub name: String,
    pub signature: String,
    pub lines: Lines,
    pub code: Code,
}

/// A HotSpot redefinition restriction, named by its JDWP error.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Restriction {
    AddMethod,
    SchemaChange,
    Hierarchy,
    DeleteMethod,
    ClassModifiers,
    MethodModifiers,
}

impl Restriction {
    pub const ALL: [Restriction; 6] = [
        Restriction::AddMethod,
        Restriction::SchemaChange,
        Restriction::Hierarchy,
        Restriction::DeleteMethod,
        Restriction::ClassModifiers,
        Restriction::MethodModifiers,
    ];

    /// The JDWP error code the JVM answers with.
    pub fn code(self) -> u16 {
        match self {
            Restriction::AddMethod => 63,
            Restriction::SchemaChange => 64,
            Restriction::Hierarchy => 66,
            Restriction::DeleteMethod => 67,
            Restriction::ClassModifiers => 70,
            Restriction::MethodModifiers => 71,
        }
    }

    /// The JDWP error name.
    pub fn name(self) -> &'static str {
        match self {
            Restriction::AddMethod => "ADD_METHOD_NOT_IMPLEMENTED",
            Restriction::SchemaChange => "SCHEMA_CHANGE_NOT_IMPLEMENTED",
            Restriction::Hierarchy => "HIERARCHY_CHANGE_NOT_IMPLEMENTED",
            Restriction::DeleteMethod => "DELETE_METHOD_NOT_IMPLEMENTED",
            Restriction::ClassModifiers => "CLASS_MODIFIERS_CHANGE_NOT_IMPLEMENTED",
            Restriction::MethodModifiers => "METHOD_MODIFIERS_CHANGE_NOT_IMPLEMENTED",
        }
    }

    /// The restriction a JDWP error code names.
    pub fn from_code(code: u16) -> Option<Restriction> {
        Restriction::ALL.into_iter().find(|r| r.code() == code)
    }
}

/// One structural difference between the loaded type and the build.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Change {
    MethodAdded {
        name: String,
        signature: String,
    },
    MethodRemoved {
        name: String,
        signature: String,
    },
    MethodModifiers {
        name: String,
        signature: String,
        running: i32,
        built: i32,
    },
    FieldAdded {
        name: String,
        signature: String,
    },
    FieldRemoved {
        name: String,
        signature: String,
    },
    FieldModifiers {
        name: String,
        signature: String,
        running: i32,
        built: i32,
    },
    ClassModifiers {
        running: i32,
        built: i32,
    },
    Superclass {
        running: Option<String>,
        built: Option<String>,
    },
    Interfaces {
        running: Vec<String>,
        built: Vec<String>,
    },
}

impl Change {
    /// The restriction this change trips.
    pub fn restriction(&self) -> Restriction {
        match self {
            Change::MethodAdded { .. } => Restriction::AddMethod,
            Change::MethodRemoved { .. } => Restriction::DeleteMethod,
            Change::MethodModifiers { .. } => Restriction::MethodModifiers,
            Change::FieldAdded { .. }
            | Change::FieldRemoved { .. }
            | Change::FieldModifiers { .. } => Restriction::SchemaChange,
            Change::ClassModifiers { .. } => Restriction::ClassModifiers,
            Change::Superclass { .. } | Change::Interfaces { .. } => Restriction::Hierarchy,
        }
    }
}

/// The whole comparison.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Comparison {
    /// Methods on both sides, in the JVM's order.
    pub methods: Vec<MethodVerdict>,
    /// Structural changes, each tripping a restriction.
    pub changes: Vec<Change>,
    /// Whether code bytes were compared.
    pub bytecode: bool,
}

impl Comparison {
    /// Methods whose lines moved.
    pub fn moved(&self) -> impl Iterator<Item = &MethodVerdict> {
        self.methods
            .iter()
            .filter(|m| matches!(m.lines, Lines::Moved { .. }))
    }

    /// Methods whose code differs.
    pub fn code_differs(&self) -> impl Iterator<Item = &MethodVerdict> {
        self.methods.iter().filter(|m| m.code == Code::Differs)
    }

    /// True when no method on both sides had line tables to compare.
    pub fn no_lines(&self) -> bool {
        self.methods.iter().all(|m| m.lines == Lines::Unknown)
    }

    /// The restrictions the swap would trip, each once, in code order.
    pub fn forecast(&self) -> Vec<Restriction> {
        let mut out: Vec<Restriction> = self.changes.iter().map(Change::restriction).collect();
        out.sort_by_key(|r| r.code());
        out.dedup();
        out
    }

    /// True when nothing differs that was compared.
    pub fn clean(&self) -> bool {
        self.changes.is_empty()
            && self.moved().next().is_none()
            && self.code_differs().next().is_none()
    }
}

/// Method modifier bits compared: those the class file defines (JVMS 4.6:
/// public to synchronized, bridge, varargs, abstract, strict) without
/// `ACC_NATIVE`, which a native-method prefix may change. The modifiers
/// JDWP reports also carry HotSpot's internal flags; they are not the
/// class's.
const METHOD_MODIFIERS: i32 = 0x0CFF;
/// Field modifier bits compared: those the class file defines (JVMS 4.5:
/// public to final, volatile, transient). On JDK 17 HotSpot reports its
/// internal flag for a field with a generic signature as 0x800, where
/// strictfp would be, and JDWP may add a synthetic marker above 0xFFFF.
const FIELD_MODIFIERS: i32 = 0x00DF;
/// Class modifier bits as `Class.getModifiers` reports them.
const CLASS_MODIFIERS: i32 = 0x7FFF & !0x0020;

/// Sets the loaded type against the build.
pub fn compare(loaded: &LoadedShape, built: &ClassShape) -> Comparison {
    let mut out = Comparison {
        bytecode: loaded.methods.iter().any(|m| m.code.is_some()),
        ..Comparison::default()
    };
    for m in &loaded.methods {
        let Some(b) = built.method(&m.name, &m.signature) else {
            out.changes.push(Change::MethodRemoved {
                name: m.name.clone(),
                signature: m.signature.clone(),
            });
            continue;
        };
        let built_mods = i32::from(b.access);
        if (m.modifiers ^ built_mods) & METHOD_MODIFIERS != 0 {
            out.changes.push(Change::MethodModifiers {
                name: m.name.clone(),
                signature: m.signature.clone(),
                running: m.modifiers & METHOD_MODIFIERS,
                built: built_mods & METHOD_MODIFIERS,
            });
        }
        let lines = match (&m.lines, b.line_numbers()) {
            (Some(r), Some(bl)) if !r.is_empty() && !bl.is_empty() => {
                if *r == bl {
                    Lines::Same
                } else {
                    Lines::Moved {
                        running: r.clone(),
                        built: bl,
                    }
                }
            }
            _ => Lines::Unknown,
        };
        let code = match (&m.code, &b.code) {
            (Some(r), Some(bc)) if r == bc => Code::Same,
            (Some(r), Some(bc))
                if loaded
                    .pool
                    .as_ref()
                    .is_some_and(|p| pool::same_code(r, p, bc, &built.pool)) =>
            {
                Code::Same
            }
            (Some(_), Some(_)) => Code::Differs,
            _ => Code::Unknown,
        };
        out.methods.push(MethodVerdict {
            name: m.name.clone(),
            signature: m.signature.clone(),
            lines,
            code,
        });
    }
    for b in &built.methods {
        if !loaded
            .methods
            .iter()
            .any(|m| m.name == b.name && m.signature == b.descriptor)
        {
            out.changes.push(Change::MethodAdded {
                name: b.name.clone(),
                signature: b.descriptor.clone(),
            });
        }
    }
    compare_fields(loaded, built, &mut out.changes);
    compare_class(loaded, built, &mut out.changes);
    out
}

fn compare_fields(loaded: &LoadedShape, built: &ClassShape, changes: &mut Vec<Change>) {
    for f in &loaded.fields {
        match built
            .fields
            .iter()
            .find(|b| b.name == f.name && b.descriptor == f.signature)
        {
            None => changes.push(Change::FieldRemoved {
                name: f.name.clone(),
                signature: f.signature.clone(),
            }),
            Some(b) if (f.modifiers ^ i32::from(b.access)) & FIELD_MODIFIERS != 0 => {
                changes.push(Change::FieldModifiers {
                    name: f.name.clone(),
                    signature: f.signature.clone(),
                    running: f.modifiers & FIELD_MODIFIERS,
                    built: i32::from(b.access) & FIELD_MODIFIERS,
                })
            }
            Some(_) => {}
        }
    }
    for b in &built.fields {
        if !loaded
            .fields
            .iter()
            .any(|f| f.name == b.name && f.signature == b.descriptor)
        {
            changes.push(Change::FieldAdded {
                name: b.name.clone(),
                signature: b.descriptor.clone(),
            });
        }
    }
}

fn compare_class(loaded: &LoadedShape, built: &ClassShape, changes: &mut Vec<Change>) {
    let built_mods = i32::from(built.reported_modifiers());
    if (loaded.modifiers ^ built_mods) & CLASS_MODIFIERS != 0 {
        changes.push(Change::ClassModifiers {
            running: loaded.modifiers & CLASS_MODIFIERS,
            built: built_mods & CLASS_MODIFIERS,
        });
    }
    if loaded.super_name.as_deref() != built.reported_super() {
        changes.push(Change::Superclass {
            running: loaded.super_name.clone(),
            built: built.reported_super().map(str::to_string),
        });
    }
    if loaded.interfaces != built.interfaces {
        changes.push(Change::Interfaces {
            running: loaded.interfaces.clone(),
            built: built.interfaces.clone(),
        });
    }
}

/// Java modifier words of `bits` (`public static final`).
pub fn modifier_words(bits: i32) -> String {
    const WORDS: [(i32, &str); 9] = [
        (0x0001, "public"),
        (0x0002, "private"),
        (0x0004, "protected"),
        (0x0008, "static"),
        (0x0010, "final"),
        (0x0020, "synchronized"),
        (0x0200, "interface"),
        (0x0400, "abstract"),
        (0x0800, "strictfp"),
    ];
    let words: Vec<&str> = WORDS
        .iter()
        .filter(|(bit, _)| bits & bit != 0)
        .map(|(_, w)| *w)
        .collect();
    if words.is_empty() {
        "package-private".into()
    } else {
        words.join(" ")
    }
}

#[cfg(test)]
mod tests;
