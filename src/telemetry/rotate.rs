//! A log file with size-based rotation: when the next record would take the
//! file past its limit, `<file>` becomes `<file>.1` (`.1` becomes `.2`, …,
//! the oldest kept one is overwritten) and a fresh `<file>` is started.
//! Each record (one formatted log line) is written whole to one file.

use std::ffi::OsString;
use std::fs::{File, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard};

use tracing_subscriber::fmt::MakeWriter;

use super::config::LogFileConfig;

/// The shared, rotating log file.
#[derive(Debug)]
pub struct RotatingFile {
    path: PathBuf,
    max_bytes: u64,
    keep: usize,
    inner: Mutex<Inner>,
}

#[derive(Debug)]
struct Inner {
    file: Option<File>,
    size: u64,
}

impl RotatingFile {
    /// Opens (appending to) the file, creating it and its directory.
    pub fn open(config: &LogFileConfig) -> io::Result<RotatingFile> {
        if let Some(dir) = config.path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir)?;
        }
        let file = open_append(&config.path)?;
        let size = file.metadata()?.len();
        Ok(RotatingFile {
            path: config.path.clone(),
            max_bytes: config.max_bytes.max(1),
            keep: config.keep.max(1),
            inner: Mutex::new(Inner {
                file: Some(file),
                size,
            }),
        })
    }

    /// The live file's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The path of the `n`th rotated file (`<file>.n`).
    pub fn rotated_path(&self, n: usize) -> PathBuf {
        let mut name = OsString::from(self.path.as_os_str());
        name.push(format!(".{n}"));
        PathBuf::from(name)
    }

    fn lock(&self) -> MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Writes one record, rotating first if it would not fit.
    pub fn write_record(&self, record: &[u8]) -> io::Result<()> {
        let mut inner = self.lock();
        if inner.size > 0 && inner.size + record.len() as u64 > self.max_bytes {
            self.rotate(&mut inner)?;
        }
        let file = match inner.file.as_mut() {
            Some(file) => file,
            None => {
                // A previous rotation could not reopen the file; try again.
                inner.file = Some(open_append(&self.path)?);
                inner.size = 0;
                inner
                    .file
                    .as_mut()
                    .ok_or_else(|| io::Error::other("log file not open"))?
            }
        };
        file.write_all(record)?;
        inner.size += record.len() as u64;
        Ok(())
    }

    fn rotate(&self, inner: &mut Inner) -> io::Result<()> {
        if let Some(mut file) = inner.file.take() {
            let _ = file.flush();
        }
        for n in (1..self.keep).rev() {
            let from = self.rotated_path(n);
            if from.exists() {
                std::fs::rename(&from, self.rotated_path(n + 1))?;
            }
        }
        std::fs::rename(&self.path, self.rotated_path(1))?;
        let file = OpenOptions::new()
            .create(true)
            .write(true)
            .truncate(true)
            .open(&self.path)?;
        inner.file = Some(file);
        inner.size = 0;
        Ok(())
    }
}

fn open_append(path: &Path) -> io::Result<File> {
    OpenOptions::new().create(true).append(true).open(path)
}

/// A `Write` for one log record at a time.
#[derive(Debug)]
pub struct RecordWriter<'a>(&'a RotatingFile);

impl Write for RecordWriter<'_> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.0.write_record(buf)?;
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

impl<'a> MakeWriter<'a> for RotatingFile {
    type Writer = RecordWriter<'a>;

    fn make_writer(&'a self) -> Self::Writer {
        RecordWriter(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(dir: &Path, max_bytes: u64) -> LogFileConfig {
        LogFileConfig {
            path: dir.join("logs").join("jvmscope.log"),
            max_bytes,
            keep: 2,
        }
    }

    fn read(path: &Path) -> String {
        std::fs::read_to_string(path).unwrap_or_default()
    }

    #[test]
    fn rotates_by_size_and_keeps_a_few() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("tempdir: {e}"));
        let log = RotatingFile::open(&config(dir.path(), 10)).unwrap_or_else(|e| panic!("{e}"));
        for record in [
            "aaaa\n", "bbbb\n", "cccc\n", "dddd\n", "eeee\n", "ffff\n", "gggg\n",
        ] {
            let mut w = log.make_writer();
            w.write_all(record.as_bytes())
                .unwrap_or_else(|e| panic!("{e}"));
        }
        assert_eq!(read(log.path()), "gggg\n");
        assert_eq!(read(&log.rotated_path(1)), "eeee\nffff\n");
        assert_eq!(read(&log.rotated_path(2)), "cccc\ndddd\n");
        assert!(!log.rotated_path(3).exists(), "only `keep` rotated files");
    }

    #[test]
    fn appends_to_an_existing_file_and_counts_its_size() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("tempdir: {e}"));
        let cfg = config(dir.path(), 12);
        {
            let log = RotatingFile::open(&cfg).unwrap_or_else(|e| panic!("{e}"));
            log.write_record(b"12345678\n")
                .unwrap_or_else(|e| panic!("{e}"));
        }
        let log = RotatingFile::open(&cfg).unwrap_or_else(|e| panic!("{e}"));
        log.write_record(b"abcdef\n")
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(read(log.path()), "abcdef\n");
        assert_eq!(read(&log.rotated_path(1)), "12345678\n");
    }

    #[test]
    fn an_oversized_record_still_lands_whole() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("tempdir: {e}"));
        let log = RotatingFile::open(&config(dir.path(), 4)).unwrap_or_else(|e| panic!("{e}"));
        log.write_record(b"a long line\n")
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(read(log.path()), "a long line\n");
    }
}
