// A mistake in the attribute gives its one error, not a cascade where the model is used.
use diesel_seqgen::DistributedId;

#[derive(DistributedId)]
struct NewUser {
    #[distributed_id(pad = 0)]
    id: String,
}

#[allow(dead_code)] // using the model adds no error of its own
fn fill<C: diesel_seqgen::IdConnection>(conn: &mut C) -> diesel_seqgen::Result<()> {
    let mut user = NewUser { id: String::new() };
    diesel_seqgen::assign_ids(conn, &mut user)
}

fn main() {}
