//! Routing by ID: the shard an ID was made for, where the node field is a shard number
//! (Instagram's layout).

use crate::Result;
use crate::error::Error;
use crate::snowflake::{Layout, SnowflakeId};

impl Layout {
    /// The shard `id` belongs to, where the node field (or its sub-field named `"shard"`)
    /// holds a shard number, as in Instagram's layout: an ID made on logical shard 1341 says
    /// so itself, so a row can be found from its ID alone, without a directory table.
    ///
    /// `shard_count` is the number of shards (`0..shard_count`).
    ///
    /// # Errors
    ///
    /// [`Error::FieldOutOfRange`] (for the timestamp) when `id` was not made with this
    /// layout (bits above its width are set); [`Error::ShardOutOfRange`] when the shard it
    /// names is not below `shard_count`, naming both; [`Error::InvalidOptions`] for a
    /// `shard_count` of 0.
    ///
    /// # Examples
    ///
    /// ```
    /// use idgen_core::{Layout, Parts};
    ///
    /// let layout = Layout::INSTAGRAM.with_epoch_ms(1_767_225_600_000)?;
    /// let id = layout.compose(Parts { ticks: 5_000, node: 1341, sequence: 7 })?;
    /// assert_eq!(layout.shard_of(id, 2000)?, 1341);
    ///
    /// let err = layout.shard_of(id, 1000).unwrap_err();
    /// assert_eq!(err.to_string(), format!("ID {id} belongs to shard 1341, but there are 1000 shards (0 to 999)"));
    /// # Ok::<(), idgen_core::Error>(())
    /// ```
    pub fn shard_of(&self, id: SnowflakeId, shard_count: u64) -> Result<u64> {
        if shard_count == 0 {
            return Err(Error::InvalidOptions {
                reason: "shard_count is 0: there must be at least one shard".to_owned(),
            });
        }
        let parts = self.decompose(id)?;
        let shard = parts.node_field("shard").unwrap_or(parts.node);
        if shard >= shard_count {
            return Err(Error::ShardOutOfRange {
                id: id.get(),
                shard,
                shard_count,
            });
        }
        Ok(shard)
    }
}

#[cfg(test)]
mod tests {
    use crate::error::Error;
    use crate::snowflake::{Layout, Parts, SnowflakeId};

    #[test]
    fn the_shard_sub_field_is_used_where_the_node_field_has_one() {
        let layout = Layout::builder()
            .timestamp_bits(41)
            .node_field("shard", 4)
            .node_field("worker", 6)
            .sequence_bits(12)
            .build()
            .unwrap();
        let node = layout.node_from_fields(&[9, 33]).unwrap();
        let id = layout
            .compose(Parts {
                ticks: 77,
                node,
                sequence: 1,
            })
            .unwrap();
        assert_eq!(layout.shard_of(id, 16).unwrap(), 9);
        assert!(matches!(
            layout.shard_of(id, 9),
            Err(Error::ShardOutOfRange {
                shard: 9,
                shard_count: 9,
                ..
            })
        ));
    }

    #[test]
    fn an_id_of_another_layout_or_no_shards_is_an_error() {
        let narrow = Layout::builder()
            .timestamp_bits(20)
            .node_bits(4)
            .sequence_bits(4)
            .build()
            .unwrap();
        let wide = SnowflakeId::new(1 << 40).unwrap();
        assert!(matches!(
            narrow.shard_of(wide, 16),
            Err(Error::FieldOutOfRange {
                field: "timestamp",
                ..
            })
        ));
        let id = SnowflakeId::new(0).unwrap();
        assert!(matches!(
            narrow.shard_of(id, 0),
            Err(Error::InvalidOptions { .. })
        ));
        assert_eq!(narrow.shard_of(id, 1).unwrap(), 0);
    }
}
