use diesel_seqgen::DistributedId;

#[derive(DistributedId)]
struct NewUser {
    #[distributed_id(prefix, pad = 6)]
    id: String,
}

fn main() {}
