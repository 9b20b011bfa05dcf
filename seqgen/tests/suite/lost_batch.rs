//! A follower's batch whose transaction the server ended unheard writes nothing. A Galera node
//! reports an abort that came while the client was idle to the client's next command, and when
//! that is a prepared statement's close (which has no reply) the client never hears of it: the
//! batch's write would then commit alone, numbers whose reservation was rolled back, and the
//! next batch would hand them out again. MariaDB's write of a batch checks that the transaction
//! still holds (`@@in_transaction`). No single server ends a transaction so; seqgen's test hook
//! (`pending::roll_back_before_writing`) sends a `ROLLBACK` Diesel does not see between the
//! batch's reservation and its write. Blocking and async, after `use_pool`.

#[cfg(feature = "mysql")]
const TABLE: &str = "CREATE TABLE unheard_bills \
                     (id BIGINT AUTO_INCREMENT PRIMARY KEY, number VARCHAR(20) UNIQUE)";

/// Every row's number, `-` where it has none, in id order.
#[cfg(feature = "mysql")]
fn numbers(conn: &mut diesel::MysqlConnection) -> Vec<String> {
    use crate::common::TestConnection;
    diesel::MysqlConnection::texts(
        conn,
        "SELECT COALESCE(number, '-') AS text FROM unheard_bills ORDER BY id",
    )
}

#[cfg(feature = "mysql")]
fn bills() -> diesel_seqgen::Spec {
    diesel_seqgen::Spec::builder("unheard_bills")
        .prefix("B")
        .date("")
        .pad(6)
        .gapless()
        .build()
        .unwrap()
}

#[cfg(feature = "mysql")]
#[test]
fn a_follower_batch_the_server_ended_unheard_writes_nothing() {
    use crate::common::{self, TestDb};
    use diesel::connection::SimpleConnection;
    use diesel_seqgen::pending::{self, PendingRows};
    use diesel_seqgen::Error;

    let Some(db) = TestDb::<diesel::MysqlConnection>::open("unheard_batch") else {
        return;
    };
    let scratch = common::scratch_with_table(&db, "unheard_batch", TABLE, None);
    diesel_seqgen::global::use_pool(scratch.pool(2)).unwrap();
    let mut conn = scratch.connect();
    let rows = || PendingRows::new("unheard_bills", "number", "id");
    conn.batch_execute("INSERT INTO unheard_bills (number) VALUES (NULL), (NULL), (NULL)")
        .unwrap();

    pending::roll_back_before_writing("unheard_bills");
    let refused = pending::number_pending(&mut conn, &bills(), rows());
    assert!(
        matches!(refused, Err(Error::NumberedMeanwhile { .. })),
        "{refused:?}"
    );
    assert_eq!(numbers(&mut conn), ["-", "-", "-"], "nothing written");

    // Called again, the rows (and one more) take the numbers the lost batch did not keep.
    conn.batch_execute("INSERT INTO unheard_bills (number) VALUES (NULL)")
        .unwrap();
    let done = pending::number_pending(&mut conn, &bills(), rows()).unwrap();
    assert_eq!(done.rows, 4);
    assert_eq!(
        numbers(&mut conn),
        ["B000001", "B000002", "B000003", "B000004"]
    );
}

/// The same through `nonblocking::number_pending`, after `nonblocking::use_pool`.
#[cfg(all(feature = "mysql", feature = "async-mysql", feature = "deadpool"))]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn async_a_follower_batch_the_server_ended_unheard_writes_nothing() {
    use crate::common::{self, TestDb};
    use diesel_async::pooled_connection::deadpool::Pool;
    use diesel_async::pooled_connection::AsyncDieselConnectionManager;
    use diesel_async::{AsyncConnection, AsyncMysqlConnection, SimpleAsyncConnection};
    use diesel_seqgen::pending::{self, PendingRows};
    use diesel_seqgen::{nonblocking as sq, Error};

    let Some(db) = TestDb::<diesel::MysqlConnection>::open("unheard_batch_async") else {
        return;
    };
    let scratch = common::scratch_with_table(&db, "unheard_batch_async", TABLE, None);
    let manager = AsyncDieselConnectionManager::<AsyncMysqlConnection>::new(&scratch.url);
    sq::use_pool(Pool::builder(manager).max_size(2).build().unwrap())
        .await
        .unwrap();
    let mut conn = AsyncMysqlConnection::establish(&scratch.url).await.unwrap();
    let rows = || PendingRows::new("unheard_bills", "number", "id");
    conn.batch_execute("INSERT INTO unheard_bills (number) VALUES (NULL), (NULL), (NULL)")
        .await
        .unwrap();

    pending::roll_back_before_writing("unheard_bills");
    let refused = sq::number_pending(&mut conn, &bills(), rows()).await;
    assert!(
        matches!(refused, Err(Error::NumberedMeanwhile { .. })),
        "{refused:?}"
    );
    let mut check = scratch.connect();
    assert_eq!(numbers(&mut check), ["-", "-", "-"], "nothing written");

    conn.batch_execute("INSERT INTO unheard_bills (number) VALUES (NULL)")
        .await
        .unwrap();
    let done = sq::number_pending(&mut conn, &bills(), rows())
        .await
        .unwrap();
    assert_eq!(done.rows, 4);
    assert_eq!(
        numbers(&mut check),
        ["B000001", "B000002", "B000003", "B000004"]
    );
}
