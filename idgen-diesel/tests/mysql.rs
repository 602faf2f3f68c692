//! `SnowflakeId` as a diesel column type on a real MySQL/MariaDB server (through idgen-testkit).

mod common;

use diesel::prelude::*;
use idgen_diesel::SnowflakeId;

column_cases!(mysql);

#[tokio::test]
async fn unsigned_decimal_and_floating_values_are_checked_not_truncated() {
    let (_db, mut conn) = connection().await;
    check_reads(
        &mut conn,
        &[
            ("CAST(42 AS UNSIGNED)", 42),
            ("CAST(42 AS DECIMAL(20,0))", 42),
            (
                "CAST(9223372036854775807 AS UNSIGNED)",
                SnowflakeId::MAX.get(),
            ),
        ],
        &[
            (
                "CAST(18446744073709551615 AS UNSIGNED)",
                "18446744073709551615 is not a Snowflake ID",
            ),
            (
                "CAST(1.5 AS DOUBLE)",
                "1.5 is not a Snowflake ID: the database returned a floating-point value",
            ),
            (
                "CAST(1.5 AS DECIMAL(10,1))",
                "\"1.5\" is not a Snowflake ID",
            ),
            ("CAST(-3 AS SIGNED)", "-3 is not a Snowflake ID"),
        ],
    );
}
