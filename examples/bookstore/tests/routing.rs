//! Routing by ID alone (issue 18): orders whose IDs name their shard are found from the ID,
//! asking one shard, with no directory table; an ID naming a shard that does not exist is a
//! typed error. On SQLite files in a temporary directory.

mod common;

use bookstore::db::SHARDS;
use bookstore::model::Order;
use bookstore::routing::{self, RoutedIds, routed_layout};
use bookstore::shards::shard_of;
use idgen_sqlx::{Id, Parts, PublicId, SnowflakeId};

/// An order ID of the routed layout naming `shard` (worker 0, the epoch's first tick).
fn id_naming_shard(shard: u64) -> Id<Order> {
    let layout = routed_layout();
    let node = layout.node_from_fields(&[shard, 0]).unwrap();
    Id::from(
        layout
            .compose(Parts {
                ticks: 1,
                node,
                sequence: 0,
            })
            .unwrap(),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_order_is_found_from_its_id_alone() {
    let (_dir, cluster, shards) = common::sqlite_cluster().await;
    let ids = RoutedIds::acquire(&cluster.control).await.unwrap();

    let mut orders = Vec::new();
    for customer in 1..=40u64 {
        let customer_id = Id::try_from(customer).unwrap();
        let order = Order {
            id: ids.next_for(customer_id).unwrap(),
            public_id: PublicId::new(),
            customer_id,
            total_cents: customer as i64 * 100,
            lines: Vec::new(),
        };
        shards.insert(&order).await.unwrap();
        orders.push(order);
    }
    for order in &orders {
        let parts = routed_layout()
            .decompose(SnowflakeId::from(order.id))
            .unwrap();
        assert_eq!(
            parts.node_field("shard"),
            Some(shard_of(order.customer_id) as u64)
        );
        assert_eq!(parts.node_field("worker"), Some(ids.worker()));
        let found = routing::find_by_id(&shards, order.id)
            .await
            .unwrap()
            .expect("found");
        assert_eq!(
            (found.id, found.customer_id, found.total_cents),
            (order.id, order.customer_id, order.total_cents)
        );
    }

    // An ID that names shard 6 of 4: an error naming both, not a search of every shard.
    let err = routing::find_by_id(&shards, id_naming_shard(6))
        .await
        .unwrap_err();
    let err = err.downcast::<idgen_sqlx::CoreError>().unwrap();
    assert!(
        matches!(*err, idgen_sqlx::CoreError::ShardOutOfRange { shard: 6, shard_count, .. } if shard_count == SHARDS as u64),
        "{err}"
    );
    // An ID of the right shape that no order has: not found, in its one shard.
    assert!(
        routing::find_by_id(&shards, id_naming_shard(2))
            .await
            .unwrap()
            .is_none()
    );
    cluster.close().await;
}
