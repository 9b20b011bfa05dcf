use diesel_seqgen::DistributedId;

#[derive(DistributedId)]
struct NewOrder {
    // The key itself, where the name of the variable holding it belongs.
    #[distributed_id(obfuscate = "s3cr3t key, do not commit")]
    id: String,
    #[distributed_id(key = "vouchers", obfuscate = 42)]
    code: String,
}

fn main() {}
