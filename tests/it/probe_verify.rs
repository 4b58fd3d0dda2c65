//! The probe engine's class files in real JVMs: the fixture under
//! `tests/data/classfile/probe/` (instance and static methods, lambdas,
//! inner and anonymous classes, synchronized code, try/catch/finally,
//! loops, switches, long and double locals, a method that throws,
//! constructors, a static initialiser, records and switch expressions on
//! 17) is compiled with `--release 8` and `--release 17`, every line with
//! code, every method entry and exit (and, for each method that makes
//! calls, its exit timing them, in a loop, a catch and a finally, a
//! callee throwing) and every field write is probed in one instrumented
//! copy (with a condition on the first recorded value, and a few probes
//! reading field paths for their records),
//! and both copies run under `java -Xverify:all` on JDK 17 and Temurin 25
//! through a driver that switches every helper on, runs the mains, loads
//! every class and reports each helper's counters. The output must not
//! change, nothing may fail to verify, no helper may record an error, a
//! few probes must record exactly what their conditions pass, and the
//! only refusals are constructors before `super()` and static
//! initialisers.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use jvmscope::classfile::probe::{
    self, FieldAt, FieldPath, Kind, MethodRef, PathBase, PathStep, ProbeSpec, Refusal, Site,
    StepRead,
};
use ristretto_classfile::attributes::Attribute;
use ristretto_classfile::{ClassFile, Constant};

use crate::support::java::{NO_JDK, java, javac, temurin25_required};

fn probe_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/classfile/probe")
}

fn java_files(dir: &Path) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("cannot list {}: {e}", dir.display()))
        .map(|e| e.expect("a directory entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "java"))
        .collect();
    out.sort();
    out
}

fn compile(release: &str, sources: &[PathBuf], out: &Path) {
    let output = Command::new(javac())
        .args(["-g", "--release", release, "-encoding", "UTF-8", "-d"])
        .arg(out)
        .args(sources)
        .output()
        .unwrap_or_else(|e| panic!("{NO_JDK} (cannot run javac: {e})"));
    assert!(
        output.status.success(),
        "javac --release {release} failed:\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
}

/// The 1-based line of `Probed.java` carrying `// LINE: <marker>`.
fn line(marker: &str) -> u32 {
    let text = std::fs::read_to_string(probe_dir().join("src/Probed.java")).expect("Probed.java");
    let tag = format!("// LINE: {marker}");
    let at = text
        .lines()
        .position(|l| l.trim_end().ends_with(&tag))
        .unwrap_or_else(|| panic!("no `{tag}` in Probed.java"));
    u32::try_from(at + 1).expect("a line number")
}

fn utf8(class: &ClassFile<'_>, i: u16) -> String {
    class
        .constant_pool
        .try_get_utf8(i)
        .map(|s| s.to_string())
        .unwrap_or_default()
}

/// A probe the test asks for, and what it is, for messages.
struct Asked {
    spec: ProbeSpec,
    what: String,
}

fn spec(helper: String, method: Option<MethodRef>, site: Site) -> ProbeSpec {
    ProbeSpec {
        helper,
        method,
        site,
        locals: None,
        only_condition: false,
        condition: None,
        min_duration_ns: 0,
        ring_capacity: 64,
        callers: 2,
        stats: false,
        callees: false,
        paths: Vec::new(),
    }
}

/// Every site of one class: each line with code, each entry and exit,
/// each field it declares.
fn every_site(class_name: &str, bytes: &[u8]) -> Vec<Asked> {
    let class = ClassFile::from_bytes(bytes).expect("javac output parses");
    let mut out = Vec::new();
    let mut callees = Vec::new();
    let mut next = |method: Option<MethodRef>, site: Site, what: String| {
        let helper = format!("{class_name}$$Probe{}", out.len());
        out.push(Asked {
            spec: spec(helper, method, site),
            what,
        });
    };
    for m in &class.methods {
        let (name, descriptor) = (utf8(&class, m.name_index), utf8(&class, m.descriptor_index));
        let mref = MethodRef {
            name: name.clone(),
            descriptor: descriptor.clone(),
        };
        let mut lines = std::collections::BTreeSet::new();
        let mut has_code = false;
        for a in &m.attributes {
            if let Attribute::Code { attributes, .. } = a {
                has_code = true;
                for t in attributes {
                    if let Attribute::LineNumberTable { line_numbers, .. } = t {
                        lines.extend(line_numbers.iter().map(|l| u32::from(l.line_number)));
                    }
                }
            }
        }
        if !has_code {
            continue;
        }
        let label = format!("{class_name}.{name}{descriptor}");
        for l in lines {
            next(
                Some(mref.clone()),
                Site::Line { line: l },
                format!("{label} line {l}"),
            );
        }
        next(Some(mref.clone()), Site::Entry, format!("{label} entry"));
        next(Some(mref.clone()), Site::Exit, format!("{label} exit"));
        // Its calls timed, where it makes any: first, so that other
        // probes' calls into their helpers are not among them.
        let mut timed = spec(
            format!("{class_name}$$ProbeC{}", callees.len()),
            Some(mref),
            Site::Exit,
        );
        timed.callees = true;
        if !matches!(
            probe::instrument(bytes, std::slice::from_ref(&timed)),
            Err(Refusal::NoCalls { .. })
        ) {
            callees.push(Asked {
                spec: timed,
                what: format!("{label} callees"),
            });
        }
    }
    let Some(Constant::Class(this)) = class.constant_pool.get(class.this_class) else {
        panic!("{class_name} has no this_class");
    };
    let owner = utf8(&class, *this);
    for f in &class.fields {
        let name = utf8(&class, f.name_index);
        let site = Site::FieldWrite {
            owner: owner.clone(),
            name: name.clone(),
            descriptor: utf8(&class, f.descriptor_index),
            writers: Vec::new(),
        };
        next(None, site, format!("{class_name}.{name} write"));
    }
    if !probe::timed_methods(&class).is_empty() {
        // Every method of the class timed, in the same class file.
        let helper = format!("{class_name}$$Probe{}", out.len());
        let mut every = spec(helper, None, Site::Exit);
        every.min_duration_ns = 1;
        out.push(Asked {
            spec: every,
            what: format!("{class_name} every method's exit"),
        });
    }
    if let Some(&first) = probe::timed_methods(&class).first() {
        // Statistics of one method: a histogram, no record.
        let m = &class.methods[first];
        let method = MethodRef {
            name: utf8(&class, m.name_index),
            descriptor: utf8(&class, m.descriptor_index),
        };
        let helper = format!("{class_name}$$Probe{}", out.len());
        let mut stats = spec(helper, Some(method), Site::Exit);
        stats.stats = true;
        stats.locals = Some(Vec::new());
        stats.callers = 0;
        out.push(Asked {
            spec: stats,
            what: format!("{class_name} statistics of its first timed method"),
        });
    }
    callees.extend(out);
    callees
}

/// A condition on the first value a probe records that holds for most
/// values, so the compiled condition runs (and is verified) everywhere.
fn condition_for(bytes: &[u8], spec: &ProbeSpec) -> Option<jvmscope::expr::Parsed> {
    let helper = probe::helper_class(bytes, spec).ok()?;
    let c = helper
        .layout
        .columns
        .iter()
        .find(|c| c.name != "this" && c.source != probe::Source::Callers)?;
    let n = &c.name;
    let text = match c.kind {
        Kind::Boolean => format!("{n} || !{n}"),
        Kind::Ref if c.descriptor == "Ljava/lang/String;" => format!("{n} != \"~\""),
        Kind::Ref => format!("{n} == null || {n} != null"),
        _ => format!("{n} >= 0 || {n} < 0"),
    };
    jvmscope::expr::parse_checked(&text).ok()
}

/// Probes with a known outcome: (class, method, descriptor, site,
/// condition, calls, records).
fn targeted() -> Vec<(
    &'static str,
    &'static str,
    &'static str,
    Site,
    &'static str,
    u64,
    u64,
)> {
    let body = Site::Line {
        line: line("loop-body"),
    };
    let nan = Site::Line { line: line("nan") };
    vec![
        ("Probed", "loop", "(I)I", body.clone(), "", 5, 5),
        ("Probed", "loop", "(I)I", body.clone(), "i >= 2", 5, 3),
        ("Probed", "loop", "(I)I", body, "sum > 3", 5, 1),
        ("Probed", "belowOne", "(D)I", nan.clone(), "d < 1.0", 3, 1),
        ("Probed", "belowOne", "(D)I", nan, "d >= 1.0", 3, 1),
        (
            "Probed",
            "guarded",
            "(Ljava/lang/String;)Ljava/lang/String;",
            Site::Entry,
            "s == \"12\"",
            2,
            1,
        ),
        ("Probed", "fails", "(I)V", Site::Exit, "", 2, 2),
        (
            "Probed",
            "fails",
            "(I)V",
            Site::Exit,
            "exception != null",
            2,
            1,
        ),
        (
            "Probed",
            "",
            "",
            Site::FieldWrite {
                owner: "Probed".into(),
                name: "total".into(),
                descriptor: "J".into(),
                writers: Vec::new(),
            },
            "newValue > 0",
            5,
            3,
        ),
        // A write of another class's field, from a chosen writer: the
        // anonymous Runnable adds to Probed.counter once.
        (
            "Probed$1",
            "",
            "",
            Site::FieldWrite {
                owner: "Probed".into(),
                name: "counter".into(),
                descriptor: "I".into(),
                writers: vec!["Probed".into(), "Probed$1".into()],
            },
            "newValue > 0",
            1,
            1,
        ),
    ]
}

/// A field of a fixture class, as the JVM would describe it to a probe
/// whose helper is in the unnamed package, in the same loader.
fn field(class: &str, descriptor: &str, modifiers: u16) -> StepRead {
    StepRead::Field(FieldAt {
        class: class.into(),
        declaring: class.into(),
        descriptor: descriptor.into(),
        modifiers,
        class_public: class == "Probed",
        class_in_loader: true,
        declaring_in_loader: true,
    })
}

/// A path read by a probe (the steps' columns do not matter here).
fn path(index: usize, source: &str, base: PathBase, steps: Vec<(&str, StepRead)>) -> FieldPath {
    FieldPath {
        index,
        source: source.into(),
        base,
        steps: steps
            .into_iter()
            .map(|(name, read)| PathStep {
                name: name.into(),
                column: 1,
                null_at: jvmscope::expr::Span::new(0, 1),
                read,
            })
            .collect(),
    }
}

/// Probes whose records read field paths (a field of `this` the helper
/// reads, a private one the site reads, an array's length from an
/// argument and from the returned value, a static by its bare name, a
/// chain through an inner class's outer instance), with a known outcome:
/// (class, method, descriptor, site, paths, calls, records).
#[allow(clippy::type_complexity)]
fn path_probes() -> Vec<(
    &'static str,
    &'static str,
    &'static str,
    Site,
    Vec<FieldPath>,
    u64,
    u64,
)> {
    let string = "Ljava/lang/String;";
    let named = |name: &str, descriptor: &str| PathBase::Named {
        name: name.into(),
        descriptor: descriptor.into(),
    };
    vec![
        (
            "Probed",
            "add",
            "(JD)J",
            Site::Exit,
            vec![
                path(
                    0,
                    "this.name",
                    PathBase::This,
                    vec![("name", field("Probed", string, 0))],
                ),
                path(
                    1,
                    "this.total",
                    PathBase::This,
                    vec![("total", field("Probed", "J", 0x2))],
                ),
            ],
            2,
            2,
        ),
        (
            "Probed",
            "sum",
            "([Ljava/lang/String;)I",
            Site::Entry,
            vec![
                path(
                    0,
                    "xs.length",
                    named("xs", "[Ljava/lang/String;"),
                    vec![("length", StepRead::Length)],
                ),
                path(1, "xs", named("xs", "[Ljava/lang/String;"), Vec::new()),
            ],
            1,
            1,
        ),
        (
            "Probed",
            "arrays",
            "(I)[Ljava/lang/Object;",
            Site::Exit,
            vec![path(
                0,
                "returnValue.length",
                named("returnValue", "[Ljava/lang/Object;"),
                vec![("length", StepRead::Length)],
            )],
            1,
            1,
        ),
        (
            "Probed",
            "loop",
            "(I)I",
            Site::Line {
                line: line("loop-body"),
            },
            vec![
                path(
                    0,
                    "LOG",
                    PathBase::This,
                    vec![("LOG", field("Probed", "Ljava/util/List;", 0x18))],
                ),
                path(1, "sum", named("sum", "I"), Vec::new()),
            ],
            5,
            5,
        ),
        (
            "Probed$Inner",
            "deeper",
            "()I",
            Site::Entry,
            vec![path(
                0,
                "this$0.name",
                PathBase::This,
                vec![
                    ("this$0", field("Probed$Inner", "LProbed;", 0x1010)),
                    ("name", field("Probed", string, 0)),
                ],
            )],
            1,
            1,
        ),
    ]
}

/// What instrumenting one compiled fixture produced.
struct Built {
    original: PathBuf,
    instrumented: PathBuf,
    refusals: Vec<(String, Refusal)>,
    /// Helper name to the expected (calls, records).
    expected: BTreeMap<String, (u64, u64)>,
    probes: usize,
}

fn instrument_all(original: &Path, instrumented: &Path) -> Built {
    std::fs::create_dir_all(instrumented).expect("a directory");
    let mut refusals = Vec::new();
    let mut expected = BTreeMap::new();
    let mut probes = 0;
    let mut files: Vec<PathBuf> = std::fs::read_dir(original)
        .expect("compiled classes")
        .map(|e| e.expect("an entry").path())
        .collect();
    files.sort();
    for file in files {
        let name = file
            .file_stem()
            .and_then(|s| s.to_str())
            .expect("a class file name")
            .to_string();
        let bytes = std::fs::read(&file).expect("a class file");
        let mut asked = every_site(&name, &bytes);
        for (k, (class, method, descriptor, site, paths, calls, records)) in
            path_probes().into_iter().enumerate()
        {
            if class != name {
                continue;
            }
            let method = Some(MethodRef {
                name: method.into(),
                descriptor: descriptor.into(),
            });
            let mut s = spec(format!("{name}$$ProbeP{k}"), method, site);
            s.paths = paths;
            expected.insert(s.helper.clone(), (calls, records));
            asked.push(Asked {
                what: format!("paths {}", s.helper),
                spec: s,
            });
        }
        for (k, (class, method, descriptor, site, cond, calls, records)) in
            targeted().into_iter().enumerate()
        {
            if class != name {
                continue;
            }
            let method = (!method.is_empty()).then(|| MethodRef {
                name: method.into(),
                descriptor: descriptor.into(),
            });
            let mut s = spec(format!("{name}$$ProbeT{k}"), method, site);
            s.condition = (!cond.is_empty())
                .then(|| jvmscope::expr::parse_checked(cond).expect("a valid condition"));
            expected.insert(s.helper.clone(), (calls, records));
            asked.push(Asked {
                what: format!("targeted {} {cond:?}", s.helper),
                spec: s,
            });
        }
        let mut accepted = Vec::new();
        for mut a in asked {
            // A probe on every method takes no condition.
            if a.spec.condition.is_none()
                && !a.spec.helper.contains("$$ProbeT")
                && !a.spec.helper.contains("$$ProbeP")
                && !a.spec.stats
                && (a.spec.method.is_some() || a.spec.site != Site::Exit)
            {
                a.spec.condition = condition_for(&bytes, &a.spec);
            }
            match probe::instrument(&bytes, std::slice::from_ref(&a.spec)) {
                Ok(_) => {
                    let helper = probe::helper_class(&bytes, &a.spec)
                        .unwrap_or_else(|r| panic!("{}: no helper: {r}", a.what));
                    std::fs::write(
                        instrumented.join(format!("{}.class", a.spec.helper)),
                        helper.bytes,
                    )
                    .expect("write a helper");
                    accepted.push(a.spec);
                }
                Err(r) => refusals.push((a.what, r)),
            }
        }
        probes += accepted.len();
        let out = probe::instrument(&bytes, &accepted)
            .unwrap_or_else(|r| panic!("{name}: every accepted probe together: {r}"));
        std::fs::write(instrumented.join(format!("{name}.class")), out).expect("write a class");
    }
    Built {
        original: original.to_path_buf(),
        instrumented: instrumented.to_path_buf(),
        refusals,
        expected,
        probes,
    }
}

/// One run of the driver: the program's lines and the helpers' reports.
struct Run {
    program: Vec<String>,
    probes: BTreeMap<String, BTreeMap<String, String>>,
}

fn run(java: &Path, classes: &Path, driver: &Path, mains: &[&str]) -> Run {
    let cp = std::env::join_paths([classes, driver]).expect("a class path");
    let output = Command::new(java)
        .arg("-Xverify:all")
        .arg("-cp")
        .arg(cp)
        .arg("ProbeDriver")
        .arg(classes)
        .args(mains)
        .output()
        .unwrap_or_else(|e| panic!("{NO_JDK} (cannot run {}: {e})", java.display()));
    let stdout = String::from_utf8_lossy(&output.stdout).to_string();
    let stderr = String::from_utf8_lossy(&output.stderr).to_string();
    assert!(
        output.status.success() && !stdout.contains("load-fail") && !stderr.contains("Error"),
        "{} on {} failed ({}):\n--- stdout ---\n{stdout}\n--- stderr ---\n{stderr}",
        java.display(),
        classes.display(),
        output.status
    );
    let mut program = Vec::new();
    let mut probes = BTreeMap::new();
    for l in stdout.lines() {
        let Some(rest) = l.strip_prefix("probe ") else {
            program.push(l.to_string());
            continue;
        };
        let mut parts = rest.split(' ');
        let name = parts.next().unwrap_or_default().to_string();
        let fields = parts
            .filter_map(|p| p.split_once('='))
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        probes.insert(name, fields);
    }
    Run { program, probes }
}

/// Refusals other than a constructor's before `super()` or a static
/// initialiser's.
fn unexpected(refusals: &[(String, Refusal)]) -> Vec<String> {
    refusals
        .iter()
        .filter(|(what, r)| match r {
            Refusal::Constructor => !what.contains(".<init>("),
            Refusal::StaticInitializer => !what.contains(".<clinit>("),
            _ => true,
        })
        .map(|(what, r)| format!("{what}: {r}"))
        .collect()
}

fn check_refusals(built: &Built) {
    let bad = unexpected(&built.refusals);
    assert!(bad.is_empty(), "unexpected refusals:\n{}", bad.join("\n"));
    let reason = |what: &str| {
        built
            .refusals
            .iter()
            .find(|(w, _)| w == what)
            .map(|(_, r)| r.to_string())
    };
    let ctor = "Probed.<init>(I)V";
    // `.append(n)` runs after StringBuilder's constructor but before this().
    let before_this = reason(&format!("{ctor} line {}", line("before-this")));
    assert!(
        before_this
            .as_deref()
            .is_some_and(|r| r.contains("super()")),
        "a line before this() returns must be refused, got {before_this:?}"
    );
    assert!(reason(&format!("{ctor} entry")).is_some_and(|r| r.contains("super()")));
    assert_eq!(
        reason(&format!(
            "Probed.<init>(Ljava/lang/String;)V line {}",
            line("after-super")
        )),
        None,
        "a constructor line after super() is probed"
    );
    assert!(
        reason(&format!("Probed.<clinit>()V line {}", line("clinit")))
            .is_some_and(|r| r.contains("static initialiser")),
        "{:?}",
        built.refusals
    );
}

fn check_jdk(java: &Path, built: &Built, driver: &Path, mains: &[&str]) {
    let before = run(java, &built.original, driver, mains);
    let after = run(java, &built.instrumented, driver, mains);
    assert_eq!(
        before.program,
        after.program,
        "{}: the program's output changed",
        java.display()
    );
    assert!(before.program.iter().any(|l| l.starts_with("fields ")));
    assert_eq!(after.probes.len(), built.probes, "one report per helper");
    let erring: Vec<String> = after
        .probes
        .iter()
        .filter(|(_, f)| f.get("errors").map(String::as_str) != Some("0"))
        .map(|(n, f)| format!("{n}: {f:?}"))
        .collect();
    assert!(
        erring.is_empty(),
        "helpers that failed:\n{}",
        erring.join("\n")
    );
    for (helper, (calls, records)) in &built.expected {
        let got = after
            .probes
            .get(helper)
            .unwrap_or_else(|| panic!("no report of {helper}"));
        let count = |k: &str| got.get(k).and_then(|v| v.parse::<u64>().ok());
        assert_eq!(
            (count("calls"), count("records")),
            (Some(*calls), Some(*records)),
            "{}: {helper}",
            java.display()
        );
    }
    let silent = after
        .probes
        .values()
        .filter(|f| f.get("calls").map(String::as_str) == Some("0"))
        .count();
    assert!(
        silent * 2 < after.probes.len(),
        "most probes run: {silent} of {} never called",
        after.probes.len()
    );
}

fn verify(release: &str) {
    let dir = probe_dir();
    let scratch = tempfile::tempdir().expect("a scratch directory");
    let (original, instrumented, driver) = (
        scratch.path().join("original"),
        scratch.path().join("instrumented"),
        scratch.path().join("driver"),
    );
    let mut sources = java_files(&dir.join("src"));
    let mut mains = vec!["Probed"];
    if release != "8" {
        sources.extend(java_files(&dir.join("src17")));
        mains.push("Modern");
    }
    compile(release, &sources, &original);
    compile("17", &java_files(&dir.join("driver")), &driver);
    let built = instrument_all(&original, &instrumented);
    assert!(built.probes >= 100, "only {} probes accepted", built.probes);
    check_refusals(&built);
    check_jdk(&java(None), &built, &driver, &mains);
    check_jdk(&java(Some(&temurin25_required())), &built, &driver, &mains);
}

#[test]
fn every_site_of_a_release_8_class_verifies_and_runs_unchanged() {
    verify("8");
}

#[test]
fn every_site_of_a_release_17_class_verifies_and_runs_unchanged() {
    verify("17");
}
