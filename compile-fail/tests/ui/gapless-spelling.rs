use diesel_seqgen::DistributedId;

#[derive(DistributedId)]
struct NewInvoice {
    #[distributed_id(prefix = "INV", mode = "gapless")]
    no: String,
    #[distributed_id(key = "receipts", gapless = true)]
    receipt: String,
    #[distributed_id(key = "credit_notes", nowait)]
    credit_note: String,
    #[distributed_id(key = "refunds", gapless, batch = 10)]
    refund: String,
}

fn main() {}
