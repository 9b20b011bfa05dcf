//! A slot in each spec where the runtime keeps the state one generator holds for it.

use std::any::Any;
use std::sync::OnceLock;

/// The state the first generator to serve a spec keeps for it, next to the spec, so that
/// serving it again is a plain load instead of a lookup in that generator's map of keys
/// behind a lock. Owned by that generator's unique number: any other generator (or a
/// generator built later) looks the spec up in its own map, as without the slot.
///
/// Not part of a spec's value: specs compare equal whatever their slots hold, and a clone
/// starts with an empty one.
#[derive(Default)]
pub struct Memo(OnceLock<(u64, Box<dyn Any + Send + Sync>)>);

impl Memo {
    /// What `owner` keeps here, if `owner` was the first to keep something.
    #[inline]
    pub fn get(&self, owner: u64) -> Option<&(dyn Any + Send + Sync)> {
        match self.0.get() {
            Some((first, state)) if *first == owner => Some(&**state),
            _ => None,
        }
    }

    /// Whether nothing is kept here yet.
    pub fn is_empty(&self) -> bool {
        self.0.get().is_none()
    }

    /// Keeps `state` for `owner`, unless some generator keeps something here already.
    pub fn keep(&self, owner: u64, state: Box<dyn Any + Send + Sync>) {
        let _ = self.0.set((owner, state));
    }
}

impl Clone for Memo {
    fn clone(&self) -> Self {
        Memo::default()
    }
}

impl PartialEq for Memo {
    fn eq(&self, _: &Memo) -> bool {
        true
    }
}

impl Eq for Memo {}

impl std::fmt::Debug for Memo {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Memo")
    }
}
