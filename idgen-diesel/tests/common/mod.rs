//! What the three database tests share: the schema, the model and the checks, as a macro over
//! the connection type (diesel's query traits are per backend).

#![allow(dead_code, unreachable_pub)]

use idgen_diesel::{Layout, PublicId, PublicIdPrefix, Snowflake, SnowflakeId};

/// An error's message followed by its sources' (diesel's MySQL backend wraps a field's
/// deserialization error in one that names only the field).
pub fn error_chain(err: &dyn std::error::Error) -> String {
    let mut text = err.to_string();
    let mut source = err.source();
    while let Some(err) = source {
        text.push_str(": ");
        text.push_str(&err.to_string());
        source = err.source();
    }
    text
}

/// Rows of the round-trip test.
pub const ROWS: usize = 10_000;
/// Rows per `INSERT … VALUES (…), (…)` (3 binds a row: far below every backend's limit).
pub const BATCH: usize = 2_500;

diesel::table! {
    orders (id) {
        id -> BigInt,
        parent -> Nullable<BigInt>,
        seq -> Integer,
        /// `Uuid` on PostgreSQL, `Binary` on MySQL/MariaDB and SQLite (set by each test file).
        public -> crate::PublicSqlType,
    }
}

/// The public IDs of orders print as `ord_…`.
#[derive(Debug)]
pub struct OrderTag;

impl PublicIdPrefix for OrderTag {
    const PREFIX: &'static str = "ord";
}

/// A row of `orders`, as a diesel user writes it.
#[derive(
    Debug, Clone, PartialEq, Eq, diesel::Queryable, diesel::Selectable, diesel::Insertable,
)]
#[diesel(table_name = orders)]
pub struct Order {
    pub id: SnowflakeId,
    pub parent: Option<SnowflakeId>,
    pub seq: i32,
    pub public: PublicId<OrderTag>,
}

/// `ROWS` orders with fresh IDs in creation order; every third has no parent.
pub fn new_orders() -> Vec<Order> {
    let ids = Snowflake::new(Layout::TWITTER, 7).expect("a valid node");
    let mut previous = None;
    (0..ROWS as i32)
        .map(|seq| {
            let id = ids.next_id().expect("the generator issues an ID");
            let parent = if seq % 3 == 0 { None } else { previous };
            previous = Some(id);
            Order {
                id,
                parent,
                seq,
                public: PublicId::new(),
            }
        })
        .collect()
}

/// The round trip, filters, `eq_any`, ordering and NULLs on one connection of any backend.
#[macro_export]
macro_rules! check_model_round_trip {
    ($conn:expr) => {{
        use common::{Order, orders};
        use diesel::prelude::*;
        let conn = $conn;
        let inserted = common::new_orders();
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
    }};
}

/// A negative `id` stored behind the type's back is a load error naming it, never a panic.
#[macro_export]
macro_rules! check_negative_is_refused {
    ($conn:expr) => {{
        use common::{Order, orders};
        use diesel::prelude::*;
        let conn = $conn;
        diesel::sql_query(INSERT_NEGATIVE).execute(conn).unwrap();
        let err = orders::table
            .filter(orders::seq.eq(0))
            .select(Order::as_select())
            .load(conn)
            .unwrap_err();
        let err = common::error_chain(&err);
        assert!(err.contains("-5 is not a Snowflake ID"), "{err}");
        let err = orders::table
            .filter(orders::seq.eq(1))
            .select(Order::as_select())
            .load(conn)
            .unwrap_err();
        let err = common::error_chain(&err);
        assert!(err.contains("-7 is not a Snowflake ID"), "{err}");
    }};
}
