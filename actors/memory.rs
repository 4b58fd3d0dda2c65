//! Memory and CPU: what fills the heap (a class histogram, through the
//! attach socket or JDWP), who holds an object (a path to a GC root), and
//! which threads burn the CPU. Every question reads the JVM through the
//! narrow context (`door::Jvm`) and answers with plain data.

pub mod heap;
pub mod holders;
pub mod hot;
