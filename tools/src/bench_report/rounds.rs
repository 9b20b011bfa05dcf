//! What the scaling series share: a median of rounds with its range, and work on `THREADS`
//! threads, each with a pooled connection.

use diesel::r2d2::{ConnectionManager, Pool};
use serde::Serialize;

use super::{BenchConnection, BoxError};

/// Threads serving a series.
pub(super) const THREADS: usize = 8;

/// A median and the range of the rounds it comes from.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct Measured {
    pub median: f64,
    pub min: f64,
    pub max: f64,
}

impl Measured {
    pub(super) fn of(mut values: Vec<f64>) -> Self {
        values.sort_by(f64::total_cmp);
        let median = values[values.len() / 2];
        Measured {
            median,
            min: values[0],
            max: values[values.len() - 1],
        }
    }
}

impl std::fmt::Display for Measured {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let figure = |v: f64| match v {
            v if v >= 100.0 => format!("{v:.0}"),
            v if v >= 1.0 => format!("{v:.1}"),
            v => format!("{v:.3}"),
        };
        write!(
            f,
            "{} ({}–{})",
            figure(self.median),
            figure(self.min),
            figure(self.max)
        )
    }
}
/// Runs `work(conn, thread)` on `THREADS` threads, each with a pooled connection.
pub(super) fn on_threads<C: BenchConnection>(
    pool: &Pool<ConnectionManager<C>>,
    work: impl Fn(&mut C, usize) -> Result<(), BoxError> + Sync,
) -> Result<(), BoxError> {
    std::thread::scope(|s| {
        let threads: Vec<_> = (0..THREADS)
            .map(|thread| {
                let work = &work;
                s.spawn(move || -> Result<(), BoxError> {
                    let mut conn = pool.get()?;
                    work(&mut conn, thread)
                })
            })
            .collect();
        threads
            .into_iter()
            .try_for_each(|t| t.join().expect("a worker thread panicked"))
    })
}
