//! seqgen's tools: the load generator (`loadgen`), the report behind `BENCHMARKS.md`
//! (`bench-report`) and the simulation of many instances on one key (`simulate`), as a library
//! their binaries and the fault tests of `tests/` share.
#![forbid(unsafe_code)]

pub mod bench_report;
pub mod loadgen;
pub mod simulate;
