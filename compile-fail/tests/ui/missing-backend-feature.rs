// A PostgreSQL app whose diesel-seqgen was built without `postgres` (say, `features = ["bb8"]`
// alone): the first bound on the backend names the features to turn on.
fn main() {
    let _ = diesel_seqgen::migrations::backend_migrations::<diesel::pg::Pg>();
}
