use diesel_seqgen::DistributedId;

#[derive(DistributedId)]
struct NewLine {
    #[distributed_id(prefix = "L", date = "", step = 0)]
    no: String,
    #[distributed_id(key = "tickets", date = "", series = ["A", "B"], max = 99, step = 10)]
    ticket_no: String,
}

fn main() {}
