// The db_key migrations are embedded with `embed_migrations!`: rebuild when their SQL changes.
fn main() {
    println!("cargo:rerun-if-changed=../migrations");
    // `seqgen_async`: any of the `async-*` features, for the code all three share.
    println!("cargo::rustc-check-cfg=cfg(seqgen_async)");
    let features = ["ASYNC_SQLITE", "ASYNC_POSTGRES", "ASYNC_MYSQL"];
    if features
        .iter()
        .any(|f| std::env::var_os(format!("CARGO_FEATURE_{f}")).is_some())
    {
        println!("cargo::rustc-cfg=seqgen_async");
    }
}
