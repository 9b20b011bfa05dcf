//! The periods a thread has recently stamped IDs with, by id, so that a number taken from a
//! window is formatted without the key's lock. A period's id stands for its text, the same
//! for every key and scope ([`id_of`]); what a thread keeps here is a copy of that immutable
//! text, never a number, so nothing is lost with a thread.

use std::cell::RefCell;
use std::collections::HashMap;
use std::sync::{Mutex, OnceLock, PoisonError};

use diesel_seqgen_core::__private::Period;

/// How many periods a thread keeps: a few date patterns in turn stay without the lock.
const KEPT: usize = 8;

struct Recent {
    periods: [(u64, Option<Period>); KEPT],
    /// The slot the next period goes to.
    next: usize,
}

crate::sync::local! {
    static RECENT: RefCell<Recent> = RefCell::new(Recent {
        periods: [const { (0, None) }; KEPT],
        next: 0,
    });
}

/// The id of the period `text` (never 0): the same for the same text, in every generator.
/// Taken once per period a key moves to; a process meets a few texts a day per date pattern.
pub(super) fn id_of(text: &str) -> u64 {
    static IDS: OnceLock<Mutex<HashMap<String, u64>>> = OnceLock::new();
    let mut ids = IDS
        .get_or_init(Mutex::default)
        .lock()
        .unwrap_or_else(PoisonError::into_inner);
    if let Some(&id) = ids.get(text) {
        return id;
    }
    let id = ids.len() as u64 + 1;
    ids.insert(text.to_owned(), id);
    id
}

/// The periods this thread keeps, borrowed.
pub(super) struct Known<'a>(&'a [(u64, Option<Period>); KEPT]);

impl<'a> Known<'a> {
    /// The period with id `id`, if this thread keeps it.
    #[inline]
    pub(super) fn get(&self, id: u64) -> Option<&'a Period> {
        self.0
            .iter()
            .find(|(kept, _)| *kept == id)
            .and_then(|(_, period)| period.as_ref())
    }
}

/// Calls `f` with the periods this thread keeps; `None` if it cannot (its thread-locals are
/// gone, or a call of its own is changing them).
#[inline]
pub(super) fn with_known<R>(f: impl FnOnce(Known<'_>) -> R) -> Option<R> {
    RECENT
        .try_with(|recent| {
            // Shared: a call that `f` makes into seqgen again finds the periods too.
            let recent = recent.try_borrow().ok()?;
            Some(f(Known(&recent.periods)))
        })
        .ok()
        .flatten()
}

/// Keeps `period` under `id` in this thread, unless it is kept already.
pub(super) fn remember(id: u64, period: &Period) {
    let _ = RECENT.try_with(|recent| {
        let Ok(mut recent) = recent.try_borrow_mut() else {
            return;
        };
        if recent.periods.iter().any(|(kept, _)| *kept == id) {
            return;
        }
        let slot = recent.next;
        recent.periods[slot] = (id, Some(period.clone()));
        recent.next = (slot + 1) % KEPT;
    });
}
