//! A test-only count of the parses run on this thread, so a test can show
//! that a path it drives parses nothing (each test runs on a thread of its
//! own, so counts never mix).

use std::cell::Cell;

thread_local! {
    static PARSES: Cell<u64> = const { Cell::new(0) };
}

/// Counts one parse.
pub fn one() {
    PARSES.with(|c| c.set(c.get() + 1));
}

/// The parses run on this thread so far.
pub fn parses() -> u64 {
    PARSES.with(Cell::get)
}
