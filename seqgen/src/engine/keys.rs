//! The states a generator keeps per key (and per scope): found from the spec's memo slot, from
//! the map of keys, or from the map of scopes; made on first use; a scope's dropped for room,
//! or when nobody used it for a while.

use std::borrow::Borrow;
use std::collections::HashSet;
use std::hash::{Hash, Hasher};

use std::sync::atomic::Ordering;
use std::sync::{Arc, PoisonError};

use super::{Engine, ScopedKeys};
use crate::cache::{dated_name, Key, KeyState};
use diesel_seqgen_core::Spec;

/// A spec's scope states, found by their names (see [`Named`]).
pub(super) type Scopes = HashSet<Named>;

/// A scope state in its spec's map, hashed and compared by the name it holds: 8 bytes a scope
/// in the map, and no copy of its name beside it (a generator keeps many). The name never
/// changes; what does change in a state is not hashed (clippy's `mutable_key_type`, allowed
/// where a map of them is taken, cannot tell).
#[derive(Clone)]
pub(super) struct Named(pub(super) Arc<KeyState>);

impl Borrow<str> for Named {
    fn borrow(&self) -> &str {
        self.0.name()
    }
}

impl Hash for Named {
    // As `str` hashes, so that a lookup by `&str` finds it (`Borrow`'s rule).
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.0.name().hash(state);
    }
}

impl PartialEq for Named {
    fn eq(&self, other: &Self) -> bool {
        self.0.name() == other.0.name()
    }
}

impl Eq for Named {}

impl Engine {
    /// Every key's state, taken out of the maps so that no lock is held while they are used.
    pub(super) fn states(&self) -> Vec<Arc<KeyState>> {
        let mut states: Vec<Arc<KeyState>> = self
            .inner
            .keys
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .values()
            .cloned()
            .collect();
        let scoped = self
            .inner
            .scoped
            .read()
            .unwrap_or_else(PoisonError::into_inner);
        states.extend(
            scoped
                .values()
                .flat_map(|scopes| scopes.iter().map(|s| s.0.clone())),
        );
        states
    }

    /// The state of `spec`'s key in this generator, from the spec's memo slot when this
    /// generator owns it, else from the map of keys.
    #[inline]
    pub(super) fn memoized<'s>(&self, spec: &'s Spec) -> Option<&'s Arc<KeyState>> {
        spec.memo().get(self.inner.uid)?.downcast_ref()
    }

    /// The state of `spec`'s key in `scope` (`""` unscoped), if this generator has one.
    pub(super) fn find_key(&self, spec: &Spec, scope: &str) -> Option<Arc<KeyState>> {
        if scope.is_empty() {
            if let Some(state) = self.memoized(spec) {
                return Some(Arc::clone(state));
            }
            let keys = self
                .inner
                .keys
                .read()
                .unwrap_or_else(PoisonError::into_inner);
            keys.get(spec.cache_key()).cloned()
        } else {
            let scoped = self
                .inner
                .scoped
                .read()
                .unwrap_or_else(PoisonError::into_inner);
            self.scope_state(&scoped, spec, scope).cloned()
        }
    }

    /// The state of `spec`'s key in `scope`, from the map of scopes (read-locked by the
    /// caller), noted as used now.
    pub(super) fn scope_state<'m>(
        &self,
        scoped: &'m ScopedKeys,
        spec: &Spec,
        scope: &str,
    ) -> Option<&'m Arc<KeyState>> {
        let state = &scoped.get(spec.cache_key())?.get(scope)?.0;
        state.touch(self.now_second());
        Some(state)
    }

    /// The generator's clock in Unix seconds: when scope states were last used.
    fn now_second(&self) -> u64 {
        u64::try_from(self.inner.clock.unix_second()).unwrap_or(0)
    }

    /// Drops the scope states nobody used for `scopes.idle` seconds (and no thread holds):
    /// their blocks go back to their counters at the generator's next reservations, their
    /// memory with them. Looks at most every quarter of that time, at the first call that
    /// finds it due.
    pub(super) fn drop_idle_scopes(&self) {
        let now = self.now_second();
        let due = self.inner.next_sweep.load(Ordering::Relaxed);
        let idle = self.inner.scopes.idle;
        if now < due
            || (self.inner.next_sweep)
                .compare_exchange(
                    due,
                    now + (idle / 4).max(1),
                    Ordering::Relaxed,
                    Ordering::Relaxed,
                )
                .is_err()
        {
            return;
        }
        let mut dropped = Vec::new();
        {
            let mut scoped = (self.inner.scoped.write()).unwrap_or_else(PoisonError::into_inner);
            for scopes in scoped.values_mut() {
                scopes.retain(|Named(state)| {
                    let keep = Arc::strong_count(state) > 1
                        || now.saturating_sub(state.last_used()) < idle;
                    if !keep {
                        dropped.push(Arc::clone(state));
                    }
                    keep
                });
            }
        }
        if !dropped.is_empty() {
            self.evict(dropped);
        }
    }

    pub(super) fn key_state(&self, spec: &Spec, scope: &str) -> Arc<KeyState> {
        self.find_key(spec, scope)
            .unwrap_or_else(|| self.insert_key(spec, scope))
    }

    pub(super) fn insert_key(&self, spec: &Spec, scope: &str) -> Arc<KeyState> {
        if !scope.is_empty() {
            return self.insert_scoped(spec, scope, |key| {
                warn_small_domain(spec);
                Arc::new(KeyState::new(key, scope))
            });
        }
        let new = || {
            warn_small_domain(spec);
            Arc::new(KeyState::new(self.named(spec.key()), ""))
        };
        let mut keys = self
            .inner
            .keys
            .write()
            .unwrap_or_else(PoisonError::into_inner);
        let state = Arc::clone(keys.entry(spec.cache_key().clone()).or_insert_with(new));
        self.memoize(spec, &state);
        state
    }

    /// The state of `spec`'s key in `scope` for the counter of the period `at` falls in
    /// (`period`, [`Period::counter`](diesel_seqgen_core::__private::Period::counter): every
    /// date a reset prints from one counter shares it), where the numbers of documents dated in
    /// it come from: kept beside the scopes' (under a name no scope has: scopes have no control
    /// characters), made on first use.
    pub(super) fn dated_state(&self, spec: &Spec, scope: &str, period: &str) -> Arc<KeyState> {
        let name = dated_name(scope, period);
        let found = {
            let scoped = (self.inner.scoped.read()).unwrap_or_else(PoisonError::into_inner);
            self.scope_state(&scoped, spec, &name).cloned()
        };
        found.unwrap_or_else(|| {
            self.insert_scoped(spec, &name, |key| {
                warn_small_domain(spec);
                Arc::new(KeyState::new(key, &name))
            })
        })
    }

    /// Inserts the state `new(key)` makes, named `name`, in the map of scopes, unless another
    /// thread came first; past `scopes.max` the least recently used eighth goes first. The key
    /// is shared by the states of a spec's scopes.
    #[allow(clippy::mutable_key_type)] // hashed by its name alone: see `Named`
    fn insert_scoped(
        &self,
        spec: &Spec,
        name: &str,
        new: impl FnOnce(Arc<Key>) -> Arc<KeyState>,
    ) -> Arc<KeyState> {
        let mut scoped = (self.inner.scoped.write()).unwrap_or_else(PoisonError::into_inner);
        let scopes = scoped.entry(spec.cache_key().clone()).or_default();
        if let Some(Named(state)) = scopes.get(name) {
            return Arc::clone(state); // another thread came first
        }
        if scopes.len() >= self.inner.scopes.max {
            self.drop_least_recent(scopes);
        }
        let state = new(self.named(spec.key()));
        debug_assert_eq!(state.name(), name);
        state.touch(self.now_second());
        scopes.insert(Named(Arc::clone(&state)));
        state
    }

    /// The key named `name`, shared by its states in this generator.
    fn named(&self, name: &str) -> Arc<Key> {
        let mut named = (self.inner.named.lock()).unwrap_or_else(PoisonError::into_inner);
        if let Some(key) = named.get(name) {
            return Arc::clone(key);
        }
        let key = Arc::new(Key::new(name));
        named.insert(name.into(), Arc::clone(&key));
        key
    }

    /// Drops the least recently used eighth of `scopes` (at least one) among those no thread
    /// holds (only the map does: no call is serving or reserving from them); their blocks go
    /// back to their counters at the next reservations.
    #[allow(clippy::mutable_key_type)] // hashed by its name alone: see `Named`
    pub(super) fn drop_least_recent(&self, scopes: &mut Scopes) {
        let mut idle: Vec<(u64, Named)> = scopes
            .iter()
            .filter(|Named(state)| Arc::strong_count(state) == 1)
            .map(|named| (named.0.last_used(), named.clone()))
            .collect();
        idle.sort_unstable_by_key(|(last_used, _)| *last_used);
        let dropped: Vec<Arc<KeyState>> = idle
            .into_iter()
            .take((self.inner.scopes.max / 8).max(1))
            .filter_map(|(_, named)| scopes.take(named.0.name()))
            .map(|Named(state)| state)
            .collect();
        self.evict(dropped);
    }

    /// Keeps `state` (the unscoped map's entry for `spec`: keys are never removed, so the two
    /// stay the same) in the spec's memo slot, if no generator keeps something there yet.
    pub(super) fn memoize(&self, spec: &Spec, state: &Arc<KeyState>) {
        // The slot publishes the state through a `OnceLock`, which loom cannot see: under the
        // model check, states travel through the map's lock only.
        if cfg!(seqgen_loom) {
            return;
        }
        if spec.memo().is_empty() {
            spec.memo()
                .keep(self.inner.uid, Box::new(Arc::clone(state)));
        }
    }
}

/// Warns that `spec`'s obfuscated numbers are permuted among fewer values than NIST's floor for
/// format-preserving encryption (see the guide's "Numbers that do not reveal volume").
#[cfg_attr(not(feature = "tracing"), allow(unused_variables))] // the event is all it does
fn warn_small_domain(spec: &Spec) {
    if let Some(domain) = spec
        .obfuscation_domain()
        .filter(|&d| d < diesel_seqgen_core::OBFUSCATION_FLOOR)
    {
        crate::trace::event!(
            warn,
            key = spec.key(),
            domain,
            "obfuscated numbers permuted among fewer than 999,999 values per period hide the \
             volume from a casual reader only: use a pad of 6 or more where it must stay secret"
        );
    }
}
