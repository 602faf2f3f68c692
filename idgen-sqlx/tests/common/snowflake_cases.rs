//! The `SnowflakeId` column cases every database runs, written once: `snowflake_cases!` expands
//! them in a test file (an `ids` table: `id`, `generator`, `seq`, nullable `parent`).

/// The shared cases for database `$db`, whose empty `ids` table `$make` makes, with
/// placeholders `$p1`, `$p2` (`?` or `$1`, `$2`).
#[macro_export]
macro_rules! snowflake_cases {
    ($db:ty, $make:expr, [$p1:literal, $p2:literal]) => {
        /// Ten thousand IDs from eight concurrent generators read back in creation order.
        #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
        async fn ten_thousand_ids_from_concurrent_tasks_round_trip_in_order() {
            let db = $make.await;
            let inserted = insert_concurrently!($db, db.pool());
            let read: Vec<common::IdRow> = sqlx::query_as(common::SELECT_IDS)
                .fetch_all(db.pool())
                .await
                .unwrap();
            common::check_read_back(inserted, &read);
        }

        /// The largest ID and a `NULL` parent round-trip.
        #[tokio::test]
        async fn null_round_trips_as_none() {
            let db = $make.await;
            let id = idgen_sqlx::SnowflakeId::MAX;
            sqlx::query(concat!(
                "INSERT INTO ids VALUES (",
                $p1,
                ", 0, 0, ",
                $p2,
                ")"
            ))
            .bind(id)
            .bind(None::<idgen_sqlx::SnowflakeId>)
            .execute(db.pool())
            .await
            .unwrap();
            let row: common::IdRow = sqlx::query_as(common::SELECT_IDS)
                .fetch_one(db.pool())
                .await
                .unwrap();
            let expected = common::IdRow {
                id,
                generator: 0,
                seq: 0,
                parent: None,
            };
            assert_eq!(row, expected);
        }

        /// A negative stored value is a decode error naming it, in a row and as a scalar.
        #[tokio::test]
        async fn negative_value_is_a_decode_error_naming_it() {
            let db = $make.await;
            sqlx::raw_sql("INSERT INTO ids VALUES (-9223372036854775808, 0, 0, -1)")
                .execute(db.pool())
                .await
                .unwrap();

            let err = sqlx::query_as::<_, common::IdRow>(common::SELECT_IDS)
                .fetch_one(db.pool())
                .await
                .unwrap_err();
            common::check_decode_error(&err, &["-9223372036854775808 is not a Snowflake ID"]);

            let err =
                sqlx::query_scalar::<_, Option<idgen_sqlx::SnowflakeId>>("SELECT parent FROM ids")
                    .fetch_one(db.pool())
                    .await
                    .unwrap_err();
            assert!(
                err.to_string().contains("-1 is not a Snowflake ID"),
                "{err}"
            );
        }
    };
}
