//! A key as the states of its scopes (and of its date patterns) in one generator share it: its
//! name, what happened to it, and the notice that one of its reservations ended. One per key,
//! not one per scope: a generator keeps many scopes.

use super::counts::Counted;
use super::Leaf;
use crate::stats::KeyStats;
use crate::sync::Event;

/// A key, shared by its states (see the module's documentation).
#[derive(Debug)]
pub(crate) struct Key {
    name: Box<str>,
    /// What happened to the key (see `counts`).
    counted: Leaf<Counted>,
    /// Notified when a reservation of one of its states ends: threads wait for it, tasks
    /// await it, and each looks again at its own state's turn. One event for the key, not one
    /// per scope: an event takes memory once notified, and waits are rare (a block ran dry
    /// while another caller reserved the same scope's next one).
    pub(super) reserved: Event,
}

impl Key {
    /// The key named `name`, nothing counted yet.
    pub(crate) fn new(name: &str) -> Self {
        Key {
            name: name.into(),
            counted: Leaf::default(),
            reserved: Event::default(),
        }
    }

    /// The `db_key` key name.
    pub(crate) fn name(&self) -> &str {
        &self.name
    }

    /// Counts into the key's statistics.
    pub(super) fn count(&self, what: impl FnOnce(&mut Counted)) {
        what(&mut self.counted.lock().unwrap_or_else(|e| e.into_inner()));
    }

    /// What happened to the key, but for the numbers its states served from memory (see
    /// `KeyState::stats`).
    pub(crate) fn stats(&self) -> KeyStats {
        (self.counted.lock().unwrap_or_else(|e| e.into_inner())).stats(&self.name)
    }
}
