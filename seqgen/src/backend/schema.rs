//! The `db_key` table as Diesel sees it (the SQL lives in `migrations/`).

diesel::table! {
    /// seqgen's counters: one row per key, scope and period.
    db_key (key_name, scope, period) {
        /// The counter's name: the table name by default.
        key_name -> Text,
        /// The scope value of a scoped key's counter (a company, an order...); empty for an
        /// unscoped key and for the key's row.
        scope -> Text,
        /// The formatted date part the counter belongs to; empty without a date part.
        period -> Text,
        /// The last number handed out (0 = none yet). Only ever grows.
        current_value -> BigInt,
        /// When the row was created.
        created_at -> Timestamp,
        /// When a number was last reserved.
        updated_at -> Timestamp,
        /// On the key's row (scope and period ''): numbers per reservation, overriding the spec's batch.
        batch_size -> Nullable<BigInt>,
        /// On the key's row (scope and period ''): the first number of a new period.
        start_value -> Nullable<BigInt>,
        /// On the key's row (scope and period ''): the printed form of the key's IDs, recorded at first
        /// use ([`Spec::shape`](crate::Spec::shape)).
        shape -> Nullable<Text>,
        /// The value an `UPDATE` lowers `current_value` from, which it must name: the database
        /// refuses any other lowering (migration 600). NULL at rest.
        lowered_from -> Nullable<BigInt>,
    }
}

diesel::table! {
    /// The void ledger: numbers that were issued and then cancelled, with the reason.
    db_key_void (key_name, scope, period, number) {
        /// The counter's name.
        key_name -> Text,
        /// The counter's scope value; empty for an unscoped key.
        scope -> Text,
        /// The period of the number.
        period -> Text,
        /// The counter value that was voided.
        number -> BigInt,
        /// Why (free text from the caller).
        reason -> Text,
        /// When it was voided.
        voided_at -> Timestamp,
    }
}
