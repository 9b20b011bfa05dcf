//! What the tests that start servers of their own share (`servers.rs`: PostgreSQL and
//! pgbouncer; `galera_cluster.rs`, also used by `tools/tests/galera_faults.rs`): free
//! ports, whether we run as root, and how a missing server binary skips a test.

/// A port nobody listens on now.
pub fn free_port() -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.local_addr().unwrap().port()
}

/// Whether this process runs as root: servers then run as their own user, since PostgreSQL
/// and pgbouncer refuse root and MariaDB wants to be told.
pub fn as_root() -> bool {
    std::process::Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|out| out.stdout.trim_ascii() == b"0")
}

/// Says that `test` is skipped because `what` is not installed; under `CI=true`, where every
/// server the tests need is installed, that fails the test instead.
pub fn skip(test: &str, what: &str) {
    let line = format!("skipping {test}: {what} not installed");
    assert!(
        std::env::var("CI").as_deref() != Ok("true"),
        "{line} (under CI=true that is a failure)"
    );
    println!("{line}");
}
