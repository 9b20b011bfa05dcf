use diesel_seqgen::DistributedId;

#[derive(DistributedId)]
struct NewUser {
    #[distributed_id(prefix = "U", padding = 6, strict)]
    id: String,
}

fn main() {}
