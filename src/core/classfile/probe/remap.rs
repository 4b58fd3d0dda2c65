//! The code attributes that name places in the code, moved with it: the
//! LineNumberTable (instruction indices, to where the line's block
//! starts), the LocalVariableTable and LocalVariableTypeTable (byte
//! ranges, through instruction indices), and the StackMapTable (decoded
//! to full frames, each moved, `Uninitialized` offsets moved with their
//! `new`, an Exit probe's new locals added to every frame, and a frame for
//! its handler).

use ristretto_classfile::ClassFile;
use ristretto_classfile::attributes::{Attribute, VerificationType};

use super::frames::{self, Frame};
use super::read::{index_at, utf8};
use super::rewrite::Moved;
use super::{Refusal, is_static};
use crate::model::signature::split_method_descriptor;

/// What the tables need from the constant pool, added before the method
/// is borrowed for rewriting.
pub struct Tables {
    /// The frame the method starts with.
    initial: Vec<VerificationType>,
    throwable: u16,
    /// The attribute name, when the handler needs a table the method
    /// lacks (version 50 and later verify by stack maps).
    table_name: Option<u16>,
}

/// Where the code moved: instructions and bytes, old and new.
pub struct Offsets<'a> {
    pub moved: &'a Moved,
    pub old: &'a [u32],
    pub new: &'a [u32],
    /// The new instruction index where the appended handler starts.
    pub end: u16,
    /// Exit: the new locals every frame now carries, by slot (the time
    /// local first); empty for other sites.
    pub locals: &'a [(u16, VerificationType)],
}

impl Offsets<'_> {
    /// Old byte offset to the new one: the start of the block before the
    /// instruction there.
    fn byte(&self, old_byte: u32) -> Option<u32> {
        let k = index_at(self.old, old_byte)?;
        self.new
            .get(usize::from(self.moved.block_start(k)))
            .copied()
    }

    /// A `start..start+length` byte range, moved.
    fn range(&self, start: u16, length: u16) -> Result<(u16, u16), Refusal> {
        let (s, e) = (u32::from(start), u32::from(start) + u32::from(length));
        let range = || Refusal::Unsupported("a local variable range".into());
        let ns = self.byte(s).ok_or_else(range)?;
        let ne = self.byte(e).ok_or_else(range)?;
        Ok((
            u16::try_from(ns).map_err(|_| Refusal::TooLarge)?,
            u16::try_from(ne.saturating_sub(ns)).map_err(|_| Refusal::TooLarge)?,
        ))
    }
}

impl Tables {
    pub fn prepare(
        class: &mut ClassFile<'_>,
        mi: usize,
        owner: &str,
        handler: bool,
    ) -> Result<Tables, Refusal> {
        let initial = initial_frame(class, mi, owner)?;
        let throwable = class
            .constant_pool
            .add_class("java/lang/Throwable")
            .map_err(|e| Refusal::Unsupported(e.to_string()))?;
        let table_name = if class.version.major() >= 50 && handler {
            Some(
                class
                    .constant_pool
                    .add_utf8("StackMapTable")
                    .map_err(|e| Refusal::Unsupported(e.to_string()))?,
            )
        } else {
            None
        };
        Ok(Tables {
            initial,
            throwable,
            table_name,
        })
    }

    /// Moves every table in `attributes` (a Code attribute's).
    pub fn apply(&self, attributes: &mut Vec<Attribute>, o: &Offsets<'_>) -> Result<(), Refusal> {
        let mut has_frames = false;
        for a in attributes.iter_mut() {
            match a {
                Attribute::LineNumberTable { line_numbers, .. } => {
                    for l in line_numbers.iter_mut() {
                        l.start_pc = o.moved.block_start(l.start_pc);
                    }
                }
                Attribute::LocalVariableTable { variables, .. } => {
                    for v in variables.iter_mut() {
                        (v.start_pc, v.length) = self.variable(o, v.start_pc, v.length, v.index)?;
                    }
                }
                Attribute::LocalVariableTypeTable { variable_types, .. } => {
                    for v in variable_types.iter_mut() {
                        (v.start_pc, v.length) = self.variable(o, v.start_pc, v.length, v.index)?;
                    }
                }
                Attribute::StackMapTable { frames: table, .. } => {
                    has_frames = true;
                    *table = frames::encode(self.frames(table, o)?)?;
                }
                Attribute::RuntimeVisibleTypeAnnotations { .. }
                | Attribute::RuntimeInvisibleTypeAnnotations { .. } => {
                    return Err(Refusal::Unsupported("type annotations on code".into()));
                }
                _ => {}
            }
        }
        if !has_frames && let Some(name_index) = self.table_name {
            attributes.push(Attribute::StackMapTable {
                name_index,
                frames: frames::encode(vec![self.handler_frame(o.end, o.locals)])?,
            });
        }
        Ok(())
    }

    /// The method's frames, moved, with the time local and the handler's.
    fn frames(
        &self,
        table: &[ristretto_classfile::attributes::StackFrame],
        o: &Offsets<'_>,
    ) -> Result<Vec<Frame>, Refusal> {
        let mut decoded = frames::decode(table, &self.initial)?;
        for f in decoded.iter_mut() {
            f.at = o.moved.target(f.at);
            for t in f.locals.iter_mut().chain(f.stack.iter_mut()) {
                remap_uninitialized(t, o)?;
            }
            f.locals = frames::with_locals_at(&f.locals, o.locals);
        }
        if !o.locals.is_empty() {
            decoded.push(self.handler_frame(o.end, o.locals));
        }
        Ok(decoded)
    }

    /// A variable's range in the new code. The range of `this` or a
    /// parameter live over the whole original code also covers the
    /// appended catch-all handler: the handler's frame carries them, and
    /// the JVM reads a local only within its range, so a thread held in
    /// the handler (a suspending exit probe's throw) keeps its arguments
    /// readable.
    fn variable(
        &self,
        o: &Offsets<'_>,
        start: u16,
        length: u16,
        slot: u16,
    ) -> Result<(u16, u16), Refusal> {
        let (ns, nl) = o.range(start, length)?;
        let params: usize = self
            .initial
            .iter()
            .map(|t| match t {
                VerificationType::Long | VerificationType::Double => 2,
                _ => 1,
            })
            .sum();
        let whole = !o.locals.is_empty()
            && start == 0
            && o.old.last().copied() == Some(u32::from(length))
            && usize::from(slot) < params;
        if !whole {
            return Ok((ns, nl));
        }
        let end = o.new.last().copied().unwrap_or_default();
        let to_end = u16::try_from(end.saturating_sub(u32::from(ns)));
        Ok((ns, to_end.map_err(|_| Refusal::TooLarge)?))
    }

    /// The catch-all handler's frame: the arguments, the new locals, and
    /// the exception on the stack.
    fn handler_frame(&self, end: u16, locals: &[(u16, VerificationType)]) -> Frame {
        Frame {
            at: end,
            locals: frames::with_locals_at(&self.initial, locals),
            stack: vec![VerificationType::Object {
                cpool_index: self.throwable,
            }],
        }
    }
}

/// An `Uninitialized` type names the byte offset of its `new`: moved too.
fn remap_uninitialized(t: &mut VerificationType, o: &Offsets<'_>) -> Result<(), Refusal> {
    if let VerificationType::Uninitialized { offset } = t {
        let k = index_at(o.old, u32::from(*offset)).ok_or(Refusal::Unsupported(
            "an uninitialized type's offset".into(),
        ))?;
        let b = o
            .new
            .get(usize::from(o.moved.at[usize::from(k)]))
            .copied()
            .ok_or(Refusal::TooLarge)?;
        *offset = u16::try_from(b).map_err(|_| Refusal::TooLarge)?;
    }
    Ok(())
}

/// The frame a method starts with: `this` and its parameters.
fn initial_frame(
    class: &mut ClassFile<'_>,
    mi: usize,
    owner: &str,
) -> Result<Vec<VerificationType>, Refusal> {
    let m = &class.methods[mi];
    let descriptor = utf8(class, m.descriptor_index);
    let name = utf8(class, m.name_index);
    let is_static = is_static(m.access_flags);
    let (params, _) = split_method_descriptor(&descriptor)
        .ok_or_else(|| Refusal::Malformed("a method descriptor".into()))?;
    let mut out = Vec::new();
    let mut class_of = |name: &str| {
        class
            .constant_pool
            .add_class(name)
            .map(|c| VerificationType::Object { cpool_index: c })
            .map_err(|e| Refusal::Unsupported(e.to_string()))
    };
    if !is_static {
        if name == "<init>" {
            out.push(VerificationType::UninitializedThis);
        } else {
            out.push(class_of(owner)?);
        }
    }
    for p in params {
        out.push(match p.as_bytes()[0] {
            b'Z' | b'B' | b'C' | b'S' | b'I' => VerificationType::Integer,
            b'J' => VerificationType::Long,
            b'F' => VerificationType::Float,
            b'D' => VerificationType::Double,
            b'[' => class_of(p.as_str())?,
            _ => class_of(&p[1..p.len() - 1])?,
        });
    }
    Ok(out)
}
