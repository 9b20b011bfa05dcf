use diesel_seqgen::DistributedId;

#[derive(DistributedId)]
struct NewInvoice {
    #[distributed_id(prefix = "INV", date = "FY%Y", fiscal = "04-31")]
    no: String,
    #[distributed_id(key = "credit_notes", date = "%Y%m", fiscal = "04-01")]
    credit_no: String,
}

fn main() {}
