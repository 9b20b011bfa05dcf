//! Sessions cut under load, on the servers of CI (a database of the test's own on each): loadgen
//! processes insert through every form a user has (`Generator::next_id` then Diesel's insert;
//! `diesel_seqgen::insert_into` on `&mut pooled`, on `&mut *pooled` for gapless numbers, with
//! a generator of its own, on a plain connection; single rows and bulks; one in ten rolled
//! back) while every session on the database is ended (`pg_terminate_backend`, `KILL`) every
//! 200 ms, as a proxy, a failover or an operator would. Every process reconnects and finishes
//! its run; the IDs it saw committed are all in the table (its key refuses a repeat: a repeat
//! would have failed the process) and the gapless key's are exactly 1..N.
//!
//! Runs with the `postgres` / `mysql` features and `PG_DATABASE_URL` / `MYSQL_DATABASE_URL`;
//! a missing URL skips, except under `CI=true`, where it fails. The loadgen processes are this
//! test binary re-executed with `--loadgen ARGS…`.

mod support;

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::process::{Child, ExitCode};
use std::time::{Duration, Instant};

use diesel::connection::SimpleConnection;
use diesel::prelude::*;
use diesel::sql_types::Text;
use support::{check_distinct, exactly_one_to_n, finish, loadgen, read_ids, report_field};

// Each push of `main` behind its backend's feature.
#[allow(clippy::vec_init_then_push)]
fn main() -> ExitCode {
    if let Some(code) = support::run_as_loadgen() {
        return code;
    }
    let mut trials = Vec::new();
    #[cfg(feature = "postgres")]
    trials.push(support::trial(
        "postgres::sessions_cut_under_every_insert_form".into(),
        || on_server::<diesel::PgConnection>("PG_DATABASE_URL"),
    ));
    #[cfg(feature = "mysql")]
    trials.push(support::trial(
        "mysql::sessions_cut_under_every_insert_form".into(),
        || on_server::<diesel::MysqlConnection>("MYSQL_DATABASE_URL"),
    ));
    support::run_trials(trials)
}

/// A server of CI's, reached through its connection type.
trait Server: Connection + SimpleConnection {
    /// Ends every other session on this connection's database: how many.
    fn cut_sessions(&mut self) -> QueryResult<usize>;
    /// Drops database `name` (its sessions too).
    fn drop_database(&mut self, name: &str) -> QueryResult<()>;
    /// The IDs of `key` in `loadgen_rows`.
    fn ids(&mut self, key: &str) -> QueryResult<Vec<String>>;
}

macro_rules! ids {
    () => {
        fn ids(&mut self, key: &str) -> QueryResult<Vec<String>> {
            diesel::dsl::sql::<Text>(&format!(
                "SELECT id FROM loadgen_rows WHERE key_name = '{key}'"
            ))
            .load(self)
        }
    };
}

#[cfg(feature = "postgres")]
impl Server for diesel::PgConnection {
    ids!();
    fn cut_sessions(&mut self) -> QueryResult<usize> {
        diesel::dsl::sql::<diesel::sql_types::BigInt>(
            "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity \
             WHERE datname = current_database() AND pid <> pg_backend_pid()",
        )
        .get_result::<i64>(self)
        .map(|cut| cut as usize)
    }
    fn drop_database(&mut self, name: &str) -> QueryResult<()> {
        self.batch_execute(&format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)"))
    }
}

#[cfg(feature = "mysql")]
impl Server for diesel::MysqlConnection {
    ids!();
    fn cut_sessions(&mut self) -> QueryResult<usize> {
        let sessions: Vec<i64> = diesel::dsl::sql::<diesel::sql_types::BigInt>(
            "SELECT ID FROM information_schema.PROCESSLIST \
             WHERE DB = DATABASE() AND ID <> CONNECTION_ID()",
        )
        .load(self)?;
        for id in &sessions {
            // The session may have ended meanwhile.
            let _ = self.batch_execute(&format!("KILL {id}"));
        }
        Ok(sessions.len())
    }
    fn drop_database(&mut self, name: &str) -> QueryResult<()> {
        self.batch_execute(&format!("DROP DATABASE IF EXISTS {name}"))
    }
}

/// The scenario on a database of its own on the server `var` names.
fn on_server<C: Server>(var: &str) -> Result<String, String> {
    let url = match std::env::var(var) {
        Ok(url) => url,
        Err(_) if std::env::var("CI").as_deref() == Ok("true") => {
            return Err(format!(
                "{var} is not set: under CI=true every enabled backend runs"
            ))
        }
        Err(_) => return Ok(format!("skipped: set {var}")),
    };
    let name = format!("seqgen_cut_{}", std::process::id());
    let mut admin = C::establish(&url).map_err(|e| e.to_string())?;
    admin.drop_database(&name).map_err(|e| e.to_string())?;
    admin
        .batch_execute(&format!("CREATE DATABASE {name}"))
        .map_err(|e| e.to_string())?;
    let db_url = format!(
        "{}/{name}",
        url.rsplit_once('/').ok_or("a URL without a database")?.0
    );
    let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    let outcome = cut_under_load::<C>(dir.path(), &db_url);
    let _ = admin.drop_database(&name);
    outcome
}

/// Each process's key and arguments beyond the common ones.
const FORMS: [(&str, &[&str]); 6] = [
    ("next_id", &["--rollback", "0.1"]),
    (
        "pooled_bulk",
        &["--via", "insert-into", "--bulk", "5", "--rollback", "0.1"],
    ),
    (
        "deref_gapless",
        &[
            "--via",
            "insert-into",
            "--form",
            "deref",
            "--mode",
            "gapless",
            "--rollback",
            "0.1",
        ],
    ),
    (
        "own_bulk",
        &["--via", "insert-into", "--form", "own", "--bulk", "3"],
    ),
    ("plain", &["--via", "insert-into", "--form", "plain"]),
    (
        "pooled_gapless_bulk",
        &["--via", "insert-into", "--mode", "gapless", "--bulk", "4"],
    ),
];

fn cut_under_load<C: Server>(dir: &Path, url: &str) -> Result<String, String> {
    // The tables first, so that no cut lands in a process's set-up (loadgen's set-up retries
    // a lost connection too, but not forever).
    let setup = loadgen(
        url,
        "setup",
        &dir.join("setup.ids"),
        &["--insert", "--ids", "1"],
    )
    .spawn()
    .map_err(|e| e.to_string())?;
    finish(setup, "the set-up")?;
    let files: Vec<PathBuf> = FORMS
        .iter()
        .map(|(key, _)| dir.join(format!("{key}.ids")))
        .collect();
    let mut children: Vec<Child> = FORMS
        .iter()
        .zip(&files)
        .map(|((key, extra), file)| {
            let mut args = vec!["--insert", "--threads", "2", "--seconds", "4"];
            args.extend_from_slice(extra);
            loadgen(url, key, file, &args)
                .spawn()
                .map_err(|e| e.to_string())
        })
        .collect::<Result<_, _>>()?;
    let mut killer = C::establish(url).map_err(|e| e.to_string())?;
    let started = Instant::now();
    let (mut rounds, mut cut) = (0, 0);
    // A cut every 200 ms (the fault's rhythm), until every process has ended its run: 4 s,
    // and the reconnections after a cut, however long a busy machine makes them.
    while children
        .iter_mut()
        .any(|child| matches!(child.try_wait(), Ok(None)))
    {
        if started.elapsed() > Duration::from_secs(120) {
            return Err("the processes still ran after 120 s of cuts".into());
        }
        std::thread::sleep(Duration::from_millis(200));
        cut += killer.cut_sessions().map_err(|e| e.to_string())?;
        rounds += 1;
    }
    let mut reconnects = 0;
    for ((key, _), child) in FORMS.iter().zip(children) {
        let report = finish(child, &format!("the {key} process"))?;
        reconnects += report_field(&report, "reconnects");
    }
    if reconnects == 0 {
        return Err("no process saw a cut: the test did not test anything".into());
    }
    let mut committed = 0;
    for ((key, _), file) in FORMS.iter().zip(&files) {
        let acknowledged = read_ids(std::slice::from_ref(file));
        check_distinct(&acknowledged)?;
        let in_table = killer.ids(key).map_err(|e| e.to_string())?;
        let in_table_set: HashSet<&String> = in_table.iter().collect();
        if let Some(lost) = acknowledged.iter().find(|id| !in_table_set.contains(id)) {
            return Err(format!(
                "{key}: {lost} was committed for its process, and is not in the table"
            ));
        }
        if key.contains("gapless") {
            exactly_one_to_n(&in_table).map_err(|e| format!("{key}: {e}"))?;
        }
        committed += in_table.len();
    }
    Ok(format!(
        "{committed} rows by {} processes ({} forms), {cut} sessions cut in {rounds} rounds, \
         {reconnects} reconnects, 0 repeated, gapless keys exactly 1..N",
        FORMS.len(),
        FORMS.len()
    ))
}
