//! What a run prints: one JSON line.

use super::{Args, Mode};

/// What a run measured.
#[derive(Debug, Clone)]
pub struct Report {
    /// `sqlite`, `postgres` or `mysql`.
    pub backend: &'static str,
    /// The arguments it ran with.
    pub args: Args,
    /// IDs taken.
    pub ids: u64,
    /// IDs whose transaction committed (all of them without `--insert`).
    pub committed: u64,
    /// Wall time.
    pub seconds: f64,
    /// Reservations made by this process.
    pub reservations: u64,
    /// Operations tried again on a new connection after the database went away.
    pub reconnects: u64,
    /// Numbers given back to the counter at the end (`--release-on-exit`).
    pub released: u64,
    /// Latency percentiles of one ID (with its insert), in microseconds.
    pub p50_us: u64,
    /// 99th percentile.
    pub p99_us: u64,
    /// 99.9th percentile.
    pub p999_us: u64,
}

/// The JSON line, field by field in this order (the README documents it).
#[derive(serde::Serialize)]
struct JsonLine<'a> {
    backend: &'a str,
    mode: Mode,
    threads: u32,
    batch: u32,
    ids: u64,
    committed: u64,
    seconds: f64,
    ids_per_sec: u64,
    reservations: u64,
    reconnects: u64,
    released: u64,
    p50_us: u64,
    p99_us: u64,
    p999_us: u64,
}

impl Report {
    /// The one JSON line loadgen prints.
    pub fn json(&self) -> String {
        let line = JsonLine {
            backend: self.backend,
            mode: self.args.mode,
            threads: self.args.threads,
            batch: self.args.batch,
            ids: self.ids,
            committed: self.committed,
            seconds: (self.seconds * 1000.0).round() / 1000.0,
            ids_per_sec: (self.committed as f64 / self.seconds.max(1e-9)).round() as u64,
            reservations: self.reservations,
            reconnects: self.reconnects,
            released: self.released,
            p50_us: self.p50_us,
            p99_us: self.p99_us,
            p999_us: self.p999_us,
        };
        serde_json::to_string(&line).expect("a struct of numbers and strings serializes")
    }
}
