//! Reading the class a probe goes into: names out of the constant pool,
//! one method's code with its line and local variable tables, and the
//! byte offset of every instruction (the tables count bytes, while
//! `ristretto_classfile` keeps branch targets as instruction indices).

use std::io::Cursor;

use ristretto_classfile::attributes::{Attribute, Instruction};
use ristretto_classfile::{ClassFile, Constant};

use super::{Refusal, code_of, is_static};

pub fn utf8(class: &ClassFile<'_>, index: u16) -> String {
    class
        .constant_pool
        .try_get_utf8(index)
        .map(|s| s.to_string())
        .unwrap_or_default()
}

/// The internal name of the class itself.
pub fn this_name(class: &ClassFile<'_>) -> String {
    match class.constant_pool.get(class.this_class) {
        Some(Constant::Class(n)) => utf8(class, *n),
        _ => String::new(),
    }
}

/// Owner, name and descriptor of a field reference.
pub fn field_ref(class: &ClassFile<'_>, index: u16) -> Option<(String, String, String)> {
    let Some(Constant::FieldRef {
        class_index,
        name_and_type_index,
    }) = class.constant_pool.get(index)
    else {
        return None;
    };
    let Some(Constant::Class(owner)) = class.constant_pool.get(*class_index) else {
        return None;
    };
    let Some(Constant::NameAndType {
        name_index,
        descriptor_index,
    }) = class.constant_pool.get(*name_and_type_index)
    else {
        return None;
    };
    Some((
        utf8(class, *owner),
        utf8(class, *name_index),
        utf8(class, *descriptor_index),
    ))
}

/// The name of a method reference (`<init>` for a constructor call).
pub fn method_name(class: &ClassFile<'_>, index: u16) -> Option<String> {
    let (Constant::MethodRef {
        name_and_type_index,
        ..
    }
    | Constant::InterfaceMethodRef {
        name_and_type_index,
        ..
    }) = class.constant_pool.get(index)?
    else {
        return None;
    };
    let Some(Constant::NameAndType { name_index, .. }) =
        class.constant_pool.get(*name_and_type_index)
    else {
        return None;
    };
    Some(utf8(class, *name_index))
}

/// Byte offset of every instruction, and of the end (one more entry).
pub fn byte_offsets(code: &[Instruction]) -> Result<Vec<u32>, Refusal> {
    let mut cursor = Cursor::new(Vec::new());
    let mut out = Vec::with_capacity(code.len() + 1);
    for i in code {
        out.push(cursor.position() as u32);
        i.to_bytes(&mut cursor)
            .map_err(|e| Refusal::Unsupported(e.to_string()))?;
    }
    out.push(cursor.position() as u32);
    Ok(out)
}

/// The instruction index at byte offset `b` (the end maps to the length).
pub fn index_at(offsets: &[u32], b: u32) -> Option<u16> {
    offsets
        .binary_search(&b)
        .ok()
        .and_then(|i| u16::try_from(i).ok())
}

/// One method as the planner reads it.
pub struct MethodView {
    pub name: String,
    pub descriptor: String,
    pub is_static: bool,
    pub code: Vec<Instruction>,
    /// LineNumberTable rows: (instruction index, line).
    pub lines: Vec<(u16, u16)>,
    /// The LocalVariableTable, if the method has one.
    pub locals: Option<Vec<LocalEntry>>,
}

impl MethodView {
    /// `name` and descriptor together, as refusals name a method.
    pub fn label(&self) -> String {
        format!("{}{}", self.name, self.descriptor)
    }
}

/// One LocalVariableTable row: a name in a slot over a range of bytes.
pub struct LocalEntry {
    pub start: u32,
    pub length: u32,
    pub name: String,
    pub descriptor: String,
    pub slot: u16,
}

/// Method `index` of `class`, refused when it has no code.
pub fn view(class: &ClassFile<'_>, index: usize) -> Result<MethodView, Refusal> {
    let m = &class.methods[index];
    let name = utf8(class, m.name_index);
    let descriptor = utf8(class, m.descriptor_index);
    let Some(ci) = code_of(&m.attributes) else {
        return Err(Refusal::NoCode {
            method: format!("{name}{descriptor}"),
        });
    };
    let Attribute::Code {
        code, attributes, ..
    } = &m.attributes[ci]
    else {
        return Err(Refusal::NoCode { method: name });
    };
    let mut lines = Vec::new();
    let mut locals: Option<Vec<_>> = None;
    for a in attributes {
        match a {
            Attribute::LineNumberTable { line_numbers, .. } => {
                lines.extend(line_numbers.iter().map(|l| (l.start_pc, l.line_number)));
            }
            Attribute::LocalVariableTable { variables, .. } => {
                let list = locals.get_or_insert_with(Vec::new);
                for v in variables {
                    list.push(LocalEntry {
                        start: u32::from(v.start_pc),
                        length: u32::from(v.length),
                        name: utf8(class, v.name_index),
                        descriptor: utf8(class, v.descriptor_index),
                        slot: v.index,
                    });
                }
            }
            _ => {}
        }
    }
    Ok(MethodView {
        name,
        descriptor,
        is_static: is_static(m.access_flags),
        code: code.clone(),
        lines,
        locals,
    })
}

/// A site's `Class.method:line`: the line instruction `at` of method `mi`
/// is on, `?` without a line table.
pub(super) fn site_text(class: &ClassFile<'_>, mi: usize, at: u16) -> String {
    let m = &class.methods[mi];
    let method = utf8(class, m.name_index);
    let mut line = None;
    for a in &m.attributes {
        let ristretto_classfile::attributes::Attribute::Code { attributes, .. } = a else {
            continue;
        };
        for t in attributes {
            if let ristretto_classfile::attributes::Attribute::LineNumberTable {
                line_numbers,
                ..
            } = t
            {
                line = line_numbers
                    .iter()
                    .filter(|l| l.start_pc <= at)
                    .max_by_key(|l| l.start_pc)
                    .map(|l| l.line_number)
                    .or(line);
            }
        }
    }
    crate::model::label::CodeLabel::new(
        &this_name(class).replace('/', "."),
        Some(&method),
        crate::model::label::LineAt::known(line.map(i64::from)),
    )
    .to_string()
}
