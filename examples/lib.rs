//! Shared helpers for the seqgen examples.
