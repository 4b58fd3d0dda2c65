//! Class files compiled from `tests/data/classfile/Shapes.java` (with and
//! without `-g`) read back, and random bytes that never panic the reader.

use proptest::prelude::*;

use super::*;

const SHAPES: &[u8] = include_bytes!("../../../../tests/data/classfile/g/Shapes.class");
const INNER: &[u8] = include_bytes!("../../../../tests/data/classfile/g/Shapes$Inner.class");
const SHAPES_NONE: &[u8] = include_bytes!("../../../../tests/data/classfile/none/Shapes.class");

#[test]
fn names_hierarchy_and_modifiers() {
    let c = parse(SHAPES).expect("parses");
    assert_eq!(c.name, "Shapes");
    assert_eq!(c.super_name.as_deref(), Some("java.lang.Object"));
    assert_eq!(c.interfaces, ["java.lang.Runnable", "java.io.Serializable"]);
    assert_eq!(c.access, 0x0021);
    assert_eq!(
        c.reported_modifiers(),
        0x0001,
        "ACC_SUPER is never reported"
    );
    assert_eq!(c.major, 61);
    assert_eq!(c.source_file.as_deref(), Some("Shapes.java"));
    assert_eq!(c.source_debug_extension, None);
}

#[test]
fn fields_and_methods_with_their_shapes() {
    let c = parse(SHAPES).expect("parses");
    let fields: Vec<(&str, &str, u16)> = c
        .fields
        .iter()
        .map(|f| (f.name.as_str(), f.descriptor.as_str(), f.access))
        .collect();
    assert_eq!(
        fields,
        [
            ("serialVersionUID", "J", 0x0018),
            ("count", "I", 0x0002),
            ("name", "Ljava/lang/String;", 0x0004)
        ]
    );
    let twice = c.method("twice", "(I)I").expect("twice");
    assert_eq!(twice.access, 0x0008);
    assert_eq!(twice.line_numbers(), Some(vec![19]));
    assert_eq!(twice.code.as_deref(), Some(&[0x1a, 0x05, 0x68, 0xac][..]));
    let run = c.method("run", "()V").expect("run");
    assert_eq!(run.line_numbers(), Some(vec![12, 13, 14, 16]));
    assert!(c.method("<init>", "()V").is_some());
    assert_eq!(c.max_line(), Some(19));
    assert!(!c.has_no_lines());
}

#[test]
fn an_inner_class_reports_its_own_modifiers() {
    let c = parse(INNER).expect("parses");
    assert_eq!(c.name, "Shapes$Inner");
    assert_eq!(c.source_file.as_deref(), Some("Shapes.java"));
    // Private static in source; the class file itself says package-private.
    assert_eq!(c.reported_modifiers(), 0x000A);
    assert_eq!(c.access & 0x0001, 0);
}

#[test]
fn without_debug_information_code_stays_and_lines_go() {
    let c = parse(SHAPES_NONE).expect("parses");
    assert_eq!(c.source_file, None);
    assert!(c.has_no_lines());
    let g = parse(SHAPES).expect("parses");
    assert_eq!(
        c.method("twice", "(I)I").and_then(|m| m.code.clone()),
        g.method("twice", "(I)I").and_then(|m| m.code.clone()),
        "-g changes no code byte"
    );
}

#[test]
fn truncated_and_foreign_bytes_are_refused() {
    assert!(parse(&SHAPES[..SHAPES.len() - 1]).is_err());
    assert!(parse(b"PK\x03\x04not a class").is_err());
    assert!(parse(&[]).is_err());
}

proptest! {
    #[test]
    fn random_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..512)) {
        let _ = parse(&bytes);
    }

    #[test]
    fn a_class_file_with_bytes_flipped_never_panics(
        at in 0usize..742, value in any::<u8>(), cut in 0usize..742
    ) {
        let mut bytes = SHAPES.to_vec();
        let at = at % bytes.len();
        bytes[at] = value;
        bytes.truncate(cut.max(1));
        let _ = parse(&bytes);
    }
}

#[test]
fn a_newer_class_file_version_is_read_and_reported() {
    let mut bytes = SHAPES.to_vec();
    bytes[6..8].copy_from_slice(&[0, 75]);
    let c = parse(&bytes).expect("parses");
    assert_eq!((c.major, c.minor), (75, 0));
    assert_eq!(
        c.method("run", "()V").and_then(|m| m.line_numbers()),
        Some(vec![12, 13, 14, 16])
    );
}

#[test]
fn line_tables_hold_byte_offsets() {
    let c = parse(SHAPES).expect("parses");
    let run = c.method("run", "()V").expect("run");
    let code = run.code.as_ref().expect("code");
    let lines = run.lines.as_ref().expect("lines");
    assert_eq!(lines.first().map(|l| l.0), Some(0));
    assert!(lines.windows(2).all(|w| w[0].0 < w[1].0));
    assert!(lines.iter().all(|(pc, _)| usize::from(*pc) < code.len()));
}
