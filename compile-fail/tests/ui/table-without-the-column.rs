// The ID field's column is not in the table: Diesel's `Insertable` refuses it at the field.
use diesel_seqgen::DistributedId;

diesel::table! {
    users (name) {
        name -> Text,
    }
}

#[derive(diesel::Insertable, DistributedId)]
#[diesel(table_name = users)]
struct NewUser {
    #[distributed_id(prefix = "U", date = "", pad = 6)]
    id: String,
    name: String,
}

fn main() {}
