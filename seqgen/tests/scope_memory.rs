//! What a scope a generator keeps costs in memory: the heap bytes its state, its name and its
//! share of the map of scopes take, counted by the allocator. Its own test binary: the
//! allocator counts for the whole process.
//!
//! The goal is under 512 bytes (BENCHMARKS.md, "Scaling"); this guards what is reached.
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

/// Heap bytes per scope a regression would pass: what is reached, with room for the map of
/// scopes growing at another point.
const MOST: f64 = 900.0;

#[test]
fn a_scope_kept_costs_less_than_a_kilobyte() {
    let mut conn = diesel::SqliteConnection::establish(":memory:").unwrap();
    diesel_seqgen::run_migrations(&mut conn).unwrap();
    let spec = Spec::builder("memory")
        .date("")
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
    println!("a scope kept: {bytes:.0} bytes of heap in {blocks:.1} allocations");
    assert!(bytes < MOST, "a scope kept costs {bytes:.0} bytes");
}
