//! What a scope a generator keeps costs in memory: the heap bytes its state, its name and its
//! share of the map of scopes take, counted by the allocator. Its own test binary: the
//! allocator counts for the whole process.
//!
//! The goal is under 512 bytes (BENCHMARKS.md, "Scaling"), undated and dated alike.
#![cfg(feature = "sqlite")]

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicIsize, Ordering};

use diesel::Connection;
use diesel_seqgen::{Generator, Spec};

/// The system allocator, counting the bytes live and the blocks live.
struct Counting;

static BYTES: AtomicIsize = AtomicIsize::new(0);
static BLOCKS: AtomicIsize = AtomicIsize::new(0);

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        BYTES.fetch_add(layout.size() as isize, Ordering::Relaxed);
        BLOCKS.fetch_add(1, Ordering::Relaxed);
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        BYTES.fetch_sub(layout.size() as isize, Ordering::Relaxed);
        BLOCKS.fetch_sub(1, Ordering::Relaxed);
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// Heap bytes per scope: the goal.
const MOST: f64 = 512.0;

/// One test, so that no other runs beside it while the allocator counts.
#[test]
fn a_scope_kept_costs_less_than_512_bytes() {
    for date in ["", "%Y%m%d"] {
        let bytes = per_scope(date);
        assert!(
            bytes < MOST,
            "a scope kept of `date = {date:?}` costs {bytes:.0} bytes"
        );
    }
}

/// The heap bytes a scope of a spec of `date` costs, once the generator and the map of scopes
/// are set up.
fn per_scope(date: &str) -> f64 {
    let mut conn = diesel::SqliteConnection::establish(":memory:").unwrap();
    diesel_seqgen::run_migrations(&mut conn).unwrap();
    let spec = Spec::builder("memory")
        .date(date)
        .pad(12)
        .scoped()
        .build()
        .unwrap();
    let generator = Generator::new();
    let names: Vec<String> = (0..20_000).map(|s| s.to_string()).collect();
    // The first half pays for what the first calls set up once; the second is measured.
    for name in &names[..10_000] {
        generator.next_id(&mut conn, spec.scope(name)).unwrap();
    }
    let (bytes, blocks) = (
        BYTES.load(Ordering::Relaxed),
        BLOCKS.load(Ordering::Relaxed),
    );
    for name in &names[10_000..] {
        generator.next_id(&mut conn, spec.scope(name)).unwrap();
    }
    let bytes = (BYTES.load(Ordering::Relaxed) - bytes) as f64 / 10_000.0;
    let blocks = (BLOCKS.load(Ordering::Relaxed) - blocks) as f64 / 10_000.0;
    println!(
        "a scope kept of `date = {date:?}`: {bytes:.0} bytes of heap in {blocks:.1} allocations"
    );
    bytes
}
