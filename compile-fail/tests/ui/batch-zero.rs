use diesel_seqgen::DistributedId;

#[derive(DistributedId)]
struct NewUser {
    #[distributed_id(batch = 0)]
    id: String,
}

fn main() {}
