//! The orders service over real HTTP: 40 orders posted at once get 40 distinct consecutive
//! numbers of this month, each can be read back, and bad input is refused with nothing lost.
#![cfg(feature = "async-sqlite")]

use std::collections::BTreeSet;

use std::sync::Arc;

use seqgen_examples::orders_service::{app, release, setup};

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn orders_get_distinct_consecutive_numbers() {
    let dir = tempfile::tempdir().unwrap();
    let database = dir.path().join("orders.db").display().to_string();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let state = Arc::new(setup(&database).unwrap());
    let service = app(state.clone());
    let server = tokio::spawn(async move { axum::serve(listener, service).await });
    let client = reqwest::Client::new();

    let posts: Vec<_> = (0..40)
        .map(|i| {
            let (client, base) = (client.clone(), base.clone());
            tokio::spawn(async move {
                let response = client
                    .post(format!("{base}/orders"))
                    .json(&serde_json::json!({"item": format!("item {i}"), "quantity": 1 + i % 3}))
                    .send()
                    .await
                    .unwrap();
                assert_eq!(response.status(), 201);
                response.json::<serde_json::Value>().await.unwrap()
            })
        })
        .collect();
    let mut numbers = BTreeSet::new();
    let month = chrono::Utc::now().format("%y%m").to_string();
    for post in posts {
        let order = post.await.unwrap();
        let number = order["order_no"].as_str().unwrap().to_owned();
        assert!(number.starts_with(&format!("ORD{month}")), "{number}");
        let read = client
            .get(format!("{base}/orders/{number}"))
            .send()
            .await
            .unwrap();
        assert_eq!(read.status(), 200);
        assert_eq!(read.json::<serde_json::Value>().await.unwrap(), order);
        numbers.insert(number[7..].parse::<u32>().unwrap());
    }
    assert_eq!(
        numbers,
        (1..=40).collect(),
        "one block of 50 serves them all, in order"
    );

    let refused = client
        .post(format!("{base}/orders"))
        .json(&serde_json::json!({"item": "", "quantity": 0}))
        .send()
        .await
        .unwrap();
    assert_eq!(refused.status(), 422);
    let missing = client
        .get(format!("{base}/orders/ORD00000000"))
        .send()
        .await
        .unwrap();
    assert_eq!(missing.status(), 404);
    // The refused order took no number: the next one is 41.
    let next = client
        .post(format!("{base}/orders"))
        .json(&serde_json::json!({"item": "tea", "quantity": 2}))
        .send()
        .await
        .unwrap()
        .json::<serde_json::Value>()
        .await
        .unwrap();
    assert!(
        next["order_no"].as_str().unwrap().ends_with("0041"),
        "{next}"
    );
    server.abort();

    // A clean shutdown gives the other 9 numbers of the block back: the service started again
    // on the same database numbers its next order 42, not 51.
    assert_eq!(release(&state).await.unwrap(), 9);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let restarted = app(Arc::new(setup(&database).unwrap()));
    let server = tokio::spawn(async move { axum::serve(listener, restarted).await });
    let after_restart = client
        .post(format!("{base}/orders"))
        .json(&serde_json::json!({"item": "jam", "quantity": 1}))
        .send()
        .await
        .unwrap()
        .json::<serde_json::Value>()
        .await
        .unwrap();
    assert!(
        after_restart["order_no"]
            .as_str()
            .unwrap()
            .ends_with("0042"),
        "{after_restart}"
    );
    server.abort();
}
