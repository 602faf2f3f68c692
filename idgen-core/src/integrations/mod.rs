//! Impls of other crates' traits for idgen's types, each behind its own feature.

#[cfg(feature = "sqlx")]
mod sqlx;
