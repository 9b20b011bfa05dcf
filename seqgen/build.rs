// The db_key migrations (`migrations/`, beside this file) are embedded with `embed_migrations!`:
// rebuild when their SQL changes. The path is relative to the package root.
fn main() {
    println!("cargo::rerun-if-changed=migrations");
    let on = |features: &[&str]| {
        features
            .iter()
            .any(|f| std::env::var_os(format!("CARGO_FEATURE_{f}")).is_some())
    };
    // Shorthands for the code several features share.
    let async_backend = on(&["ASYNC_SQLITE", "ASYNC_POSTGRES", "ASYNC_MYSQL"]);
    let async_pool = async_backend && on(&["DEADPOOL", "BB8"]);
    let postgres = on(&["POSTGRES", "ASYNC_POSTGRES"]);
    let mysql = on(&["MYSQL", "ASYNC_MYSQL"]);
    let cfgs = [
        // PostgreSQL, blocking or async (diesel's backend with or without libpq)
        ("seqgen_pg", postgres),
        // MySQL / MariaDB, blocking or async
        ("seqgen_mysql", mysql),
        // any `async-*` backend
        ("seqgen_async", async_backend),
        // a pool of async connections, and a backend to use it with
        ("seqgen_async_pool", async_pool),
        // any pool a generator can reserve through
        ("seqgen_pool", async_pool || on(&["R2D2"])),
    ];
    // The model check of the allocator (`SEQGEN_LOOM=1 cargo test … model_check`): set here
    // rather than through RUSTFLAGS, so that only this crate builds anew, not its dependencies.
    println!("cargo::rustc-check-cfg=cfg(seqgen_loom)");
    println!("cargo::rerun-if-env-changed=SEQGEN_LOOM");
    if std::env::var_os("SEQGEN_LOOM").is_some() {
        println!("cargo::rustc-cfg=seqgen_loom");
    }
    for (cfg, set) in cfgs {
        println!("cargo::rustc-check-cfg=cfg({cfg})");
        if set {
            println!("cargo::rustc-cfg={cfg}");
        }
    }
}
