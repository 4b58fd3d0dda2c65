//! A compiled class file read through `ristretto_classfile` into plain owned data: the
//! class's name, modifiers and hierarchy, its fields and methods with their
//! modifiers, each method's code bytes and line table, and the SourceFile
//! and SourceDebugExtension (JSR-45) attributes. Pure: it takes bytes, never
//! a path.

use ristretto_classfile::ClassFile;
use ristretto_classfile::attributes::{Attribute, Instruction};

/// A declared field of a class file (or of a loaded type).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FieldShape {
    pub name: String,
    /// JNI descriptor, e.g. `I`, `Ljava/lang/String;`.
    pub descriptor: String,
    pub access: u16,
}

/// A declared method of a class file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MethodShape {
    pub name: String,
    /// JNI descriptor, e.g. `(I)V`.
    pub descriptor: String,
    pub access: u16,
    /// The Code attribute's bytes (`None`: abstract or native).
    pub code: Option<Vec<u8>>,
    /// `(pc, line)` sorted by pc; `None` when the method has code but no
    /// LineNumberTable (`javac -g:none`), or has no code.
    pub lines: Option<Vec<(u16, u16)>>,
}

impl MethodShape {
    /// The line numbers in code order.
    pub fn line_numbers(&self) -> Option<Vec<i32>> {
        self.lines
            .as_ref()
            .map(|l| l.iter().map(|(_, line)| i32::from(*line)).collect())
    }
}

/// What a class file declares.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClassShape {
    /// Dotted binary name, e.g. `com.acme.Order$Line`.
    pub name: String,
    pub major: u16,
    pub minor: u16,
    /// The class file's `access_flags`.
    pub access: u16,
    /// The flags an inner class declares for itself in its own
    /// InnerClasses entry (what `Class.getModifiers` and JDWP report).
    pub inner_access: Option<u16>,
    /// Dotted name of the superclass (`None` for `java.lang.Object`).
    pub super_name: Option<String>,
    /// Dotted names, in declaration order.
    pub interfaces: Vec<String>,
    pub fields: Vec<FieldShape>,
    pub methods: Vec<MethodShape>,
    /// The SourceFile attribute (absent with `javac -g:none`).
    pub source_file: Option<String>,
    /// The SourceDebugExtension (JSR-45 SMAP) text.
    pub source_debug_extension: Option<String>,
    /// The constant pool as text, by index: what the code's constant
    /// operands name.
    pub pool: super::stale::PoolText,
}

/// `ACC_SUPER`: set by every modern compiler, never reported by a JVM.
const ACC_SUPER: u16 = 0x0020;
/// `ACC_INTERFACE`.
const ACC_INTERFACE: u16 = 0x0200;

impl ClassShape {
    /// The modifiers the JVM reports for this class (JDWP
    /// `ReferenceType.Modifiers`): an inner class's own InnerClasses flags,
    /// else the class flags, without `ACC_SUPER`.
    pub fn reported_modifiers(&self) -> u16 {
        self.inner_access.unwrap_or(self.access) & !ACC_SUPER & 0x7FFF
    }

    /// The superclass as a JVM reports it: none for an interface, whose
    /// class file names `java.lang.Object` (JVMS 4.1) though JDWP's
    /// superclass of an interface is null.
    pub fn reported_super(&self) -> Option<&str> {
        if self.access & ACC_INTERFACE != 0 {
            return None;
        }
        self.super_name.as_deref()
    }

    /// The method named `name` with descriptor `descriptor`.
    pub fn method(&self, name: &str, descriptor: &str) -> Option<&MethodShape> {
        self.methods
            .iter()
            .find(|m| m.name == name && m.descriptor == descriptor)
    }

    /// The greatest line any method's line table names.
    pub fn max_line(&self) -> Option<u16> {
        self.methods
            .iter()
            .filter_map(|m| m.lines.as_ref())
            .flat_map(|l| l.iter().map(|(_, line)| *line))
            .max()
    }

    /// True when no method carries a line table.
    pub fn has_no_lines(&self) -> bool {
        self.methods.iter().all(|m| m.lines.is_none())
    }
}

/// Why bytes are not a class file we can read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClassFileError(pub String);

impl std::fmt::Display for ClassFileError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for ClassFileError {}

/// `com/acme/Order$Line` → `com.acme.Order$Line`.
fn dotted(internal: &str) -> String {
    internal.replace('/', ".")
}

/// Where a class's file sits under a class root:
/// `com.acme.Order$Line` → `com/acme/Order$Line.class`.
pub fn class_file_rel(class: &str) -> std::path::PathBuf {
    std::path::PathBuf::from(format!("{}.class", class.replace('.', "/")))
}

/// Reads a class file. Never panics on any input.
pub fn parse(bytes: &[u8]) -> Result<ClassShape, ClassFileError> {
    let err = |e: ristretto_classfile::Error| ClassFileError(e.to_string());
    let class = match ClassFile::from_bytes(bytes) {
        // A version newer than the reader knows: read the rest as the
        // newest it knows, and report the file's own version.
        Err(ristretto_classfile::Error::InvalidVersion { .. }) if bytes.len() > 8 => {
            let mut known = bytes.to_vec();
            known[4..8].copy_from_slice(&[0, 0, 0, NEWEST_KNOWN_MAJOR]);
            ClassFile::from_bytes(&known).map_err(err)?
        }
        other => other.map_err(err)?,
    };
    let major = bytes
        .get(6..8)
        .map_or(0, |b| u16::from_be_bytes([b[0], b[1]]));
    let minor = bytes
        .get(4..6)
        .map_or(0, |b| u16::from_be_bytes([b[0], b[1]]));
    let pool = &class.constant_pool;
    let utf8 = |i: u16| pool.try_get_utf8(i).map(|s| s.to_string()).map_err(err);
    let class_name = |i: u16| pool.try_get_class(i).map(|s| s.to_string()).map_err(err);
    let this = class_name(class.this_class)?;
    let super_name = match class.super_class {
        0 => None,
        i => Some(dotted(&class_name(i)?)),
    };
    let mut shape = ClassShape {
        name: dotted(&this),
        major,
        minor,
        access: class.access_flags.bits(),
        inner_access: None,
        super_name,
        interfaces: class
            .interfaces
            .iter()
            .map(|i| class_name(*i).map(|n| dotted(&n)))
            .collect::<Result<_, _>>()?,
        fields: class
            .fields
            .iter()
            .map(|f| {
                Ok(FieldShape {
                    name: utf8(f.name_index)?,
                    descriptor: utf8(f.descriptor_index)?,
                    access: f.access_flags.bits(),
                })
            })
            .collect::<Result<_, ClassFileError>>()?,
        methods: class
            .methods
            .iter()
            .map(|m| {
                method_shape(
                    utf8(m.name_index)?,
                    utf8(m.descriptor_index)?,
                    m.access_flags.bits(),
                    &m.attributes,
                )
            })
            .collect::<Result<_, ClassFileError>>()?,
        source_file: None,
        source_debug_extension: None,
        pool: super::stale::pool_text(pool),
    };
    for attr in &class.attributes {
        match attr {
            Attribute::SourceFile {
                source_file_index, ..
            } => shape.source_file = Some(utf8(*source_file_index)?),
            Attribute::SourceDebugExtension {
                debug_extension, ..
            } => shape.source_debug_extension = Some(debug_extension.clone()),
            Attribute::InnerClasses { classes, .. } => {
                shape.inner_access = classes
                    .iter()
                    .find(|e| class_name(e.class_info_index).is_ok_and(|n| n == this))
                    .map(|e| e.access_flags.bits());
            }
            _ => {}
        }
    }
    Ok(shape)
}

/// The newest class file major version the reader knows (Java 25).
const NEWEST_KNOWN_MAJOR: u8 = 69;

fn method_shape(
    name: String,
    descriptor: String,
    access: u16,
    attributes: &[Attribute],
) -> Result<MethodShape, ClassFileError> {
    let mut code = None;
    let mut lines: Option<Vec<(u16, u16)>> = None;
    for attr in attributes {
        if let Attribute::Code {
            code: instructions,
            attributes: inner,
            ..
        } = attr
        {
            let (bytes, offsets) = code_bytes(attr, instructions)?;
            code = Some(bytes);
            for inner in inner {
                if let Attribute::LineNumberTable { line_numbers, .. } = inner {
                    // The reader keeps instruction indices; the table's pcs
                    // are byte offsets.
                    lines
                        .get_or_insert_with(Vec::new)
                        .extend(line_numbers.iter().map(|e| {
                            let pc = offsets.get(usize::from(e.start_pc)).copied();
                            (pc.unwrap_or(e.start_pc), e.line_number)
                        }));
                }
            }
        }
    }
    if let Some(l) = lines.as_mut() {
        l.sort_unstable();
    }
    Ok(MethodShape {
        name,
        descriptor,
        access,
        code,
        lines,
    })
}

/// A Code attribute's code bytes as the file holds them, and the byte
/// offset of each instruction.
fn code_bytes(
    attr: &Attribute,
    instructions: &[Instruction],
) -> Result<(Vec<u8>, Vec<u16>), ClassFileError> {
    let err = |e: ristretto_classfile::Error| ClassFileError(e.to_string());
    // The attribute written back: name (2), length (4), max_stack (2),
    // max_locals (2), code_length (4), then the code.
    let mut written = Vec::new();
    attr.to_bytes(&mut written).map_err(err)?;
    let short = || ClassFileError("a Code attribute too short to hold its code".into());
    let len = written.get(10..14).ok_or_else(short)?;
    let len = u32::from_be_bytes([len[0], len[1], len[2], len[3]]) as usize;
    let bytes = written.get(14..14 + len).ok_or_else(short)?.to_vec();
    let mut cursor = std::io::Cursor::new(Vec::new());
    let mut offsets = Vec::with_capacity(instructions.len());
    for i in instructions {
        offsets.push(u16::try_from(cursor.position()).map_err(|_| short())?);
        i.to_bytes(&mut cursor).map_err(err)?;
    }
    Ok((bytes, offsets))
}

#[cfg(test)]
mod tests;
