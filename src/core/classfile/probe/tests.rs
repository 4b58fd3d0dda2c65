//! Instrumenting real class files (`tests/data/classfile/probe/`, built
//! by its `build.sh` with `javac -g --release 8`, `-g --release 17` and
//! `-g:lines --release 17`) at random sites, with random locals and
//! conditions: every probe set either is refused with a reason or gives a
//! class that reads back, keeps every original line, local and
//! instruction in order, and equals the same probes added one at a time;
//! no probes give the original bytes; garbled bytes are refused, never a
//! panic.

use std::collections::BTreeSet;

use proptest::prelude::*;
use ristretto_classfile::ClassFile;
use ristretto_classfile::attributes::{Attribute, Instruction};

use super::read::utf8;
use super::*;

macro_rules! corpus {
    ($($dir:literal / $name:literal),* $(,)?) => {
        &[$((
            concat!($dir, "/", $name),
            include_bytes!(concat!("../../../../tests/data/classfile/probe/", $dir, "/", $name, ".class")),
        )),*]
    };
}

const CORPUS: &[(&str, &[u8])] = corpus![
    "release8" / "Probed",
    "release8" / "Probed$1",
    "release8" / "Probed$Inner",
    "release8" / "Probed$Nested",
    "release17" / "Probed",
    "release17" / "Probed$1",
    "release17" / "Probed$Inner",
    "release17" / "Probed$Nested",
    "release17" / "Modern",
    "release17" / "Modern$Point",
    "release17" / "Modern$Square",
    "release17" / "Modern$Circle",
    "release17" / "Modern$Shape",
    "lines" / "Probed",
    "lines" / "Probed$Inner",
];

/// A place a probe may go, with the names a condition may read there.
#[derive(Debug, Clone)]
struct Choice {
    method: Option<MethodRef>,
    site: Site,
    names: Vec<String>,
}

fn class_of(bytes: &[u8]) -> ClassFile<'static> {
    ClassFile::from_bytes(bytes).expect("the corpus parses")
}

fn code_attrs(attrs: &[Attribute]) -> Option<(&Vec<Instruction>, &Vec<Attribute>)> {
    attrs.iter().find_map(|a| match a {
        Attribute::Code {
            code, attributes, ..
        } => Some((code, attributes)),
        _ => None,
    })
}

/// Every line with code, entry and exit of every method, and every
/// field's writes.
fn choices(bytes: &[u8]) -> Vec<Choice> {
    let class = class_of(bytes);
    let mut out = Vec::new();
    for m in &class.methods {
        let Some((_, attrs)) = code_attrs(&m.attributes) else {
            continue;
        };
        let method = Some(MethodRef {
            name: utf8(&class, m.name_index),
            descriptor: utf8(&class, m.descriptor_index),
        });
        let (lines, locals) = tables(&class, attrs);
        let names: Vec<String> = locals.iter().map(|l| l.0.clone()).collect();
        let mut sites: Vec<Site> = lines.into_iter().map(|line| Site::Line { line }).collect();
        sites.extend([Site::Entry, Site::Exit]);
        for site in sites {
            out.push(Choice {
                method: method.clone(),
                site,
                names: names.clone(),
            });
        }
    }
    if !timed_methods(&class).is_empty() {
        // Every method of the class, timed.
        out.push(Choice {
            method: None,
            site: Site::Exit,
            names: Vec::new(),
        });
    }
    let owner = read::this_name(&class);
    for f in &class.fields {
        out.push(Choice {
            method: None,
            site: Site::FieldWrite {
                owner: owner.clone(),
                name: utf8(&class, f.name_index),
                descriptor: utf8(&class, f.descriptor_index),
                writers: Vec::new(),
            },
            names: vec!["newValue".into()],
        });
    }
    out
}

/// A Code attribute's line set and its (name, slot) locals, sorted.
fn tables(class: &ClassFile<'_>, attrs: &[Attribute]) -> (BTreeSet<u32>, Vec<(String, u16)>) {
    let mut lines = BTreeSet::new();
    let mut locals = Vec::new();
    for a in attrs {
        match a {
            Attribute::LineNumberTable { line_numbers, .. } => {
                lines.extend(line_numbers.iter().map(|l| u32::from(l.line_number)));
            }
            Attribute::LocalVariableTable { variables, .. } => {
                locals.extend(
                    variables
                        .iter()
                        .map(|v| (utf8(class, v.name_index), v.index)),
                );
            }
            _ => {}
        }
    }
    locals.sort();
    (lines, locals)
}

/// An instruction with its branch targets left out (they move).
fn shape(i: &Instruction) -> String {
    let text = format!("{i:?}");
    let branch = matches!(
        i,
        super::asm::short_branch!(_)
            | Instruction::Goto_w(_)
            | Instruction::Tableswitch(_)
            | Instruction::Lookupswitch(_)
    );
    match text.split_once('(') {
        Some((name, _)) if branch => name.to_string(),
        _ => text,
    }
}

/// Every original method keeps its lines, its locals and its
/// instructions, in order, with only inserted code between them.
fn only_inserts(original: &[u8], changed: &[u8]) -> Result<(), String> {
    let (old, new) = (class_of(original), ClassFile::from_bytes(changed));
    let new = new.map_err(|e| format!("the instrumented class does not read back: {e}"))?;
    if old.methods.len() != new.methods.len() {
        return Err("the method count changed".into());
    }
    for (m, n) in old.methods.iter().zip(&new.methods) {
        let name = utf8(&old, m.name_index);
        let (Some((oc, oa)), Some((nc, na))) =
            (code_attrs(&m.attributes), code_attrs(&n.attributes))
        else {
            if code_attrs(&m.attributes).is_some() != code_attrs(&n.attributes).is_some() {
                return Err(format!("{name}: code appeared or vanished"));
            }
            continue;
        };
        if tables(&old, oa) != tables(&new, na) {
            return Err(format!("{name}: its lines or locals changed"));
        }
        let mut rest = nc.iter().map(shape);
        for i in oc {
            let want = shape(i);
            if !rest.any(|x| x == want) {
                return Err(format!("{name}: original {want} missing or out of order"));
            }
        }
    }
    Ok(())
}

fn condition(names: Vec<String>) -> impl Strategy<Value = String> {
    let names = if names.is_empty() {
        vec!["x".to_string()]
    } else {
        names
    };
    let atom = prop_oneof![
        4 => proptest::sample::select(names.clone()),
        1 => proptest::sample::select(names).prop_map(|n| format!("{n} + 1")),
        2 => (-3i32..100).prop_map(|v| v.to_string()),
        1 => Just("null".to_string()),
        1 => Just("\"a\"".to_string()),
        1 => Just("2.5".to_string()),
        1 => Just("true".to_string()),
    ];
    let op = proptest::sample::select(vec!["==", "!=", "<", "<=", ">", ">="]);
    let leaf = (atom.clone(), op, atom).prop_map(|(a, o, b)| format!("{a} {o} {b}"));
    leaf.prop_recursive(2, 8, 2, |inner| {
        prop_oneof![
            (inner.clone(), inner.clone()).prop_map(|(a, b)| format!("{a} && {b}")),
            (inner.clone(), inner.clone()).prop_map(|(a, b)| format!("({a}) || {b}")),
            inner.prop_map(|a| format!("!({a})")),
        ]
    })
}

/// One probe at `choice`: maybe some locals, maybe a condition, maybe
/// only what the condition reads.
fn probe_at(choice: Choice, k: usize) -> impl Strategy<Value = ProbeSpec> {
    let names = choice.names.clone();
    let locals = prop_oneof![
        3 => Just(None),
        1 => proptest::sample::subsequence(names.clone(), 0..=names.len().min(3)).prop_map(Some),
    ];
    let cond = proptest::option::weighted(0.4, condition(names));
    let only_condition = proptest::bool::weighted(0.2);
    let callees = proptest::bool::weighted(0.4);
    (locals, cond, only_condition, callees).prop_map(
        move |(locals, cond, only_condition, callees)| ProbeSpec {
            helper: format!("Probed$$P{k}"),
            method: choice.method.clone(),
            site: choice.site.clone(),
            locals,
            only_condition,
            condition: cond.and_then(|c| crate::expr::parse(&c).ok()),
            min_duration_ns: 0,
            ring_capacity: 16,
            callers: (k % 3) as u32,
            stats: false,
            callees,
            paths: Vec::new(),
        },
    )
}

/// The corpus entries with a place for a probe (an interface without
/// code or fields has none).
fn probeable() -> impl Strategy<Value = usize> {
    let some: Vec<usize> = (0..CORPUS.len())
        .filter(|c| !choices(CORPUS[*c].1).is_empty())
        .collect();
    proptest::sample::select(some)
}

/// A corpus class and one to four probes on it.
fn case() -> impl Strategy<Value = (usize, Vec<ProbeSpec>)> {
    probeable().prop_flat_map(|c| {
        let all = choices(CORPUS[c].1);
        // Constructors and static initialisers mostly refuse: pick them
        // less often.
        let ordinary: Vec<Choice> = all
            .iter()
            .filter(|x| x.method.as_ref().is_none_or(|m| !m.name.starts_with('<')))
            .cloned()
            .collect();
        let one = if ordinary.is_empty() {
            proptest::sample::select(all).boxed()
        } else {
            prop_oneof![
                4 => proptest::sample::select(ordinary),
                1 => proptest::sample::select(all),
            ]
            .boxed()
        };
        let picks = proptest::collection::vec(one, 1..=4);
        picks.prop_flat_map(move |picked| {
            let specs: Vec<_> = picked
                .into_iter()
                .enumerate()
                .map(|(k, choice)| probe_at(choice, k))
                .collect();
            (Just(c), specs)
        })
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    #[test]
    fn a_probe_set_is_refused_or_only_inserts((c, specs) in case()) {
        let (name, original) = CORPUS[c];
        match instrument(original, &specs) {
            Err(_) => {}
            Ok(bytes) => {
                if let Err(why) = only_inserts(original, &bytes) {
                    return Err(TestCaseError::fail(format!("{name} {specs:?}: {why}")));
                }
            }
        }
    }

    #[test]
    fn probes_added_one_at_a_time_equal_probes_added_together((c, specs) in case()) {
        let original = CORPUS[c].1;
        let Ok(together) = instrument(original, &specs) else {
            return Ok(());
        };
        let (last, rest) = specs.split_last().expect("one probe or more");
        let without = instrument(original, rest).expect("a subset of an accepted set is accepted");
        let again = instrument(&without, std::slice::from_ref(last))
            .expect("the last probe is accepted on top of the others");
        prop_assert_eq!(again, together);
    }

    #[test]
    fn truncated_bytes_are_refused(c in probeable(), cut in 0usize..100_000, choice in 0usize..1000) {
        let original = CORPUS[c].1;
        let bytes = &original[..cut % original.len()];
        let all = choices(original);
        let choice = &all[choice % all.len()];
        let spec = ProbeSpec {
            helper: "H".into(),
            method: choice.method.clone(),
            site: choice.site.clone(),
            locals: None,
            only_condition: false,
            condition: None,
            min_duration_ns: 0,
            ring_capacity: 16,
            callers: 2,
            stats: false,
            callees: false,
            paths: Vec::new(),
        };
        prop_assert!(matches!(instrument(bytes, std::slice::from_ref(&spec)), Err(Refusal::Malformed(_))));
        prop_assert!(helper_class(bytes, &spec).is_err());
    }

    #[test]
    fn garbled_bytes_never_panic(
        c in probeable(),
        flips in proptest::collection::vec((0usize..100_000, any::<u8>()), 1..8),
        choice in 0usize..1000,
    ) {
        let original = CORPUS[c].1;
        let mut bytes = original.to_vec();
        for (at, v) in flips {
            let n = bytes.len();
            bytes[at % n] = v;
        }
        let all = choices(original);
        let choice = &all[choice % all.len()];
        let spec = ProbeSpec {
            helper: "H".into(),
            method: choice.method.clone(),
            site: choice.site.clone(),
            locals: None,
            only_condition: false,
            condition: None,
            min_duration_ns: 0,
            ring_capacity: 16,
            callers: 2,
            stats: false,
            callees: false,
            paths: Vec::new(),
        };
        let _ = instrument(&bytes, std::slice::from_ref(&spec));
        let _ = helper_class(&bytes, &spec);
    }
}

#[test]
fn no_probes_give_back_the_original_bytes() {
    for (name, original) in CORPUS {
        assert_eq!(
            instrument(original, &[]).as_deref(),
            Ok(*original),
            "{name}"
        );
    }
    assert!(matches!(
        instrument(b"\xca\xfe\xba\xbe", &[]),
        Err(Refusal::Malformed(_))
    ));
}

/// `(corpus entry, method, site)` and the refusal it must give.
fn refused(
    entry: &str,
    method: Option<(&str, &str)>,
    site: Site,
    locals: Option<&[&str]>,
    cond: &str,
) -> Refusal {
    let (_, bytes) = CORPUS
        .iter()
        .find(|(n, _)| *n == entry)
        .expect("a corpus entry");
    let spec = ProbeSpec {
        helper: "H".into(),
        method: method.map(|(name, descriptor)| MethodRef {
            name: name.into(),
            descriptor: descriptor.into(),
        }),
        site,
        locals: locals.map(|l| l.iter().map(|s| s.to_string()).collect()),
        only_condition: false,
        condition: (!cond.is_empty()).then(|| crate::expr::parse(cond).expect("parses")),
        min_duration_ns: 0,
        ring_capacity: 16,
        callers: 0,
        stats: false,
        callees: false,
        paths: Vec::new(),
    };
    instrument(bytes, &[spec]).expect_err("refused")
}

#[test]
fn refusals_say_why() {
    let ctor = Some(("<init>", "(I)V"));
    assert_eq!(
        refused("release17/Probed", ctor, Site::Entry, None, ""),
        Refusal::Constructor
    );
    assert_eq!(
        refused(
            "release17/Probed",
            Some(("<clinit>", "()V")),
            Site::Exit,
            None,
            ""
        ),
        Refusal::StaticInitializer
    );
    assert!(matches!(
        refused(
            "release17/Probed",
            Some(("loop", "(I)I")),
            Site::Line { line: 1 },
            None,
            ""
        ),
        Refusal::NoLine { line: 1, .. }
    ));
    assert!(matches!(
        refused(
            "lines/Probed",
            Some(("loop", "(I)I")),
            Site::Line { line: 52 },
            Some(&["sum"]),
            ""
        ),
        Refusal::NoLocalTable { .. }
    ));
    assert!(matches!(
        refused(
            "release17/Probed",
            Some(("loop", "(I)I")),
            Site::Line { line: 52 },
            Some(&["nope"]),
            ""
        ),
        Refusal::NoLocal { .. }
    ));
    assert!(matches!(
        refused(
            "release17/Probed",
            Some(("loop", "(I)I")),
            Site::Line { line: 52 },
            None,
            "sum.length() > 1"
        ),
        Refusal::Condition { .. }
    ));
    // this$0 is written before super(): a condition may not read a field
    // of the unfinished object there.
    let this0 = Site::FieldWrite {
        owner: "Probed$Inner".into(),
        name: "this$0".into(),
        descriptor: "LProbed;".into(),
        writers: Vec::new(),
    };
    assert!(matches!(
        refused("release17/Probed$Inner", None, this0, None, "depth == 0"),
        Refusal::Condition { .. }
    ));
}

fn layout_of(entry: &str, method: Option<(&str, &str)>, site: Site, callers: u32) -> Vec<String> {
    let (_, bytes) = CORPUS
        .iter()
        .find(|(n, _)| *n == entry)
        .expect("a corpus entry");
    let spec = ProbeSpec {
        helper: "H".into(),
        method: method.map(|(name, descriptor)| MethodRef {
            name: name.into(),
            descriptor: descriptor.into(),
        }),
        site,
        locals: None,
        only_condition: false,
        condition: None,
        min_duration_ns: 0,
        ring_capacity: 16,
        callers,
        stats: false,
        callees: false,
        paths: Vec::new(),
    };
    helper_class(bytes, &spec)
        .expect("planned")
        .layout
        .columns
        .iter()
        .map(|c| c.name.clone())
        .collect()
}

#[test]
fn a_record_holds_captured_variables_the_old_value_and_the_callers() {
    // The anonymous Runnable captured `base`: its val$base field is read
    // at the site and recorded under the variable's own name.
    let run = Some(("run", "()V"));
    for entry in ["release8/Probed$1", "release17/Probed$1"] {
        assert_eq!(layout_of(entry, run, Site::Entry, 0), ["base"]);
        assert_eq!(
            layout_of(entry, run, Site::Exit, 3),
            ["base", "exception", "callers"]
        );
    }
    let total = Site::FieldWrite {
        owner: "Probed".into(),
        name: "total".into(),
        descriptor: "J".into(),
        writers: Vec::new(),
    };
    assert_eq!(
        layout_of("release17/Probed", None, total, 2),
        ["total", "oldValue", "site", "callers"]
    );
    // A condition may read a captured variable and the old value.
    let (_, bytes) = CORPUS[5];
    let spec = ProbeSpec {
        helper: "H".into(),
        method: Some(MethodRef {
            name: "run".into(),
            descriptor: "()V".into(),
        }),
        site: Site::Entry,
        locals: Some(vec![]),
        only_condition: false,
        condition: crate::expr::parse("base > 1").ok(),
        min_duration_ns: 0,
        ring_capacity: 16,
        callers: 0,
        stats: false,
        callees: false,
        paths: Vec::new(),
    };
    assert!(instrument(bytes, &[spec]).is_ok());
}

#[test]
fn a_write_probe_across_writers_records_the_same_columns_in_each_class() {
    let counter = |writers: &[&str]| Site::FieldWrite {
        owner: "Probed".into(),
        name: "counter".into(),
        descriptor: "I".into(),
        writers: writers.iter().map(|w| w.to_string()).collect(),
    };
    let both = ["Probed", "Probed$1"];
    for release in ["release8", "release17"] {
        // The anonymous Runnable writes Probed.counter: alone, it is not
        // the declaring class, so it has no sites unless it is chosen.
        let anon = format!("{release}/Probed$1");
        let outer = format!("{release}/Probed");
        let in_anon = layout_of(&anon, None, counter(&both), 0);
        assert_eq!(in_anon, ["counter", "oldValue", "this", "site"]);
        assert_eq!(layout_of(&outer, None, counter(&both), 0), in_anon);
        let (_, bytes) = CORPUS
            .iter()
            .find(|(n, _)| *n == anon)
            .expect("a corpus entry");
        let spec = |site: Site, condition: &str| ProbeSpec {
            helper: "H".into(),
            method: None,
            site,
            locals: None,
            only_condition: false,
            condition: crate::expr::parse(condition).ok(),
            min_duration_ns: 0,
            ring_capacity: 16,
            callers: 0,
            stats: false,
            callees: false,
            paths: Vec::new(),
        };
        let s = spec(counter(&both), "newValue > oldValue");
        let instrumented = instrument(bytes, std::slice::from_ref(&s)).expect("instrumented");
        assert_ne!(instrumented.as_slice(), *bytes);
        // Across writers, a condition reads no field at the sites: each
        // class would read its own.
        let refused = instrument(bytes, &[spec(counter(&both), "val$base > 0")]);
        assert!(
            matches!(refused, Err(Refusal::Condition { .. })),
            "{refused:?}"
        );
        // A chosen class that never writes it: refused, naming it.
        let (_, inner) = CORPUS
            .iter()
            .find(|(n, _)| *n == format!("{release}/Probed$Inner"))
            .expect("a corpus entry");
        let three = ["Probed", "Probed$1", "Probed$Inner"];
        match helper_class(inner, &spec(counter(&three), "")) {
            Err(Refusal::NoWrite { class, .. }) => assert_eq!(class, "Probed$Inner"),
            other => panic!("{:?}", other.map(|h| h.layout)),
        }
    }
    // A chosen writer that declares a field of the same name hides the
    // watched one: its writes are to its own field.
    let (_, inner) = CORPUS
        .iter()
        .find(|(n, _)| *n == "release17/Probed$Inner")
        .expect("a corpus entry");
    let depth = Site::FieldWrite {
        owner: "Probed".into(),
        name: "depth".into(),
        descriptor: "I".into(),
        writers: vec!["Probed".into(), "Probed$Inner".into()],
    };
    let hidden = helper_class(
        inner,
        &ProbeSpec {
            helper: "H".into(),
            method: None,
            site: depth,
            locals: None,
            only_condition: false,
            condition: None,
            min_duration_ns: 0,
            ring_capacity: 16,
            callers: 0,
            stats: false,
            callees: false,
            paths: Vec::new(),
        },
    );
    assert!(
        matches!(&hidden, Err(Refusal::Hides { class, .. }) if class == "Probed$Inner"),
        "{:?}",
        hidden.map(|h| h.layout)
    );
}

#[test]
fn a_probe_for_its_condition_only_pushes_what_the_condition_reads() {
    let (_, bytes) = CORPUS
        .iter()
        .find(|(n, _)| *n == "release17/Probed")
        .expect("a corpus entry");
    let columns = |condition: Option<&str>| {
        let spec = ProbeSpec {
            helper: "H".into(),
            method: Some(MethodRef {
                name: "mixed".into(),
                descriptor: "(JDFCZ)D".into(),
            }),
            site: Site::Entry,
            locals: None,
            only_condition: true,
            condition: condition.map(|c| crate::expr::parse(c).expect("parses")),
            min_duration_ns: 0,
            ring_capacity: 16,
            callers: 0,
            stats: false,
            callees: false,
            paths: Vec::new(),
        };
        helper_class(bytes, &spec).map(|h| {
            h.layout
                .columns
                .iter()
                .map(|c| c.name.clone())
                .collect::<Vec<_>>()
        })
    };
    assert_eq!(columns(None).expect("planned"), Vec::<String>::new());
    assert_eq!(columns(Some("a > 1 && e")).expect("planned"), ["a", "e"]);
    // A static field the condition reads is read at the site, not recorded.
    assert_eq!(
        columns(Some("counter > 0")).expect("planned"),
        Vec::<String>::new()
    );
    assert!(matches!(
        columns(Some("nowhere > 0")),
        Err(Refusal::Condition { .. })
    ));
}

#[test]
fn an_exit_probe_with_no_method_times_every_method_in_one_class_file() {
    for entry in ["release8/Probed", "release17/Probed", "lines/Probed"] {
        assert_eq!(
            layout_of(entry, None, Site::Exit, 0),
            [ARGS, SITE, "exception"],
            "{entry}: a record holds the arguments, the method and what it threw"
        );
        let (_, bytes) = CORPUS.iter().find(|(n, _)| *n == entry).expect("entry");
        let spec = ProbeSpec {
            helper: "H".into(),
            method: None,
            site: Site::Exit,
            locals: None,
            only_condition: false,
            condition: None,
            min_duration_ns: 50_000_000,
            ring_capacity: 16,
            callers: 0,
            stats: false,
            callees: false,
            paths: Vec::new(),
        };
        let out = instrument(bytes, std::slice::from_ref(&spec)).expect("instrumented");
        only_inserts(bytes, &out).expect("only inserts");
        let class = class_of(&out);
        let timed = timed_methods(&class);
        assert!(timed.len() > 1, "{entry}: several methods are timed");
        for (i, m) in class.methods.iter().enumerate() {
            let Some((code, _)) = code_attrs(&m.attributes) else {
                continue;
            };
            let name = utf8(&class, m.name_index);
            let calls = code
                .iter()
                .filter(|x| match x {
                    Instruction::Invokestatic(r) => {
                        read::method_name(&class, *r).as_deref() == Some(START)
                    }
                    _ => false,
                })
                .count();
            let expected = usize::from(timed.contains(&i));
            assert_eq!(calls, expected, "{entry} {name}: start() calls");
            if name.starts_with('<') {
                assert_eq!(calls, 0, "{entry}: {name} is not timed");
            }
        }
        let cond = ProbeSpec {
            condition: crate::expr::parse("x > 1").ok(),
            ..spec
        };
        assert_eq!(
            instrument(bytes, &[cond]),
            Err(Refusal::ConditionOnEveryMethod)
        );
    }
}

mod callees;
mod paths;
