//! New counters created at the same moment never wait on or deadlock each other: a new key, a
//! new scope of a key (two tenants' first invoices) or a new period, in gapless and batched
//! mode, inside and outside the caller's transaction, on plain connections (no pool: the
//! default a user gets). On MySQL/MariaDB, creating a missing counter row inside a transaction
//! once took gap locks that deadlocked with another transaction creating a neighbouring row.

use crate::common;

use std::sync::{Arc, Barrier};
use std::thread;

use common::{TestConnection, TestDb};
use diesel::connection::TransactionManager;
use diesel_seqgen::{Generator, Spec};

backend_tests!(
    many_new_keys_at_once_never_deadlock,
    a_new_scope_starts_at_a_start_value_set_during_the_transaction,
);

/// Threads at a barrier, each round creating counters that sort next to each other in
/// `db_key`'s primary key (so their rows share an index gap): every call succeeds the first
/// time, and every new counter starts at 1.
fn many_new_keys_at_once_never_deadlock<C: TestConnection>(db: TestDb<C>) {
    const THREADS: usize = 6;
    const ROUNDS: usize = 8;
    let db = Arc::new(db);
    let barrier = Arc::new(Barrier::new(THREADS));
    // One generator per thread, as separate app instances would have; and the tenants' key,
    // whose scopes are new rows of one key.
    let tenants = Spec::builder(db.key("nk_tenant"))
        .date("")
        .scoped()
        .gapless()
        .build()
        .unwrap();
    let workers: Vec<_> = (0..THREADS)
        .map(|t| {
            let (db, barrier, tenants) = (db.clone(), barrier.clone(), tenants.clone());
            thread::spawn(move || {
                let mut conn = db.connect();
                let generator = Generator::new();
                let mut failed = Vec::new();
                for round in 0..ROUNDS {
                    let spec = |mode: &str| {
                        let builder = Spec::builder(db.key(&format!("nk{round}{mode}{t}")));
                        match mode {
                            "g" => builder.date("").gapless(),
                            "i" => builder.date("%Y"), // a key row and a period row
                            _ => builder.date(""),
                        }
                        .build()
                        .unwrap()
                    };
                    let (gapless, inside, outside) = (spec("g"), spec("i"), spec("o"));
                    let scope = format!("tenant{round}_{t}");
                    barrier.wait();
                    let taken = conn.transaction(|conn| {
                        Ok::<_, diesel_seqgen::Error>([
                            generator.next_id(conn, &gapless)?,
                            generator.next_id(conn, tenants.scope(&scope))?,
                            generator.next_id(conn, &inside)?,
                            generator.next_id(conn, &gapless)?,
                        ])
                    });
                    // Failures are collected, not raised: a panicking thread would leave the
                    // others waiting at the barrier.
                    match taken {
                        Ok(taken) => {
                            let counters = taken.each_ref().map(|id| &id[id.len() - 6..]);
                            if counters != ["000001", "000001", "000001", "000002"] {
                                failed.push(format!("round {round}, thread {t}: {taken:?}"));
                            }
                        }
                        Err(e) => failed.push(format!("round {round}, thread {t}: {e}")),
                    }
                    barrier.wait();
                    match generator.next_id(&mut conn, &outside) {
                        Ok(id) if id == "000001" => {}
                        other => failed.push(format!("round {round}, outside: {other:?}")),
                    }
                }
                failed
            })
        })
        .collect();
    let failed: Vec<String> = workers
        .into_iter()
        .flat_map(|w| w.join().unwrap())
        .collect();
    assert!(failed.is_empty(), "{}: {failed:#?}", C::NAME);
}

/// The first number of a new scope follows the key's `start_value` as committed when the
/// scope's row is created, even inside a transaction whose snapshot is older (MySQL reads the
/// start with a lock, not from the snapshot): an operator who raised it past numbers issued
/// elsewhere must not see them again. Not on SQLite: a transaction that has read there cannot
/// write after another connection wrote.
fn a_new_scope_starts_at_a_start_value_set_during_the_transaction<C: TestConnection>(
    db: TestDb<C>,
) {
    if C::NAME == "sqlite" {
        return;
    }
    let key = db.key("nk_start");
    let spec = Spec::builder(&key)
        .date("")
        .scoped()
        .gapless()
        .build()
        .unwrap();
    let (mut app, mut operator) = (db.connect(), db.connect());
    let generator = Generator::new();
    app.transaction(|conn| generator.next_id(conn, spec.scope("a")))
        .unwrap();
    C::TransactionManager::begin_transaction(&mut app).unwrap();
    // The transaction's snapshot is taken here, before the operator's edit.
    C::texts(&mut app, "SELECT key_name AS text FROM db_key");
    operator
        .batch_execute(&format!(
            "UPDATE db_key SET start_value = 1000 \
             WHERE key_name = '{key}' AND scope = '' AND period = ''"
        ))
        .unwrap();
    let id = generator.next_id(&mut app, spec.scope("b")).unwrap();
    C::TransactionManager::commit_transaction(&mut app).unwrap();
    assert_eq!(id, "001000");
}
