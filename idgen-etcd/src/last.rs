//! The value of a node ID's `last` key: the last-timestamp bound and the current claim's owner.
//!
//! `<timestamp> <owner>`, `<timestamp>` (released), or `- <owner>` (claimed, no timestamp yet).
//! The timestamp is `max(ms, 0)` zero-padded to 19 digits, so etcd's byte-wise value
//! comparison orders timestamps: a renewal raises the bound with one compare
//! (`value < "<new timestamp>"`), never lowering it, in a single transaction.

use idgen_engine::lease::BoxError;

/// A decoded `last` value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Last {
    pub(crate) timestamp_ms: Option<i64>,
    pub(crate) owner: Option<String>,
}

/// The 19-digit form of a timestamp (clamped to 0: an upper bound may only be raised, and no
/// generator issues before 1970).
pub(crate) fn timestamp(ms: i64) -> String {
    format!("{:019}", ms.max(0))
}

impl Last {
    pub(crate) fn encode(&self) -> String {
        let ts = self.timestamp_ms.map_or_else(|| "-".to_owned(), timestamp);
        match &self.owner {
            Some(owner) => format!("{ts} {owner}"),
            None => ts,
        }
    }

    pub(crate) fn decode(value: &[u8]) -> Result<Last, BoxError> {
        let text = std::str::from_utf8(value)
            .map_err(|_| BoxError::from("a last-timestamp value is not UTF-8"))?;
        let (ts, owner) = match text.split_once(' ') {
            Some((ts, owner)) => (ts, Some(owner.to_owned())),
            None => (text, None),
        };
        let timestamp_ms = match ts {
            "-" => None,
            digits => Some(digits.parse().map_err(|_| {
                BoxError::from(format!("the last-timestamp value {text:?} is not idgen's"))
            })?),
        };
        Ok(Last {
            timestamp_ms,
            owner,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::{Last, timestamp};

    #[test]
    fn values_round_trip_and_order_by_timestamp() {
        for last in [
            Last {
                timestamp_ms: Some(1_761_234_567_890),
                owner: Some("web-1:7:ab".into()),
            },
            Last {
                timestamp_ms: Some(0),
                owner: None,
            },
            Last {
                timestamp_ms: None,
                owner: Some("a b".into()),
            },
            Last {
                timestamp_ms: Some(i64::MAX),
                owner: None,
            },
        ] {
            assert_eq!(Last::decode(last.encode().as_bytes()).unwrap(), last);
        }
        let with_owner = Last {
            timestamp_ms: Some(100),
            owner: Some("x".into()),
        }
        .encode();
        assert!(with_owner.as_bytes() < timestamp(101).as_bytes());
        assert!(with_owner.as_bytes() >= timestamp(100).as_bytes());
        assert!(with_owner.as_bytes() > timestamp(99).as_bytes());
        let none = Last {
            timestamp_ms: None,
            owner: Some("x".into()),
        }
        .encode();
        assert!(none.as_bytes() < timestamp(0).as_bytes());
        assert_eq!(timestamp(-5), timestamp(0));
        assert!(Last::decode(b"12x").is_err());
    }
}
