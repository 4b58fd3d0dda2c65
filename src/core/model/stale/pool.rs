//! Code compared by what its constants name. When HotSpot redefines a
//! class it merges the old and the new constant pools, and the code it then
//! reports refers to its constants by indices of the merged pool: the same
//! method, read back, differs byte for byte from the file it came from.
//! Each instruction that names a constant is therefore compared by the
//! constant's text (`Method Foo.bar(I)I`), every other one as it is.

use ristretto_classfile::attributes::Instruction;
use ristretto_classfile::byte_reader::ByteReader;
use ristretto_classfile::{Constant, ConstantPool};

/// A constant pool as text, by index (empty where an index names nothing,
/// as the second slot of a long or a double).
pub type PoolText = Vec<String>;

/// The text of every entry of `pool`. Bootstrap-method indices are left
/// out of dynamic constants: a redefinition renumbers those too.
pub fn pool_text(pool: &ConstantPool<'_>) -> PoolText {
    let entry = |i: u16| -> Option<String> {
        let text = match pool.get(i)? {
            Constant::FieldRef {
                class_index,
                name_and_type_index,
            } => {
                let (name, descriptor) = pool.try_get_name_and_type(*name_and_type_index).ok()?;
                format!(
                    "Field {}.{} {}",
                    pool.try_get_class(*class_index).ok()?,
                    pool.try_get_utf8(*name).ok()?,
                    pool.try_get_utf8(*descriptor).ok()?
                )
            }
            Constant::Dynamic {
                name_and_type_index,
                ..
            }
            | Constant::InvokeDynamic {
                name_and_type_index,
                ..
            } => {
                let (name, descriptor) = pool.try_get_name_and_type(*name_and_type_index).ok()?;
                format!(
                    "Dynamic {}:{}",
                    pool.try_get_utf8(*name).ok()?,
                    pool.try_get_utf8(*descriptor).ok()?
                )
            }
            Constant::Integer(v) => format!("int {v}"),
            Constant::Float(v) => format!("float {}", v.to_bits()),
            Constant::Long(v) => format!("long {v}"),
            Constant::Double(v) => format!("double {}", v.to_bits()),
            _ => pool.try_get_formatted_string(i).ok()?,
        };
        Some(text)
    };
    // Indices run from 1 to `len()` (the pool's own count leaves out the
    // unused slot 0).
    (0..=pool.len())
        .map(|i| u16::try_from(i).ok().and_then(entry).unwrap_or_default())
        .collect()
}

/// The text of the pool JDWP's `ReferenceType.ConstantPool` answers:
/// `count` (one more than the entries) and the entries' bytes as in a
/// class file. `None` when the bytes do not parse.
pub fn pool_text_of_jdwp(count: i32, bytes: &[u8]) -> Option<PoolText> {
    let count = u16::try_from(count).ok()?;
    let mut raw = Vec::with_capacity(bytes.len() + 2);
    raw.extend_from_slice(&count.to_be_bytes());
    raw.extend_from_slice(bytes);
    let mut reader = ByteReader::new(&raw);
    let pool = ConstantPool::from_bytes(&mut reader).ok()?;
    Some(pool_text(&pool))
}

/// The instructions of `code`, each constant named by its text. `None`
/// when the code does not decode.
fn symbolic(code: &[u8], pool: &[String]) -> Option<Vec<String>> {
    let name = |i: u16| pool.get(usize::from(i)).map(String::as_str);
    let mut reader = ByteReader::new(code);
    let mut out = Vec::new();
    while reader.position() < code.len() {
        let insn = Instruction::from_bytes(&mut reader).ok()?;
        let named = match &insn {
            // ldc and ldc_w load the same constant by a narrow or a wide
            // index: a merged pool may need the wide one.
            Instruction::Ldc(i) => format!("ldc {}", name(u16::from(*i))?),
            Instruction::Ldc_w(i) => format!("ldc {}", name(*i)?),
            Instruction::Ldc2_w(i) => format!("ldc2 {}", name(*i)?),
            Instruction::Getstatic(i) => format!("getstatic {}", name(*i)?),
            Instruction::Putstatic(i) => format!("putstatic {}", name(*i)?),
            Instruction::Getfield(i) => format!("getfield {}", name(*i)?),
            Instruction::Putfield(i) => format!("putfield {}", name(*i)?),
            Instruction::Invokevirtual(i) => format!("invokevirtual {}", name(*i)?),
            Instruction::Invokespecial(i) => format!("invokespecial {}", name(*i)?),
            Instruction::Invokestatic(i) => format!("invokestatic {}", name(*i)?),
            Instruction::Invokeinterface(i, n) => format!("invokeinterface {} {n}", name(*i)?),
            Instruction::Invokedynamic(i) => format!("invokedynamic {}", name(*i)?),
            Instruction::New(i) => format!("new {}", name(*i)?),
            Instruction::Anewarray(i) => format!("anewarray {}", name(*i)?),
            Instruction::Checkcast(i) => format!("checkcast {}", name(*i)?),
            Instruction::Instanceof(i) => format!("instanceof {}", name(*i)?),
            Instruction::Multianewarray(i, d) => format!("multianewarray {} {d}", name(*i)?),
            other => format!("{other:?}"),
        };
        out.push(named);
    }
    Some(out)
}

/// Whether an instruction of `code` names a member or the type of
/// `class` (internal form, `a/b/C`): how a restore tells that the code it
/// would replace still calls a probe's helper. `None` when the code does
/// not decode.
pub fn names_class(code: &[u8], pool: &[String], class: &str) -> Option<bool> {
    let dotted = class.replace('/', ".");
    let named = |t: &str| {
        t.split_whitespace().any(|w| {
            [class, dotted.as_str()]
                .iter()
                .any(|c| w == *c || w.strip_prefix(c).is_some_and(|r| r.starts_with('.')))
        })
    };
    Some(symbolic(code, pool)?.iter().any(|i| named(i)))
}

/// Whether two method bodies are the same code once each constant is
/// named by its own pool. `false` when either does not decode.
pub fn same_code(
    running: &[u8],
    running_pool: &[String],
    built: &[u8],
    built_pool: &[String],
) -> bool {
    match (symbolic(running, running_pool), symbolic(built, built_pool)) {
        (Some(r), Some(b)) => r == b,
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::names_class;

    #[test]
    fn code_that_calls_a_helper_names_it_and_code_that_does_not_does_not() {
        let pool: Vec<String> = [
            "",
            "Method p/Spin$$jvmscope$a1.hit(I)V",
            "Method p/Spin.version()Ljava/lang/String;",
            "Field p/Spin$$jvmscope$a1b.live:Z",
        ]
        .map(String::from)
        .to_vec();
        // invokestatic #1; return
        assert_eq!(
            names_class(&[0xb8, 0, 1, 0xb1], &pool, "p/Spin$$jvmscope$a1"),
            Some(true)
        );
        // invokestatic #2; getstatic #3 (another helper whose name only
        // starts the same); return
        let other = [0xb8, 0, 2, 0xb2, 0, 3, 0xb1];
        assert_eq!(
            names_class(&other, &pool, "p/Spin$$jvmscope$a1"),
            Some(false)
        );
        assert_eq!(names_class(&[0xb8, 0], &pool, "p/Spin"), None);
    }
}
