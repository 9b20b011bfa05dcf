use diesel_seqgen::DistributedId;

#[derive(DistributedId)]
struct NewUser {
    #[distributed_id(prefix = "U")]
    id: i64,
}

fn main() {}
