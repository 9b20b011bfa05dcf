//! From `--database-url` to a connection, as the diesel CLI reads it: `postgres://` and
//! `postgresql://` are PostgreSQL, `mysql://` is MySQL or MariaDB, anything else a SQLite file
//! (`sqlite://` in front is allowed).

use crate::Failure;

/// A connection to whichever backend the URL names.
pub(crate) enum AnyConnection {
    #[cfg(feature = "sqlite")]
    Sqlite(diesel::SqliteConnection),
    #[cfg(feature = "postgres")]
    Postgres(diesel::PgConnection),
    #[cfg(feature = "mysql")]
    Mysql(diesel::MysqlConnection),
}

/// Runs `$body` with `$conn` bound to the connection inside `$any`, whatever its backend.
macro_rules! with_connection {
    ($any:expr, |$conn:ident| $body:expr) => {
        match $any {
            #[cfg(feature = "sqlite")]
            $crate::connection::AnyConnection::Sqlite($conn) => $body,
            #[cfg(feature = "postgres")]
            $crate::connection::AnyConnection::Postgres($conn) => $body,
            #[cfg(feature = "mysql")]
            $crate::connection::AnyConnection::Mysql($conn) => $body,
        }
    };
}
pub(crate) use with_connection;

/// The database URL given, or bad input.
pub(crate) fn url_of(url: Option<&str>) -> Result<&str, Failure> {
    url.ok_or_else(|| {
        Failure::Input(
            "no database: pass --database-url, or set DATABASE_URL (a `.env` file can)".to_owned(),
        )
    })
}

/// The backend `url` names: `postgres`, `mysql` or `sqlite`.
pub(crate) fn backend_of(url: &str) -> &'static str {
    if url.starts_with("postgres://") || url.starts_with("postgresql://") {
        "postgres"
    } else if url.starts_with("mysql://") {
        "mysql"
    } else {
        "sqlite"
    }
}

/// Connects to `url`. A SQLite file must exist unless `create` (for `migrate`): a mistyped
/// path would otherwise become an empty database.
pub(crate) fn connect(url: Option<&str>, create: bool) -> Result<AnyConnection, Failure> {
    let url = url_of(url)?;
    let backend = backend_of(url);
    // A URL that does not read is bad input; a server that does not answer is a failure.
    let failed = |e: diesel::ConnectionError| {
        let message = format!("could not connect to the {backend} database: {e}");
        match e {
            diesel::ConnectionError::InvalidConnectionUrl(_) => Failure::Input(message),
            _ => Failure::Database(message),
        }
    };
    match backend {
        #[cfg(feature = "postgres")]
        "postgres" => {
            use diesel::Connection;
            diesel::PgConnection::establish(url)
                .map(AnyConnection::Postgres)
                .map_err(failed)
        }
        #[cfg(feature = "mysql")]
        "mysql" => {
            use diesel::Connection;
            diesel::MysqlConnection::establish(url)
                .map(AnyConnection::Mysql)
                .map_err(failed)
        }
        #[cfg(feature = "sqlite")]
        "sqlite" => {
            use diesel::Connection;
            let path = url.strip_prefix("sqlite://").unwrap_or(url);
            let in_memory = path == ":memory:" || path.starts_with("file:");
            if !create && !in_memory && !std::path::Path::new(path).exists() {
                return Err(Failure::Input(format!(
                    "no SQLite database at {path:?} (`seqgen migrate` creates one)"
                )));
            }
            let mut conn = diesel::SqliteConnection::establish(path).map_err(failed)?;
            diesel_seqgen::sqlite::configure(&mut conn).map_err(|e| {
                Failure::Database(format!("could not configure the connection: {e}"))
            })?;
            Ok(AnyConnection::Sqlite(conn))
        }
        _ => Err(Failure::Input(format!(
            "this seqgen was built without the `{backend}` feature: \
             cargo install diesel-seqgen-cli --features {backend}"
        ))),
    }
}
