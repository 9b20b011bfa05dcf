// A mistake in the attribute gives its one error, not a cascade where the model is used.
use diesel_seqgen::DistributedId;

#[derive(DistributedId)]
struct NewUser {
    #[distributed_id(pad = 0)]
    id: String,
}

fn fill(conn: &mut diesel::SqliteConnection) -> diesel_seqgen::Result<()> {
    let mut user = NewUser { id: String::new() };
    diesel_seqgen::assign_ids(&mut user, conn)
}

fn main() {
    let _ = fill;
}
