//! SQLite's recommended settings (`diesel_seqgen::sqlite::configure`, behind `SqliteSetup`
//! and `establish_async`) on connections opened together on a new file: a pool's first
//! connections, or instances started at once. SQLite refuses the switch to WAL at once, with
//! "database is locked", where waiting could deadlock; found by the multi-process test of
//! four async processes on a new file (`tools/tests/multiprocess.rs`).
#![cfg(feature = "sqlite")]

use std::sync::{Arc, Barrier};

use diesel::{Connection, SqliteConnection};

/// Eight connections at once on each of 20 new files: every one is configured and migrates.
#[test]
fn connections_opened_together_on_a_new_file_are_all_configured() {
    const CONNECTIONS: usize = 8;
    for round in 0..20 {
        let dir = tempfile::tempdir().unwrap();
        let url = dir.path().join("new.db").display().to_string();
        let barrier = Arc::new(Barrier::new(CONNECTIONS));
        let opened: Vec<_> = (0..CONNECTIONS)
            .map(|_| {
                let (url, barrier) = (url.clone(), barrier.clone());
                std::thread::spawn(move || {
                    let mut conn = SqliteConnection::establish(&url).unwrap();
                    barrier.wait();
                    diesel_seqgen::sqlite::configure(&mut conn)?;
                    diesel_seqgen::run_migrations(&mut conn)
                        .map_err(|e| diesel::result::Error::QueryBuilderError(Box::new(e)))
                })
            })
            .collect();
        for connection in opened {
            let outcome = connection.join().unwrap();
            assert!(outcome.is_ok(), "round {round}: {outcome:?}");
        }
    }
}
