use diesel_seqgen::DistributedId;

#[derive(DistributedId)]
enum Status {
    Active,
}

#[derive(DistributedId)]
union Bits {
    a: u32,
}

#[derive(DistributedId)]
struct Pair(String, String);

fn main() {}
