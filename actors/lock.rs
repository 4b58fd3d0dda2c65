//! The one way this layer takes a `std::sync::Mutex`. Every lock here
//! guards a cache, a counter or a queue whose mutations are single steps,
//! so what a panicking holder left behind is still consistent: the lock is
//! taken anyway rather than spreading one panic to every later caller.

use std::sync::{Mutex, MutexGuard, PoisonError};

/// Locks `m`, recovering the guard if a holder panicked.
pub fn lock<T: ?Sized>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}
