//! Stack map frames decoded to what they mean at each branch target (the
//! whole list of locals and the stack), and written back as full frames:
//! inserting code moves frames, and a new local must appear in each.
//! Offsets are instruction indices, as `ristretto_classfile` keeps them.

use ristretto_classfile::attributes::{StackFrame, VerificationType};

use super::Refusal;

/// One frame: at which instruction, and the types there.
#[derive(Debug, Clone, PartialEq)]
pub struct Frame {
    pub at: u16,
    pub locals: Vec<VerificationType>,
    pub stack: Vec<VerificationType>,
}

/// The frames of a table, given the method's implicit first frame.
pub fn decode(frames: &[StackFrame], initial: &[VerificationType]) -> Result<Vec<Frame>, Refusal> {
    let mut out: Vec<Frame> = Vec::with_capacity(frames.len());
    let mut locals = initial.to_vec();
    let mut at: i64 = -1;
    for f in frames {
        at += i64::from(f.offset_delta()) + 1;
        let stack = match f {
            StackFrame::SameFrame { .. } | StackFrame::SameFrameExtended { .. } => Vec::new(),
            StackFrame::SameLocals1StackItemFrame { stack, .. }
            | StackFrame::SameLocals1StackItemFrameExtended { stack, .. } => stack.clone(),
            StackFrame::ChopFrame { frame_type, .. } => {
                let k = usize::from(251u8.saturating_sub(*frame_type));
                if k > locals.len() {
                    return Err(Refusal::Unsupported(
                        "a chop frame removes too many locals".into(),
                    ));
                }
                locals.truncate(locals.len() - k);
                Vec::new()
            }
            StackFrame::AppendFrame { locals: more, .. } => {
                locals.extend(more.iter().cloned());
                Vec::new()
            }
            StackFrame::FullFrame {
                locals: all, stack, ..
            } => {
                locals = all.clone();
                stack.clone()
            }
        };
        out.push(Frame {
            at: u16::try_from(at).map_err(|_| Refusal::TooLarge)?,
            locals: locals.clone(),
            stack,
        });
    }
    Ok(out)
}

/// Frames as a table of full frames (sorted by instruction, one per index).
pub fn encode(mut frames: Vec<Frame>) -> Result<Vec<StackFrame>, Refusal> {
    frames.sort_by_key(|f| f.at);
    frames.dedup_by_key(|f| f.at);
    let mut out = Vec::with_capacity(frames.len());
    let mut prev: i64 = -1;
    for f in frames {
        let delta = i64::from(f.at) - prev - 1;
        prev = i64::from(f.at);
        out.push(StackFrame::FullFrame {
            frame_type: 255,
            offset_delta: u16::try_from(delta).map_err(|_| Refusal::TooLarge)?,
            locals: f.locals,
            stack: f.stack,
        });
    }
    Ok(out)
}

/// How many local slots a list of verification types covers.
pub fn slots(locals: &[VerificationType]) -> usize {
    locals
        .iter()
        .map(|t| match t {
            VerificationType::Long | VerificationType::Double => 2,
            _ => 1,
        })
        .sum()
}

/// `locals` with `Top` up to `slot`, then `extra` there.
pub fn with_local_at(
    locals: &[VerificationType],
    slot: usize,
    extra: VerificationType,
) -> Vec<VerificationType> {
    let mut out = locals.to_vec();
    while slots(&out) < slot {
        out.push(VerificationType::Top);
    }
    out.push(extra);
    out
}

/// `locals` with each of `extra` at its slot (in slot order), `Top`
/// between.
pub fn with_locals_at(
    locals: &[VerificationType],
    extra: &[(u16, VerificationType)],
) -> Vec<VerificationType> {
    let mut out = locals.to_vec();
    for (slot, t) in extra {
        out = with_local_at(&out, usize::from(*slot), t.clone());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decoding_then_encoding_keeps_every_frame_in_place() {
        let initial = vec![VerificationType::Integer];
        let table = vec![
            StackFrame::AppendFrame {
                frame_type: 252,
                offset_delta: 4,
                locals: vec![VerificationType::Long],
            },
            StackFrame::SameFrame { frame_type: 2 },
            StackFrame::ChopFrame {
                frame_type: 250,
                offset_delta: 3,
            },
            StackFrame::SameLocals1StackItemFrame {
                frame_type: 65,
                stack: vec![VerificationType::Integer],
            },
        ];
        let frames = decode(&table, &initial).expect("decodes");
        let at: Vec<u16> = frames.iter().map(|f| f.at).collect();
        assert_eq!(at, [4, 7, 11, 13]);
        assert_eq!(
            frames[1].locals,
            [VerificationType::Integer, VerificationType::Long]
        );
        assert_eq!(frames[2].locals, [VerificationType::Integer]);
        assert_eq!(frames[3].stack, [VerificationType::Integer]);
        let again = decode(&encode(frames.clone()).expect("encodes"), &initial).expect("decodes");
        assert_eq!(again, frames);
    }

    #[test]
    fn a_new_local_is_padded_to_its_slot() {
        let l = with_local_at(&[VerificationType::Long], 5, VerificationType::Long);
        assert_eq!(
            l,
            [
                VerificationType::Long,
                VerificationType::Top,
                VerificationType::Top,
                VerificationType::Top,
                VerificationType::Long
            ]
        );
        assert_eq!(slots(&l), 7);
    }

    #[test]
    fn a_chop_past_the_locals_is_refused_not_a_panic() {
        let table = vec![StackFrame::ChopFrame {
            frame_type: 248,
            offset_delta: 0,
        }];
        assert!(decode(&table, &[]).is_err());
    }
}
