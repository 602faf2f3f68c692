//! `SnowflakeId` as a diesel column type on SQLite (a file, through idgen-testkit).

mod common;

use diesel::prelude::*;
use idgen_diesel::SnowflakeId;

column_cases!(sqlite);

#[tokio::test]
async fn text_real_and_blob_values_are_checked_not_coerced() {
    let (_db, mut conn) = connection().await;
    check_reads(
        &mut conn,
        &[
            ("'42'", 42),
            ("9223372036854775807", SnowflakeId::MAX.get()),
        ],
        &[
            ("'abc'", "\"abc\" is not a Snowflake ID"),
            ("' 42'", "\" 42\" is not a Snowflake ID"),
            (
                "1.5",
                "1.5 is not a Snowflake ID: the database returned a floating-point (REAL) value",
            ),
            ("x'0102'", "a 2-byte BLOB is not a Snowflake ID"),
            ("-1", "-1 is not a Snowflake ID"),
        ],
    );
}
