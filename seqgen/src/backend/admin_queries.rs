//! The statements of the admin side (`diesel_seqgen::admin`, the CLI, voids, previews), written once
//! and stamped into each backend's [`Backend`](super::Backend) impl: only the blocking side
//! runs them.

/// The queries of the admin side (`diesel_seqgen::admin`, the CLI, voids, previews), which only the
/// blocking [`Backend`] runs, the same way on every backend.
macro_rules! admin_queries {
    ($($lock:ident)?) => {
        fn void<C>(
            conn: &mut C,
            counter: $crate::backend::Counter<'_>,
            number: i64,
            reason: &str,
        ) -> QueryResult<bool>
        where
            C: LoadConnection<Backend = Self>,
        {
            use crate::backend::schema::db_key_void;
            let there: Option<i64> = db_key_void::table
                .find((counter.key, counter.scope, counter.period, number))
                .select(db_key_void::number)
                .first(conn)
                .optional()?;
            if there.is_some() {
                return Ok(false);
            }
            diesel::insert_into(db_key_void::table)
                .values((
                    db_key_void::key_name.eq(counter.key),
                    db_key_void::scope.eq(counter.scope),
                    db_key_void::period.eq(counter.period),
                    db_key_void::number.eq(number),
                    db_key_void::reason.eq(reason),
                ))
                .execute(conn)
                .map(|_| true)
        }

        fn voided<C>(conn: &mut C, counter: $crate::backend::Counter<'_>) -> QueryResult<Vec<(i64, String)>>
        where
            C: LoadConnection<Backend = Self>,
        {
            use crate::backend::schema::db_key_void;
            db_key_void::table
                .filter(db_key_void::key_name.eq(counter.key))
                .filter(db_key_void::scope.eq(counter.scope))
                .filter(db_key_void::period.eq(counter.period))
                .order(db_key_void::number)
                .select((db_key_void::number, db_key_void::reason))
                .load(conn)
        }

        fn read_start<C>(conn: &mut C, key: &str) -> QueryResult<Option<i64>>
        where
            C: LoadConnection<Backend = Self>,
        {
            db_key::table
                .find((key, "", ""))
                .select(db_key::start_value)
                .first::<Option<i64>>(conn)
                .optional()
                .map(Option::flatten)
        }

        fn look_at_shape<C>(conn: &mut C, key: &str) -> QueryResult<Option<String>>
        where
            C: LoadConnection<Backend = Self>,
        {
            db_key::table
                .find((key, "", ""))
                .select(db_key::shape)
                .first::<Option<String>>(conn)
                .optional()
                .map(Option::flatten)
        }

        fn counters<C>(conn: &mut C, key: Option<&str>) -> QueryResult<Vec<$crate::backend::CounterRow>>
        where
            C: LoadConnection<Backend = Self>,
        {
            let text_type = $crate::backend::dialect::sql_of::<Self, _>($crate::backend::dialect::TextType)?;
            let as_text = |column: &str| {
                diesel::dsl::sql::<diesel::sql_types::Text>(&format!("CAST({column} AS {text_type})"))
            };
            let mut query = db_key::table
                .filter(db_key::key_name.ne($crate::backend::Counter::TOKEN.key))
                .select((
                    db_key::key_name,
                    db_key::scope,
                    db_key::period,
                    db_key::current_value,
                    db_key::batch_size,
                    db_key::start_value,
                    db_key::shape,
                    as_text("updated_at"),
                    as_text("created_at"),
                ))
                .order((db_key::key_name, db_key::scope, db_key::period))
                .into_boxed();
            if let Some(key) = key {
                query = query.filter(db_key::key_name.eq(key));
            }
            query.load(conn)
        }

        fn database_now<C>(conn: &mut C) -> QueryResult<String>
        where
            C: LoadConnection<Backend = Self>,
        {
            let now = $crate::backend::dialect::sql_of::<Self, _>($crate::backend::dialect::NowText)?;
            diesel::select(diesel::dsl::sql::<diesel::sql_types::Text>(&now))
                .get_result(conn)
        }

        fn set_setting<C>(
            conn: &mut C,
            key: &str,
            setting: crate::backend::Setting,
            value: Option<i64>,
        ) -> QueryResult<()>
        where
            C: LoadConnection<Backend = Self>,
        {
            let update = |conn: &mut C| {
                let row = db_key::table.find((key, "", ""));
                match setting {
                    crate::backend::Setting::BatchSize => diesel::update(row)
                        .set(db_key::batch_size.eq(value))
                        .execute(conn),
                    crate::backend::Setting::StartValue => diesel::update(row)
                        .set(db_key::start_value.eq(value))
                        .execute(conn),
                }
            };
            if update(conn)? == 0 {
                $crate::backend::drive(<Self as $crate::backend::Backend>::create_row(
                    &mut $crate::backend::Blocking(conn),
                    $crate::backend::Counter::key_row(key),
                ))?;
                update(conn)?;
            }
            Ok(())
        }

        fn lock_settings<C>(
            conn: &mut C,
            key: &str,
        ) -> QueryResult<Option<(Option<i64>, Option<i64>)>>
        where
            C: LoadConnection<Backend = Self>,
        {
            db_key::table
                .find((key, "", ""))
                .select((db_key::batch_size, db_key::start_value))
                $(.$lock())?
                .first(conn)
                .optional()
        }

        fn delete_row<C>(
            conn: &mut C,
            counter: $crate::backend::Counter<'_>,
            current_value: i64,
        ) -> QueryResult<usize>
        where
            C: LoadConnection<Backend = Self>,
        {
            diesel::delete(db_key::table.find((counter.key, counter.scope, counter.period)))
                .filter(db_key::period.ne(""))
                .filter(db_key::current_value.eq(current_value))
                .execute(conn)
        }

        fn each_id<C>(
            conn: &mut C,
            table: &[&str],
            column: &str,
            scope_column: Option<&str>,
            only: Option<&str>,
            each: &mut dyn FnMut(Option<String>, Option<String>),
        ) -> QueryResult<()>
        where
            C: LoadConnection<Backend = Self>,
        {
            use diesel::connection::DefaultLoadingMode;
            use diesel::query_builder::QueryBuilder as _;

            #[derive(QueryableByName)]
            struct Row {
                #[diesel(sql_type = diesel::sql_types::Nullable<diesel::sql_types::Text>)]
                id: Option<String>,
                #[diesel(sql_type = diesel::sql_types::Nullable<diesel::sql_types::Text>)]
                scope: Option<String>,
            }
            let quote = |name: &str| -> QueryResult<String> {
                let mut builder = <Self as diesel::backend::Backend>::QueryBuilder::default();
                builder.push_identifier(name)?;
                Ok(builder.finish())
            };
            let text_type = $crate::backend::dialect::sql_of::<Self, _>($crate::backend::dialect::TextType)?;
            let as_text = |name: &str| -> QueryResult<String> {
                Ok(format!("CAST({} AS {text_type})", quote(name)?))
            };
            let table = table.iter().map(|name| quote(name)).collect::<QueryResult<Vec<_>>>()?;
            let scope = scope_column.map(as_text).transpose()?;
            let mut sql = format!(
                "SELECT {} AS id, {} AS scope FROM {}",
                as_text(column)?,
                scope.as_deref().unwrap_or(&format!("CAST(NULL AS {text_type})")),
                table.join(".")
            );
            let query = match (&scope, only) {
                (Some(scope), Some(value)) => {
                    let mut placeholder = <Self as diesel::backend::Backend>::QueryBuilder::default();
                    placeholder.push_bind_param();
                    sql.push_str(&format!(" WHERE {scope} = {}", placeholder.finish()));
                    diesel::sql_query(sql).into_boxed().bind::<diesel::sql_types::Text, _>(value)
                }
                _ => diesel::sql_query(sql).into_boxed(),
            };
            for row in query.load_iter::<Row, DefaultLoadingMode>(conn)? {
                let row = row?;
                each(row.id, row.scope);
            }
            Ok(())
        }

        fn raise<C>(conn: &mut C, counter: $crate::backend::Counter<'_>, to: i64) -> QueryResult<usize>
        where
            C: LoadConnection<Backend = Self>,
        {
            diesel::update(db_key::table.find((counter.key, counter.scope, counter.period)))
                .filter(db_key::current_value.lt(to))
                .set(db_key::current_value.eq(to))
                .execute(conn)
        }
    };
}

pub(crate) use admin_queries;
