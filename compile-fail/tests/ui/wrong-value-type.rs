use diesel_seqgen::DistributedId;

#[derive(DistributedId)]
struct NewUser {
    #[distributed_id(prefix = 7, pad = "6", batch = true)]
    id: String,
}

fn main() {}
