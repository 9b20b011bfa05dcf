//! The synchronisation the allocator's memory state is built from: the standard library's, or
//! loom's when the crate is built with `SEQGEN_LOOM` set, for the model check
//! (`engine/model_check.rs`). A cfg of our own rather than loom's `loom`, so that
//! dependencies which know loom keep their usual code.

#[cfg(not(seqgen_loom))]
pub(crate) use std::sync::{atomic, Mutex, MutexGuard, RwLock};

#[cfg(seqgen_loom)]
pub(crate) use loom::sync::{atomic, Mutex, MutexGuard, RwLock};

/// A thread-local, declared the way both std and loom accept.
macro_rules! local {
    ($vis:vis static $name:ident: $t:ty = $init:expr;) => {
        #[cfg(not(seqgen_loom))]
        std::thread_local! { $vis static $name: $t = const { $init }; }
        #[cfg(seqgen_loom)]
        loom::thread_local! { $vis static $name: $t = $init; }
    };
}
pub(crate) use local;

/// Runs `work` on a thread of its own, or gives it back if no thread can start.
pub(crate) fn spawn(name: &str, work: impl FnOnce() + Send + 'static) {
    #[cfg(not(seqgen_loom))]
    let _ = std::thread::Builder::new().name(name.into()).spawn(work);
    #[cfg(seqgen_loom)]
    {
        let _ = name;
        let _ = loom_thread(work);
    }
}

/// A loom thread with room for the unoptimised allocator's futures (loom's default stack of
/// 32 KiB overflows in a debug build).
#[cfg(seqgen_loom)]
pub(crate) fn loom_thread<T: Send + 'static>(
    work: impl FnOnce() -> T + Send + 'static,
) -> loom::thread::JoinHandle<T> {
    // In machine words.
    const STACK: usize = 1 << 15;
    loom::thread::Builder::new()
        .stack_size(STACK)
        .spawn(work)
        .expect("a loom thread")
}

#[cfg(not(seqgen_loom))]
pub(crate) use event_listener::{Event, EventListener, Listener};

/// Under loom: the part of `event_listener` the allocator uses, on loom's mutex and condition
/// variable: a listener made before a notification sees it, whenever it starts waiting.
#[cfg(seqgen_loom)]
mod event {
    use loom::sync::{Arc, Condvar, Mutex};

    #[derive(Default)]
    pub(crate) struct Event(Arc<(Mutex<u64>, Condvar)>);

    pub(crate) struct EventListener {
        event: Arc<(Mutex<u64>, Condvar)>,
        seen: u64,
    }

    pub(crate) trait Listener {
        fn wait(self);
    }

    impl Event {
        pub(crate) fn listen(&self) -> EventListener {
            let seen = *self.0 .0.lock().unwrap();
            EventListener {
                event: Arc::clone(&self.0),
                seen,
            }
        }

        pub(crate) fn notify(&self, _: usize) {
            *self.0 .0.lock().unwrap() += 1;
            self.0 .1.notify_all();
        }
    }

    impl EventListener {
        fn block(&self) {
            let (lock, condvar) = &*self.event;
            let mut notified = lock.lock().unwrap();
            while *notified == self.seen {
                notified = condvar.wait(notified).unwrap();
            }
        }
    }

    impl Listener for EventListener {
        fn wait(self) {
            self.block();
        }
    }

    /// For the async driver, which compiles under loom too (the model runs threads): it
    /// blocks, as loom's threads do.
    impl std::future::Future for EventListener {
        type Output = ();
        fn poll(
            self: std::pin::Pin<&mut Self>,
            _: &mut std::task::Context<'_>,
        ) -> std::task::Poll<()> {
            self.block();
            std::task::Poll::Ready(())
        }
    }

    impl std::fmt::Debug for Event {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str("Event")
        }
    }
}
#[cfg(seqgen_loom)]
pub(crate) use event::{Event, EventListener, Listener};
