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
use diesel_seqgen::{Generator, Spec};
use tracing_subscriber::fmt::format::FmtSpan;
use tracing_subscriber::EnvFilter;

backend_tests!(
    a_reservation_is_a_span_and_a_new_period_an_event,
    a_connection_identified_on_every_call_is_named_once,
    a_counter_filling_up_is_said_once_at_80_and_once_at_95,
    a_counter_filling_up_on_the_defaults_is_said_before_it_runs_out,
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

/// Runs `work` with a subscriber filtered as `RUST_LOG=diesel_seqgen=<level>` filters (the
/// crate's path: the target of seqgen's spans and events) and returns what it wrote.
fn captured(level: tracing::Level, work: impl FnOnce()) -> String {
    let captured = Captured::default();
    let subscriber = tracing_subscriber::fmt()
        .with_writer({
            let captured = captured.clone();
            move || captured.clone()
        })
        .with_span_events(FmtSpan::CLOSE)
        .with_env_filter(EnvFilter::new(format!("diesel_seqgen={level}")))
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

/// The same on the defaults (the default batch, a generator that adapts its blocks), one number
/// at a time: however the blocks fall, one warning past 80 % and one past 95 %, never more.
fn a_counter_filling_up_on_the_defaults_is_said_before_it_runs_out<C: TestConnection>(
    db: TestDb<C>,
) {
    let mut conn = db.connect();
    let spec = Spec::builder(db.key("filling_defaults"))
        .date("%y%m")
        .pad(2)
        .build()
        .unwrap();
    let generator = Generator::new();
    let out = captured(tracing::Level::WARN, || {
        for _ in 0..99 {
            generator.next_id(&mut conn, &spec).unwrap();
        }
    });
    let warnings: Vec<&str> = out
        .lines()
        .filter(|l| l.contains("a counter passed"))
        .collect();
    assert!(
        (1..=2).contains(&warnings.len()) && warnings.last().unwrap().contains("passed 95%"),
        "{out}"
    );
}

/// A pad-2 key (99 numbers) taken in blocks of ten, ten seconds apart: one warning as it passes
/// 80 % and one as it passes 95 %, each naming the key, the period, how full it is and when it
/// runs out at that rate; none for the blocks in between, none for a key far from full.
fn a_counter_filling_up_is_said_once_at_80_and_once_at_95<C: TestConnection>(db: TestDb<C>) {
    let mut conn = db.connect();
    let key = db.key("filling");
    let spec = Spec::builder(&key)
        .date("%y%m")
        .pad(2)
        .batch(10)
        .build()
        .unwrap();
    let roomy = Spec::builder(db.key("roomy"))
        .date("%y%m")
        .pad(4)
        .batch(10)
        .build()
        .unwrap();
    let (clock, generator) = common::generator_on_fixed_clock();
    let out = captured(tracing::Level::WARN, || {
        for _ in 0..9 {
            generator.next_ids(&mut conn, &spec, 10).unwrap(); // one block each: 10, 20, … 90
            generator.next_ids(&mut conn, &roomy, 10).unwrap();
            clock.advance(TimeDelta::seconds(10));
        }
        generator.next_ids(&mut conn, &spec, 9).unwrap(); // 91..=99, the last
        assert!(generator.next_id(&mut conn, &spec).is_err()); // Overflow, no more warnings
    });
    let warnings: Vec<&str> = out
        .lines()
        .filter(|l| l.contains("a counter passed"))
        .collect();
    assert_eq!(warnings.len(), 2, "{out}");
    assert!(
        warnings[0].contains("passed 80%") && warnings[0].contains("used=80"),
        "{out}"
    );
    assert!(
        warnings[1].contains("passed 95%") && warnings[1].contains("used=99"),
        "{out}"
    );
    for warning in &warnings {
        for field in [
            format!("key=\"{key}\""),
            "period=2611".to_owned(),
            "capacity=99".to_owned(),
        ] {
            assert!(warning.contains(&field), "{field} missing in {warning}");
        }
    }
    // 70 numbers in 70 s at 80: 19 left, about 19 s after the fixed clock's 70 s.
    assert!(
        warnings[0].contains("runs_out=2026-11-23T10:01:29"),
        "{}",
        warnings[0]
    );
    assert!(!out.contains(&db.key("roomy")), "{out}");
}
