//! Code shared by seqgen's examples and their tests.
#![forbid(unsafe_code)]

pub mod bench_report;
pub mod loadgen;
#[cfg(feature = "async-sqlite")]
pub mod orders_service;
