//! The `PublicId` column cases every database runs, written once: `public_id_cases!` expands
//! them in a test file, with the `orders` table they run on and `db_with_orders_table()`, which
//! the file's own cases use too.

/// The shared cases for database `$db`, whose test databases `$testdb()` makes, with the
/// column types `$integer` (`id`, `customer_id`) and `$public_id` (`public_id`, `gift_card`)
/// and placeholders `$p` (`?` or `$1`…`$4`); with `names_index`, the unique violation must name
/// the index; `stored` reads the known public ID's stored form as text (`$stored_sql`) and
/// expects `$stored`.
#[macro_export]
macro_rules! public_id_cases {
    (
        $db:ty,
        $testdb:path,
        columns: ($integer:literal, $public_id:literal),
        [$p1:literal, $p2:literal, $p3:literal, $p4:literal],
        names_index: $names_index:expr,
        stored: ($stored_sql:literal, $stored:expr)
    ) => {
        /// The `orders` table, with a unique index `orders_public_id` on `public_id`.
        const ORDERS_TABLE: &str = concat!(
            "CREATE TABLE orders (id ",
            $integer,
            " PRIMARY KEY, public_id ",
            $public_id,
            " NOT NULL, customer_id ",
            $integer,
            " NOT NULL, gift_card ",
            $public_id,
            " NULL);",
            " CREATE UNIQUE INDEX orders_public_id ON orders (public_id);"
        );

        /// A new test database with an empty `orders` table.
        async fn db_with_orders_table() -> idgen_testkit::TestDb<$db> {
            common::with_tables($testdb(), ORDERS_TABLE).await
        }

        /// Inserts `order` with one prepared statement (`INSERT_ORDER`).
        async fn insert_order(
            pool: &sqlx::Pool<$db>,
            order: &common::orders::OrderRow,
        ) -> Result<<$db as sqlx::Database>::QueryResult, sqlx::Error> {
            sqlx::query(INSERT_ORDER)
                .bind(order.id)
                .bind(order.public_id)
                .bind(order.customer_id)
                .bind(order.gift_card)
                .execute(pool)
                .await
        }

        /// A new test database whose `orders` table holds `ORDERS` new orders, and those
        /// orders (in id order).
        async fn db_with_new_orders() -> (idgen_testkit::TestDb<$db>, Vec<common::orders::OrderRow>)
        {
            let db = db_with_orders_table().await;
            let orders = common::orders::new_orders();
            insert_orders!($db, db.pool(), orders);
            (db, orders)
        }

        /// One order: `id`, `public_id`, `customer_id`, `gift_card`.
        const INSERT_ORDER: &str = concat!(
            "INSERT INTO orders VALUES (",
            $p1,
            ", ",
            $p2,
            ", ",
            $p3,
            ", ",
            $p4,
            ")"
        );

        /// A thousand orders read back as written, and each is found by its public ID; an
        /// unknown public ID finds nothing.
        #[tokio::test]
        async fn thousand_orders_round_trip_and_are_found_by_public_id() {
            let (db, orders) = db_with_new_orders().await;
            let read: Vec<common::orders::OrderRow> = sqlx::query_as(common::orders::SELECT_ORDERS)
                .fetch_all(db.pool())
                .await
                .unwrap();
            common::orders::check_read_back(&orders, &read);

            let by_public_id = concat!(
                "SELECT id, public_id, customer_id, gift_card FROM orders WHERE public_id = ",
                $p1
            );
            for order in &orders {
                let found: common::orders::OrderRow = sqlx::query_as(by_public_id)
                    .bind(order.public_id)
                    .fetch_one(db.pool())
                    .await
                    .unwrap();
                assert_eq!(&found, order);
            }
            let unknown: Option<common::orders::OrderRow> = sqlx::query_as(by_public_id)
                .bind(idgen_sqlx::PublicId::<common::orders::Order>::new())
                .fetch_optional(db.pool())
                .await
                .unwrap();
            assert_eq!(unknown, None);
        }

        /// `None` is written as `NULL` and read back as `None`.
        #[tokio::test]
        async fn null_round_trips_as_none() {
            let db = db_with_orders_table().await;
            // `order_with` leaves the gift card `None`.
            let order = common::orders::order_with(42, idgen_sqlx::PublicId::new());
            insert_order(db.pool(), &order).await.unwrap();
            let read: common::orders::OrderRow = sqlx::query_as(common::orders::SELECT_ORDERS)
                .fetch_one(db.pool())
                .await
                .unwrap();
            assert_eq!(read, order);
            let gift_card: Option<idgen_sqlx::PublicId<common::orders::GiftCard>> =
                sqlx::query_scalar("SELECT gift_card FROM orders WHERE gift_card IS NULL")
                    .fetch_one(db.pool())
                    .await
                    .unwrap();
            assert_eq!(gift_card, None);
        }

        /// A second order with the same public ID is refused by the unique index; one row stays.
        #[tokio::test]
        async fn duplicate_public_id_is_refused_by_the_unique_index() {
            let db = db_with_orders_table().await;
            let public_id = idgen_sqlx::PublicId::<common::orders::Order>::new();
            insert_orders!($db, db.pool(), [common::orders::order_with(1, public_id)]);

            let err = insert_order(db.pool(), &common::orders::order_with(2, public_id))
                .await
                .unwrap_err();
            let db_err = err.as_database_error().expect("a database error");
            assert!(db_err.is_unique_violation(), "{err}");
            if $names_index {
                assert!(
                    db_err.constraint() == Some("orders_public_id")
                        || err.to_string().contains("orders_public_id"),
                    "{err}"
                );
            }
            let count: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM orders")
                .fetch_one(db.pool())
                .await
                .unwrap();
            assert_eq!(count, 1);
        }

        /// The prefix is not stored: it comes from the Rust type the column is read as.
        #[tokio::test]
        async fn typed_prefix_comes_from_the_rust_type() {
            let db = db_with_orders_table().await;
            let order = common::orders::order_with(1, common::orders::known_public_id());
            insert_orders!($db, db.pool(), [order]);

            let stored: String = sqlx::query_scalar($stored_sql)
                .fetch_one(db.pool())
                .await
                .unwrap();
            assert_eq!(stored, $stored);

            let read: common::orders::OrderRow = sqlx::query_as(common::orders::SELECT_ORDERS)
                .fetch_one(db.pool())
                .await
                .unwrap();
            let untyped: idgen_sqlx::PublicId = sqlx::query_scalar("SELECT public_id FROM orders")
                .fetch_one(db.pool())
                .await
                .unwrap();
            let as_gift_card: idgen_sqlx::PublicId<common::orders::GiftCard> =
                sqlx::query_scalar("SELECT public_id FROM orders")
                    .fetch_one(db.pool())
                    .await
                    .unwrap();
            common::orders::check_prefix_from_type(&read, untyped, as_gift_card);
        }
    };
}
