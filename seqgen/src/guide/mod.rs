//! The guide: how seqgen works and how to use each part of it, one chapter per subject, each
//! example compiled and run by `cargo test`.
