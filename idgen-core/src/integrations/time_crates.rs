//! Conversions of a decoded ID's instant to jiff, chrono and time types.

use crate::snowflake::Decomposed;

impl Decomposed {
    /// The start of the ID's tick as a [`jiff::Timestamp`] (feature `jiff`).
    ///
    /// ```
    /// use idgen_core::{Layout, SnowflakeId};
    /// let d = Layout::TWITTER.decompose(SnowflakeId::new(2116500430648709162).unwrap())?;
    /// assert_eq!(d.to_jiff().to_string(), "2026-10-31T12:00:00Z");
    /// # Ok::<(), idgen_core::Error>(())
    /// ```
    #[cfg(feature = "jiff")]
    #[cfg_attr(docsrs, doc(cfg(feature = "jiff")))]
    pub fn to_jiff(&self) -> jiff::Timestamp {
        // Every layout's instants fit jiff's range (years -9999..=9999) only if the layout is
        // sane; clamp rather than panic for absurd custom epochs.
        jiff::Timestamp::from_millisecond(self.unix_ms).unwrap_or(if self.unix_ms < 0 {
            jiff::Timestamp::MIN
        } else {
            jiff::Timestamp::MAX
        })
    }

    /// The start of the ID's tick as a `chrono::DateTime<Utc>` (feature `chrono`).
    ///
    /// ```
    /// use idgen_core::{Layout, SnowflakeId};
    /// let d = Layout::TWITTER.decompose(SnowflakeId::new(2116500430648709162).unwrap())?;
    /// assert_eq!(d.to_chrono().to_rfc3339(), "2026-10-31T12:00:00+00:00");
    /// # Ok::<(), idgen_core::Error>(())
    /// ```
    #[cfg(feature = "chrono")]
    #[cfg_attr(docsrs, doc(cfg(feature = "chrono")))]
    pub fn to_chrono(&self) -> chrono::DateTime<chrono::Utc> {
        chrono::DateTime::from_timestamp_millis(self.unix_ms).unwrap_or(if self.unix_ms < 0 {
            chrono::DateTime::<chrono::Utc>::MIN_UTC
        } else {
            chrono::DateTime::<chrono::Utc>::MAX_UTC
        })
    }

    /// The start of the ID's tick as a `time::OffsetDateTime` in UTC (feature `time`).
    ///
    /// ```
    /// use idgen_core::{Layout, SnowflakeId};
    /// let d = Layout::TWITTER.decompose(SnowflakeId::new(2116500430648709162).unwrap())?;
    /// assert_eq!(d.to_time().unix_timestamp(), 1_793_448_000);
    /// # Ok::<(), idgen_core::Error>(())
    /// ```
    #[cfg(feature = "time")]
    #[cfg_attr(docsrs, doc(cfg(feature = "time")))]
    pub fn to_time(&self) -> time::OffsetDateTime {
        let nanos = i128::from(self.unix_ms) * 1_000_000;
        time::OffsetDateTime::from_unix_timestamp_nanos(nanos).unwrap_or(if self.unix_ms < 0 {
            time::PrimitiveDateTime::MIN.assume_utc()
        } else {
            time::PrimitiveDateTime::MAX.assume_utc()
        })
    }
}
