//! Running out of numbers never surprises anyone: a key filled to 85 % shows in `seqgen keys`
//! (capacity, used, when it runs out), trips `seqgen capacity --warn 80` (exit 1, Nagios'
//! convention), is printed by `seqgen metrics` and read back through a real Prometheus
//! scraping `seqgen metrics --listen`; the alert rules of `contrib/` pass their unit tests
//! (`promtool`), and every metric the rules and the dashboard name is one seqgen exports.
//!
//! Prometheus and promtool come from Debian's `prometheus` package, which `.ci/run` installs;
//! where they are missing the tests that need them are skipped with a printed line, and fail
//! under `CI=true`.

use std::path::{Path, PathBuf};
use std::process::Command;

#[path = "../../seqgen/tests/suite/own_servers.rs"]
mod own_servers;
#[path = "support/prometheus.rs"]
mod prometheus;
use prometheus::{free_port, installed, Prometheus, Running};

use diesel::prelude::*;

/// The repository's `contrib/` folder.
fn contrib() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../contrib")
}

/// The `seqgen_…` metric names a text uses (a histogram's series named as the histogram).
fn metric_names(text: &str) -> Vec<String> {
    let mut names = Vec::new();
    for (i, _) in text.match_indices("seqgen_") {
        if text[..i].ends_with(|c: char| c.is_alphanumeric() || c == '_') {
            continue;
        }
        let name: String = text[i..]
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect();
        let name = ["_bucket", "_count", "_sum"]
            .iter()
            .fold(name.clone(), |name, suffix| {
                name.strip_suffix(suffix)
                    .map_or(name.clone(), str::to_owned)
            });
        names.push(name);
    }
    names
}

#[test]
fn contrib_names_only_exported_metrics() {
    let rules = std::fs::read_to_string(contrib().join("prometheus/seqgen.rules.yml")).unwrap();
    let dashboard: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(contrib().join("grafana/seqgen-dashboard.json")).unwrap(),
    )
    .unwrap();
    let queries: Vec<String> = dashboard["panels"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|panel| panel["targets"].as_array().unwrap().clone())
        .map(|target| target["expr"].as_str().unwrap().to_owned())
        .collect();
    assert!(queries.len() >= 8, "{queries:?}");
    // Filtered by the variables `job`, `instance` and `key`: every series of every query.
    let variables: Vec<&str> = dashboard["templating"]["list"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|variable| variable["name"].as_str())
        .collect();
    for variable in ["job", "instance", "key"] {
        assert!(
            variables.contains(&variable),
            "no ${variable}: {variables:?}"
        );
        let filter = format!("{variable}=~\"${variable}\"");
        for query in &queries {
            let filtered = query.matches(&filter).count();
            assert_eq!(filtered, metric_names(query).len(), "{filter} in {query}");
        }
    }
    let bar_gauges = dashboard["panels"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|panel| {
            panel["type"] == "bargauge"
                && panel["targets"][0]["expr"].as_str().is_some_and(|expr| {
                    expr.contains(diesel_seqgen::meter::CAPACITY_FULLEST_USED_RATIO)
                })
        });
    assert_eq!(
        bar_gauges.count(),
        1,
        "a bar gauge of the capacity used per key"
    );
    let exported = diesel_seqgen::meter::ALL;
    for (source, text) in std::iter::once(("rules", rules.as_str()))
        .chain(queries.iter().map(|q| ("dashboard", q.as_str())))
    {
        let names = metric_names(text);
        assert!(
            !names.is_empty() || source == "rules",
            "a query without a metric: {text}"
        );
        for name in names {
            assert!(
                exported.contains(&name.as_str()),
                "{source} names `{name}`, which seqgen does not export"
            );
        }
    }
}

#[test]
fn the_alert_rules_pass_their_unit_tests() {
    let Some(promtool) = installed("promtool") else {
        return;
    };
    let dir = contrib().join("prometheus");
    for args in [
        ["check", "rules", "seqgen.rules.yml"],
        ["test", "rules", "seqgen.rules.test.yml"],
    ] {
        let run = Command::new(&promtool)
            .args(args)
            .current_dir(&dir)
            .output()
            .unwrap();
        assert!(run.status.success(), "promtool {args:?}: {run:?}");
    }
}

/// The binary's exit code and stdout, run on database `url`.
fn seqgen(url: &str, args: &[&str]) -> (i32, String) {
    let output = Command::new(env!("CARGO_BIN_EXE_seqgen"))
        .args(args)
        .current_dir(std::env::temp_dir())
        .env("DATABASE_URL", url)
        .output()
        .unwrap();
    let out = String::from_utf8(output.stdout).unwrap();
    let err = String::from_utf8(output.stderr).unwrap();
    (output.status.code().unwrap(), format!("{out}{err}"))
}

/// Fills key `key` (monthly, pad 3: 999 numbers a period) to 850 numbers, as if over the last
/// hour: its row is made an hour old with `an_hour_ago`, the backend's spelling of it.
fn fill_to_85_percent<C: diesel_seqgen::MigrateConnection>(
    url: &str,
    key: &str,
    an_hour_ago: &str,
) {
    let mut conn = C::establish(url).unwrap();
    diesel_seqgen::run_migrations(&mut conn).unwrap();
    let spec = diesel_seqgen::Spec::builder(key)
        .prefix("ORD")
        .date("%y%m")
        .pad(3)
        .build()
        .unwrap();
    // On the defaults: a bulk of 850 is one block of 850.
    diesel_seqgen::Generator::new()
        .next_ids(&mut conn, &spec, 850)
        .unwrap();
    conn.batch_execute(&format!(
        "UPDATE db_key SET created_at = {an_hour_ago} WHERE key_name = '{key}'"
    ))
    .unwrap();
}

/// What an operator sees of the key: `seqgen keys` (text and JSON) and `seqgen capacity` at
/// the thresholds around 85 %.
fn shows_85_percent(url: &str, key: &str) {
    let (code, keys) = seqgen(url, &["keys", "--key", key]);
    assert_eq!(code, 0, "{keys}");
    assert!(
        keys.contains("CAPACITY") && keys.contains("RUNS OUT"),
        "{keys}"
    );
    assert!(keys.contains(" 999 ") && keys.contains("85.1%"), "{keys}");
    let (_, json) = seqgen(url, &["keys", "--key", key, "--json"]);
    let rows: serde_json::Value = serde_json::from_str(&json).unwrap();
    let counter = rows
        .as_array()
        .unwrap()
        .iter()
        .find(|row| row["capacity"].is_object())
        .unwrap_or_else(|| panic!("{json}"));
    assert_eq!(counter["capacity"]["used_percent"], 85.1, "{json}");
    assert_eq!(counter["capacity"]["at_end"], "stops", "{json}");
    // 850 numbers in an hour: the 149 left last about ten minutes more.
    let runs_out = counter["capacity"]["runs_out"].as_str().unwrap();
    let runs_out =
        chrono::DateTime::parse_from_rfc3339(runs_out).unwrap_or_else(|e| panic!("{e}: {json}"));
    let minutes = (runs_out.with_timezone(&chrono::Utc) - chrono::Utc::now()).num_minutes();
    assert!(
        (5..=15).contains(&minutes),
        "runs out in {minutes} minutes: {json}"
    );
    for (args, expected, word) in [
        (
            ["--warn", "80", "--critical", "95"],
            1,
            "SEQGEN CAPACITY WARNING",
        ),
        (
            ["--warn", "90", "--critical", "95"],
            0,
            "SEQGEN CAPACITY OK",
        ),
        (
            ["--warn", "80", "--critical", "85"],
            2,
            "SEQGEN CAPACITY CRITICAL",
        ),
    ] {
        let mut all = vec!["capacity", "--key", key];
        all.extend(args);
        let (code, out) = seqgen(url, &all);
        assert_eq!(code, expected, "{all:?}: {out}");
        assert!(out.starts_with(word), "{out}");
    }
    let (code, metrics) = seqgen(url, &["metrics"]);
    assert_eq!(code, 0, "{metrics}");
    let line = format!("seqgen_capacity_fullest_used_ratio{{key=\"{key}\"}} 0.85085");
    assert!(metrics.contains(&line), "{line} not in:\n{metrics}");
    assert!(
        metrics.contains("# HELP seqgen_capacity_fullest_used_ratio"),
        "{metrics}"
    );
}

#[test]
#[cfg(feature = "sqlite")]
fn a_key_filled_to_85_percent_is_seen_everywhere_on_sqlite() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("app.db");
    let url = db.to_str().unwrap();
    fill_to_85_percent::<SqliteConnection>(url, "orders", "datetime('now', '-1 hour')");
    shows_85_percent(url, "orders");

    // A real Prometheus scraping `seqgen metrics --listen` every second.
    let exporter = free_port();
    let _exporter = Running(
        Command::new(env!("CARGO_BIN_EXE_seqgen"))
            .args(["metrics", "--listen", &format!("127.0.0.1:{exporter}")])
            .env("DATABASE_URL", url)
            .spawn()
            .unwrap(),
    );
    let Some(prometheus) = Prometheus::scraping(dir.path(), &[("seqgen", exporter)]) else {
        return;
    };
    let (value, waited) = prometheus.wait_for("seqgen_capacity_fullest_used_ratio", |series| {
        series
            .iter()
            .find(|series| series["metric"]["key"] == "orders")
            .map(|series| series["value"][1].as_str().unwrap_or_default().to_owned())
    });
    let value: f64 = value.parse().unwrap();
    assert!((value - 850.0 / 999.0).abs() < 1e-9, "{value}");
    println!(
        "Prometheus read seqgen_capacity_fullest_used_ratio{{key=\"orders\"}} = {value} after {waited:?}"
    );
}

#[test]
#[cfg(feature = "postgres")]
fn a_key_filled_to_85_percent_on_postgres() {
    if let Some(url) = server_url("PG_DATABASE_URL") {
        let key = unique("capacity");
        fill_to_85_percent::<PgConnection>(&url, &key, "LOCALTIMESTAMP - interval '1 hour'");
        shows_85_percent(&url, &key);
    }
}

#[test]
#[cfg(feature = "mysql")]
fn a_key_filled_to_85_percent_on_mysql() {
    if let Some(url) = server_url("MYSQL_DATABASE_URL") {
        let key = unique("capacity");
        fill_to_85_percent::<MysqlConnection>(&url, &key, "CURRENT_TIMESTAMP(6) - INTERVAL 1 HOUR");
        shows_85_percent(&url, &key);
    }
}

/// The URL of a server backend's test database, or `None` (printed) when it is not set.
#[cfg(any(feature = "postgres", feature = "mysql"))]
fn server_url(var: &str) -> Option<String> {
    let url = std::env::var(var).ok();
    if url.is_none() {
        assert!(
            std::env::var("CI").as_deref() != Ok("true"),
            "{var} is not set (a missing URL fails under CI=true)"
        );
        println!("skipping: set {var} to run this test");
    }
    url
}

/// A key name no other run uses (the servers are shared).
#[cfg(any(feature = "postgres", feature = "mysql"))]
fn unique(name: &str) -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .subsec_nanos();
    format!("{name}_{}_{nanos}", std::process::id())
}
