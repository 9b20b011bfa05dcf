//! What MySQL and MariaDB write differently (`backend/dialect.rs`).

use diesel::mysql::Mysql;
use diesel::query_builder::{AstPass, QueryFragment};
use diesel::QueryResult;

use crate::backend::dialect::{
    Durability, DurableCommit, Fingerprint, Greatest, IgnoringEnd, InsertIgnoring, LockingRead,
    NowText, OnCheckedSession, TextType, Timeline,
};

// REPEATABLE READ: a plain read sees the transaction's snapshot, a locking one what is
// committed.
impl QueryFragment<Mysql> for LockingRead {
    fn walk_ast<'b>(&'b self, mut out: AstPass<'_, 'b, Mysql>) -> QueryResult<()> {
        out.push_sql(" FOR UPDATE");
        Ok(())
    }
}

impl QueryFragment<Mysql> for Greatest {
    fn walk_ast<'b>(&'b self, mut out: AstPass<'_, 'b, Mysql>) -> QueryResult<()> {
        out.push_sql("GREATEST");
        Ok(())
    }
}

impl QueryFragment<Mysql> for InsertIgnoring {
    fn walk_ast<'b>(&'b self, mut out: AstPass<'_, 'b, Mysql>) -> QueryResult<()> {
        out.push_sql("INSERT IGNORE INTO");
        Ok(())
    }
}

impl QueryFragment<Mysql> for IgnoringEnd {
    fn walk_ast<'b>(&'b self, _: AstPass<'_, 'b, Mysql>) -> QueryResult<()> {
        Ok(())
    }
}

// MariaDB has no server UUID: the server (host, port, data directory, server id) and the
// schema. A `mysqldump | mariadb` clone lives in another schema or on another server. A Galera
// node names its cluster instead (cluster name and state UUID, the same on every node, kept
// across restarts), so that the nodes of one cluster are one database. The `/*M! … */` parts
// are read by MariaDB only (MySQL has no `wsrep_on`); the status is read only when wsrep is
// on (an impossible WHERE reads no status), and an empty state UUID (a node not yet joined)
// falls back to the node.
impl QueryFragment<Mysql> for Fingerprint {
    fn walk_ast<'b>(&'b self, mut out: AstPass<'_, 'b, Mysql>) -> QueryResult<()> {
        out.push_sql(
            "CONCAT_WS('/', 'mysql', \
             /*M! COALESCE((SELECT CONCAT_WS('/', 'galera', @@GLOBAL.wsrep_cluster_name, VARIABLE_VALUE) \
             FROM information_schema.GLOBAL_STATUS WHERE @@GLOBAL.wsrep_on \
             AND VARIABLE_NAME = 'WSREP_CLUSTER_STATE_UUID' AND VARIABLE_VALUE <> ''), */ \
             CONCAT_WS('/', @@hostname, @@port, @@datadir, @@server_id) /*M! ) */, DATABASE())",
        );
        Ok(())
    }
}

impl QueryFragment<Mysql> for Durability {
    fn walk_ast<'b>(&'b self, mut out: AstPass<'_, 'b, Mysql>) -> QueryResult<()> {
        out.push_sql("CAST(@@innodb_flush_log_at_trx_commit AS CHAR)");
        Ok(())
    }
}

// MySQL has no timelines.
impl QueryFragment<Mysql> for Timeline {
    fn walk_ast<'b>(&'b self, mut out: AstPass<'_, 'b, Mysql>) -> QueryResult<()> {
        out.push_sql("NULL");
        Ok(())
    }
}

impl QueryFragment<Mysql> for OnCheckedSession {
    fn walk_ast<'b>(&'b self, _: AstPass<'_, 'b, Mysql>) -> QueryResult<()> {
        Ok(())
    }
}

// Commits are durable with `innodb_flush_log_at_trx_commit = 1` (`Durability`), which a
// reservation checks; a session cannot ask for more.
impl QueryFragment<Mysql> for DurableCommit {
    fn walk_ast<'b>(&'b self, mut out: AstPass<'_, 'b, Mysql>) -> QueryResult<()> {
        out.push_sql("(SELECT 1) AS durable");
        Ok(())
    }
}

impl QueryFragment<Mysql> for TextType {
    fn walk_ast<'b>(&'b self, mut out: AstPass<'_, 'b, Mysql>) -> QueryResult<()> {
        out.push_sql("CHAR");
        Ok(())
    }
}

impl QueryFragment<Mysql> for NowText {
    fn walk_ast<'b>(&'b self, mut out: AstPass<'_, 'b, Mysql>) -> QueryResult<()> {
        out.push_sql("CAST(CURRENT_TIMESTAMP(6) AS CHAR)");
        Ok(())
    }
}
