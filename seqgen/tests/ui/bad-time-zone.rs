use diesel_seqgen::DistributedId;

#[derive(DistributedId)]
struct NewUser {
    #[distributed_id(tz = "Europe/Paris")]
    id: String,
}

fn main() {}
