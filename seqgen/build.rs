// The db_key migrations are embedded with `embed_migrations!`: rebuild when their SQL changes.
fn main() {
    println!("cargo:rerun-if-changed=../migrations");
}
