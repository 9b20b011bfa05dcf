//! Failures in flight: a connection killed while its reservation waits on the counter row.

use crate::common;

use std::sync::mpsc;
use std::thread;
use std::time::Duration;

use common::{assert_distinct, TestConnection, TestDb};
use diesel_seqgen::{Generator, Spec};

backend_tests!(a_connection_killed_mid_reservation_caches_nothing);

/// Another transaction holds the counter row; our reservation waits on it; the server kills
/// our session. The call fails, caches nothing, the next call on a fresh connection works,
/// and no number is handed out twice.
fn a_connection_killed_mid_reservation_caches_nothing<C: TestConnection>(db: TestDb<C>) {
    let mut victim = db.connect();
    let Some(victim_session) = C::session_id(&mut victim) else {
        println!("skipping on {}: no server session to kill", C::NAME);
        return;
    };
    let spec = Spec::builder(db.key("killed"))
        .prefix("K")
        .date("")
        .pad(8)
        .batch(10)
        .build()
        .unwrap();
    let generator = Generator::new();
    let mut issued = generator.next_ids(&mut victim, &spec, 10).unwrap(); // block used up

    // A second instance takes a number inside a transaction without a pool: it holds the
    // counter row's lock until it commits.
    let (locked_tx, locked_rx) = mpsc::channel();
    let (release_tx, release_rx) = mpsc::channel::<()>();
    let holder = {
        let (url_db, spec) = (db.connect(), spec.clone());
        thread::spawn(move || {
            let mut conn = url_db;
            conn.transaction(|conn| {
                let id = Generator::new().next_id(conn, &spec)?;
                locked_tx.send(()).unwrap();
                release_rx.recv().unwrap();
                Ok::<_, diesel_seqgen::Error>(id)
            })
            .unwrap()
        })
    };
    locked_rx.recv().unwrap();

    let waiting = {
        let (generator, spec) = (generator.clone(), spec.clone());
        thread::spawn(move || generator.next_id(&mut victim, &spec))
    };
    thread::sleep(Duration::from_millis(300)); // the reservation is now waiting on the lock
    C::kill_session(&mut db.connect(), victim_session);
    let failed = waiting.join().unwrap();
    assert!(failed.is_err(), "the killed call must fail, got {failed:?}");

    release_tx.send(()).unwrap();
    issued.push(holder.join().unwrap());
    let mut fresh = db.connect();
    issued.extend(generator.next_ids(&mut fresh, &spec, 25).unwrap());
    issued.extend(Generator::new().next_ids(&mut fresh, &spec, 25).unwrap());
    assert_distinct(&issued);
}
