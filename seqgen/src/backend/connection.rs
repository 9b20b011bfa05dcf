//! The connections seqgen works on, as one bound for code generic over the connection.

use diesel::connection::LoadConnection;

use super::Backend;

/// A Diesel connection seqgen works on: any `LoadConnection` whose backend is one of
/// seqgen's ([`Backend`]). Write it in the `where` clause of code generic over the
/// connection; it is implemented for every such connection.
///
/// ```
/// fn first_order<C: diesel_seqgen::IdConnection>(conn: &mut C) -> diesel_seqgen::Result<String> {
///     let orders = diesel_seqgen::Spec::builder("orders").prefix("ORD").date("%y%m").pad(4).build()?;
///     diesel_seqgen::global::next_id(conn, &orders)
/// }
/// # use diesel::Connection;
/// # let mut conn = diesel::SqliteConnection::establish(":memory:")?;
/// # diesel_seqgen::run_migrations(&mut conn)?;
/// assert!(first_order(&mut conn)?.ends_with("0001"));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub trait IdConnection: LoadConnection<Backend: Backend> + 'static {}

impl<C: LoadConnection<Backend: Backend> + 'static> IdConnection for C {}
