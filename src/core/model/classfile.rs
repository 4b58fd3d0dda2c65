//! A compiled class file read through `cafebabe` into plain owned data: the
//! class's name, modifiers and hierarchy, its fields and methods with their
//! modifiers, each method's code bytes and line table, and the SourceFile
//! and SourceDebugExtension (JSR-45) attributes. Pure: it takes bytes, never
//! a path.

use cafebabe::attributes::{AttributeData, AttributeInfo};
use cafebabe::{ParseOptions, parse_class_with_options};

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
}

/// `ACC_SUPER`: set by every modern compiler, never reported by a JVM.
const ACC_SUPER: u16 = 0x0020;

impl ClassShape {
    /// The modifiers the JVM reports for this class (JDWP
    /// `ReferenceType.Modifiers`): an inner class's own InnerClasses flags,
    /// else the class flags, without `ACC_SUPER`.
    pub fn reported_modifiers(&self) -> u16 {
        self.inner_access.unwrap_or(self.access) & !ACC_SUPER & 0x7FFF
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
    let mut opts = ParseOptions::default();
    opts.parse_bytecode(false);
    let class =
        parse_class_with_options(bytes, &opts).map_err(|e| ClassFileError(e.to_string()))?;
    let this = class.this_class.to_string();
    let mut shape = ClassShape {
        name: dotted(&this),
        major: class.major_version,
        minor: class.minor_version,
        access: class.access_flags.bits(),
        inner_access: None,
        super_name: class.super_class.as_ref().map(|s| dotted(&s.to_string())),
        interfaces: class
            .interfaces
            .iter()
            .map(|i| dotted(&i.to_string()))
            .collect(),
        fields: class
            .fields
            .iter()
            .map(|f| FieldShape {
                name: f.name.to_string(),
                descriptor: f.descriptor.to_string(),
                access: f.access_flags.bits(),
            })
            .collect(),
        methods: class
            .methods
            .iter()
            .map(|m| {
                method_shape(
                    &m.name,
                    m.descriptor.to_string(),
                    m.access_flags.bits(),
                    &m.attributes,
                )
            })
            .collect(),
        source_file: None,
        source_debug_extension: None,
    };
    for attr in &class.attributes {
        match &attr.data {
            AttributeData::SourceFile(s) => shape.source_file = Some(s.to_string()),
            AttributeData::SourceDebugExtension(s) => {
                shape.source_debug_extension = Some(s.to_string())
            }
            AttributeData::InnerClasses(entries) => {
                shape.inner_access = entries
                    .iter()
                    .find(|e| e.inner_class_info == this)
                    .map(|e| e.access_flags.bits());
            }
            _ => {}
        }
    }
    Ok(shape)
}

fn method_shape(
    name: &str,
    descriptor: String,
    access: u16,
    attributes: &[AttributeInfo<'_>],
) -> MethodShape {
    let mut code = None;
    let mut lines: Option<Vec<(u16, u16)>> = None;
    for attr in attributes {
        if let AttributeData::Code(c) = &attr.data {
            code = Some(c.code.to_vec());
            for inner in &c.attributes {
                if let AttributeData::LineNumberTable(entries) = &inner.data {
                    lines
                        .get_or_insert_with(Vec::new)
                        .extend(entries.iter().map(|e| (e.start_pc, e.line_number)));
                }
            }
        }
    }
    if let Some(l) = lines.as_mut() {
        l.sort_unstable();
    }
    MethodShape {
        name: name.to_string(),
        descriptor,
        access,
        code,
        lines,
    }
}

#[cfg(test)]
mod tests;
