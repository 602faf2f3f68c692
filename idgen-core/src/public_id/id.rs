//! [`PublicId`]: a random 128-bit ID to show the world instead of an internal key.

use std::fmt;
use std::marker::PhantomData;
use std::str::FromStr;

use uuid::Uuid;

use super::prefix::{CheckedPrefix, PublicIdPrefix};
use super::text;
use crate::error::Error;

/// A public ID: 128 bits to show in URLs and APIs in place of an internal (Snowflake or
/// sequential) key, stored in its own column with a unique index.
///
/// * **Random.** [`new`](Self::new) draws a UUIDv4: 122 bits from a cryptographically secure
///   generator keyed by the operating system ([`try_new`](Self::try_new) says which, and how it
///   is reseeded), never from time or a counter, so it reveals nothing and cannot be guessed.
///   An unguessable ID is defence in depth, **not** access control: every handler must still
///   check that the caller may see the object (OWASP IDOR / API1:2023 BOLA).
/// * **Text.** The TypeID encoding: the type's prefix, `_`, then 26 lower-case Crockford base32
///   characters, e.g. `ord_01h455vb4pex5vsknk084sn02q`. Without a prefix (`PublicId<()>`, the
///   default) it is just the 26 characters. Parsing is strict, so each value has exactly one
///   spelling (useful as a cache or URL key): a wrong or missing prefix, a wrong length, a
///   character outside the alphabet (including upper-case; see
///   [`parse_ignore_case`](Self::parse_ignore_case)) and a first character above `7` are each
///   an error naming what is wrong. The text has a fixed length per type
///   ([`TEXT_LEN`](Self::TEXT_LEN)), and text order is byte order.
/// * **Typed.** `PublicId<Order>` carries `Order`'s [`PublicIdPrefix`] and rejects a `usr_…`
///   token; [`cast`](Self::cast) converts between types explicitly.
/// * **Storage.** 16 bytes: a PostgreSQL `uuid`, a MySQL/MariaDB `BINARY(16)`, a SQLite
///   16-byte `BLOB`. The prefix is not stored; the column's table implies it. Convert with
///   [`uuid`](Self::uuid)/[`from_uuid`](Self::from_uuid) or
///   [`to_bytes`](Self::to_bytes)/[`from_bytes`](Self::from_bytes).
///
/// `Debug` shows the text form; with the `serde` feature it serializes as the text form.
/// `Copy`, `Eq`, `Ord` and `Hash` do not require them of `T`.
///
/// ```
/// use idgen_core::{PublicId, PublicIdPrefix};
///
/// struct Order;
/// impl PublicIdPrefix for Order {
///     const PREFIX: &'static str = "ord";
/// }
/// struct User;
/// impl PublicIdPrefix for User {
///     const PREFIX: &'static str = "usr";
/// }
///
/// let id = PublicId::<Order>::new();
/// let text = id.to_string();
/// assert_eq!(text.len(), PublicId::<Order>::TEXT_LEN); // 30
/// assert_eq!(text.parse::<PublicId<Order>>()?, id);
///
/// let err = "usr_01h455vb4pex5vsknk084sn02q".parse::<PublicId<Order>>().unwrap_err();
/// assert_eq!(
///     err.to_string(),
///     r#""usr_01h455vb4pex5vsknk084sn02q" is not a public ID of this type: expected the prefix "ord_", found "usr_""#
/// );
/// # Ok::<(), idgen_core::Error>(())
/// ```
#[cfg_attr(
    feature = "diesel",
    derive(diesel::expression::AsExpression, diesel::deserialize::FromSqlRow),
    diesel(sql_type = diesel::sql_types::Binary)
)]
#[cfg_attr(
    feature = "diesel-postgres",
    diesel(sql_type = diesel::sql_types::Uuid)
)]
pub struct PublicId<T: ?Sized = ()> {
    uuid: Uuid,
    _type: PhantomData<fn() -> T>,
}

impl<T: ?Sized> PublicId<T> {
    /// A new random public ID: a UUIDv4 whose 122 random bits come from a cryptographically
    /// secure generator, without a system call per ID (see [`try_new`](Self::try_new)).
    ///
    /// # Panics
    ///
    /// Only if the operating system's random number generator fails when this thread's
    /// generator is first keyed (as `uuid`'s `new_v4` would); [`try_new`](Self::try_new)
    /// returns that failure as an error instead.
    ///
    /// ```
    /// use idgen_core::PublicId;
    ///
    /// let (a, b) = (PublicId::<()>::new(), PublicId::<()>::new());
    /// assert_ne!(a, b);
    /// assert_eq!(a.uuid().get_version_num(), 4);
    /// ```
    #[allow(clippy::new_without_default)] // a random value is not a default
    pub fn new() -> Self {
        match Self::try_new() {
            Ok(id) => id,
            Err(e) => panic!("{e}"),
        }
    }

    /// A new random public ID, or [`Error::RandomSource`] if the OS random number generator
    /// fails.
    ///
    /// The 122 random bits come from ChaCha12 (the generator of `rand`'s `ThreadRng`, and so of
    /// uuid's `fast-rng`), one generator per thread, keyed with 256 bits from the operating
    /// system's CSPRNG on first use, then afresh after every 64 KiB of output and in a forked
    /// child before its first ID (a fork handler; `rand` itself no longer does this). So taking
    /// an ID costs no system call, and no ID can be predicted from others: that would mean
    /// breaking ChaCha or guessing its key. Two processes never share a key, forked or not.
    ///
    /// ```
    /// use idgen_core::PublicId;
    ///
    /// let id = PublicId::<()>::try_new()?;
    /// assert_eq!(id.uuid().get_version(), Some(uuid::Version::Random));
    /// # Ok::<(), idgen_core::Error>(())
    /// ```
    #[inline]
    pub fn try_new() -> Result<Self, Error> {
        let random = super::random::u128()?;
        // Version 4 and the RFC 9562 variant over the random bits, as `uuid::Uuid::new_v4`.
        let v4 = random & 0xffff_ffff_ffff_0fff_3fff_ffff_ffff_ffff | 0x4000_8000_0000_0000_0000;
        Ok(Self::from_uuid(Uuid::from_u128(v4)))
    }

    /// The public ID holding `uuid` (e.g. read from a `uuid` column). Any UUID is accepted.
    ///
    /// ```
    /// use idgen_core::PublicId;
    ///
    /// let uuid = uuid::Uuid::from_u128(0x01890a5d_ac96_774b_bcce_b302099a8057);
    /// assert_eq!(PublicId::<()>::from_uuid(uuid).to_string(), "01h455vb4pex5vsknk084sn02q");
    /// ```
    #[inline]
    pub const fn from_uuid(uuid: Uuid) -> Self {
        Self {
            uuid,
            _type: PhantomData,
        }
    }

    /// The UUID this public ID holds (what goes into a `uuid` column).
    ///
    /// ```
    /// use idgen_core::PublicId;
    ///
    /// let id = PublicId::<()>::new();
    /// assert_eq!(PublicId::<()>::from_uuid(id.uuid()), id);
    /// ```
    #[inline]
    pub const fn uuid(&self) -> Uuid {
        self.uuid
    }

    /// The public ID holding these 16 bytes (big-endian, as in a `BINARY(16)` column).
    ///
    /// ```
    /// use idgen_core::PublicId;
    ///
    /// let id = PublicId::<()>::from_bytes([0xff; 16]);
    /// assert_eq!(id.to_string(), "7zzzzzzzzzzzzzzzzzzzzzzzzz");
    /// ```
    #[inline]
    pub const fn from_bytes(bytes: [u8; 16]) -> Self {
        Self::from_uuid(Uuid::from_bytes(bytes))
    }

    /// The 16 bytes of this public ID (big-endian, as in a `BINARY(16)` or `BLOB` column).
    ///
    /// ```
    /// use idgen_core::PublicId;
    ///
    /// let id = PublicId::<()>::new();
    /// assert_eq!(PublicId::<()>::from_bytes(id.to_bytes()), id);
    /// ```
    #[inline]
    pub const fn to_bytes(&self) -> [u8; 16] {
        *self.uuid.as_bytes()
    }

    /// The 16 bytes, borrowed.
    ///
    /// ```
    /// use idgen_core::PublicId;
    ///
    /// let id = PublicId::<()>::from_bytes([7; 16]);
    /// assert_eq!(id.as_bytes(), &[7; 16]);
    /// ```
    #[inline]
    pub const fn as_bytes(&self) -> &[u8; 16] {
        self.uuid.as_bytes()
    }

    /// The same 128 bits as a public ID of type `U`: an explicit, visible re-typing.
    ///
    /// ```
    /// use idgen_core::{PublicId, PublicIdPrefix};
    ///
    /// struct Order;
    /// impl PublicIdPrefix for Order {
    ///     const PREFIX: &'static str = "ord";
    /// }
    /// let untyped: PublicId = "01h455vb4pex5vsknk084sn02q".parse()?;
    /// assert_eq!(untyped.cast::<Order>().to_string(), "ord_01h455vb4pex5vsknk084sn02q");
    /// # Ok::<(), idgen_core::Error>(())
    /// ```
    #[inline]
    pub const fn cast<U: ?Sized>(self) -> PublicId<U> {
        PublicId::from_uuid(self.uuid)
    }
}

impl<T: PublicIdPrefix + ?Sized> PublicId<T> {
    /// `T`'s prefix (`""` for none), checked against the TypeID rules at compile time.
    ///
    /// ```
    /// use idgen_core::PublicId;
    /// assert_eq!(PublicId::<()>::PREFIX, "");
    /// ```
    pub const PREFIX: &'static str = CheckedPrefix::<T>::PREFIX;

    /// The length of every text form of this type: the prefix, `_` and 26 characters (26 alone
    /// without a prefix). Useful for a `CHAR(n)` column or a validation rule.
    ///
    /// ```
    /// use idgen_core::PublicId;
    /// assert_eq!(PublicId::<()>::TEXT_LEN, 26);
    /// ```
    pub const TEXT_LEN: usize = text::text_len(Self::PREFIX);

    /// Writes the text form into `buf` and returns it: [`Display`](fmt::Display) without a
    /// `String` or a formatter, for a caller who writes into its own buffer (a response body, a
    /// URL, a log line).
    ///
    /// ```
    /// use idgen_core::{PublicId, PublicIdPrefix, public_id::MAX_TEXT_LEN};
    ///
    /// struct Order;
    /// impl PublicIdPrefix for Order {
    ///     const PREFIX: &'static str = "ord";
    /// }
    ///
    /// let id: PublicId<Order> = "ord_01h455vb4pex5vsknk084sn02q".parse()?;
    /// let mut buf = [0u8; MAX_TEXT_LEN];
    /// let text: &str = id.encode_to(&mut buf);
    /// assert_eq!(text, "ord_01h455vb4pex5vsknk084sn02q");
    /// assert_eq!(text, id.to_string());
    /// # Ok::<(), idgen_core::Error>(())
    /// ```
    #[inline]
    pub fn encode_to<'b>(&self, buf: &'b mut [u8; text::MAX_TEXT_LEN]) -> &'b str {
        text::format(Self::PREFIX, self.uuid.as_u128(), buf)
    }

    /// Parses the text form, accepting upper-case letters and returning the canonical value.
    ///
    /// `FromStr` (and serde) are strict: only the lower-case spelling is accepted, so each value
    /// has one spelling. Use this for IDs typed or read back by people (Crockford base32 is
    /// meant to survive that); [`Display`](fmt::Display) then gives the canonical lower-case text.
    ///
    /// ```
    /// use idgen_core::PublicId;
    ///
    /// let id = PublicId::<()>::parse_ignore_case("01H455VB4PEX5VSKNK084SN02Q")?;
    /// assert_eq!(id.to_string(), "01h455vb4pex5vsknk084sn02q");
    /// assert!("01H455VB4PEX5VSKNK084SN02Q".parse::<PublicId>().is_err());
    /// # Ok::<(), idgen_core::Error>(())
    /// ```
    pub fn parse_ignore_case(text: &str) -> Result<Self, Error> {
        text::parse_ignore_case(Self::PREFIX, text).map(|v| Self::from_uuid(Uuid::from_u128(v)))
    }
}

tagged_value_impls!(
    PublicId { uuid: Uuid } from from_uuid,
    /// Byte order, which is also the order of the text forms.
);

impl<T: PublicIdPrefix + ?Sized> fmt::Display for PublicId<T> {
    #[inline]
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Most prefixes are short: a 32-byte buffer is cheaper to clear than the longest one.
        let mut short = [0u8; 32];
        let mut long: [u8; text::MAX_TEXT_LEN];
        let buf: &mut [u8] = if Self::TEXT_LEN <= short.len() {
            &mut short
        } else {
            long = [0u8; text::MAX_TEXT_LEN];
            &mut long
        };
        let text = text::format(Self::PREFIX, self.uuid.as_u128(), buf);
        // `pad` only matters for a width or precision (`{:>40}`); plain `{}` and `to_string`
        // skip its checks.
        if f.width().is_none() && f.precision().is_none() {
            f.write_str(text)
        } else {
            f.pad(text)
        }
    }
}

impl<T: PublicIdPrefix + ?Sized> fmt::Debug for PublicId<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

impl<T: PublicIdPrefix + ?Sized> FromStr for PublicId<T> {
    type Err = Error;

    /// Parses the canonical text form strictly (see the type's documentation).
    #[inline]
    fn from_str(text: &str) -> Result<Self, Error> {
        text::parse(Self::PREFIX, text, text).map(|v| Self::from_uuid(Uuid::from_u128(v)))
    }
}

impl<T: ?Sized> From<[u8; 16]> for PublicId<T> {
    #[inline]
    fn from(bytes: [u8; 16]) -> Self {
        Self::from_bytes(bytes)
    }
}

impl<T: ?Sized> From<PublicId<T>> for [u8; 16] {
    #[inline]
    fn from(id: PublicId<T>) -> [u8; 16] {
        id.to_bytes()
    }
}

impl<T: ?Sized> AsRef<[u8]> for PublicId<T> {
    #[inline]
    fn as_ref(&self) -> &[u8] {
        self.uuid.as_bytes()
    }
}
