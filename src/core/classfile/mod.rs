//! Class files as the probe engine changes them: pure functions from bytes
//! to bytes, through the `ristretto_classfile` crate. Nothing here reads a
//! file, a clock or a JVM; the session's probe room does the JVM's side.
//! (Reading a class file's shape for staleness lives in `model::classfile`.)

pub mod probe;
