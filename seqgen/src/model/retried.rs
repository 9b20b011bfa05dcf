//! What the attempts of one [`retry_transaction`](crate::retry_transaction) filled, so that the
//! next attempt numbers those fields again. An ID taken in an attempt the database aborted may
//! have gone back with its rollback (a gapless number, or a batched block reserved inside the
//! transaction: on SQLite, or without a pool), and be handed to someone else since; the
//! attempt's records still hold it, and the next attempt would insert it a second time.
//!
//! A field counts as filled by an earlier attempt when it still holds, at the same place in
//! memory, the value an insert of this `retry_transaction` call put there: a value set by hand
//! is kept, as everywhere. Per thread, since an attempt runs on its caller's.

use std::cell::RefCell;
use std::collections::HashSet;

use super::IdSlot;

thread_local! {
    /// Inside `retry_transaction` (`Some`): each slot filled since it began, by address, with
    /// the value put there (a set: a bulk of a million rows asks for each of its records).
    static FILLED: RefCell<Option<HashSet<(usize, String)>>> = const { RefCell::new(None) };
}

/// Runs `attempts` with this thread's fills noted, and forgotten after (also when `attempts`
/// panics), unless an outer call noted them first.
pub(crate) fn noting<T>(attempts: impl FnOnce() -> T) -> T {
    /// Forgets the fills when dropped.
    struct Forget;
    impl Drop for Forget {
        fn drop(&mut self) {
            FILLED.with(|f| *f.borrow_mut() = None);
        }
    }
    let outer = FILLED.with(|f| f.borrow().is_some());
    if outer {
        return attempts();
    }
    FILLED.with(|f| *f.borrow_mut() = Some(HashSet::new()));
    let _forget = Forget;
    attempts()
}

/// Notes that `slot` was just filled, inside `retry_transaction`.
pub(crate) fn note(slot: &IdSlot<'_>) {
    FILLED.with(|f| {
        if let Some(filled) = f.borrow_mut().as_mut() {
            filled.insert(identity(slot));
        }
    });
}

/// Whether `slot` holds what an earlier attempt of this `retry_transaction` put there.
pub(crate) fn filled_before(slot: &IdSlot<'_>) -> bool {
    FILLED.with(|f| {
        f.borrow()
            .as_ref()
            .is_some_and(|filled| filled.contains(&identity(slot)))
    })
}

/// Where `slot` is, and what it holds.
fn identity(slot: &IdSlot<'_>) -> (usize, String) {
    match slot {
        IdSlot::Text(s) => (&raw const **s as usize, (*s).clone()),
        IdSlot::OptionalText(s) => (&raw const **s as usize, format!("{s:?}")),
        IdSlot::Number(n) => (&raw const **n as usize, n.to_string()),
        IdSlot::OptionalNumber(n) => (&raw const **n as usize, format!("{n:?}")),
    }
}
