//! The process's exploration budget: one ledger of what every kernel's timed calls took,
//! and of what calls on candidates other than their bucket's best known cost beyond it
//! (exploring calls, warm-ups, re-timed alternatives), summed over all buckets.
//!
//! Each bucket keeps its own ledger and spends at most its share of its own calls'
//! time (`policy`'s module docs, "Exploration budget"); this one bounds the sum, and
//! it is what a candidate nothing predicts is measured against: such a call's cost is
//! known only once it ran, so it runs only while the process is within its share. Both
//! sides halve every [`Policy::budget_half_life_ns`], as a bucket's do, so an overrun is
//! forgotten after a few half-lives.
//!
//! The ledger is read and charged under a kernel's lock, and takes no other lock itself.

use std::sync::{Mutex, PoisonError};

use super::bucket_state::Budget;
use super::policy::{Charge, Policy};

static LEDGER: Mutex<Budget> = Mutex::new(Budget { calls_ns: 0.0, extra_ns: 0.0, last_was_probe: false, aged_ns: 0 });

/// What the process may still spend at [`Policy::explore_share`] of its calls' time, in
/// nanoseconds, at `now_ns` (process clock); negative when in debt.
pub(super) fn left(now_ns: u64, policy: &Policy) -> f64 {
    let mut ledger = LEDGER.lock().unwrap_or_else(PoisonError::into_inner);
    ledger.age(now_ns, policy.budget_half_life_ns);
    ledger.left(policy.explore_share)
}

/// Adds a timed call's `charge`, at `now_ns`.
pub(super) fn charge(charge: Charge, now_ns: u64, policy: &Policy) {
    if charge == Charge::NONE {
        return;
    }
    let mut ledger = LEDGER.lock().unwrap_or_else(PoisonError::into_inner);
    ledger.age(now_ns, policy.budget_half_life_ns);
    ledger.calls_ns += charge.calls_ns.max(0.0);
    ledger.extra_ns += charge.extra_ns.max(0.0);
}
