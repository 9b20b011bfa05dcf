//! What the monitoring tests share.

pub mod prometheus;
