use seqgen::DistributedId;

#[derive(DistributedId)]
struct NewUser {
    #[distributed_id(prefix = "U", padding = 6, gapless)]
    id: String,
}

fn main() {}
