//! What a database error means to seqgen: another transaction holds a lock, the transaction was
//! aborted to keep transactions serializable (worth running again), `db_key` is missing. By
//! the kind Diesel gives where it gives one; by the message where a driver gives none
//! (diesel-async's MySQL connection reports a deadlock with no kind) or the case has no kind.

use crate::error::Error;

/// Whether `err` says a lock could not be taken without waiting: PostgreSQL 55P03 "could not
/// obtain lock on row", MySQL 3572 "…NOWAIT is set", MariaDB 1205 "Lock wait timeout
/// exceeded", SQLite "database is locked".
pub(crate) fn is_busy(err: &diesel::result::Error) -> bool {
    match err {
        diesel::result::Error::DatabaseError(_, info) => {
            let msg = info.message();
            msg.contains("could not obtain lock")
                || msg.contains("lock timeout")
                || msg.contains("NOWAIT")
                || msg.contains("Lock wait timeout")
                || msg.contains("database is locked")
        }
        _ => false,
    }
}

/// Whether the database aborted a statement (or the transaction around it) to keep
/// transactions serializable or to break a deadlock, so that running it again may succeed:
/// Diesel's `SerializationFailure` kind, and MySQL's deadlock (1213), which diesel-async's
/// MySQL connection reports without a kind or a code: by each of the texts 1213 comes with,
/// InnoDB's and Galera's ([`DEADLOCK_TEXTS`]).
pub(crate) fn is_conflict(err: &diesel::result::Error) -> bool {
    use diesel::result::{DatabaseErrorKind, Error as DieselError};
    match err {
        DieselError::DatabaseError(DatabaseErrorKind::SerializationFailure, _) => true,
        DieselError::DatabaseError(_, info) => {
            let msg = info.message();
            DEADLOCK_TEXTS.iter().any(|text| msg.starts_with(text))
        }
        _ => false,
    }
}

/// The texts of MySQL/MariaDB's errno 1213: InnoDB's deadlock, and Galera's certification
/// conflicts (a transaction another node committed first).
const DEADLOCK_TEXTS: [&str; 3] = [
    "Deadlock found when trying to get lock",
    "Deadlock: wsrep aborted transaction",
    "WSREP detected deadlock/conflict and aborted the transaction",
];

/// Whether `err` says a savepoint is gone: MySQL and MariaDB's 1305 "SAVEPOINT
/// diesel_savepoint_1 does not exist", after the database rolled back the whole transaction
/// around it between two statements, as Galera does when another node's write set aborts a
/// local transaction. Diesel then fails to release or roll back the savepoint
/// (`driver::transaction`).
pub(crate) fn is_savepoint_gone(err: &diesel::result::Error) -> bool {
    matches!(err, diesel::result::Error::DatabaseError(_, info)
        if info.message().starts_with("SAVEPOINT ") && info.message().ends_with(" does not exist"))
}

/// The error of a transaction the database rolled back between two statements without the
/// client hearing of it (a savepoint gone at its release, `driver::transaction`; MariaDB no
/// longer in the transaction a reservation runs in, `mysql::BumpHeld`): a serialization
/// failure, which `retry_transaction` runs again (`Error::TransactionConflict`).
pub(crate) fn rolled_back_underneath() -> diesel::result::Error {
    diesel::result::Error::DatabaseError(
        diesel::result::DatabaseErrorKind::SerializationFailure,
        Box::new(
            "the database rolled back the transaction between two statements (a Galera \
             certification conflict, or a deadlock): run the transaction again"
                .to_owned(),
        ),
    )
}

/// Whether `err` says the Galera node this connection reaches is not in the cluster's primary
/// component, so it must not be used: MariaDB's 1047 "WSREP has not yet prepared node for
/// application use" (a node cut off, or still joining), 1180 "Got error 6 … during
/// COMMIT" (a commit the cluster did not accept), and any error naming the provider's status
/// "Not connected to Primary Component" (1180 "Error while appending streaming replication
/// fragment(provider status: …)", met by a write while its node restarted in a soak run).
/// Running the statement again on the same connection would fail the same way, or read
/// stale data.
pub(crate) fn is_node_out(err: &diesel::result::Error) -> bool {
    match err {
        diesel::result::Error::DatabaseError(_, info) => {
            let msg = info.message();
            msg.starts_with("WSREP has not yet prepared node")
                || (msg.starts_with("Got error 6 ") && msg.ends_with("during COMMIT"))
                || msg.contains("Not connected to Primary Component")
        }
        _ => false,
    }
}

/// Whether `err` says the `db_key` table (or a column a later migration adds) is missing.
/// The three backends word it differently: "no such table: db_key",
/// `relation "db_key" does not exist`, "Table 'test.db_key' doesn't exist".
pub(crate) fn is_missing_table(err: &diesel::result::Error) -> bool {
    match err {
        diesel::result::Error::DatabaseError(_, info) => {
            let msg = info.message();
            let table_missing = msg.contains("db_key")
                && (msg.contains("no such table")
                    || msg.contains("does not exist")
                    || msg.contains("doesn't exist"));
            // A db_key from before the settings migration.
            let column_missing = (msg.contains("start_value")
                || msg.contains("batch_size")
                || msg.contains("shape"))
                && (msg.contains("no such column")
                    || msg.contains("does not exist")
                    || msg.contains("Unknown column"));
            table_missing || column_missing
        }
        _ => false,
    }
}

/// Whether `err` says a table or a column the statement names does not exist: "no such
/// table"/"no such column" (SQLite), `relation "t" does not exist`/`column "c" does not
/// exist` (PostgreSQL), "Table 'db.t' doesn't exist"/"Unknown column 'c'" (MySQL, MariaDB).
pub(crate) fn is_missing_object(err: &diesel::result::Error) -> bool {
    match err {
        diesel::result::Error::DatabaseError(_, info) => {
            let msg = info.message();
            [
                "no such table",
                "no such column",
                "does not exist",
                "doesn't exist",
                "Unknown column",
            ]
            .iter()
            .any(|text| msg.contains(text))
        }
        _ => false,
    }
}

impl Error {
    /// Wraps a database error, recognising the missing-table case.
    pub(crate) fn from_db(err: diesel::result::Error) -> Self {
        if is_missing_table(&err) {
            Error::MissingTable(err)
        } else if is_conflict(&err) {
            Error::TransactionConflict(err)
        } else if is_node_out(&err) {
            Error::NodeOutOfCluster(err)
        } else {
            Error::Database(err)
        }
    }
}

/// Lets `diesel_seqgen::Error` be the error type of a Diesel `conn.transaction(|conn| …)`.
impl From<diesel::result::Error> for Error {
    fn from(err: diesel::result::Error) -> Self {
        Error::from_db(err)
    }
}

#[cfg(test)]
mod tests {
    use diesel::result::{DatabaseErrorKind, Error};

    fn unknown(message: &str) -> Error {
        Error::DatabaseError(DatabaseErrorKind::Unknown, Box::new(message.to_owned()))
    }

    #[test]
    fn every_text_of_mysqls_deadlock_is_a_conflict() {
        for text in [
            "Deadlock found when trying to get lock; try restarting transaction",
            "Deadlock: wsrep aborted transaction",
            "WSREP detected deadlock/conflict and aborted the transaction. Try restarting the transaction",
        ] {
            assert!(super::is_conflict(&unknown(text)), "{text}");
        }
        assert!(!super::is_conflict(&unknown("Lock wait timeout exceeded")));
        assert!(!super::is_conflict(&unknown(
            "WSREP has not yet prepared node for application use"
        )));
    }

    #[test]
    fn a_galera_node_out_of_the_cluster_is_told_apart() {
        for text in [
            "WSREP has not yet prepared node for application use",
            "Got error 6 \"No such device or address\" during COMMIT",
            "Error while appending streaming replication fragment(provider status: Not connected to Primary Component)",
        ] {
            assert!(super::is_node_out(&unknown(text)), "{text}");
        }
        assert!(!super::is_node_out(&unknown("Got error 6 during ROLLBACK")));
        assert!(!super::is_node_out(&unknown(
            "Deadlock found when trying to get lock"
        )));
    }
}
