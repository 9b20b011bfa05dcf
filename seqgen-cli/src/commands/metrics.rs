//! `seqgen metrics`: the capacity of every key, in the exposition format Prometheus scrapes,
//! printed (for node_exporter's textfile collector) or served at `/metrics` (`--listen`), read
//! from `db_key` at each scrape, so one exporter sees every service's keys; with `--pending`,
//! the rows of a table waiting for a follower, and (served) how long the oldest has waited.
//! Also the file `seqgen check --textfile` writes.

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::io::Write as _;
use std::process::ExitCode;
use std::sync::atomic::AtomicU64;
use std::time::Instant;

use chrono::Utc;
use diesel_seqgen::admin::{self, RunsOut};
use diesel_seqgen::pending::{self, PendingRows, Waiting};
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

/// What `seqgen metrics` exports, and where.
#[derive(Debug, clap::Args)]
pub(crate) struct MetricsArgs {
    /// Serve /metrics at this address (e.g. 127.0.0.1:9899) until stopped.
    #[arg(long, value_name = "ADDRESS")]
    pub(crate) listen: Option<String>,
    /// The time zone the keys' periods begin in.
    #[arg(long, default_value = "utc", value_parser = crate::parse_time_zone)]
    tz: TimeZone,
    /// A table whose rows a follower numbers (`seqgen number --follow`): how many wait for
    /// their number, and, served, how long the oldest has waited (since this exporter first
    /// saw the table reach it). As KEY:TABLE:COLUMN:ORDER_BY, e.g.
    /// `invoices:invoices:number:id`; repeat it for each table.
    #[arg(long, value_name = "KEY:TABLE:COLUMN:ORDER_BY", value_parser = parse_pending)]
    pending: Vec<Watched>,
}

/// A table `--pending` names.
#[derive(Debug, Clone)]
struct Watched {
    key: String,
    table: String,
    column: String,
    order_by: String,
}

fn parse_pending(text: &str) -> Result<Watched, String> {
    match text.split(':').collect::<Vec<_>>()[..] {
        [key, table, column, order_by]
            if [key, table, column, order_by].iter().all(|p| !p.is_empty()) =>
        {
            Ok(Watched {
                key: key.to_owned(),
                table: table.to_owned(),
                column: column.to_owned(),
                order_by: order_by.to_owned(),
            })
        }
        _ => Err(format!(
            "expected KEY:TABLE:COLUMN:ORDER_BY, e.g. invoices:invoices:number:id; got {text:?}"
        )),
    }
}

pub(super) fn metrics<C>(conn: &mut C, args: &MetricsArgs) -> Result<ExitCode, Failure>
where
    C: diesel_seqgen::IdConnection,
{
    out!("{}", exposition(conn, args, None)?.trim_end());
    Ok(ExitCode::SUCCESS)
}

/// What a listening exporter saw of each `--pending` table: at each scrape, the highest order
/// value of its rows, oldest first (back to the scrape that first saw its oldest waiting row).
#[derive(Debug, Default)]
struct Seen(HashMap<String, VecDeque<(Instant, i64)>>);

impl Seen {
    /// How long the oldest row of `waiting` has waited, in seconds: since the first scrape that
    /// saw the table's order values reach it (a row committed before this exporter started
    /// counts from its first scrape).
    fn age(&mut self, table: &str, waiting: &Waiting) -> f64 {
        let now = Instant::now();
        let seen = self.0.entry(table.to_owned()).or_default();
        // A scrape that saw no new row tells nothing the one before did not.
        if let Some(newest) = waiting.newest {
            if seen.back().is_none_or(|&(_, last)| newest > last) {
                seen.push_back((now, newest));
            }
        }
        let Some(oldest) = waiting.oldest else {
            seen.clear();
            return 0.0;
        };
        // Scrapes before the first that saw the table reach `oldest` are of no use any more:
        // the oldest waiting row only moves forward.
        while seen.front().is_some_and(|&(_, newest)| newest < oldest) {
            seen.pop_front();
        }
        seen.front()
            .map_or(0.0, |(first, _)| (now - *first).as_secs_f64())
    }
}

/// Per key, what stops its inserts when full, in its current period (in `tz`): the fullest
/// counter's used part, and the earliest a counter runs out. One series per key and metric,
/// whatever the number of scopes (the fullest scope stands for them): bounded by the keys.
/// Then each `--pending` table's waiting rows, and with what a listening exporter `seen`, how
/// long the oldest waited.
fn exposition<C>(
    conn: &mut C,
    args: &MetricsArgs,
    seen: Option<&mut Seen>,
) -> Result<String, Failure>
where
    C: diesel_seqgen::IdConnection,
{
    let tz = args.tz;
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
    let name = meter::CAPACITY_FULLEST_USED_RATIO;
    registry.register(name, meter::help(name), used_ratio);
    let name = meter::CAPACITY_RUNS_OUT;
    let base = name.trim_end_matches("_seconds");
    registry.register_with_unit(base, meter::help(name), Unit::Seconds, runs_out_at);
    if !args.pending.is_empty() {
        pending_series(conn, &args.pending, seen, &mut registry)?;
    }
    encoded(&registry)
}

/// The rows of each watched table waiting for their number, and with what a listening
/// exporter `seen`, how long the oldest waited.
fn pending_series<C>(
    conn: &mut C,
    watched: &[Watched],
    mut seen: Option<&mut Seen>,
    registry: &mut Registry,
) -> Result<(), Failure>
where
    C: diesel_seqgen::IdConnection,
{
    let (rows, ages) = (Gauges::default(), Gauges::default());
    for table in watched {
        let pending_rows = PendingRows::new(&table.table, &table.column, &table.order_by);
        let waiting = pending::waiting(conn, pending_rows)?;
        let labels = vec![("key", table.key.clone()), ("table", table.table.clone())];
        rows.get_or_create(&labels).set(waiting.rows as f64);
        if let Some(seen) = seen.as_deref_mut() {
            ages.get_or_create(&labels)
                .set(seen.age(&table.table, &waiting));
        }
    }
    let name = meter::PENDING_ROWS;
    registry.register(name, meter::help(name), rows);
    if seen.is_some() {
        let name = meter::PENDING_OLDEST_AGE;
        let base = name.trim_end_matches("_seconds");
        registry.register_with_unit(base, meter::help(name), Unit::Seconds, ages);
    }
    Ok(())
}

fn encoded(registry: &Registry) -> Result<String, Failure> {
    let mut text = String::new();
    encode(&mut text, registry)
        .map_err(|e| Failure::Database(format!("could not write the metrics: {e}")))?;
    Ok(text)
}

/// `seqgen metrics --listen ADDRESS`: serves `/metrics` until stopped, reading `db_key` on a
/// new connection at each scrape (a database that restarts meanwhile is found again).
pub(crate) fn serve(url: Option<&str>, args: &MetricsArgs) -> Result<ExitCode, Failure> {
    let address = args.listen.as_deref().unwrap_or_default();
    let server = tiny_http::Server::http(address)
        .map_err(|e| Failure::Input(format!("--listen {address}: {e}")))?;
    eprintln!("serving /metrics on http://{address}");
    let mut seen = Seen::default();
    for request in server.incoming_requests() {
        let response = if request.url() != "/metrics" {
            tiny_http::Response::from_string("see /metrics").with_status_code(404)
        } else {
            let scraped = connect(url, false).and_then(|mut conn| {
                with_connection!(&mut conn, |conn| exposition(conn, args, Some(&mut seen)))
            });
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
