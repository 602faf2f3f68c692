//! Routing by ID alone (issue 18): orders whose IDs name their shard are found from the ID,
//! asking one shard, with no directory table; an ID naming a shard that does not exist is a
//! typed error. On SQLite files in a temporary directory.

use bookstore::db::{Cluster, SHARDS, Target};
use bookstore::model::Order;
use bookstore::routing::{self, RoutedIds, routed_layout};
use bookstore::shards::shard_of;
use idgen_sqlx::{Error, Id, Parts, PublicId, SnowflakeId};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_order_is_found_from_its_id_alone() {
    let dir = tempfile::tempdir().unwrap();
    let cluster = Cluster::open(&Target::Dir(dir.path().to_owned()))
        .await
        .unwrap();
    let shards = bookstore::prepare(&cluster).await.unwrap();
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
    let forged = routed_layout()
        .compose(Parts {
            ticks: 1,
            node: routed_layout().node_from_fields(&[6, 0]).unwrap(),
            sequence: 0,
        })
        .unwrap();
    let err = routing::find_by_id(&shards, Id::from(forged))
        .await
        .unwrap_err();
    let err = err.downcast::<Error>().unwrap();
    assert!(
        matches!(*err, Error::ShardOutOfRange { shard: 6, shard_count, .. } if shard_count == SHARDS as u64),
        "{err}"
    );
    // An ID of the right shape that no order has: not found, in its one shard.
    let unknown = routed_layout()
        .compose(Parts {
            ticks: 1,
            node: routed_layout().node_from_fields(&[2, 0]).unwrap(),
            sequence: 0,
        })
        .unwrap();
    assert!(
        routing::find_by_id(&shards, Id::from(unknown))
            .await
            .unwrap()
            .is_none()
    );
    cluster.close().await;
}
