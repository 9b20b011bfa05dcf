//! A transaction the database rolled back under seqgen (a gapless number taken inside the
//! caller's transaction) is a conflict `retry_transaction` runs again, and the retry numbers
//! the record anew.
//!
//! - A deadlock: MySQL rolls the whole transaction back, savepoint included; Diesel marks the
//!   transaction for rollback when a statement meets one, so the rollback to the savepoint
//!   that no longer exists is forgiven. Made here on one server: the app's transaction holds a
//!   row another transaction (heavier, so InnoDB keeps it) will want, and waits inside
//!   seqgen's savepoint for the counter row that transaction holds.
//! - A rollback between two statements, which Diesel does not see: Galera's, when another
//!   node's write set aborts a local transaction. Releasing the savepoint then fails with
//!   "SAVEPOINT diesel_savepoint_1 does not exist" (it ended gapless writers in the nemesis's
//!   Galera runs). Made here by a `ROLLBACK` the insert's own statement sends.
//! - A rollback the client never hears of (Galera reports it to a statement's close, which has
//!   no reply): the statements after it would each commit alone. MariaDB's reservation checks
//!   it is still in the transaction (`@@in_transaction`). Made here by the app's `ROLLBACK`.

#[cfg(feature = "mysql")]
#[test]
fn a_deadlock_under_seqgens_savepoint_is_run_again() {
    use crate::common::{self, TestConnection, TestDb};
    use crate::own_servers::wait_until;
    use diesel::connection::SimpleConnection;
    use diesel_seqgen::DistributedId;
    use std::time::Duration;

    diesel::table! {
        deadlock_notes (id) {
            id -> Text,
            note -> Text,
        }
    }

    #[derive(diesel::Insertable, DistributedId)]
    #[diesel(table_name = deadlock_notes)]
    struct Note {
        #[distributed_id(key = "deadlock_notes", prefix = "N", date = "", pad = 6, gapless)]
        id: String,
        note: String,
    }

    let Some(db) = TestDb::<diesel::MysqlConnection>::open("savepoint_deadlock") else {
        return;
    };
    let scratch = common::scratch_with_table(
        &db,
        "savepoint_deadlock",
        "CREATE TABLE deadlock_notes (id VARCHAR(20) PRIMARY KEY, note VARCHAR(60) NOT NULL); \
         CREATE TABLE shared (k INT PRIMARY KEY, v INT NOT NULL); \
         CREATE TABLE heavy (k INT PRIMARY KEY); \
         INSERT INTO shared VALUES (1, 0)",
        None,
    );
    let mut app = scratch.connect();
    // The key's counter row exists: its first note.
    let mut first = Note {
        id: String::new(),
        note: "first".into(),
    };
    diesel_seqgen::insert_into(deadlock_notes::table)
        .values(&mut first)
        .execute(&mut app)
        .unwrap();
    assert_eq!(first.id, "N000001");

    // The other transaction: heavy (100 rows written), holding the key's counter row.
    let mut other = scratch.connect();
    let rows: Vec<String> = (1..=100).map(|k| format!("({k})")).collect();
    other
        .batch_execute(&format!(
            "BEGIN; INSERT INTO heavy VALUES {}; \
             SELECT current_value FROM db_key WHERE key_name = 'deadlock_notes' \
             AND scope = '' AND period = '' FOR UPDATE",
            rows.join(", ")
        ))
        .unwrap();
    let session = <diesel::MysqlConnection as TestConnection>::texts(
        &mut app,
        "SELECT CAST(CONNECTION_ID() AS CHAR) AS text",
    )
    .remove(0);
    let app_thread = std::thread::spawn(move || {
        let mut attempts = 0;
        let mut note = Note {
            id: String::new(),
            note: "second".into(),
        };
        let result = diesel_seqgen::retry_transaction(&mut app, |conn| {
            attempts += 1;
            if attempts == 1 {
                // The row the other transaction will want, then seqgen's savepoint, which
                // waits for the counter row the other holds.
                conn.batch_execute("UPDATE shared SET v = v + 1 WHERE k = 1")?;
            }
            diesel_seqgen::insert_into(deadlock_notes::table)
                .values(&mut note)
                .execute(conn)
        });
        (result.map(|_| note.id), attempts)
    });
    // Once the app waits inside its savepoint, close the circle: InnoDB rolls the lighter
    // transaction back, the app's.
    let mut watch = scratch.connect();
    let waiting = format!(
        "SELECT CAST(COUNT(*) AS CHAR) AS text FROM information_schema.innodb_trx \
         WHERE trx_state = 'LOCK WAIT' AND trx_mysql_thread_id = {session}"
    );
    wait_until(
        "the app to wait for the counter row",
        Duration::from_secs(30),
        || {
            let count = <diesel::MysqlConnection as TestConnection>::texts(&mut watch, &waiting);
            count.first().is_some_and(|n| n != "0")
        },
    );
    other
        .batch_execute("UPDATE shared SET v = v + 1 WHERE k = 1")
        .unwrap();
    other.batch_execute("COMMIT").unwrap();
    let (result, attempts) = app_thread.join().unwrap();
    assert_eq!(result.unwrap(), "N000002", "the retry numbers the note");
    assert_eq!(attempts, 2, "the deadlock was the app's, and was run again");
}

#[cfg(feature = "mysql")]
#[test]
fn a_transaction_rolled_back_between_statements_under_seqgens_savepoint_is_run_again() {
    use crate::common::{self, TestDb};
    use diesel::connection::SimpleConnection;
    use diesel::prelude::*;
    use diesel_seqgen::DistributedId;

    diesel::table! {
        lost_savepoint_notes (id) {
            id -> Text,
            note -> Text,
        }
    }

    #[derive(diesel::Insertable, DistributedId)]
    #[diesel(table_name = lost_savepoint_notes)]
    struct Note {
        #[distributed_id(
            key = "lost_savepoint_notes",
            prefix = "L",
            date = "",
            pad = 6,
            gapless
        )]
        id: String,
        note: String,
    }

    let Some(db) = TestDb::<diesel::MysqlConnection>::open("lost_savepoint") else {
        return;
    };
    let scratch = common::scratch_with_table(
        &db,
        "lost_savepoint",
        "CREATE TABLE lost_savepoint_notes (id VARCHAR(20) PRIMARY KEY, note VARCHAR(60) NOT NULL)",
        None,
    );
    let mut app = scratch.connect();
    let mut note = Note {
        id: String::new(),
        note: "first".into(),
    };
    // The first attempt's insert, then the whole transaction rolled back before seqgen
    // releases its savepoint.
    let mut attempts = 0;
    diesel_seqgen::retry_transaction(&mut app, |conn| {
        attempts += 1;
        let rolled_back = attempts == 1;
        diesel_seqgen::insert_into(lost_savepoint_notes::table)
            .values(&mut note)
            .execute_with(conn, |table, row, conn| {
                let inserted = diesel::insert_into(table).values(row).execute(conn)?;
                if rolled_back {
                    conn.batch_execute("ROLLBACK")?;
                }
                Ok(inserted)
            })
    })
    .unwrap();
    assert_eq!(attempts, 2, "the rolled-back transaction was run again");
    assert_eq!(note.id, "L000001", "the number went back with the rollback");

    // A failed statement after such a rollback: its own error, not the savepoint's.
    let mut second = Note {
        id: String::new(),
        note: "second".into(),
    };
    let failed = diesel_seqgen::retry_transaction(&mut app, |conn| {
        diesel_seqgen::insert_into(lost_savepoint_notes::table)
            .values(&mut second)
            .execute_with(conn, |_, _, conn| {
                conn.batch_execute("ROLLBACK")?;
                conn.batch_execute("SELECT no_such_column FROM lost_savepoint_notes")?;
                Ok(0)
            })
    })
    .unwrap_err();
    assert!(failed.to_string().contains("no_such_column"), "{failed}");
    assert!(
        second.id.is_empty(),
        "the failed insert's record is as it was"
    );

    // The connection is usable, and the key's numbers are 1..N.
    diesel_seqgen::insert_into(lost_savepoint_notes::table)
        .values(&mut second)
        .execute(&mut app)
        .unwrap();
    assert_eq!(second.id, "L000002");
    let ids: Vec<String> = lost_savepoint_notes::table
        .select(lost_savepoint_notes::id)
        .order(lost_savepoint_notes::id)
        .load(&mut app)
        .unwrap();
    assert_eq!(ids, ["L000001", "L000002"]);
}

/// A transaction the server ended without the client hearing of it (a Galera node reports
/// such an abort to a `COM_STMT_CLOSE`, which has no reply), made here by a `ROLLBACK` the
/// app's own statement sends: a gapless number asked for afterwards is refused as a conflict,
/// on `next_id` and on `insert_into` alike, after `use_pool`. Else its reservation would
/// commit alone (MySQL's autocommit), and the caller's rollback would leave a hole, or a row
/// the caller rolled back.
#[cfg(feature = "mysql")]
#[test]
fn a_gapless_number_is_refused_in_a_transaction_the_server_ended_unheard() {
    use crate::common::{self, TestDb};
    use diesel::connection::SimpleConnection;
    use diesel::prelude::*;
    use diesel_seqgen::{DistributedId, Error};

    diesel::table! {
        unheard_notes (id) {
            id -> Text,
            note -> Text,
        }
    }

    #[derive(diesel::Insertable, DistributedId)]
    #[diesel(table_name = unheard_notes)]
    struct Note {
        #[distributed_id(key = "unheard_notes", prefix = "U", date = "", pad = 6, gapless)]
        id: String,
        note: String,
    }

    let Some(db) = TestDb::<diesel::MysqlConnection>::open("unheard_rollback") else {
        return;
    };
    let scratch = common::scratch_with_table(
        &db,
        "unheard_rollback",
        "CREATE TABLE unheard_notes (id VARCHAR(20) PRIMARY KEY, note VARCHAR(60) NOT NULL)",
        None,
    );
    diesel_seqgen::global::use_pool(scratch.pool(2)).unwrap();
    let receipts = diesel_seqgen::Spec::builder("unheard_receipts")
        .prefix("R")
        .date("")
        .pad(6)
        .gapless()
        .build()
        .unwrap();
    let mut app = scratch.connect();
    // Each door twice: the first time the counter's row is created, the second it exists.
    for round in 0..2 {
        let taken = app.transaction(|conn| {
            conn.batch_execute("ROLLBACK")?;
            diesel_seqgen::global::next_id(conn, &receipts)
        });
        assert!(
            matches!(taken, Err(Error::TransactionConflict(_))),
            "round {round}: {taken:?}"
        );
        let mut note = Note {
            id: String::new(),
            note: format!("unheard {round}"),
        };
        let inserted = app.transaction(|conn| {
            conn.batch_execute("ROLLBACK")?;
            diesel_seqgen::insert_into(unheard_notes::table)
                .values(&mut note)
                .execute(conn)
        });
        assert!(
            matches!(inserted, Err(Error::TransactionConflict(_))),
            "round {round}: {inserted:?}"
        );
        assert!(note.id.is_empty(), "round {round}: the record is as it was");

        // Nothing was taken: the next numbers are the first ones.
        let number = round + 1;
        let taken = app.transaction(|conn| diesel_seqgen::global::next_id(conn, &receipts));
        assert_eq!(taken.unwrap(), format!("R{number:06}"));
        diesel_seqgen::insert_into(unheard_notes::table)
            .values(&mut note)
            .execute(&mut app)
            .unwrap();
        assert_eq!(note.id, format!("U{number:06}"));
    }
    let count: i64 = unheard_notes::table.count().get_result(&mut app).unwrap();
    assert_eq!(count, 2, "no row of a rolled-back transaction");
}

/// The same on diesel-async (`nonblocking::next_id` inside diesel-async's transaction), after
/// `nonblocking::use_pool`.
#[cfg(all(feature = "mysql", feature = "async-mysql", feature = "deadpool"))]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn async_a_gapless_number_is_refused_in_a_transaction_the_server_ended_unheard() {
    use crate::common::{self, TestDb};
    use diesel_async::pooled_connection::deadpool::Pool;
    use diesel_async::pooled_connection::AsyncDieselConnectionManager;
    use diesel_async::{AsyncConnection, AsyncMysqlConnection, SimpleAsyncConnection};
    use diesel_seqgen::{nonblocking as sq, Error};

    let Some(db) = TestDb::<diesel::MysqlConnection>::open("unheard_rollback_async") else {
        return;
    };
    let scratch = common::scratch_with_table(
        &db,
        "unheard_async",
        "CREATE TABLE unheard_async_notes (id INT PRIMARY KEY)",
        None,
    );
    let manager = AsyncDieselConnectionManager::<AsyncMysqlConnection>::new(&scratch.url);
    sq::use_pool(Pool::builder(manager).max_size(2).build().unwrap())
        .await
        .unwrap();
    let receipts = diesel_seqgen::Spec::builder("unheard_async_receipts")
        .prefix("A")
        .date("")
        .pad(6)
        .gapless()
        .build()
        .unwrap();
    let mut conn = AsyncMysqlConnection::establish(&scratch.url).await.unwrap();
    for round in 0..2 {
        let taken = conn
            .transaction(async |conn| {
                conn.batch_execute("ROLLBACK").await?;
                sq::next_id(conn, &receipts).await
            })
            .await;
        assert!(
            matches!(taken, Err(Error::TransactionConflict(_))),
            "round {round}: {taken:?}"
        );
        let number = round + 1;
        let taken = conn
            .transaction(async |conn| sq::next_id(conn, &receipts).await)
            .await;
        assert_eq!(taken.unwrap(), format!("A{number:06}"));
    }
}
