use diesel_seqgen::DistributedId;

#[derive(DistributedId)]
struct NewInvoice {
    company_id: i64,
    #[distributed_id(scope = "compnay_id")]
    number: String,
    #[distributed_id(key = "own", scope = "number")]
    own: String,
    #[distributed_id(key = "twice", scope = "company_id, company_id")]
    twice: String,
    #[distributed_id(key = "empty", scope = "company_id,")]
    empty: String,
}

fn main() {}
