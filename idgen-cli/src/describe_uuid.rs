//! A UUID or a public ID (TypeID text) taken apart, for `inspect`: prefix, UUID, version, and
//! the time inside a UUIDv7.

use std::fmt::Write as _;

use idgen_core::uuid::{Uuid, Variant};
use idgen_core::{AnyPublicId, uuid7};
use serde::Serialize;

use crate::time_arg;

/// A UUID, from a public ID (`ord_…`) or given as a UUID.
pub(crate) struct DescribedUuid {
    uuid: Uuid,
    /// The public ID it was read from, if any.
    public_id: Option<AnyPublicId>,
}

/// The JSON of `inspect` for a UUID or a public ID.
#[derive(Debug, Serialize)]
pub(crate) struct DescribedUuidJson {
    /// `public_id` or `uuid`.
    kind: &'static str,
    /// The public ID's text, as given.
    #[serde(skip_serializing_if = "Option::is_none")]
    public_id: Option<String>,
    /// The public ID's prefix (`""` for none).
    #[serde(skip_serializing_if = "Option::is_none")]
    prefix: Option<String>,
    uuid: String,
    /// The 4-bit version field (meaningful for the RFC 9562 variant).
    version: u8,
    version_name: &'static str,
    variant: String,
    /// The time of a UUIDv7, in milliseconds since the Unix epoch; absent for other versions.
    #[serde(skip_serializing_if = "Option::is_none")]
    unix_ms: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    utc: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    local: Option<String>,
}

impl DescribedUuid {
    pub(crate) fn uuid(uuid: Uuid) -> DescribedUuid {
        DescribedUuid {
            uuid,
            public_id: None,
        }
    }

    pub(crate) fn public_id(id: AnyPublicId) -> DescribedUuid {
        DescribedUuid {
            uuid: id.uuid(),
            public_id: Some(id),
        }
    }

    /// The UUIDv7's time, if it is one.
    fn unix_ms(&self) -> Option<i64> {
        uuid7::timestamp_ms(self.uuid).ok()
    }

    fn version_name(&self) -> &'static str {
        if self.uuid.get_variant() != Variant::RFC4122 {
            return "not an RFC 9562 UUID (other variant)";
        }
        match self.uuid.get_version_num() {
            0 if self.uuid.is_nil() => "nil UUID",
            1 => "Gregorian time and node",
            3 => "MD5 name hash",
            4 => "random: no time inside; PublicId::new makes these",
            5 => "SHA-1 name hash",
            6 => "reordered Gregorian time",
            7 => "Unix time in milliseconds, then random",
            8 => "custom",
            15 if self.uuid.is_max() => "max UUID",
            _ => "unassigned version",
        }
    }

    pub(crate) fn to_json(&self) -> DescribedUuidJson {
        let unix_ms = self.unix_ms();
        DescribedUuidJson {
            kind: if self.public_id.is_some() {
                "public_id"
            } else {
                "uuid"
            },
            public_id: self.public_id.as_ref().map(ToString::to_string),
            prefix: self.public_id.as_ref().map(|p| p.prefix().to_owned()),
            uuid: self.uuid.to_string(),
            version: self.uuid.get_version_num() as u8,
            version_name: self.version_name(),
            variant: format!("{:?}", self.uuid.get_variant()),
            unix_ms,
            utc: unix_ms.and_then(time_arg::utc),
            local: unix_ms.and_then(time_arg::local),
        }
    }

    pub(crate) fn to_text(&self) -> String {
        let mut out = String::new();
        let mut row = |label: &str, value: &str| {
            let _ = writeln!(out, "{label:<12} {value}");
        };
        if let Some(id) = &self.public_id {
            row("public id", &id.to_string());
            row(
                "prefix",
                if id.prefix().is_empty() {
                    "(none)"
                } else {
                    id.prefix()
                },
            );
        }
        row("uuid", &self.uuid.to_string());
        row(
            "version",
            &format!("{} ({})", self.uuid.get_version_num(), self.version_name()),
        );
        if let Some(ms) = self.unix_ms() {
            let outside = || "(outside the years -9999..=9999)".to_owned();
            row("utc", &time_arg::utc(ms).unwrap_or_else(outside));
            row("local", &time_arg::local(ms).unwrap_or_else(outside));
            row("unix ms", &ms.to_string());
        }
        out
    }
}
