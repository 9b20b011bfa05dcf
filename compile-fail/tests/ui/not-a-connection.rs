// The database URL passed where a connection goes: the bound says what to pass.
fn main() {
    let spec = diesel_seqgen::Spec::builder("orders").build().unwrap();
    let mut url = String::from("postgres://localhost/app");
    let _ = diesel_seqgen::global::next_id(&mut url, &spec);
}
