//! Timing the calls a method makes (an exit probe's `callees`), by call
//! site. Around each `invoke*` of the original code the method reads
//! `System.nanoTime()` into a new local before the call and adds the
//! difference to the site's sum after it, and counts the call: straight
//! code, no branch, no allocation. While a call is under way a local
//! holds its site (`open`); a handler of the method, and the probe's own
//! catch-all, first add the time of a call that threw to its site
//! without a branch (a mask from `open`), and remember the site (`cut`).
//! Every exit hands the sums, the counts and `cut` to the helper, which
//! turns them into a string only for a call it records.
//!
//! `invokedynamic` (a lambda's creation, a string concatenation) is the
//! method's own code, and so is a `StringBuilder`'s work (how javac 8
//! concatenates); so are the probes' own calls (another probe's in the
//! same method, and its clock reads).
//!
//! A site's sum and count go to the helper as parameters, which are
//! bounded: a method with more than [`MOST`] sites sums the sites that
//! call one method together (`line` then unknown when they are on
//! several lines), and past [`MOST`] methods called, the rest as one
//! [`OTHERS`].

use std::collections::BTreeMap;

use ristretto_classfile::ClassFile;
use ristretto_classfile::attributes::{Attribute, Instruction, VerificationType};

use super::read::{utf8, view};
use super::rewrite::Block;
use super::{HELPER_MARK, Kind, Refusal, code_of};
use crate::model::callees::CalleeSite;

type I = Instruction;

/// Most sums one probe keeps: each passes a sum and a count to the
/// helper, whose methods take at most 255 parameter slots.
pub const MOST: usize = 40;

/// The name of the sum of the calls past [`MOST`] methods called.
pub const OTHERS: &str = "(other calls)";

/// One call site: the instruction, and the sum it adds to.
#[derive(Debug, Clone, Copy)]
pub struct Call {
    pub at: u16,
    pub slot: usize,
}

/// The calls method `mi` makes, in code order, and the sums they add to
/// (one a site, unless there are more than [`MOST`]); refused when it
/// makes none.
pub fn calls(class: &ClassFile<'_>, mi: usize) -> Result<(Vec<Call>, Vec<CalleeSite>), Refusal> {
    let sites = sites(class, mi)?;
    if sites.len() <= MOST {
        let calls = sites
            .iter()
            .enumerate()
            .map(|(slot, (at, _))| Call { at: *at, slot });
        return Ok((calls.collect(), sites.into_iter().map(|(_, s)| s).collect()));
    }
    let mut slots: Vec<CalleeSite> = Vec::new();
    let mut calls = Vec::with_capacity(sites.len());
    for (at, s) in sites {
        let same = |o: &CalleeSite| o.class == s.class && o.method == s.method;
        let slot = match slots.iter().position(same) {
            Some(k) => {
                if slots[k].line != s.line {
                    slots[k].line = None;
                }
                k
            }
            None if slots.len() < MOST - 1 => {
                slots.push(s);
                slots.len() - 1
            }
            None => {
                if slots.len() < MOST {
                    slots.push(CalleeSite {
                        class: String::new(),
                        method: OTHERS.into(),
                        line: None,
                        own: true,
                    });
                }
                MOST - 1
            }
        };
        calls.push(Call { at, slot });
    }
    Ok((calls, slots))
}

/// Every call site of method `mi`, in code order; refused when it makes
/// none.
fn sites(class: &ClassFile<'_>, mi: usize) -> Result<Vec<(u16, CalleeSite)>, Refusal> {
    let v = view(class, mi)?;
    let this = super::read::this_name(class);
    let mut out = Vec::new();
    for (k, ins) in v.code.iter().enumerate() {
        let r = match ins {
            I::Invokevirtual(r) | I::Invokespecial(r) | I::Invokestatic(r) => *r,
            I::Invokeinterface(r, _) => *r,
            _ => continue,
        };
        let Some((owner, name)) = method_owner(class, r) else {
            continue;
        };
        if owner.contains(HELPER_MARK)
            || (owner == "java/lang/System" && name == "nanoTime")
            || owner == "java/lang/StringBuilder"
        {
            continue;
        }
        let at = u16::try_from(k).map_err(|_| Refusal::TooLarge)?;
        let line = v
            .lines
            .iter()
            .filter(|(pc, _)| *pc <= at)
            .max_by_key(|(pc, _)| *pc)
            .map(|(_, l)| u32::from(*l));
        out.push((
            at,
            CalleeSite {
                class: owner.replace('/', "."),
                method: name,
                line,
                own: owner == this,
            },
        ));
    }
    if out.is_empty() {
        return Err(Refusal::NoCalls { method: v.label() });
    }
    Ok(out)
}

/// A method reference's class (internal name) and method name.
fn method_owner(class: &ClassFile<'_>, index: u16) -> Option<(String, String)> {
    use ristretto_classfile::Constant as C;
    let (C::MethodRef {
        class_index,
        name_and_type_index,
    }
    | C::InterfaceMethodRef {
        class_index,
        name_and_type_index,
    }) = class.constant_pool.get(index)?
    else {
        return None;
    };
    let Some(C::Class(owner)) = class.constant_pool.get(*class_index) else {
        return None;
    };
    let Some(C::NameAndType { name_index, .. }) = class.constant_pool.get(*name_and_type_index)
    else {
        return None;
    };
    Some((utf8(class, *owner), utf8(class, *name_index)))
}

/// The handlers of method `mi`'s own exception table, by instruction.
pub fn handlers(class: &ClassFile<'_>, mi: usize) -> Vec<u16> {
    let m = &class.methods[mi];
    let Some(Attribute::Code {
        exception_table, ..
    }) = code_of(&m.attributes).map(|ci| &m.attributes[ci])
    else {
        return Vec::new();
    };
    let mut out: Vec<u16> = exception_table.iter().map(|e| e.handler_pc).collect();
    out.sort_unstable();
    out.dedup();
    out
}

/// The parameters an exit's helper entry takes for `n` sites, after the
/// others: each site's sum and count, then `cut`.
pub fn params(n: usize) -> String {
    let mut s = "JI".repeat(n);
    s.push('I');
    s
}

/// The new locals, from `first`: the call's start time, the open site,
/// the site that last threw, then each site's sum (a long) and count.
#[derive(Debug, Clone, Copy)]
pub struct Locals {
    start: u16,
    open: u16,
    cut: u16,
    n: usize,
}

impl Locals {
    pub fn new(first: u16, n: usize) -> Locals {
        Locals {
            start: first,
            open: first + 2,
            cut: first + 3,
            n,
        }
    }

    /// Slots they take.
    pub fn slots(&self) -> u16 {
        4 + 3 * self.n as u16
    }

    fn sum(&self, k: usize) -> u16 {
        self.cut + 1 + 3 * k as u16
    }

    fn count(&self, k: usize) -> u16 {
        self.sum(k) + 2
    }

    /// Each local's slot and type, as the frames carry them.
    pub fn types(&self) -> Vec<(u16, VerificationType)> {
        let mut out = vec![
            (self.start, VerificationType::Long),
            (self.open, VerificationType::Integer),
            (self.cut, VerificationType::Integer),
        ];
        for k in 0..self.n {
            out.push((self.sum(k), VerificationType::Long));
            out.push((self.count(k), VerificationType::Integer));
        }
        out
    }

    /// At entry: every local zero.
    pub fn init(&self) -> Vec<Instruction> {
        let mut code = vec![I::Lconst_0, Kind::Long.store(self.start)];
        for slot in [self.open, self.cut] {
            code.extend([I::Iconst_0, Kind::Int.store(slot)]);
        }
        for k in 0..self.n {
            code.extend([I::Lconst_0, Kind::Long.store(self.sum(k))]);
            code.extend([I::Iconst_0, Kind::Int.store(self.count(k))]);
        }
        code
    }

    /// Before call site `k` (its arguments on the stack): the start time,
    /// and the site open.
    fn before(&self, nano: u16, k: usize) -> Vec<Instruction> {
        vec![
            I::Invokestatic(nano),
            Kind::Long.store(self.start),
            I::Bipush(k as i8 + 1),
            Kind::Int.store(self.open),
        ]
    }

    /// After call site `k` returned (its value on the stack): the time
    /// added to the site's sum, the call counted, no site open.
    fn after(&self, nano: u16, k: usize) -> Vec<Instruction> {
        let count = self.count(k);
        vec![
            I::Invokestatic(nano),
            Kind::Long.load(self.start),
            I::Lsub,
            Kind::Long.load(self.sum(k)),
            I::Ladd,
            Kind::Long.store(self.sum(k)),
            match u8::try_from(count) {
                Ok(c) => I::Iinc(c, 1),
                Err(_) => I::Iinc_w(count, 1),
            },
            I::Iconst_0,
            Kind::Int.store(self.open),
        ]
    }

    /// Where a throw lands (a handler, the exception on the stack): the
    /// open site, if any, gets the time up to now and one more call, and
    /// becomes `cut`; no site is open after. No branch: `eq` is 1 for the
    /// open site and 0 for every other, and with no site open, 0 for all.
    pub fn caught(&self, nano: u16) -> Vec<Instruction> {
        // The start becomes the time since it (dead until the next call).
        let mut code = vec![
            I::Invokestatic(nano),
            Kind::Long.load(self.start),
            I::Lsub,
            Kind::Long.store(self.start),
        ];
        for k in 0..self.n {
            // eq = 1 - (((open ^ (k+1)) | -(open ^ (k+1))) >>> 31)
            code.extend([
                Kind::Int.load(self.open),
                I::Bipush(k as i8 + 1),
                I::Ixor,
                I::Dup,
                I::Ineg,
                I::Ior,
                I::Bipush(31),
                I::Iushr,
                I::Iconst_1,
                I::Ixor,
                I::Dup,
                Kind::Int.load(self.count(k)),
                I::Iadd,
                Kind::Int.store(self.count(k)),
                I::I2l,
                Kind::Long.load(self.start),
                I::Lmul,
                Kind::Long.load(self.sum(k)),
                I::Ladd,
                Kind::Long.store(self.sum(k)),
            ]);
        }
        // cut += (open != 0) * (open - cut)
        code.extend([
            Kind::Int.load(self.open),
            I::Dup,
            I::Ineg,
            I::Ior,
            I::Bipush(31),
            I::Iushr,
            Kind::Int.load(self.open),
            Kind::Int.load(self.cut),
            I::Isub,
            I::Imul,
            Kind::Int.load(self.cut),
            I::Iadd,
            Kind::Int.store(self.cut),
            I::Iconst_0,
            Kind::Int.store(self.open),
        ]);
        code
    }

    /// What an exit pushes for the helper, after its other values.
    pub fn pushes(&self) -> Vec<Instruction> {
        let mut code = Vec::new();
        for k in 0..self.n {
            code.push(Kind::Long.load(self.sum(k)));
            code.push(Kind::Int.load(self.count(k)));
        }
        code.push(Kind::Int.load(self.cut));
        code
    }

    /// Stack the blocks need above what the method had: the exit's
    /// pushes, or two longs.
    pub fn stack(&self) -> u16 {
        3 * self.n as u16 + 1 + 4
    }
}

/// Adds the call sites' blocks to `blocks` (an exit's, the returns'
/// already there): each handler of the method accounts for a call that
/// threw before anything else it runs; each call is timed.
pub fn add_blocks(
    blocks: &mut BTreeMap<u16, Block>,
    calls: &[Call],
    handlers: &[u16],
    l: &Locals,
    nano: u16,
) {
    for &h in handlers {
        let b = blocks.entry(h).or_default();
        let mut code = l.caught(nano);
        code.append(&mut b.code);
        b.code = code;
    }
    for c in calls {
        let b = blocks.entry(c.at).or_default();
        b.code.extend(l.before(nano, c.slot));
        b.after = l.after(nano, c.slot);
    }
}
