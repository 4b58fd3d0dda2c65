//! A way around a bug in `ristretto_classfile` (0.31 to 0.34, the latest):
//! writing a `StackMapTable`, its writer takes "the last frame is at byte
//! 0" for "no frame yet", so in a table whose first frame is at byte 0 (a
//! method that opens with a loop head: `while (…) { … }` as its first
//! statement) the second frame is written one byte late, and the JVM
//! refuses the class (`StackMapTable error: bad offset`). Such a table is
//! converted here to byte offsets, by the library's own instruction
//! encoding, and handed to the library as the raw attribute it writes as
//! it is. Every other table takes the library's path.

use std::io::Cursor;

use ristretto_classfile::ClassFile;
use ristretto_classfile::attributes::{Attribute, Instruction, StackFrame};

use super::Refusal;

/// Whether `class` has a table the library would write wrong.
pub fn needed(class: &ClassFile<'_>) -> bool {
    class
        .methods
        .iter()
        .flat_map(|m| &m.attributes)
        .any(|a| match a {
            Attribute::Code { attributes, .. } => attributes.iter().any(opens_at_zero),
            _ => false,
        })
}

fn opens_at_zero(a: &Attribute) -> bool {
    matches!(a, Attribute::StackMapTable { frames, .. }
        if frames.len() >= 2 && frames[0].offset_delta() == 0)
}

/// `class` with each such table replaced by its raw bytes.
pub fn fixed<'a>(class: &ClassFile<'a>) -> Result<ClassFile<'a>, Refusal> {
    let mut out = class.clone();
    for method in &mut out.methods {
        for a in &mut method.attributes {
            let Attribute::Code {
                code, attributes, ..
            } = a
            else {
                continue;
            };
            let starts = byte_starts(code)?;
            for table in attributes.iter_mut().filter(|t| opens_at_zero(t)) {
                if let Attribute::StackMapTable { name_index, frames } = table {
                    let info = raw_table(*name_index, frames, &starts)?;
                    *table = Attribute::Unknown {
                        name_index: *name_index,
                        info,
                    };
                }
            }
        }
    }
    Ok(out)
}

/// The byte offset of each instruction, as the library encodes them.
fn byte_starts(code: &[Instruction]) -> Result<Vec<u16>, Refusal> {
    let mut bytes = Cursor::new(Vec::new());
    let mut starts = Vec::with_capacity(code.len());
    for i in code {
        starts.push(u16::try_from(bytes.position()).map_err(|_| Refusal::TooLarge)?);
        i.to_bytes(&mut bytes)
            .map_err(|e| Refusal::Unsupported(e.to_string()))?;
    }
    Ok(starts)
}

/// The table's body (its frame count, then its frames) with every offset
/// in bytes.
fn raw_table(name_index: u16, frames: &[StackFrame], starts: &[u16]) -> Result<Vec<u8>, Refusal> {
    let mut at: i64 = -1;
    let mut last_byte: i64 = -1;
    let mut out = Vec::with_capacity(frames.len());
    for f in frames {
        at += i64::from(f.offset_delta()) + 1;
        let byte = usize::try_from(at)
            .ok()
            .and_then(|i| starts.get(i))
            .map(|b| i64::from(*b))
            .ok_or_else(|| Refusal::Unsupported(format!("a stack map frame at {at}")))?;
        let delta = u16::try_from(byte - last_byte - 1).map_err(|_| Refusal::TooLarge)?;
        last_byte = byte;
        out.push(with_delta(f, delta));
    }
    let mut bytes = Vec::new();
    Attribute::StackMapTable {
        name_index,
        frames: out,
    }
    .to_bytes(&mut bytes)
    .map_err(|e| Refusal::Unsupported(e.to_string()))?;
    // Less the attribute's name index (2 bytes) and length (4).
    Ok(bytes.split_off(6))
}

/// `f` at `delta`, in the short form when the delta fits it.
fn with_delta(f: &StackFrame, delta: u16) -> StackFrame {
    let short = u8::try_from(delta).ok().filter(|d| *d < 64);
    match (f, short) {
        (StackFrame::SameFrame { .. } | StackFrame::SameFrameExtended { .. }, Some(d)) => {
            StackFrame::SameFrame { frame_type: d }
        }
        (StackFrame::SameFrame { .. } | StackFrame::SameFrameExtended { .. }, None) => {
            StackFrame::SameFrameExtended {
                frame_type: 251,
                offset_delta: delta,
            }
        }
        (
            StackFrame::SameLocals1StackItemFrame { stack, .. }
            | StackFrame::SameLocals1StackItemFrameExtended { stack, .. },
            Some(d),
        ) => StackFrame::SameLocals1StackItemFrame {
            frame_type: 64 + d,
            stack: stack.clone(),
        },
        (
            StackFrame::SameLocals1StackItemFrame { stack, .. }
            | StackFrame::SameLocals1StackItemFrameExtended { stack, .. },
            None,
        ) => StackFrame::SameLocals1StackItemFrameExtended {
            frame_type: 247,
            offset_delta: delta,
            stack: stack.clone(),
        },
        (StackFrame::ChopFrame { frame_type, .. }, _) => StackFrame::ChopFrame {
            frame_type: *frame_type,
            offset_delta: delta,
        },
        (
            StackFrame::AppendFrame {
                frame_type, locals, ..
            },
            _,
        ) => StackFrame::AppendFrame {
            frame_type: *frame_type,
            offset_delta: delta,
            locals: locals.clone(),
        },
        (StackFrame::FullFrame { locals, stack, .. }, _) => StackFrame::FullFrame {
            frame_type: 255,
            offset_delta: delta,
            locals: locals.clone(),
            stack: stack.clone(),
        },
    }
}

#[cfg(test)]
mod tests {
    use ristretto_classfile::ClassFile;
    use ristretto_classfile::attributes::{Attribute, StackFrame};

    const PROBED: &[u8] =
        include_bytes!("../../../../tests/data/classfile/probe/release8/Probed.class");

    /// The frames of `method`'s code, as the library reads them.
    fn frames(class: &ClassFile<'_>, method: &str) -> Vec<StackFrame> {
        let m = class
            .methods
            .iter()
            .find(|m| {
                class
                    .constant_pool
                    .try_get_utf8(m.name_index)
                    .is_ok_and(|n| *n == *method)
            })
            .expect("the method");
        m.attributes
            .iter()
            .find_map(|a| match a {
                Attribute::Code { attributes, .. } => attributes.iter().find_map(|t| match t {
                    Attribute::StackMapTable { frames, .. } => Some(frames.clone()),
                    _ => None,
                }),
                _ => None,
            })
            .expect("a stack map table")
    }

    #[test]
    fn a_table_opening_at_byte_zero_is_written_back_as_it_was_read() {
        let class = ClassFile::from_bytes(PROBED).expect("the corpus parses");
        let read = frames(&class, "opensWithLoop");
        assert!(read.len() >= 2 && read[0].offset_delta() == 0, "{read:?}");
        assert!(super::needed(&class));
        let written = super::super::write(&class).expect("written");
        let again = ClassFile::from_bytes(&written).expect("it parses again");
        assert_eq!(frames(&again, "opensWithLoop"), read);
        // The library alone moves the second frame a byte (when a release
        // of it no longer does, this module can go).
        let mut plain = Vec::new();
        class.to_bytes(&mut plain).expect("the library writes it");
        let moved = ClassFile::from_bytes(&plain).map(|c| frames(&c, "opensWithLoop"));
        assert_ne!(moved.ok(), Some(read));
    }
}
