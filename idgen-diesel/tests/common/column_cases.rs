//! The column-type cases every database runs, written once: `column_cases!` expands them in a
//! test file, with the `orders` table and its model (diesel's query traits are per backend, so
//! the cases are a macro over the connection type rather than generic functions).

/// `column_cases!(postgres)`, `(mysql)` or `(sqlite)`: the cases on that database, with its
/// `orders` table (`public` is a `UUID` on PostgreSQL, 16 bytes of binary elsewhere).
///
/// The general form: the shared cases on a diesel connection `$conn` to a database from `$db`
/// (`idgen_testkit::postgres()`, …): `$create` makes `orders` (`id`, nullable `parent`, `seq`,
/// unique `public` of SQL type `$public`), `$insert_negative` writes the rows `(-5, NULL, 0, …)`
/// and `(6, -7, 1, …)` behind the types' back, and `$two_bytes` is an SQL literal of 2 bytes of
/// the binary type.
///
/// Expands `connection()`, `check_reads()` (`BigInt` expressions read as `SnowflakeId`s) and the tests `model_round_trips_ten_thousand_rows_with_filters_order_and_nulls`,
/// `negative_values_are_refused_by_name` and `a_public_id_of_the_wrong_length_is_an_error_naming_it`.
#[macro_export]
macro_rules! column_cases {
    (postgres) => {
        $crate::column_cases! {
            connection: PgConnection = idgen_testkit::postgres(),
            public: diesel::sql_types::Uuid,
            create: "CREATE TABLE orders (id BIGINT PRIMARY KEY, parent BIGINT NULL, seq INT NOT NULL, public UUID NOT NULL UNIQUE)",
            insert_negative: "INSERT INTO orders (id, parent, seq, public) VALUES (-5, NULL, 0, gen_random_uuid()), (6, -7, 1, gen_random_uuid())",
            two_bytes: "'\\x0102'::bytea",
        }
    };
    (mysql) => {
        $crate::column_cases! {
            connection: MysqlConnection = idgen_testkit::mysql(),
            public: diesel::sql_types::Binary,
            create: "CREATE TABLE orders (id BIGINT PRIMARY KEY, parent BIGINT NULL, seq INT NOT NULL, public BINARY(16) NOT NULL UNIQUE)",
            insert_negative: "INSERT INTO orders (id, parent, seq, public) VALUES (-5, NULL, 0, RANDOM_BYTES(16)), (6, -7, 1, RANDOM_BYTES(16))",
            two_bytes: "x'0102'",
        }
    };
    (sqlite) => {
        $crate::column_cases! {
            connection: SqliteConnection = idgen_testkit::sqlite(),
            public: diesel::sql_types::Binary,
            create: "CREATE TABLE orders (id INTEGER PRIMARY KEY, parent INTEGER NULL, seq INTEGER NOT NULL, public BLOB NOT NULL UNIQUE)",
            insert_negative: "INSERT INTO orders (id, parent, seq, public) VALUES (-5, NULL, 0, randomblob(16)), (6, -7, 1, randomblob(16))",
            two_bytes: "x'0102'",
        }
    };
    (
        connection: $conn:ty = $db:expr,
        public: $public:ty,
        create: $create:expr,
        insert_negative: $insert_negative:expr,
        two_bytes: $two_bytes:expr $(,)?
    ) => {
        /// The SQL type of `orders.public`.
        type PublicSqlType = $public;

        diesel::table! {
            /// Orders, each with a public ID.
            orders (id) {
                /// The order's Snowflake ID.
                id -> BigInt,
                /// The order before it, or NULL for every third order.
                parent -> Nullable<BigInt>,
                /// The order's position in creation order.
                seq -> Integer,
                /// The order's public ID (`$public`).
                public -> $crate::PublicSqlType,
            }
        }

        /// A row of `orders`, as a diesel user writes it.
        #[derive(
            Debug, Clone, PartialEq, Eq, diesel::Queryable, diesel::Selectable, diesel::Insertable,
        )]
        #[diesel(table_name = orders)]
        struct Order {
            id: idgen_diesel::SnowflakeId,
            parent: Option<idgen_diesel::SnowflakeId>,
            seq: i32,
            public: idgen_diesel::PublicId<common::OrderTag>,
        }

        /// `ROWS` orders with fresh IDs in creation order; every third has no parent.
        fn new_orders() -> Vec<Order> {
            let ids = idgen_diesel::Snowflake::new(idgen_diesel::Layout::TWITTER, 7)
                .expect("a valid node");
            let mut previous = None;
            (0..common::ROWS as i32)
                .map(|seq| {
                    let id = ids.next_id().expect("the generator issues an ID");
                    let parent = if seq % 3 == 0 { None } else { previous };
                    previous = Some(id);
                    Order {
                        id,
                        parent,
                        seq,
                        public: idgen_diesel::PublicId::new(),
                    }
                })
                .collect()
        }

        /// A fresh database with an empty `orders` table, and a connection to it.
        async fn connection() -> (idgen_testkit::TestDb<impl sqlx::Database>, $conn) {
            common::open::<_, $conn>($db, $create).await
        }

        /// Each `(expr, id)` of `accepted` (SQL of type `BigInt`) reads as the `SnowflakeId`
        /// `id`; each `(expr, needle)` of `refused` is an error whose chain contains `needle`.
        fn check_reads(conn: &mut $conn, accepted: &[(&str, i64)], refused: &[(&str, &str)]) {
            use diesel::prelude::*;
            let mut select = |expr: &str| {
                diesel::select(diesel::dsl::sql::<diesel::sql_types::BigInt>(expr))
                    .get_result::<idgen_diesel::SnowflakeId>(&mut *conn)
                    .map_err(|e| common::error_chain(&e))
            };
            for &(expr, id) in accepted {
                assert_eq!(select(expr).map(idgen_diesel::SnowflakeId::get), Ok(id), "{expr}");
            }
            for &(expr, needle) in refused {
                let err = select(expr).unwrap_err();
                assert!(err.contains(needle), "{expr}: {err}");
            }
        }

        /// The round trip, filters, `eq_any`, ordering and NULLs.
        #[tokio::test]
        async fn model_round_trips_ten_thousand_rows_with_filters_order_and_nulls() {
            use diesel::prelude::*;
            let (_db, mut conn) = connection().await;
            let conn = &mut conn;
            let inserted = new_orders();
            for chunk in inserted.chunks(common::BATCH) {
                let n = diesel::insert_into(orders::table)
                    .values(chunk)
                    .execute(conn)
                    .unwrap();
                assert_eq!(n, chunk.len());
            }

            // Read back in ID order: every row, every column, unchanged.
            let read: Vec<Order> = orders::table
                .select(Order::as_select())
                .order(orders::id)
                .load(conn)
                .unwrap();
            assert_eq!(read.len(), common::ROWS);
            assert!(
                read == inserted,
                "rows read back ORDER BY id differ from the rows inserted in creation order"
            );

            // Descending order puts the newest first.
            let newest: Order = orders::table.order(orders::id.desc()).first(conn).unwrap();
            assert_eq!(newest, inserted[common::ROWS - 1]);

            // .eq(id), find(id)
            let one = &inserted[4_321];
            let found: Order = orders::table
                .filter(orders::id.eq(one.id))
                .first(conn)
                .unwrap();
            assert_eq!(&found, one);
            let found: Order = orders::table.find(one.id).first(conn).unwrap();
            assert_eq!(&found, one);

            // eq_any(ids)
            let wanted: Vec<idgen_diesel::SnowflakeId> =
                inserted.iter().step_by(97).map(|o| o.id).collect();
            let mut got: Vec<idgen_diesel::SnowflakeId> = orders::table
                .select(orders::id)
                .filter(orders::id.eq_any(&wanted))
                .load(conn)
                .unwrap();
            got.sort();
            assert_eq!(got, wanted);

            // The PublicId column: .eq, eq_any.
            let found: Order = orders::table
                .filter(orders::public.eq(one.public))
                .first(conn)
                .unwrap();
            assert_eq!(&found, one);
            let wanted: Vec<idgen_diesel::PublicId<common::OrderTag>> =
                inserted.iter().step_by(101).map(|o| o.public).collect();
            let mut got: Vec<idgen_diesel::PublicId<common::OrderTag>> = orders::table
                .select(orders::public)
                .filter(orders::public.eq_any(&wanted))
                .load(conn)
                .unwrap();
            got.sort();
            let mut wanted = wanted;
            wanted.sort();
            assert_eq!(got, wanted);

            // Range comparison and NULLs.
            let later = orders::table
                .filter(orders::id.gt(inserted[9_000].id))
                .count()
                .get_result::<i64>(conn)
                .unwrap();
            assert_eq!(later, 999);
            let without_parent = orders::table
                .filter(orders::parent.is_null())
                .count()
                .get_result::<i64>(conn)
                .unwrap();
            assert_eq!(
                without_parent as usize,
                inserted.iter().filter(|o| o.parent.is_none()).count()
            );
            let children: Vec<Order> = orders::table
                .filter(orders::parent.eq(Some(inserted[10].id)))
                .load(conn)
                .unwrap();
            assert_eq!(children, vec![inserted[11].clone()]);
            let parents: Vec<Option<idgen_diesel::SnowflakeId>> = orders::table
                .select(orders::parent)
                .order(orders::id)
                .limit(4)
                .load(conn)
                .unwrap();
            assert_eq!(
                parents,
                vec![None, Some(inserted[0].id), Some(inserted[1].id), None]
            );

            // Update through a SnowflakeId-valued expression.
            diesel::update(orders::table.find(inserted[0].id))
                .set(orders::parent.eq(Some(inserted[1].id)))
                .execute(conn)
                .unwrap();
            let parent: Option<idgen_diesel::SnowflakeId> = orders::table
                .find(inserted[0].id)
                .select(orders::parent)
                .first(conn)
                .unwrap();
            assert_eq!(parent, Some(inserted[1].id));
        }

        /// A negative `id` stored behind the type's back is a load error naming it, never a panic.
        #[tokio::test]
        async fn negative_values_are_refused_by_name() {
            use diesel::prelude::*;
            let (_db, mut conn) = connection().await;
            let conn = &mut conn;
            diesel::sql_query($insert_negative).execute(conn).unwrap();
            for (seq, value) in [(0, "-5"), (1, "-7")] {
                let err = orders::table
                    .filter(orders::seq.eq(seq))
                    .select(Order::as_select())
                    .load(conn)
                    .unwrap_err();
                let err = common::error_chain(&err);
                assert!(err.contains(&format!("{value} is not a Snowflake ID")), "{err}");
            }
        }

        #[tokio::test]
        async fn a_public_id_of_the_wrong_length_is_an_error_naming_it() {
            use diesel::prelude::*;
            let (_db, mut conn) = connection().await;
            let err = diesel::select(diesel::dsl::sql::<diesel::sql_types::Binary>($two_bytes))
                .get_result::<idgen_diesel::PublicId<common::OrderTag>>(&mut conn)
                .unwrap_err();
            let err = common::error_chain(&err);
            assert!(
                err.contains(
                    "a 2-byte value is not a public ID: a public ID is stored as exactly 16 bytes"
                ),
                "{err}"
            );
        }
    };
}
