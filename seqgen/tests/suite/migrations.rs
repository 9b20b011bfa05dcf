//! MySQL/MariaDB run DDL outside a migration's transaction, so a run cut off midway (a process
//! killed at start-up, a Galera node's conflict) leaves part of a migration applied and not
//! recorded. The next run must complete it: once, two processes starting on a Galera cluster
//! left `lowered_from` added without its trigger, and every later run failed with "Duplicate
//! column name 'lowered_from'" (`suite/galera.rs`).
#![cfg(feature = "mysql")]

use crate::common::TestDb;

use diesel::{MysqlConnection, RunQueryDsl};
use diesel_seqgen::{Generator, Spec};

#[test]
fn a_migration_cut_off_midway_completes_at_the_next_run() {
    let Some(db) = TestDb::<MysqlConnection>::open("migration_cut_off") else {
        return;
    };
    let fresh = db.scratch("cut_off");
    let mut conn = fresh.connect();
    diesel_seqgen::run_migrations(&mut conn).unwrap();
    let spec = Spec::builder("cut_off").date("").build().unwrap();
    assert_eq!(Generator::new().next_number(&mut conn, &spec).unwrap(), 1);
    // Every migration that alters a table applied but not recorded, and the last one cut off
    // between its column and its trigger.
    for sql in [
        "DROP TRIGGER db_key_never_back",
        "DELETE FROM __diesel_schema_migrations WHERE version IN \
         ('00000000000200', '00000000000300', '00000000000500', '00000000000600')",
    ] {
        diesel::sql_query(sql).execute(&mut conn).unwrap();
    }
    diesel_seqgen::run_migrations(&mut conn).unwrap();
    // The trigger is back: a counter cannot be lowered by hand.
    let lowered =
        diesel::sql_query("UPDATE db_key SET current_value = 0 WHERE key_name = 'cut_off'")
            .execute(&mut conn);
    assert!(lowered.is_err(), "{lowered:?}");
    // And the counters are as they were.
    assert!(Generator::new().next_number(&mut conn, &spec).unwrap() > 1);
}
