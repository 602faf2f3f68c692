//! [`PublicId`] as an sqlx column type: the 16 bytes of the ID, never its text or prefix.
//!
//! * PostgreSQL: `UUID` (and `UUID[]` for `= ANY($1)`), through sqlx's `uuid::Uuid`.
//! * MySQL/MariaDB: `BINARY(16)`, written as sqlx writes a `Uuid` (16 bytes, big-endian).
//! * SQLite: a 16-byte `BLOB`, written as sqlx writes a `Uuid`. Only `BLOB` values are
//!   accepted: a `TEXT` value is a type mismatch, so a 16-character string is never taken for
//!   16 bytes.
//!
//! The type prefix is not stored: the Rust type of the column (`PublicId<Order>`) supplies it
//! when the value is read. A MySQL/MariaDB or SQLite value that does not hold exactly 16 bytes
//! (a `VARBINARY` or `BLOB` written by other code) is a decode error naming its length
//! ([`Error::PublicIdByteLength`]), never a panic and never a truncated or padded ID.
//! `Option<PublicId<T>>` reads and writes `NULL` through sqlx's own impls.

#[cfg(feature = "sqlx-mysql")]
mod mysql;
#[cfg(feature = "sqlx-postgres")]
mod postgres;
#[cfg(feature = "sqlx-sqlite")]
mod sqlite;

use crate::error::Error;
use crate::public_id::PublicId;

/// The public ID stored as `bytes`, or a decode error naming their number.
#[cfg_attr(
    not(any(feature = "sqlx-mysql", feature = "sqlx-sqlite")),
    allow(dead_code)
)]
fn from_column_bytes<T: ?Sized>(bytes: &[u8]) -> Result<PublicId<T>, sqlx::error::BoxDynError> {
    match <[u8; 16]>::try_from(bytes) {
        Ok(array) => Ok(PublicId::from_bytes(array)),
        Err(_) => Err(Error::PublicIdByteLength { found: bytes.len() }.into()),
    }
}

#[cfg(test)]
mod tests {
    use super::from_column_bytes;
    use crate::public_id::PublicId;

    #[test]
    fn sixteen_bytes_are_the_id() {
        let bytes: Vec<u8> = (1..=16).collect();
        let id: PublicId = from_column_bytes(&bytes).unwrap();
        assert_eq!(id.as_bytes().as_slice(), bytes.as_slice());
    }

    #[test]
    fn any_other_length_is_an_error_naming_it() {
        for len in [0, 1, 15, 17, 36] {
            let err = from_column_bytes::<()>(&vec![0xab; len]).unwrap_err();
            assert_eq!(
                err.to_string(),
                format!(
                    "a {len}-byte value is not a public ID: a public ID is stored as exactly 16 bytes"
                )
            );
        }
    }
}
