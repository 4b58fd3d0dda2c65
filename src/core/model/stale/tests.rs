//! The comparison on a real class file against loaded shapes built from
//! it: identical, a moved line, a body edit, and each structural change
//! naming its restriction.

use super::*;
use crate::model::classfile::parse;

const SHAPES: &[u8] = include_bytes!("../../../../tests/data/classfile/g/Shapes.class");

/// The loaded shape a JVM would report for `built`.
fn loaded_from(built: &ClassShape, with_code: bool) -> LoadedShape {
    LoadedShape {
        name: built.name.clone(),
        modifiers: i32::from(built.reported_modifiers()),
        super_name: built.reported_super().map(str::to_string),
        interfaces: built.interfaces.clone(),
        fields: built
            .fields
            .iter()
            .map(|f| LoadedField {
                name: f.name.clone(),
                signature: f.descriptor.clone(),
                modifiers: i32::from(f.access),
            })
            .collect(),
        methods: built
            .methods
            .iter()
            .map(|m| LoadedMethod {
                name: m.name.clone(),
                signature: m.descriptor.clone(),
                modifiers: i32::from(m.access),
                lines: m.line_numbers(),
                code: if with_code { m.code.clone() } else { None },
            })
            .collect(),
        pool: None,
    }
}

fn shapes() -> ClassShape {
    parse(SHAPES).expect("parses")
}

#[test]
fn the_same_build_is_clean() {
    let built = shapes();
    let c = compare(&loaded_from(&built, true), &built);
    assert!(c.clean(), "{c:?}");
    assert!(c.bytecode);
    assert!(c.forecast().is_empty());
    assert!(!compare(&loaded_from(&built, false), &built).bytecode);
}

#[test]
fn an_interface_has_no_superclass_on_either_side() {
    // The class file of an interface names java.lang.Object as its super;
    // the JVM reports none. The same build is no hierarchy change.
    let mut built = shapes();
    built.access |= 0x0200;
    built.super_name = Some("java.lang.Object".into());
    let loaded = loaded_from(&built, false);
    assert_eq!(loaded.super_name, None);
    let c = compare(&loaded, &built);
    assert!(c.forecast().is_empty(), "{c:?}");
    // A class that names another superclass still is one.
    let mut class = shapes();
    class.super_name = Some("java.lang.Thread".into());
    let c = compare(&loaded_from(&shapes(), false), &class);
    assert_eq!(c.forecast(), [Restriction::Hierarchy]);
}

#[test]
fn a_moved_line_shows_in_the_line_table_only() {
    let built = shapes();
    let mut loaded = loaded_from(&built, false);
    let run = loaded
        .methods
        .iter_mut()
        .find(|m| m.name == "run")
        .expect("run");
    run.lines = Some(vec![11, 12, 13, 15]);
    let c = compare(&loaded, &built);
    let moved: Vec<&str> = c.moved().map(|m| m.name.as_str()).collect();
    assert_eq!(moved, ["run"]);
    assert!(c.forecast().is_empty(), "a moved line is a body change");
}

#[test]
fn a_body_edit_shows_only_in_the_code() {
    let built = shapes();
    let mut loaded = loaded_from(&built, true);
    let twice = loaded
        .methods
        .iter_mut()
        .find(|m| m.name == "twice")
        .expect("twice");
    twice.code = Some(vec![0x1a, 0x06, 0x68, 0xac]);
    let c = compare(&loaded, &built);
    assert_eq!(c.moved().count(), 0);
    let differs: Vec<&str> = c.code_differs().map(|m| m.name.as_str()).collect();
    assert_eq!(differs, ["twice"]);
    assert!(!c.clean());
}

#[test]
fn each_structural_change_names_its_restriction() {
    let built = shapes();
    let mut loaded = loaded_from(&built, false);
    // The running class lacks `twice` (the build added it), has a method
    // the build dropped, a field the build dropped, and other modifiers.
    loaded.methods.retain(|m| m.name != "twice");
    loaded.methods.push(LoadedMethod {
        name: "gone".into(),
        signature: "()V".into(),
        modifiers: 1,
        lines: None,
        code: None,
    });
    loaded.fields.push(LoadedField {
        name: "extra".into(),
        signature: "I".into(),
        modifiers: 0,
    });
    loaded
        .methods
        .iter_mut()
        .find(|m| m.name == "run")
        .expect("run")
        .modifiers |= 0x0010;
    loaded.modifiers |= 0x0010;
    loaded.interfaces.reverse();
    let c = compare(&loaded, &built);
    assert_eq!(
        c.forecast(),
        [
            Restriction::AddMethod,
            Restriction::SchemaChange,
            Restriction::Hierarchy,
            Restriction::DeleteMethod,
            Restriction::ClassModifiers,
            Restriction::MethodModifiers
        ]
    );
    assert!(c.changes.contains(&Change::MethodAdded {
        name: "twice".into(),
        signature: "(I)I".into()
    }));
    assert_eq!(Restriction::from_code(63), Some(Restriction::AddMethod));
    assert_eq!(Restriction::from_code(62), None);
    assert_eq!(modifier_words(0x0009), "public static");
    assert_eq!(modifier_words(0), "package-private");
}

#[test]
fn no_line_tables_is_unknown_not_equal() {
    let built = shapes();
    let mut loaded = loaded_from(&built, false);
    for m in &mut loaded.methods {
        m.lines = None;
    }
    let c = compare(&loaded, &built);
    assert!(c.no_lines());
    assert_eq!(c.moved().count(), 0);
}

/// Only the bits the class file defines count: HotSpot's internal flags,
/// which JDWP reports too, never make a build stale.
#[test]
fn modifier_bits_outside_the_class_file_are_not_changes() {
    let check = |field_extra: i32, method_extra: i32, expect: &[&str]| {
        let built = shapes();
        let mut loaded = loaded_from(&built, false);
        loaded.fields[0].modifiers ^= field_extra;
        loaded.methods[0].modifiers ^= method_extra;
        let found: Vec<&str> = compare(&loaded, &built)
            .changes
            .iter()
            .map(|c| match c {
                Change::FieldModifiers { .. } => "field",
                Change::MethodModifiers { .. } => "method",
                _ => "other",
            })
            .collect();
        assert_eq!(
            found, expect,
            "field ^{field_extra:#x}, method ^{method_extra:#x}"
        );
    };
    // JDK 17's JVM_ACC_FIELD_HAS_GENERIC_SIGNATURE, other internal bits,
    // the JDWP synthetic marker, synthetic and enum.
    for extra in [
        0x0800,
        0x0100,
        0x0200,
        0x0400,
        0x1000,
        0x4000,
        0xF000_0000_u32 as i32,
    ] {
        check(extra, 0, &[]);
    }
    // Native (a prefix may change it), a bit methods do not define, and
    // HotSpot's internal method flags.
    for extra in [0x0100, 0x0200, 0x1000, 0x2000_0000, 0x0001_0000] {
        check(0, extra, &[]);
    }
    for extra in [0x0001, 0x0008, 0x0010, 0x0040, 0x0080] {
        check(extra, 0, &["field"]);
    }
    for extra in [0x0020, 0x0040, 0x0080, 0x0400, 0x0800] {
        check(0, extra, &["method"]);
    }
}

#[test]
fn code_that_names_the_same_constants_by_other_indices_is_the_same() {
    use ristretto_classfile::ConstantPool;
    // The file's pool, and a merged one where the same method sits at
    // another index (as after a redefinition) beside one that differs.
    let mut file = ConstantPool::new();
    let string = file.add_class("java/lang/String").expect("class");
    let length = file
        .add_method_ref(string, "length", "()I")
        .expect("method ref");
    let mut merged = ConstantPool::new();
    merged.add_utf8("padding").expect("utf8");
    let string = merged.add_class("java/lang/String").expect("class");
    let other = merged
        .add_method_ref(string, "hashCode", "()I")
        .expect("method ref");
    let moved = merged
        .add_method_ref(string, "length", "()I")
        .expect("method ref");
    assert_ne!(length, moved);
    let invoke = |i: u16| {
        let [hi, lo] = i.to_be_bytes();
        vec![0x2a, 0xb6, hi, lo, 0xac]
    };
    let (file, merged) = (pool_text(&file), pool_text(&merged));
    assert!(pool::same_code(
        &invoke(moved),
        &merged,
        &invoke(length),
        &file
    ));
    assert!(!pool::same_code(
        &invoke(other),
        &merged,
        &invoke(length),
        &file
    ));
    // Code that does not decode is never the same.
    assert!(!pool::same_code(&[0xb6], &merged, &[0xb6], &file));
}
