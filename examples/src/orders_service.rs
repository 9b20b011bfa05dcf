//! A small axum service that creates orders numbered `ORD` + year and month + 4 digits
//! (`ORD26110001`), from a pool of diesel-async connections, through `diesel_seqgen::nonblocking`. On
//! SQLite here (`async-sqlite`); the handlers would read the same on PostgreSQL or MySQL.
//!
//! - `POST /orders` with `{"item": "tea", "quantity": 2}` → `201` and the order, numbered.
//! - `GET /orders/{order_no}` → the order, or `404`.
//!
//! Run it with `cargo run --example orders-service --features async-sqlite`.

use std::sync::Arc;

use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::routing::{get, post};
use axum::{Json, Router};
use diesel::connection::SimpleConnection;
use diesel::{Connection as _, Insertable, OptionalExtension, QueryDsl, Queryable, Selectable};
use diesel::{SelectableHelper, SqliteConnection};
use diesel_async::pooled_connection::deadpool::Pool;
use diesel_async::pooled_connection::{AsyncDieselConnectionManager, ManagerConfig};
use diesel_async::sync_connection_wrapper::SyncConnectionWrapper;
use diesel_seqgen::nonblocking as seqgen_async;
use diesel_seqgen::DistributedId;

type Connection = SyncConnectionWrapper<SqliteConnection>;

diesel::table! {
    orders (order_no) {
        order_no -> Text,
        item -> Text,
        quantity -> Integer,
    }
}

/// An order as the API takes it.
#[derive(Debug, serde::Deserialize)]
pub struct OrderRequest {
    /// What is ordered.
    pub item: String,
    /// How many.
    pub quantity: i32,
}

/// An order as stored and returned.
#[derive(Debug, Clone, Insertable, Queryable, Selectable, DistributedId, serde::Serialize)]
#[diesel(table_name = orders)]
pub struct Order {
    /// `ORD` + `%y%m` + 4 digits, restarting at 0001 every month; 50 numbers per reservation.
    #[distributed_id(prefix = "ORD", date = "%y%m", pad = 4, batch = 50)]
    pub order_no: String,
    /// What is ordered.
    pub item: String,
    /// How many.
    pub quantity: i32,
}

/// What the handlers share.
#[derive(Clone)]
pub struct AppState {
    pool: Pool<Connection>,
    /// One generator for the service: its blocks serve every request.
    ids: seqgen_async::Generator,
}

/// A pool of `size` SQLite connections to `path`, each with seqgen's recommended settings.
fn pool(path: &str, size: usize) -> Result<Pool<Connection>, Box<dyn std::error::Error>> {
    let mut config = ManagerConfig::default();
    config.custom_setup = Box::new(diesel_seqgen::sqlite::establish_async);
    let manager = AsyncDieselConnectionManager::new_with_config(path, config);
    Ok(Pool::builder(manager).max_size(size).build()?)
}

/// Sets the database at `path` up (seqgen's migrations and the `orders` table, on a blocking
/// connection as diesel-async advises for migrations) and builds the service's state.
pub fn setup(path: &str) -> Result<AppState, Box<dyn std::error::Error>> {
    let mut conn = SqliteConnection::establish(path)?;
    diesel_seqgen::sqlite::configure(&mut conn)?;
    diesel_seqgen::run_migrations(&mut conn)?;
    conn.batch_execute(
        "CREATE TABLE IF NOT EXISTS orders \
         (order_no TEXT PRIMARY KEY, item TEXT NOT NULL, quantity INTEGER NOT NULL)",
    )?;
    // The generator reserves on a pool of its own: on PostgreSQL and MySQL it reserves there
    // beside the handlers' transactions, and ahead of need.
    let ids = diesel_seqgen::Generator::builder()
        .async_pool(pool(path, 2)?)
        .build();
    Ok(AppState {
        pool: pool(path, 8)?,
        ids: ids.into(),
    })
}

/// The service's routes.
pub fn app(state: Arc<AppState>) -> Router {
    Router::new()
        .route("/orders", post(create_order))
        .route("/orders/{order_no}", get(find_order))
        .with_state(state)
}

/// On a clean shutdown, after the last request: gives the numbers the service still holds back
/// to their counters, so that the next start continues after the last order instead of after
/// the block. Returns how many went back.
pub async fn release(state: &AppState) -> Result<u64, Box<dyn std::error::Error>> {
    let mut conn = state.pool.get().await?;
    Ok(state.ids.release(&mut *conn).await?)
}

/// An error as the API answers it: a status and a message.
type Failure = (StatusCode, String);

fn internal(error: impl std::fmt::Display) -> Failure {
    (StatusCode::INTERNAL_SERVER_ERROR, error.to_string())
}

async fn create_order(
    State(state): State<Arc<AppState>>,
    Json(request): Json<OrderRequest>,
) -> Result<(StatusCode, Json<Order>), Failure> {
    if request.item.trim().is_empty() || request.quantity < 1 {
        return Err((
            StatusCode::UNPROCESSABLE_ENTITY,
            "an order needs an item and a quantity of at least 1".into(),
        ));
    }
    let mut order = Order {
        order_no: String::new(), // filled by seqgen
        item: request.item,
        quantity: request.quantity,
    };
    let mut conn = state.pool.get().await.map_err(internal)?;
    seqgen_async::insert_into(orders::table)
        .values(&mut order)
        .with_generator(&state.ids)
        .execute(&mut *conn)
        .await
        .map_err(internal)?;
    Ok((StatusCode::CREATED, Json(order)))
}

async fn find_order(
    State(state): State<Arc<AppState>>,
    Path(order_no): Path<String>,
) -> Result<Json<Order>, Failure> {
    use diesel_async::RunQueryDsl as _;
    let mut conn = state.pool.get().await.map_err(internal)?;
    let order = orders::table
        .find(&order_no)
        .select(Order::as_select())
        .first(&mut *conn)
        .await
        .optional()
        .map_err(internal)?;
    order
        .map(Json)
        .ok_or((StatusCode::NOT_FOUND, format!("no order {order_no}")))
}
