//! The pure core under the actors: plain data (`model`), the condition and
//! evaluation language (`expr`) and class files (`classfile`: reading,
//! staleness, the probe transform). No I/O, no clock, no async here: the
//! same bytes in give the same values out.

// The codec's vocabulary (ids, values, type tags) under the name every
// file of this crate uses for it.
use jvmscope_jdwp as jdwp;

pub mod classfile;
pub mod expr;
pub mod model;
