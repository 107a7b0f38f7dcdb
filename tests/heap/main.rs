//! Heap bytes counted exactly by `rocetop::heap::Counting`, this binary's global allocator: what
//! a parse and the store take for an input of a given size. The count is the whole process's, so
//! these tests have a binary of their own and take turns in it (`alone`).

use std::sync::{Mutex, MutexGuard, PoisonError};

#[global_allocator]
static A: rocetop::heap::Counting = rocetop::heap::Counting;

/// The test harness runs tests on parallel threads, and each would count the other's allocations:
/// every test of this binary holds this while it measures.
static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

fn alone() -> MutexGuard<'static, ()> {
    ONE_AT_A_TIME.lock().unwrap_or_else(PoisonError::into_inner)
}

mod amplification;
mod store_cost;
