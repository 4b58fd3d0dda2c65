//! Golden files under tests/data/golden (and generated docs): compared
//! exactly, rewritten when `UPDATE_GOLDEN=1`.

use std::path::{Path, PathBuf};

/// A path relative to the repository root.
pub fn repo_path(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(rel)
}

/// Compares `actual` with tests/data/golden/`name`.
#[track_caller]
pub fn check(name: &str, actual: &str) {
    check_file(&repo_path("tests/data/golden").join(name), actual);
}

/// Compares `actual` with the file at `path`.
#[track_caller]
pub fn check_file(path: &Path, actual: &str) {
    if std::env::var_os("UPDATE_GOLDEN").is_some() {
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).expect("create golden dir");
        }
        std::fs::write(path, actual).expect("write golden");
        return;
    }
    let expected = std::fs::read_to_string(path).unwrap_or_else(|e| {
        panic!(
            "golden file {} unreadable ({e}); run with UPDATE_GOLDEN=1 to create it",
            path.display()
        )
    });
    if expected != actual {
        let first = expected
            .lines()
            .zip(actual.lines())
            .position(|(a, b)| a != b)
            .unwrap_or(expected.lines().count().min(actual.lines().count()));
        panic!(
            "{} differs from what the code produces (first difference at line {}); \
             if the change is intended, run with UPDATE_GOLDEN=1 and review the diff",
            path.display(),
            first + 1
        );
    }
}
