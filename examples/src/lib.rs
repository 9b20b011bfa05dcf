//! Code shared by seqgen's examples and their tests.

pub mod loadgen;
