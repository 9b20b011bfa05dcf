//! Each core statement declared once (`core_statements!`), and the macros that expand that one
//! list into the blocking and async backend traits and the driver that runs either.

/// The statements the allocator core runs, each declared once here: `$then!` receives every
/// one's documentation, name, arguments and result, and declares it as a method of
/// [`Backend`] (`blocking_statements`), of [`AsyncBackend`] (`async_statements`), or of the
/// [`Driver`](crate::driver::Driver) the core runs them through (in `driver.rs`). A default
/// (`= …`) is what a backend without such a statement returns. Their bodies are written once
/// too, for both kinds of connection (`queries.rs`).
macro_rules! core_statements {
    ($then:ident) => {
        $crate::backend::$then! {
            /// Adds `count` to `counter`, creating its row if it is missing, in one atomic step,
            /// and returns the new value: the numbers `new - count + 1 ..= new` are the
            /// caller's. A new row starts at its key row's `start_value` (see
            /// [`Counter::key_row`]); a counter behind its own `start_value` jumps to it. Numbers
            /// only ever move forward. When the counter is past `limit` (the largest value it
            /// may have for `count` more to fit), nothing changes and `None` comes back. Inside
            /// the caller's transaction (`in_transaction`), on a backend with timelines
            /// (PostgreSQL), also when seqgen has not checked this session's timeline
            /// ([`mark_timeline`](Backend::mark_timeline)).
            fn reserve(counter: Counter<'_>, count: i64, limit: i64, in_transaction: bool) -> Option<i64>;
            /// `identify` and `reserve` in fewer round trips than the two: one statement on
            /// PostgreSQL; two on MySQL for an undated, unscoped key whose row records the
            /// request's shape and gives the batch it expects. `Ok(None)` with nothing reserved
            /// otherwise (nothing sent on SQLite): the caller then runs the two. See
            /// [`Identified`].
            fn reserve_identified(request: &Request<'_>) -> Option<Identified> = Ok(None);
            /// Reads `counter` without locking it; `None` if the row is missing.
            #[cfg_attr(not(seqgen_pool), allow(dead_code))] // for the pools' own work
            fn read(counter: Counter<'_>) -> Option<i64>;
            /// Creates the row of `counter` unless it exists, at the key row's
            /// `start_value - 1` (0 without one).
            #[cfg_attr(not(seqgen_pool), allow(dead_code))]
            fn create_row(counter: Counter<'_>) -> ();
            /// In one query, what a reservation needs to know first: see [`Found`].
            fn identify(key: &str) -> Found;
            /// Stores `token` as this database's token, unless it has one.
            fn create_token(token: i64) -> ();
            /// Marks the session as reaching the database `marker` names, for the inserts that
            /// check it themselves (`asserted.rs`). Session-wide: PostgreSQL's
            /// `set_config(.., false)` (undone by a rollback, which fails closed), MySQL's user
            /// variable. Nothing where telling the database apart costs no round trip (SQLite).
            fn mark_session(marker: &str) -> () = Ok(());
            /// Records on the session the `timeline` (as
            /// [`Timeline`](crate::backend::dialect::Timeline) prints it) seqgen checked it on;
            /// undone by a rollback, which fails closed: the next reservation checks again.
            /// Nothing without [timelines](Backend::TIMELINES).
            fn mark_timeline(timeline: &str) -> () = Ok(());
            /// Records `shape` on the key's row `key_row` (scope and period ''), creating the row
            /// if it is missing, unless a shape is recorded there already, and with it the
            /// row's [start](Counter::start) as its `start_value` where none is set and the
            /// start is not 1; returns the shape recorded afterwards.
            fn claim_shape(key_row: Counter<'_>, shape: &str) -> Option<String>;
            /// The shape recorded on the key's row, as last committed (not as a transaction's
            /// snapshot saw it: MySQL reads it with a lock); `None` without a row or a shape.
            fn read_shape(key: &str) -> Option<String>;
            /// Whether this server's commits wait for a standby while standbys are connected
            /// (PostgreSQL: `pg_stat_replication` and `synchronous_standby_names`): a failover
            /// can lose the last commits of one that does not.
            fn replication() -> $crate::backend::Replication =
                Ok($crate::backend::Replication::Waited);
            /// Sets `counter` back to `value` if it is still `held_end`, the end of a block this
            /// instance reserved last: whether it was.
            fn give_back(counter: Counter<'_>, held_end: i64, value: i64) -> bool;
        }
    };
}
pub(crate) use core_statements;

/// Declares the [`core_statements`] as methods of [`Backend`], on Diesel's connections: each
/// declared (`@one`), or with its default.
macro_rules! blocking_statements {
    (@one $(#[$attr:meta])* $name:ident($($arg:ident: $ty:ty),*) $out:ty) => {
        $(#[$attr])*
        #[doc(hidden)]
        fn $name<C>(conn: &mut C, $($arg: $ty),*) -> QueryResult<$out>
        where
            C: LoadConnection<Backend = Self>;
    };
    (@one $(#[$attr:meta])* $name:ident($($arg:ident: $ty:ty),*) $out:ty = $default:expr) => {
        $(#[$attr])*
        #[doc(hidden)]
        fn $name<C>(conn: &mut C, $($arg: $ty),*) -> QueryResult<$out>
        where
            C: LoadConnection<Backend = Self>,
        {
            let _ = (conn, $($arg),*);
            $default
        }
    };
    ($($(#[$attr:meta])* fn $name:ident($($arg:ident: $ty:ty),*) -> $out:ty $(= $default:expr)?;)*) => {$(
        $crate::backend::blocking_statements!(@one $(#[$attr])* $name($($arg: $ty),*) $out $(= $default)?);
    )*};
}
pub(crate) use blocking_statements;

/// Declares the [`core_statements`] as methods of [`AsyncBackend`], on diesel-async's
/// connections: each declared (`@one`), or with its default.
#[cfg(seqgen_async)]
macro_rules! async_statements {
    (@one $(#[$attr:meta])* $name:ident($($arg:ident: $ty:ty),*) $out:ty) => {
        $(#[$attr])*
        fn $name<C>(conn: &mut C, $($arg: $ty),*) -> impl Future<Output = QueryResult<$out>> + Send
        where
            C: AsyncConnection<Backend = Self>;
    };
    (@one $(#[$attr:meta])* $name:ident($($arg:ident: $ty:ty),*) $out:ty = $default:expr) => {
        $(#[$attr])*
        fn $name<C>(conn: &mut C, $($arg: $ty),*) -> impl Future<Output = QueryResult<$out>> + Send
        where
            C: AsyncConnection<Backend = Self>,
        {
            let _ = (conn, $($arg),*);
            async { $default }
        }
    };
    ($($(#[$attr:meta])* fn $name:ident($($arg:ident: $ty:ty),*) -> $out:ty $(= $default:expr)?;)*) => {$(
        $crate::backend::async_statements!(@one $(#[$attr])* $name($($arg: $ty),*) $out $(= $default)?);
    )*};
}
#[cfg(seqgen_async)]
pub(crate) use async_statements;

/// Declares the [`core_statements`] as methods of the [`Driver`](crate::driver::Driver).
macro_rules! driver_statements {
    ($($(#[$attr:meta])* fn $name:ident($($arg:ident: $ty:ty),*) -> $out:ty $(= $default:expr)?;)*) => {$(
        #[doc = concat!("[`Backend::", stringify!($name), "`](crate::backend::Backend::", stringify!($name), ").")]
        $(#[$attr])*
        async fn $name(&mut self, $($arg: $ty),*) -> QueryResult<$out>;
    )*};
}
pub(crate) use driver_statements;

/// The [`core_statements`] on the blocking driver: the backend's, at once.
macro_rules! blocking_driver {
    ($($(#[$attr:meta])* fn $name:ident($($arg:ident: $ty:ty),*) -> $out:ty $(= $default:expr)?;)*) => {$(
        async fn $name(&mut self, $($arg: $ty),*) -> QueryResult<$out> {
            <C::Backend as $crate::backend::Backend>::$name(self.0, $($arg),*)
        }
    )*};
}
pub(crate) use blocking_driver;

/// The [`core_statements`] on the async driver: the backend's, awaited.
#[cfg(seqgen_async)]
macro_rules! nonblocking_driver {
    ($($(#[$attr:meta])* fn $name:ident($($arg:ident: $ty:ty),*) -> $out:ty $(= $default:expr)?;)*) => {$(
        async fn $name(&mut self, $($arg: $ty),*) -> QueryResult<$out> {
            <C::Backend as $crate::backend::AsyncBackend>::$name(self.0, $($arg),*).await
        }
    )*};
}
#[cfg(seqgen_async)]
pub(crate) use nonblocking_driver;
