//! With the `tracing` feature, a reservation is a span with its key, period, backend and the
//! count of numbers it took; what an operator should know is an event.
//!
//! Its own test binary: the default generator's warning below is once per process, and the
//! suite's other tests use the default generator too.
#![cfg(feature = "tracing")]

#[macro_use]
#[path = "suite/common.rs"]
mod common;

use std::io::Write;
use std::sync::{Arc, Mutex};

use chrono::TimeDelta;
use common::{TestConnection, TestDb};
use diesel_seqgen::Spec;
use tracing_subscriber::fmt::format::FmtSpan;

backend_tests!(
    a_reservation_is_a_span_and_a_new_period_an_event,
    a_connection_identified_on_every_call_is_named_once,
);

/// What the subscriber writes, kept for the assertions.
#[derive(Clone, Default)]
struct Captured(Arc<Mutex<Vec<u8>>>);

impl Write for Captured {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// Runs `work` with a subscriber of `level` and returns what it wrote.
fn captured(level: tracing::Level, work: impl FnOnce()) -> String {
    let captured = Captured::default();
    let subscriber = tracing_subscriber::fmt()
        .with_writer({
            let captured = captured.clone();
            move || captured.clone()
        })
        .with_span_events(FmtSpan::CLOSE)
        .with_max_level(level)
        .with_ansi(false)
        .finish();
    tracing::subscriber::with_default(subscriber, work);
    let out = captured.0.lock().unwrap().clone();
    String::from_utf8(out).unwrap()
}

fn a_reservation_is_a_span_and_a_new_period_an_event<C: TestConnection>(db: TestDb<C>) {
    let mut conn = db.connect();
    let key = db.key("traced");
    let spec = Spec::builder(&key)
        .prefix("T")
        .date("%Y%m%d")
        .pad(4)
        .batch(10)
        .build()
        .unwrap();
    let (clock, generator) = common::generator_on_fixed_clock();
    let out = captured(tracing::Level::DEBUG, || {
        for _ in 0..11 {
            generator.next_id(&mut conn, &spec).unwrap(); // blocks 1..=10 and 11..=20
        }
        clock.advance(TimeDelta::days(1)); // 12..=20 stay unused
        generator.next_id(&mut conn, &spec).unwrap();
    });
    let spans: Vec<&str> = out
        .lines()
        .filter(|line| line.contains("reserve{") && line.contains("close"))
        .collect();
    assert_eq!(spans.len(), 3, "{out}");
    for (span, period) in spans.iter().zip(["20261123", "20261123", "20261124"]) {
        for field in [
            format!("key=\"{key}\""),
            format!("period=\"{period}\""),
            "how=\"foreground\"".to_owned(),
            "count=10".to_owned(),
            "backend=\"".to_owned(),
        ] {
            assert!(span.contains(&field), "{field} missing in {span}");
        }
    }
    let new_period = out
        .lines()
        .find(|line| line.contains("a new period"))
        .unwrap_or_else(|| panic!("no event for the new period in {out}"));
    assert!(
        new_period.contains("from=20261123") && new_period.contains("to=20261124"),
        "{new_period}"
    );
    assert!(new_period.contains("unused=9"), "{new_period}");
}

/// A plain connection makes the default generator read the database's identity on every
/// call, which halves the rate of single-row inserts on a server (issue 30): it says so once,
/// naming the faster forms; a pooled connection (identified once) and SQLite (a local read)
/// are not named. Nothing else in this test binary uses the default generator, whose warning
/// is once per process.
fn a_connection_identified_on_every_call_is_named_once<C: TestConnection>(db: TestDb<C>) {
    let key = db.key("identified");
    let spec = Spec::builder(&key).date("").pad(4).build().unwrap();
    let pool = db.pool(2);
    let pooled = captured(tracing::Level::WARN, || {
        for _ in 0..3 {
            diesel_seqgen::global::next_id(&mut pool.get().unwrap(), &spec).unwrap();
        }
    });
    assert_eq!(pooled, "");
    let mut conn = db.connect();
    let plain = captured(tracing::Level::WARN, || {
        for _ in 0..3 {
            diesel_seqgen::global::next_id(&mut conn, &spec).unwrap();
        }
    });
    let said = plain.matches("one query on every call").count();
    if C::NAME == "sqlite" {
        assert_eq!(said, 0, "{plain}");
    } else {
        assert_eq!(said, 1, "{plain}");
        assert!(
            plain.contains("&mut pool.get()?") && plain.contains("Generator"),
            "{plain}"
        );
    }
}
