//! [`Id`]: the typed 64-bit ID.

use std::fmt;
use std::marker::PhantomData;
use std::str::FromStr;

use crate::canonical_int;
use crate::error::Error;
use crate::snowflake::SnowflakeId;

/// A 64-bit ID of an entity of type `T`: `Id<Order>` is not `Id<Customer>`.
///
/// * **Never negative.** It holds `0..=i64::MAX`, like [`SnowflakeId`]: every ID idgen hands
///   out is in that range (Snowflake IDs from 0, hi-lo IDs from 1), it fits a signed `BIGINT`,
///   and its text needs no sign. A negative number is refused with an error naming it, whether
///   it comes from code ([`new`](Self::new), `TryFrom`), text, JSON or a database column.
/// * **Text:** canonical decimal, exactly what [`Display`](fmt::Display) prints: no sign, no
///   leading zero, no whitespace, at most `i64::MAX`; each rejection names the input and what
///   is wrong with it. `Debug` shows the type: `Id<Order>(42)`.
/// * **JSON** (feature `serde`): a string (`"112719806108546862"`), because JavaScript rounds
///   integers above 2^53; read from a string or an integer, with the same strictness. Binary
///   formats get an `i64`.
/// * **Columns:** the same as [`SnowflakeId`] in sqlx, diesel and sea-orm (`BIGINT`, `INT8[]`
///   arrays on PostgreSQL, MySQL `BIGINT UNSIGNED` readable), with the same checks on read.
/// * `Copy`, `Eq`, `Ord`, `Hash`, `Send` and `Sync` whatever `T` is: `T` is only a tag.
///
/// ```
/// use idgen_core::Id;
///
/// struct Order;
/// struct Customer;
///
/// let order: Id<Order> = "112719806108546862".parse()?;
/// assert_eq!(order.get(), 112719806108546862);
/// assert_eq!(order.to_string(), "112719806108546862");
/// assert_eq!(format!("{order:?}"), "Id<Order>(112719806108546862)");
///
/// let err = "007".parse::<Id<Order>>().unwrap_err();
/// assert_eq!(
///     err.to_string(),
///     r#""007" is not an ID of type Order: a leading zero is not allowed (each value has one spelling)"#
/// );
/// assert!(Id::<Order>::new(-1).is_none());
///
/// // A customer ID is another type; converting is explicit.
/// let customer: Id<Customer> = order.cast();
/// # let _ = customer;
/// # Ok::<(), idgen_core::Error>(())
/// ```
///
/// Mixing types does not compile:
///
/// ```compile_fail
/// use idgen_core::Id;
/// struct Order;
/// struct Customer;
/// fn load_customer(id: Id<Customer>) {}
/// let order = Id::<Order>::new(7).unwrap();
/// load_customer(order);
/// ```
#[cfg_attr(
    feature = "diesel",
    derive(diesel::expression::AsExpression, diesel::deserialize::FromSqlRow),
    diesel(sql_type = diesel::sql_types::BigInt)
)]
#[repr(transparent)]
pub struct Id<T: ?Sized = ()> {
    id: SnowflakeId,
    _type: PhantomData<fn() -> T>,
}

impl<T: ?Sized> Id<T> {
    /// The smallest ID, 0.
    ///
    /// ```
    /// assert_eq!(idgen_core::Id::<()>::MIN.get(), 0);
    /// ```
    pub const MIN: Id<T> = Id::from_snowflake(SnowflakeId::MIN);

    /// The largest ID, `i64::MAX`.
    ///
    /// ```
    /// assert_eq!(idgen_core::Id::<()>::MAX.get(), i64::MAX);
    /// ```
    pub const MAX: Id<T> = Id::from_snowflake(SnowflakeId::MAX);

    /// The ID for `value`, or `None` when `value` is negative.
    ///
    /// ```
    /// use idgen_core::Id;
    /// struct Order;
    /// assert_eq!(Id::<Order>::new(42).map(Id::get), Some(42));
    /// assert!(Id::<Order>::new(-42).is_none());
    /// ```
    #[inline]
    pub const fn new(value: i64) -> Option<Self> {
        match SnowflakeId::new(value) {
            Some(id) => Some(Self::from_snowflake(id)),
            None => None,
        }
    }

    /// The ID's value, as stored in a `BIGINT` column.
    ///
    /// ```
    /// # use idgen_core::Id;
    /// assert_eq!(Id::<()>::new(7).unwrap().get(), 7);
    /// ```
    #[inline]
    pub const fn get(self) -> i64 {
        self.id.get()
    }

    /// The ID's value as a `u64` (always exact: it is never negative).
    ///
    /// ```
    /// # use idgen_core::Id;
    /// assert_eq!(Id::<()>::MAX.as_u64(), i64::MAX as u64);
    /// ```
    #[inline]
    pub const fn as_u64(self) -> u64 {
        self.id.as_u64()
    }

    /// The same value as an ID of type `U`: an explicit, visible re-typing.
    ///
    /// ```
    /// use idgen_core::Id;
    /// struct Order;
    /// struct Invoice;
    /// let order = Id::<Order>::new(9).unwrap();
    /// let invoice: Id<Invoice> = order.cast();
    /// assert_eq!(invoice.get(), 9);
    /// ```
    #[inline]
    pub const fn cast<U: ?Sized>(self) -> Id<U> {
        Id::from_snowflake(self.id)
    }

    /// The typed ID holding a Snowflake ID's value (every Snowflake ID is one).
    ///
    /// ```
    /// use idgen_core::{Id, SnowflakeId};
    /// struct Order;
    /// let id = Id::<Order>::from_snowflake(SnowflakeId::new(5).unwrap());
    /// assert_eq!(id.get(), 5);
    /// ```
    #[inline]
    pub const fn from_snowflake(id: SnowflakeId) -> Self {
        Self {
            id,
            _type: PhantomData,
        }
    }

    /// The value as an untyped [`SnowflakeId`] (for a layout's `decompose`, say).
    ///
    /// ```
    /// use idgen_core::{Id, Layout};
    /// struct Order;
    /// let id = Id::<Order>::new(4194439168).unwrap();
    /// assert_eq!(Layout::TWITTER.decompose(id.to_snowflake())?.node, 33);
    /// # Ok::<(), idgen_core::Error>(())
    /// ```
    #[inline]
    pub const fn to_snowflake(self) -> SnowflakeId {
        self.id
    }

    /// The error for a number outside `0..=i64::MAX`, naming it and this type.
    pub(crate) fn out_of_range(value: i128) -> Error {
        Error::IntegerOutOfRange {
            value,
            what: type_label::<T>(),
            range: "an ID is between 0 and 9223372036854775807 (i64::MAX)",
        }
    }

    /// The error for a text that is not an ID, naming it, this type and the reason.
    pub(crate) fn invalid_text(text: &str, reason: &'static str) -> Error {
        Error::InvalidIntegerText {
            input: canonical_int::excerpt(text),
            what: type_label::<T>(),
            reason,
        }
    }

    /// The Snowflake ID inside, borrowed (for column encoders that delegate to it).
    #[cfg_attr(not(feature = "diesel"), allow(dead_code))]
    pub(crate) fn as_snowflake(&self) -> &SnowflakeId {
        &self.id
    }

    /// A boxed column-decoder error of `SnowflakeId`, worded for this type (see [`retype`](Self::retype)).
    #[cfg_attr(not(any(feature = "sqlx", feature = "diesel")), allow(dead_code))]
    pub(crate) fn retype_boxed(err: crate::BoxError) -> crate::BoxError {
        match err.downcast::<Error>() {
            Ok(err) => Box::new(Self::retype(*err)),
            Err(other) => other,
        }
    }

    /// Re-words an error about a `SnowflakeId` (from a column decoder it delegates to) as one
    /// about this type; other errors pass through.
    pub(crate) fn retype(err: Error) -> Error {
        match err {
            Error::IdOutOfRange { value } => Self::out_of_range(value),
            Error::InvalidIdText { input, reason } => Error::InvalidIntegerText {
                input,
                what: type_label::<T>(),
                reason,
            },
            Error::NotAnInteger { value, kind, .. } => Error::NotAnInteger {
                value,
                what: type_label::<T>(),
                kind,
            },
            other => other,
        }
    }
}

/// `an ID of type Order`: `T`'s name without its module path, for messages.
pub(crate) fn type_label<T: ?Sized>() -> String {
    format!("an ID of type {}", short_type_name::<T>())
}

/// `T`'s name without the module path of its outer type (`bookstore::model::Order` → `Order`,
/// `a::Wrapper<b::Inner>` → `Wrapper<b::Inner>`).
pub(crate) fn short_type_name<T: ?Sized>() -> &'static str {
    let full = std::any::type_name::<T>();
    let head = &full[..full.find('<').unwrap_or(full.len())];
    match head.rfind("::") {
        Some(i) => &full[i + 2..],
        None => full,
    }
}

tagged_value_impls!(
    Id { id: SnowflakeId } from from_snowflake,
    /// Numeric order (for Snowflake IDs: creation order).
);

impl<T: ?Sized> fmt::Display for Id<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&self.id.get(), f)
    }
}

impl<T: ?Sized> fmt::Debug for Id<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Id<{}>({})", short_type_name::<T>(), self.id.get())
    }
}

impl<T: ?Sized> FromStr for Id<T> {
    type Err = Error;

    /// Parses canonical decimal digits only, the text `Display` prints (see the type's docs).
    fn from_str(s: &str) -> Result<Self, Error> {
        canonical_int::parse_unsigned(s, canonical_int::Limit::I64Max)
            .map(|v| Self::from_snowflake(SnowflakeId::from_raw(v)))
            .map_err(|reason| Self::invalid_text(s, reason))
    }
}

impl<T: ?Sized> TryFrom<i64> for Id<T> {
    type Error = Error;
    fn try_from(value: i64) -> Result<Self, Error> {
        Self::new(value).ok_or_else(|| Self::out_of_range(value.into()))
    }
}

impl<T: ?Sized> TryFrom<u64> for Id<T> {
    type Error = Error;
    fn try_from(value: u64) -> Result<Self, Error> {
        i64::try_from(value)
            .map_err(|_| Self::out_of_range(value.into()))
            .and_then(Self::try_from)
    }
}

impl<T: ?Sized> TryFrom<i128> for Id<T> {
    type Error = Error;
    fn try_from(value: i128) -> Result<Self, Error> {
        i64::try_from(value)
            .ok()
            .and_then(Self::new)
            .ok_or_else(|| Self::out_of_range(value))
    }
}

impl<T: ?Sized> From<Id<T>> for i64 {
    #[inline]
    fn from(id: Id<T>) -> i64 {
        id.get()
    }
}

impl<T: ?Sized> From<Id<T>> for u64 {
    #[inline]
    fn from(id: Id<T>) -> u64 {
        id.as_u64()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Order;
    mod nested {
        pub(super) struct Customer;
    }

    #[test]
    fn parse_accepts_exactly_the_shared_canonical_texts() {
        for &(text, value) in crate::canonical_int::tests::ACCEPTED {
            let id: Id<Order> = text.parse().unwrap();
            assert_eq!(id.as_u64(), value);
            assert_eq!(id.to_string(), text);
        }
    }

    #[test]
    fn parse_rejects_each_bad_input_naming_it_and_the_type() {
        for &(text, reason) in crate::canonical_int::tests::REJECTED {
            let err = text.parse::<Id<Order>>().unwrap_err().to_string();
            assert!(
                err.starts_with(&format!("{text:?} is not an ID of type Order: ")),
                "{err}"
            );
            assert!(err.contains(reason), "{text:?}: {err}");
        }
    }

    #[test]
    fn conversions_check_the_range_and_name_the_value() {
        assert_eq!(Id::<Order>::try_from(5i64).unwrap().get(), 5);
        assert_eq!(
            Id::<Order>::try_from(-5i64).unwrap_err().to_string(),
            "-5 is not an ID of type Order: an ID is between 0 and 9223372036854775807 (i64::MAX)"
        );
        assert_eq!(
            Id::<nested::Customer>::try_from(1u64 << 63)
                .unwrap_err()
                .to_string(),
            "9223372036854775808 is not an ID of type Customer: an ID is between 0 and 9223372036854775807 (i64::MAX)"
        );
        assert!(Id::<Order>::try_from(i128::MIN).is_err());
        assert_eq!(Id::<Order>::try_from(i64::MAX as u64).unwrap(), Id::MAX);
        let snowflake = SnowflakeId::new(77).unwrap();
        assert_eq!(SnowflakeId::from(Id::<Order>::from(snowflake)), snowflake);
        assert_eq!(i64::from(Id::<Order>::MAX), i64::MAX);
        assert_eq!(u64::from(Id::<Order>::MIN), 0);
    }

    #[test]
    fn debug_names_the_type_without_its_path() {
        assert_eq!(
            format!("{:?}", Id::<nested::Customer>::new(3).unwrap()),
            "Id<Customer>(3)"
        );
        assert_eq!(format!("{:?}", Id::<()>::new(3).unwrap()), "Id<()>(3)");
        assert_eq!(
            format!("{:?}", Id::<Vec<nested::Customer>>::new(3).unwrap()),
            format!("Id<Vec<{}>>(3)", std::any::type_name::<nested::Customer>())
        );
        assert_eq!(format!("{:>4}", Id::<Order>::new(7).unwrap()), "   7");
    }

    #[test]
    fn retype_rewords_snowflake_errors_only() {
        let err = Id::<Order>::retype(Error::IdOutOfRange { value: -1 });
        assert_eq!(
            err.to_string(),
            "-1 is not an ID of type Order: an ID is between 0 and 9223372036854775807 (i64::MAX)"
        );
        let err = Id::<Order>::retype(Error::NotAnInteger {
            value: "1.5".into(),
            what: "a Snowflake ID".into(),
            kind: "floating-point",
        });
        assert!(
            err.to_string().starts_with(
                "1.5 is not an ID of type Order: the database returned a floating-point value"
            ),
            "{err}"
        );
        assert!(matches!(
            Id::<Order>::retype(Error::MissingNode),
            Error::MissingNode
        ));
    }

    #[test]
    fn retype_boxed_rewords_only_idgen_errors() {
        let err = Id::<Order>::retype_boxed(Box::new(Error::IdOutOfRange { value: -5 }));
        assert_eq!(
            err.to_string(),
            "-5 is not an ID of type Order: an ID is between 0 and 9223372036854775807 (i64::MAX)"
        );
        let other = Id::<Order>::retype_boxed("mismatched types".into());
        assert_eq!(other.to_string(), "mismatched types");
    }

    #[test]
    fn traits_do_not_require_them_of_the_type() {
        fn all<X: Copy + Eq + Ord + std::hash::Hash + Send + Sync + Unpin>() {}
        all::<Id<Order>>();
        all::<Id<dyn std::any::Any>>();
        let mut ids = [Id::<Order>::new(3), Id::new(1), Id::new(2)].map(Option::unwrap);
        ids.sort();
        assert_eq!(ids.map(Id::get), [1, 2, 3]);
    }

    proptest::proptest! {
        #[test]
        fn display_and_parse_round_trip(v in 0i64..=i64::MAX) {
            let id = Id::<Order>::new(v).unwrap();
            proptest::prop_assert_eq!(id.to_string().parse::<Id<Order>>().unwrap(), id);
        }

        #[test]
        fn parses_exactly_what_snowflake_id_parses(s in "\\PC{0,24}") {
            proptest::prop_assert_eq!(
                s.parse::<Id<Order>>().ok().map(Id::get),
                s.parse::<SnowflakeId>().ok().map(SnowflakeId::get)
            );
        }
    }
}
