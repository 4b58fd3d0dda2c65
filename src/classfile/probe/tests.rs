//! Instrumenting real class files: every site of the fixtures either
//! instruments or is refused with a reason, never a panic.
