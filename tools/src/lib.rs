//! seqgen's tools: the load generator (`loadgen`), the report behind `BENCHMARKS.md`
//! (`bench-report`), the simulation of many instances on one key (`simulate`) and the faults
//! a kill does not make (`nemesis`, with the histories of `history`), as a library
//! their binaries and the fault tests of `tests/` share.
#![forbid(unsafe_code)]

pub mod bench_report;
pub mod history;
pub mod loadgen;
pub mod nemesis;
pub mod programs;
pub mod simulate;
