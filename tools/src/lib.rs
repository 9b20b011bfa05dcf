//! seqgen's tools: the load generator (`loadgen`) and the report behind `BENCHMARKS.md`
//! (`bench-report`), as a library their binaries and the fault tests of `tests/` share.
#![forbid(unsafe_code)]

pub mod bench_report;
pub mod loadgen;
