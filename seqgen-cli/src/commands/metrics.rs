//! `seqgen metrics`: the capacity of every key, in the exposition format Prometheus scrapes,
//! printed (for node_exporter's textfile collector) or served at `/metrics` (`--listen`), read
//! from `db_key` at each scrape, so one exporter sees every service's keys. Also the file
//! `seqgen check --textfile` writes.

use std::collections::BTreeMap;
use std::io::Write as _;
use std::process::ExitCode;
use std::sync::atomic::AtomicU64;

use chrono::Utc;
use diesel_seqgen::admin::{self, RunsOut};
use diesel_seqgen::{meter, TimeZone};
use prometheus_client::encoding::text::encode;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::registry::{Registry, Unit};

use crate::connection::{connect, with_connection};
use crate::Failure;

type Labels = Vec<(&'static str, String)>;
type Gauges = Family<Labels, Gauge<f64, AtomicU64>>;

/// The content type of what [`exposition`] writes (OpenMetrics text).
const CONTENT_TYPE: &str = "application/openmetrics-text; version=1.0.0; charset=utf-8";

pub(super) fn metrics<C>(conn: &mut C, tz: TimeZone) -> Result<ExitCode, Failure>
where
    C: diesel_seqgen::IdConnection,
{
    out!("{}", exposition(conn, tz)?.trim_end());
    Ok(ExitCode::SUCCESS)
}

/// Per key, what stops its inserts when full, in its current period (in `tz`): the fullest
/// counter's used part, and the earliest a counter runs out. One series per key and metric,
/// whatever the number of scopes (the fullest scope stands for them): bounded by the keys.
fn exposition<C>(conn: &mut C, tz: TimeZone) -> Result<String, Failure>
where
    C: diesel_seqgen::IdConnection,
{
    let mut used: BTreeMap<String, f64> = BTreeMap::new();
    let mut runs_out: BTreeMap<String, i64> = BTreeMap::new();
    for counter in admin::capacity(conn, None, tz, Utc::now())? {
        if !counter.can_run_out() {
            continue;
        }
        let ratio = counter.used_ratio().unwrap_or(0.0);
        let fullest = used.entry(counter.key.clone()).or_insert(ratio);
        *fullest = fullest.max(ratio);
        if let RunsOut::At(at) = counter.runs_out {
            let earliest = runs_out.entry(counter.key).or_insert(at.timestamp());
            *earliest = (*earliest).min(at.timestamp());
        }
    }
    let mut registry = Registry::default();
    let used_ratio = Gauges::default();
    let runs_out_at = Gauges::default();
    for (key, ratio) in used {
        used_ratio.get_or_create(&vec![("key", key)]).set(ratio);
    }
    for (key, at) in runs_out {
        runs_out_at
            .get_or_create(&vec![("key", key)])
            .set(at as f64);
    }
    let name = meter::CAPACITY_USED_RATIO;
    registry.register(name, meter::help(name), used_ratio);
    let name = meter::CAPACITY_RUNS_OUT;
    let base = name.trim_end_matches("_seconds");
    registry.register_with_unit(base, meter::help(name), Unit::Seconds, runs_out_at);
    encoded(&registry)
}

fn encoded(registry: &Registry) -> Result<String, Failure> {
    let mut text = String::new();
    encode(&mut text, registry)
        .map_err(|e| Failure::Database(format!("could not write the metrics: {e}")))?;
    Ok(text)
}

/// `seqgen metrics --listen ADDRESS`: serves `/metrics` until stopped, reading `db_key` on a
/// new connection at each scrape (a database that restarts meanwhile is found again).
pub(crate) fn serve(url: Option<&str>, address: &str, tz: TimeZone) -> Result<ExitCode, Failure> {
    let server = tiny_http::Server::http(address)
        .map_err(|e| Failure::Input(format!("--listen {address}: {e}")))?;
    eprintln!("serving /metrics on http://{address}");
    for request in server.incoming_requests() {
        let response = if request.url() != "/metrics" {
            tiny_http::Response::from_string("see /metrics").with_status_code(404)
        } else {
            let scraped = connect(url, false)
                .and_then(|mut conn| with_connection!(&mut conn, |conn| exposition(conn, tz)));
            match scraped {
                Ok(text) => tiny_http::Response::from_string(text).with_header(
                    tiny_http::Header::from_bytes("Content-Type", CONTENT_TYPE)
                        .expect("a valid header"),
                ),
                Err(Failure::Input(e) | Failure::Database(e)) => {
                    tiny_http::Response::from_string(e).with_status_code(503)
                }
                Err(Failure::Closed) => tiny_http::Response::from_string("").with_status_code(503),
            }
        };
        // A scraper that went away is no reason to stop serving.
        let _ = request.respond(response);
    }
    Ok(ExitCode::SUCCESS)
}

/// Writes what `seqgen check` found to `path` (node_exporter's textfile collector), through a
/// file beside it renamed into place, so the collector never reads half of it.
pub(super) fn write_check(
    path: &std::path::Path,
    key: &str,
    table: &str,
    behind: usize,
    without_id: u64,
) -> Result<(), Failure> {
    let mut registry = Registry::default();
    let labels = vec![("key", key.to_owned()), ("table", table.to_owned())];
    for (name, value) in [
        (meter::CHECK_COUNTERS_BEHIND, behind as f64),
        (meter::CHECK_ROWS_WITHOUT_ID, without_id as f64),
    ] {
        let family = Gauges::default();
        family.get_or_create(&labels).set(value);
        registry.register(name, meter::help(name), family);
    }
    let text = encoded(&registry)?;
    let partial = path.with_extension("prom.partial");
    std::fs::write(&partial, text)
        .and_then(|()| std::fs::rename(&partial, path))
        .map_err(|e| Failure::Input(format!("--textfile {}: {e}", path.display())))
}
