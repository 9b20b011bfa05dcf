use diesel_seqgen::DistributedId;

#[derive(DistributedId)]
struct NewInvoice {
    #[distributed_id(prefix = "INV", date = "", pad = 3, start = 1000)]
    no: String,
    #[distributed_id(key = "credit_notes", date = "", start = 0)]
    credit_no: String,
}

fn main() {}
