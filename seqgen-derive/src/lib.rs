//! Implementation detail of [`seqgen`](https://docs.rs/seqgen): `#[derive(DistributedId)]`.
//!
//! Use it through `seqgen`, which re-exports it; this crate releases in lockstep with it.
