use diesel_seqgen::DistributedId;

#[derive(DistributedId)]
struct NewUser {
    #[distributed_id(pad = 6, pad = 8)]
    id: String,
}

fn main() {}
