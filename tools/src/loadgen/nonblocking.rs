//! `--async`: the same load as `--threads` tasks on a multi-threaded Tokio runtime, each ID
//! on a diesel-async connection from a deadpool pool, through `diesel_seqgen::nonblocking`. One generator
//! per process, given the pool (reservations beside the inserting transactions, and ahead on
//! a task), as an async app would hold it.

use std::ops::DerefMut;

use diesel::result::Error as DieselError;
use diesel::ExpressionMethods;
use diesel_async::pooled_connection::deadpool::Pool as DeadPool;
use diesel_async::pooled_connection::{
    AsyncDieselConnectionManager, ManagerConfig, RecyclingMethod,
};
use diesel_async::AsyncConnection;
use diesel_seqgen::nonblocking as sq;

use super::rows::{loadgen_pending, loadgen_rows, Rows};
use super::worker::row_key;
use super::*;

/// A diesel-async connection loadgen runs on, beside the blocking one that sets the database
/// up (migrations and `loadgen_rows`).
pub(super) trait AsyncLoadgen:
    AsyncConnection<Backend: diesel_seqgen::backend::AsyncBackend> + 'static
{
    /// The blocking connection of the same backend.
    type Blocking: LoadgenConnection;
    /// diesel-async's deadpool pool of this connection.
    type Pool: sq::AsyncPool + Clone + Send + Sync;
    /// A connection checked out of the pool.
    type Pooled: DerefMut<Target = Self>
        + AsyncConnection<Backend = <Self as diesel_async::AsyncConnectionCore>::Backend>
        + Send;
    /// A pool of `size` connections to `url`.
    fn pool(url: &str, size: usize) -> Result<Self::Pool, BoxError>;
    /// A connection from `pool`.
    fn get(
        pool: &Self::Pool,
    ) -> impl std::future::Future<Output = Result<Self::Pooled, BoxError>> + Send;
    /// Inserts one row into `loadgen_rows` (Diesel's insert is concrete per backend).
    fn insert_row(
        &mut self,
        key: &str,
        id: &str,
    ) -> impl std::future::Future<Output = Result<usize, DieselError>> + Send;
    /// Inserts `rows` with `diesel_seqgen::nonblocking::insert_into` on this connection, from
    /// `generator` or, without one, the default generator.
    fn insert_into<'a>(
        &'a mut self,
        rows: &'a mut Rows,
        generator: Option<&'a sq::Generator>,
    ) -> impl std::future::Future<Output = diesel_seqgen::Result<usize>> + Send + 'a;
    /// The same on the pooled connection itself (`&mut pooled`), from the default generator.
    fn insert_into_pooled<'a>(
        pooled: &'a mut Self::Pooled,
        rows: &'a mut Rows,
    ) -> impl std::future::Future<Output = diesel_seqgen::Result<usize>> + Send + 'a;
}

macro_rules! async_loadgen {
    ($($feature:literal: $conn:ty, $blocking:ty, $setup:expr;)*) => {$(
        #[cfg(feature = $feature)]
        impl AsyncLoadgen for $conn {
            type Blocking = $blocking;
            type Pool = DeadPool<$conn>;
            type Pooled = diesel_async::pooled_connection::deadpool::Object<$conn>;

            fn pool(url: &str, size: usize) -> Result<Self::Pool, BoxError> {
                let mut config = ManagerConfig::default();
                // No test query at every checkout (diesel-async's default): a busy service's
                // choice, and what lets the run measure seqgen rather than pings.
                config.recycling_method = RecyclingMethod::Fast;
                if let Some(setup) = $setup {
                    config.custom_setup = setup;
                }
                let manager = AsyncDieselConnectionManager::new_with_config(url, config);
                Ok(DeadPool::builder(manager).max_size(size).build()?)
            }

            async fn get(pool: &Self::Pool) -> Result<Self::Pooled, BoxError> {
                Ok(pool.get().await?)
            }

            async fn insert_row(&mut self, key: &str, id: &str) -> Result<usize, DieselError> {
                let insert = diesel::insert_into(loadgen_rows::table)
                    .values((loadgen_rows::key_name.eq(key), loadgen_rows::id.eq(id)));
                diesel_async::RunQueryDsl::execute(insert, self).await
            }

            // One row per statement: diesel-async inserts no bulk on SQLite.
            async fn insert_into<'a>(
                &'a mut self,
                rows: &'a mut Rows,
                generator: Option<&'a sq::Generator>,
            ) -> diesel_seqgen::Result<usize> {
                let table = loadgen_rows::table;
                let mut inserted = 0;
                match rows {
                    Rows::Batched(rows) => for row in rows {
                        let insert = sq::insert_into(table).values(row);
                        inserted += match generator {
                            Some(g) => insert.with_generator(g).execute(self).await?,
                            None => insert.execute(self).await?,
                        };
                    },
                    Rows::Gapless(rows) => for row in rows {
                        let insert = sq::insert_into(table).values(row);
                        inserted += match generator {
                            Some(g) => insert.with_generator(g).execute(self).await?,
                            None => insert.execute(self).await?,
                        };
                    },
                    Rows::Deferred(rows) => for row in rows {
                        let insert = sq::insert_into(loadgen_pending::table).values(row);
                        inserted += match generator {
                            Some(g) => insert.with_generator(g).execute(self).await?,
                            None => insert.execute(self).await?,
                        };
                    },
                }
                Ok(inserted)
            }

            async fn insert_into_pooled<'a>(
                pooled: &'a mut Self::Pooled,
                rows: &'a mut Rows,
            ) -> diesel_seqgen::Result<usize> {
                let table = loadgen_rows::table;
                let mut inserted = 0;
                match rows {
                    Rows::Batched(rows) => for row in rows {
                        inserted += sq::insert_into(table).values(row).execute(pooled).await?;
                    },
                    Rows::Gapless(rows) => for row in rows {
                        inserted += sq::insert_into(table).values(row).execute(pooled).await?;
                    },
                    Rows::Deferred(rows) => for row in rows {
                        inserted += sq::insert_into(loadgen_pending::table)
                            .values(row)
                            .execute(pooled)
                            .await?;
                    },
                }
                Ok(inserted)
            }
        }
    )*};
}

#[cfg(feature = "async-sqlite")]
type AsyncSqlite =
    diesel_async::sync_connection_wrapper::SyncConnectionWrapper<diesel::SqliteConnection>;

/// How the pool opens a connection, where diesel-async's default will not do: SQLite needs
/// seqgen's busy timeout and WAL on every connection.
type Setup<C> = Option<diesel_async::pooled_connection::SetupCallback<C>>;

/// seqgen's SQLite setup, with a longer busy timeout: every task of every process queues on
/// the one writer, and SQLite's busy wait is not first come first served, so on a loaded
/// machine a transaction could wait past the recommended 5 s and fail with "database is
/// locked" (seen in CI with 4 processes × 32 tasks).
#[cfg(feature = "async-sqlite")]
fn sqlite_setup() -> Setup<AsyncSqlite> {
    Some(Box::new(|url: &str| {
        let url = url.to_owned();
        Box::pin(async move {
            let mut conn = diesel_seqgen::sqlite::establish_async(&url).await?;
            diesel_async::SimpleAsyncConnection::batch_execute(
                &mut conn,
                "PRAGMA busy_timeout = 60000",
            )
            .await
            .map_err(diesel::ConnectionError::CouldntSetupConfiguration)?;
            Ok(conn)
        })
    }))
}

async_loadgen! {
    "async-sqlite": AsyncSqlite, diesel::SqliteConnection, sqlite_setup();
    "async-postgres": diesel_async::AsyncPgConnection, diesel::PgConnection,
        None::<diesel_async::pooled_connection::SetupCallback<_>>;
    "async-mysql": diesel_async::AsyncMysqlConnection, diesel::MysqlConnection,
        None::<diesel_async::pooled_connection::SetupCallback<_>>;
}

/// Runs the load on a new runtime against the database the URL names.
pub(super) fn run(args: &Args) -> Result<Report, BoxError> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    let url = args.url.as_str();
    if url.starts_with("postgres://") || url.starts_with("postgresql://") {
        #[cfg(feature = "async-postgres")]
        return runtime.block_on(run_on::<diesel_async::AsyncPgConnection>(args, "postgres"));
        #[cfg(not(feature = "async-postgres"))]
        return Err("built without async PostgreSQL: add --features async-postgres".into());
    }
    if url.starts_with("mysql://") {
        #[cfg(feature = "async-mysql")]
        return runtime.block_on(run_on::<diesel_async::AsyncMysqlConnection>(args, "mysql"));
        #[cfg(not(feature = "async-mysql"))]
        return Err("built without async MySQL: add --features async-mysql".into());
    }
    #[cfg(feature = "async-sqlite")]
    return runtime.block_on(run_on::<AsyncSqlite>(args, "sqlite"));
    #[cfg(not(feature = "async-sqlite"))]
    Err("built without async SQLite: add --features async-sqlite".into())
}

async fn run_on<C: AsyncLoadgen>(args: &Args, backend: &'static str) -> Result<Report, BoxError> {
    let url = args.url.strip_prefix("sqlite://").unwrap_or(&args.url);
    {
        let mut conn = <C::Blocking as diesel::Connection>::establish(url)?;
        C::Blocking::setup(&mut conn)?;
        diesel_seqgen::run_migrations(&mut conn)?;
        if args.insert {
            create_rows_table(&mut conn)?;
        }
    }
    let pool = C::pool(url, args.connections as usize)?;
    // The generator's own pool: were it the tasks' pool, tasks holding all its connections in
    // transactions would wait for one more to reserve beside them, forever.
    let reserving = C::pool(url, 2)?;
    let spec = Arc::new(spec_of(args)?);
    let generator = if args.via == Via::InsertInto && args.form != Form::Own {
        // The default generator, given the pool as the README starts an app.
        sq::use_pool(reserving).await?;
        if args.accept_non_durable_server {
            diesel_seqgen::global::accept_non_durable_server();
        }
        sq::Generator::from(generator_of(args).build())
    } else {
        sq::Generator::from(generator_of(args).async_pool(reserving).build())
    };

    let started = Instant::now();
    let quota = Arc::new(Quota::new(args, started));
    let tasks: Vec<_> = (0..args.threads)
        .map(|_| {
            let (pool, spec, generator, args) =
                (pool.clone(), spec.clone(), generator.clone(), args.clone());
            let (quota, url) = (quota.clone(), url.to_owned());
            tokio::spawn(async move {
                let mut out = open_out(&args)?;
                let mut done = Worker::default();
                loop {
                    if !quota.more() {
                        return Ok::<_, BoxError>(done);
                    }
                    let scope = random_scope(&args);
                    let t0 = Instant::now();
                    let roll_back = args.insert && rand::random_bool(args.rollback);
                    // As a request handler would: a connection from the pool per ID.
                    let mut conn = C::get(&pool).await?;
                    let result = match args.via {
                        Via::InsertInto => {
                            insert_through::<C>(&mut conn, &url, &generator, &args, roll_back).await
                        }
                        Via::NextId if args.insert => {
                            insert_one(&mut *conn, &generator, &spec, &scope, roll_back)
                                .await
                                .map(|id| id.into_iter().collect())
                        }
                        Via::NextId => generator
                            .next_id(&mut *conn, spec.scope(&scope))
                            .await
                            .map(|id| vec![id])
                            .map_err(BoxError::from),
                    };
                    let ids = match result {
                        Ok(ids) => ids,
                        Err(e) if series_exhausted(&e) => return Ok(done),
                        Err(e) => return Err(e),
                    };
                    done.took(t0.elapsed(), ids, &mut out, &args, &scope)?;
                }
            })
        })
        .collect();
    let mut total = Worker::default();
    for task in tasks {
        total.merge(task.await??);
    }
    let seconds = started.elapsed().as_secs_f64();
    let released = if args.release_on_exit {
        generator.release(&mut *C::get(&pool).await?).await?
    } else {
        0
    };
    Ok(total.report(backend, args, seconds, generator.reservations(), released))
}

/// `--via insert-into`: `--bulk` rows of `--key` through `diesel_seqgen::nonblocking::insert_into` on
/// the form `--form` names (a plain connection is opened for the call); in a transaction of
/// the task's where some are rolled back. Their IDs, or none when rolled back.
async fn insert_through<C: AsyncLoadgen>(
    pooled: &mut C::Pooled,
    url: &str,
    generator: &sq::Generator,
    args: &Args,
    roll_back: bool,
) -> Result<Vec<String>, BoxError> {
    let mut rows = Rows::new(args.mode, &args.key, args.bulk as usize);
    let in_transaction = args.rollback > 0.0;
    let result = match args.form {
        Form::Pooled if in_transaction => {
            pooled
                .transaction(async |conn| {
                    C::insert_into_pooled(conn, &mut rows).await?;
                    rolled_back(roll_back)
                })
                .await
        }
        Form::Pooled => C::insert_into_pooled(pooled, &mut rows).await.map(drop),
        Form::Plain => {
            let mut conn = C::establish(url).await?;
            inserted(&mut conn, &mut rows, None, in_transaction, roll_back).await
        }
        Form::Deref => inserted(&mut **pooled, &mut rows, None, in_transaction, roll_back).await,
        Form::Own => {
            let own = Some(generator);
            inserted(&mut **pooled, &mut rows, own, in_transaction, roll_back).await
        }
    };
    match result {
        Ok(()) => Ok(rows.ids()),
        Err(diesel_seqgen::Error::Database(DieselError::RollbackTransaction)) => Ok(Vec::new()),
        Err(e) => Err(e.into()),
    }
}

/// `rows` inserted on `conn`, alone or in a transaction of the task's.
async fn inserted<C: AsyncLoadgen>(
    conn: &mut C,
    rows: &mut Rows,
    generator: Option<&sq::Generator>,
    in_transaction: bool,
    roll_back: bool,
) -> diesel_seqgen::Result<()> {
    if !in_transaction {
        return conn.insert_into(rows, generator).await.map(drop);
    }
    conn.transaction(async |conn| {
        conn.insert_into(rows, generator).await?;
        rolled_back(roll_back)
    })
    .await
}

/// The end of a transaction that is rolled back with `roll_back`.
fn rolled_back(roll_back: bool) -> diesel_seqgen::Result<()> {
    if roll_back {
        return Err(diesel_seqgen::Error::Database(
            DieselError::RollbackTransaction,
        ));
    }
    Ok(())
}

/// Takes an ID of `scope` (`""` unscoped) and inserts it in one transaction; `None` when it
/// was rolled back.
async fn insert_one<C: AsyncLoadgen>(
    conn: &mut C,
    generator: &sq::Generator,
    spec: &Spec,
    scope: &str,
    roll_back: bool,
) -> Result<Option<String>, BoxError> {
    let result = conn
        .transaction(async |conn| {
            let id = generator.next_id(conn, spec.scope(scope)).await?;
            conn.insert_row(&row_key(spec, scope), &id).await?;
            if roll_back {
                return Err(diesel_seqgen::Error::Database(
                    DieselError::RollbackTransaction,
                ));
            }
            Ok(id)
        })
        .await;
    match result {
        Ok(id) => Ok(Some(id)),
        Err(diesel_seqgen::Error::Database(DieselError::RollbackTransaction)) => Ok(None),
        Err(e) => Err(e.into()),
    }
}
