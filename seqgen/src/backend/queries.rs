//! The statements of the allocator core, written once and stamped into each backend's
//! [`Backend`](super::Backend) impl and, with an `async-*` feature, its
//! [`AsyncBackend`](super::AsyncBackend) impl.

/// The statements of the allocator core, written once and stamped into each backend's
/// [`Backend`] impl (`sync`: Diesel's `RunQueryDsl` in scope) and, with an `async-*` feature,
/// its [`AsyncBackend`] impl (`async`: diesel-async's). A statement's run is written
/// `query.run(conn) $(.$aw)*`: `.await` in the async stamp, nothing in the sync one. Diesel's
/// queries are concrete per backend, so they are stamped per `impl` rather than written once
/// generically.
macro_rules! core_queries {
    (sync $(, $lock:ident)?) => {
        $crate::backend::core_queries!(@ [] [] [diesel::connection::LoadConnection]
            [$crate::backend::Backend] $(, $lock)?);
    };
    (async $(, $lock:ident)?) => {
        $crate::backend::core_queries!(@ [async] [await] [diesel_async::AsyncConnection]
            [$crate::backend::AsyncBackend] $(, $lock)?);
    };
    (@ [$($kw:tt)*] [$($aw:tt)*] [$($conn:tt)*] [$($this:tt)*] $(, $lock:ident)?) => {
        $($kw)* fn give_back<C>(
            conn: &mut C,
            counter: $crate::backend::Counter<'_>,
            held_end: i64,
            value: i64,
        ) -> QueryResult<bool>
        where
            C: $($conn)*<Backend = Self>,
        {
            use $crate::backend::schema::db_key;
            diesel::update(db_key::table.find((counter.key, counter.scope, counter.period)))
                .filter(db_key::current_value.eq(held_end))
                // The database refuses a lowering that does not name what it lowers from.
                .set((db_key::current_value.eq(value), db_key::lowered_from.eq(held_end)))
                .execute(conn) $(.$aw)*
                .map(|changed| changed == 1)
        }

        $($kw)* fn create_token<C>(conn: &mut C, token: i64) -> QueryResult<()>
        where
            C: $($conn)*<Backend = Self>,
        {
            use $crate::backend::statement::{CreateToken, Statement};
            Statement::<CreateToken>::new($crate::backend::Counter::TOKEN, token)
                .execute(conn) $(.$aw)*
                .map(drop)
        }

        $($kw)* fn read<C>(conn: &mut C, counter: $crate::backend::Counter<'_>) -> QueryResult<Option<i64>>
        where
            C: $($conn)*<Backend = Self>,
        {
            use $crate::backend::schema::db_key;
            db_key::table
                .find((counter.key, counter.scope, counter.period))
                .select(db_key::current_value)
                .first(conn) $(.$aw)*
                .optional()
        }

        $($kw)* fn identify<C>(conn: &mut C, key: &str) -> QueryResult<$crate::backend::Found>
        where
            C: $($conn)*<Backend = Self>,
        {
            use $crate::backend::statement::{Identify, Statement};
            type Row = (
                String,
                String,
                Option<String>,
                Option<String>,
                Option<i64>,
                Option<i64>,
                Option<String>,
            );
            let rows: Vec<Row> =
                Statement::<Identify>::new($crate::backend::Counter::key_row(key), 0)
                    .load(conn) $(.$aw)* ?;
            // `iter().next()`: diesel-async's `RunQueryDsl::first` would shadow the slice's.
            let first = rows.iter().next().ok_or(diesel::result::Error::NotFound)?;
            let row = |name: &str| rows.iter().find(|r| r.3.as_deref() == Some(name));
            Ok($crate::backend::Found {
                fingerprint: <Self as $crate::backend::Backend>::complete_fingerprint(
                    first.0.clone(),
                ),
                durability: first.1.clone(),
                timeline: $crate::backend::timeline(first.2.as_deref()),
                token: row("").and_then(|r| r.4),
                batch: row(key).and_then(|r| r.5),
                shape: row(key).and_then(|r| r.6.clone()),
            })
        }

        $($kw)* fn claim_shape<C>(
            conn: &mut C,
            key_row: $crate::backend::Counter<'_>,
            shape: &str,
        ) -> QueryResult<Option<String>>
        where
            C: $($conn)*<Backend = Self>,
        {
            use $crate::backend::schema::db_key;
            <Self as $($this)*>::create_row(conn, key_row) $(.$aw)* ?;
            let row = db_key::table.find((key_row.key, "", ""));
            if key_row.start != 1 {
                // The spec's start, for the tools that read the table (`seqgen gaps`, `peek`),
                // with its shape: at the key's first use, unless an operator set one.
                diesel::update(row)
                    .filter(db_key::shape.is_null())
                    .filter(db_key::start_value.is_null())
                    .set(db_key::start_value.eq(key_row.start))
                    .execute(conn) $(.$aw)* ?;
            }
            diesel::update(row)
                .filter(db_key::shape.is_null())
                .set(db_key::shape.eq(shape))
                .execute(conn) $(.$aw)* ?;
            <Self as $($this)*>::read_shape(conn, key_row.key) $(.$aw)*
        }

        $($kw)* fn read_shape<C>(conn: &mut C, key: &str) -> QueryResult<Option<String>>
        where
            C: $($conn)*<Backend = Self>,
        {
            use $crate::backend::schema::db_key;
            db_key::table
                .find((key, "", ""))
                .select(db_key::shape)
                $(.$lock())?
                .first::<Option<String>>(conn) $(.$aw)*
                .optional()
                .map(Option::flatten)
        }
    };
}

/// The reservation of the backends with `RETURNING` (SQLite, PostgreSQL): one
/// [`UpsertReturning`](statement::UpsertReturning), refused (no row) past the limit; and
/// their creation of a missing row, one [`CreateRow`](statement::CreateRow) (MySQL's is in
/// `mysql.rs`: InnoDB's locks need another form).
#[cfg(any(feature = "sqlite", seqgen_pg))]
macro_rules! upsert_reserve {
    (sync) => {
        $crate::backend::upsert_reserve!(@ [] [] [diesel::connection::LoadConnection]);
    };
    (async) => {
        $crate::backend::upsert_reserve!(@ [async] [await] [diesel_async::AsyncConnection]);
    };
    (@ [$($kw:tt)*] [$($aw:tt)*] [$($conn:tt)*]) => {
        $($kw)* fn reserve<C>(
            conn: &mut C,
            counter: $crate::backend::Counter<'_>,
            count: i64,
            limit: i64,
            in_transaction: bool,
        ) -> QueryResult<Option<i64>>
        where
            C: $($conn)*<Backend = Self>,
        {
            use $crate::backend::statement::{Statement, UpsertReturning, UpsertReturningInTransaction};
            match in_transaction {
                false => Statement::<UpsertReturning>::new(counter, count)
                    .limited(limit)
                    .get_result(conn) $(.$aw)*,
                true => Statement::<UpsertReturningInTransaction>::new(counter, count)
                    .limited(limit)
                    .get_result(conn) $(.$aw)*,
            }
            .optional()
        }

        $($kw)* fn create_row<C>(conn: &mut C, counter: $crate::backend::Counter<'_>) -> QueryResult<()>
        where
            C: $($conn)*<Backend = Self>,
        {
            use $crate::backend::statement::{CreateRow, Statement};
            Statement::<CreateRow>::new(counter, 0)
                .execute(conn) $(.$aw)*
                .map(drop)
        }
    };
}
pub(crate) use core_queries;
#[cfg(any(feature = "sqlite", seqgen_pg))]
pub(crate) use upsert_reserve;
