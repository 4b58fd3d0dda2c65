//! Timing the calls a method makes: each call site gets its sum (in a
//! loop, a catch and a finally alike), a method that makes no calls is
//! refused, and a method with more sites than the helper takes sums the
//! sites by method called.

use super::*;

fn callees_on(entry: &str, name: &str, descriptor: &str) -> (&'static [u8], ProbeSpec) {
    let (_, bytes) = CORPUS.iter().find(|(n, _)| *n == entry).expect("entry");
    let spec = ProbeSpec {
        helper: "H".into(),
        method: Some(MethodRef {
            name: name.into(),
            descriptor: descriptor.into(),
        }),
        site: Site::Exit,
        locals: None,
        only_condition: false,
        condition: None,
        min_duration_ns: 1_000_000,
        ring_capacity: 16,
        callers: 1,
        stats: false,
        callees: true,
        paths: Vec::new(),
    };
    (bytes, spec)
}

#[test]
fn callees_time_each_call_site_of_a_loop_a_catch_and_a_finally() {
    for entry in ["release8/Probed", "release17/Probed", "lines/Probed"] {
        let (bytes, spec) = callees_on(entry, "sum", "([Ljava/lang/String;)I");
        let layout = helper_class(bytes, &spec).expect("planned").layout;
        let names: Vec<&str> = layout.columns.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(
            names.last_chunk::<3>(),
            Some(&["exception", "callees", "callers"]),
            "{entry}: the callees' text comes before the callers"
        );
        let mut called: Vec<&str> = layout.callees.iter().map(|c| c.method.as_str()).collect();
        called.sort_unstable();
        // javac copies the finally into each way out of the try.
        assert_eq!(
            called,
            ["add", "add", "add", "getMessage", "length", "parseInt"],
            "{entry}"
        );
        assert_eq!(layout.callees[0].class, "java.lang.Integer");
        let adds: Vec<_> = layout
            .callees
            .iter()
            .filter(|c| c.method == "add")
            .collect();
        assert!(
            adds.iter()
                .all(|c| c.class == "java.util.List" && c.line == adds[0].line)
        );
        let out = instrument(bytes, std::slice::from_ref(&spec)).expect("instrumented");
        only_inserts(bytes, &out).expect("only inserts");
        let class = class_of(&out);
        let mi = find_method(&class, spec.method.as_ref().expect("a method")).expect("sum");
        let (code, _) = code_attrs(&class.methods[mi].attributes).expect("code");
        let clock_reads = code
            .iter()
            .filter(|x| match x {
                Instruction::Invokestatic(r) => {
                    read::method_name(&class, *r).as_deref() == Some("nanoTime")
                }
                _ => false,
            })
            .count();
        // Two a call; one in each of the method's two handlers and in
        // the probe's catch-all.
        assert_eq!(clock_reads, 2 * 6 + 2 + 1, "{entry}");
        // A fast call pays the clock reads and the adds: no branch, no
        // allocation is added to the method.
        let original = class_of(bytes);
        let (old, _) = code_attrs(&original.methods[mi].attributes).expect("code");
        let costly = |c: &[Instruction]| {
            c.iter()
                .filter(|i| {
                    matches!(
                        i,
                        super::super::asm::short_branch!(_)
                            | Instruction::New(_)
                            | Instruction::Newarray(_)
                            | Instruction::Anewarray(_)
                    )
                })
                .count()
        };
        assert_eq!(costly(code), costly(old), "{entry}");
    }
}

#[test]
fn callees_of_a_method_that_makes_no_calls_are_refused() {
    let (bytes, spec) = callees_on("release17/Probed", "loop", "(I)I");
    assert!(matches!(
        instrument(bytes, &[spec]),
        Err(Refusal::NoCalls { method }) if method.contains("loop")
    ));
    // Statistics or a line keep no callees: nothing changes for them.
    let (bytes, mut spec) = callees_on("release17/Probed", "sum", "([Ljava/lang/String;)I");
    spec.stats = true;
    spec.callers = 0;
    spec.locals = Some(Vec::new());
    let layout = helper_class(bytes, &spec).expect("planned").layout;
    assert!(layout.callees.is_empty());
}

#[test]
fn callees_past_the_most_sums_share_one_by_method_called() {
    for entry in ["release8/Probed", "release17/Probed", "lines/Probed"] {
        let (bytes, spec) = callees_on(entry, "main", "([Ljava/lang/String;)V");
        let layout = helper_class(bytes, &spec).expect("planned").layout;
        let sums = &layout.callees;
        assert!(
            sums.len() <= super::super::callees::MOST,
            "{entry}: {}",
            sums.len()
        );
        let println: Vec<_> = sums.iter().filter(|s| s.method == "println").collect();
        assert_eq!(println.len(), 1, "{entry}: one sum for every println");
        assert_eq!(println[0].line, None, "{entry}: on several lines");
        assert!(
            sums.iter().all(|s| s.class != "java.lang.StringBuilder"),
            "{entry}: a concatenation is the method's own code"
        );
        let out = instrument(bytes, std::slice::from_ref(&spec)).expect("instrumented");
        only_inserts(bytes, &out).expect("only inserts");
    }
}
