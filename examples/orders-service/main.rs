//! An axum service that numbers orders `ORD` + year and month + 4 digits, on SQLite:
//!
//! ```text
//! cargo run --example orders-service --features async-sqlite [-- ADDRESS [DATABASE]]
//! curl -s localhost:3000/orders -H 'content-type: application/json' -d '{"item":"tea","quantity":2}'
//! ```
//!
//! See `seqgen_examples::orders_service`.

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let address = args.next().unwrap_or_else(|| "127.0.0.1:3000".into());
    let database = args.next().unwrap_or_else(|| "orders.db".into());
    let state = std::sync::Arc::new(seqgen_examples::orders_service::setup(&database)?);
    let listener = tokio::net::TcpListener::bind(&address).await?;
    println!("orders service on http://{address}, database {database}");
    let app = seqgen_examples::orders_service::app(state.clone());
    axum::serve(listener, app)
        .with_graceful_shutdown(async {
            let _ = tokio::signal::ctrl_c().await;
        })
        .await?;
    // Stopped cleanly (Ctrl-C): the numbers not handed out go back to their counters.
    let given_back = seqgen_examples::orders_service::release(&state).await?;
    println!("stopped; {given_back} unused numbers given back");
    Ok(())
}
