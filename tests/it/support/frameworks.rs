//! Real frameworks for the fixtures in `tests/data/java-frameworks`:
//! Debian's Spring Framework 4.3 and EclipseLink (JPA 2.1) over H2 jars
//! from `/usr/share/java`, which `.ci/run` installs. A missing jar fails
//! the test naming the package that ships it; nothing is skipped.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use super::java::{Jvm, JvmOpts, compile_tree};

/// Where Debian installs Java libraries.
const SHARE: &str = "/usr/share/java";

/// Each jar the framework fixtures need, with the Debian package that ships it.
const JARS: &[(&str, &str)] = &[
    ("spring3-core.jar", "libspring-core-java"),
    ("spring3-beans.jar", "libspring-beans-java"),
    ("spring3-context.jar", "libspring-context-java"),
    ("spring3-aop.jar", "libspring-aop-java"),
    ("spring3-expression.jar", "libspring-expression-java"),
    ("commons-logging.jar", "libcommons-logging-java"),
    ("eclipselink.jar", "libeclipselink-java"),
    ("eclipselink-jpa-2.1-spec.jar", "libjpa-2.1-spec-java"),
    ("h2.jar", "libh2-java"),
];

/// The framework jars; panics naming every missing one and its package.
pub fn jars() -> Vec<PathBuf> {
    let missing: Vec<String> = JARS
        .iter()
        .filter(|(jar, _)| !Path::new(SHARE).join(jar).is_file())
        .map(|(jar, package)| format!("{SHARE}/{jar} (apt-get install {package})"))
        .collect();
    assert!(
        missing.is_empty(),
        "framework jars missing — the framework tests never skip; .ci/run installs them:\n{}",
        missing.join("\n")
    );
    JARS.iter()
        .map(|(jar, _)| Path::new(SHARE).join(jar))
        .collect()
}

/// `tests/data/java-frameworks` compiled against [`jars()`], with its
/// resources (`shop.properties`, `META-INF/persistence.xml`).
pub fn fixtures() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/java-frameworks");
        compile_tree(&dir, &jars(), "jvmscope-framework-fixtures")
    })
}

/// Starts `main_class` of the framework fixtures with the jars on its class path.
pub fn start(main_class: &str) -> Jvm {
    let mut entries = vec![fixtures().to_path_buf()];
    entries.extend(jars());
    let classpath = std::env::join_paths(entries).expect("a class path");
    Jvm::start(
        main_class,
        JvmOpts {
            classpath: Some(PathBuf::from(classpath)),
            ..JvmOpts::default()
        },
    )
}
