//! [`PublicIdPrefix`]: the type prefix of a [`PublicId`](crate::public_id::PublicId) or an
//! `IdCodec` token.

/// Names the type prefix of an entity's public IDs, e.g. `ord` for orders: `ord_01h455vb4pex5vsknk084sn02q`.
///
/// The prefix follows the TypeID rules: lower-case `a`–`z` and `_`, at most 63 characters, not
/// starting or ending with `_` (TypeID recommends at least 3 characters). An empty prefix means
/// no prefix and no `_`: the text is just the 26 base32 characters, as for the untyped
/// `PublicId<()>`. A prefix breaking these rules is a **compile-time** error where the type is
/// first used with [`PublicId`](crate::public_id::PublicId) or `IdCodec`.
///
/// ```
/// use idgen_core::{PublicId, PublicIdPrefix};
///
/// struct Order;
/// impl PublicIdPrefix for Order {
///     const PREFIX: &'static str = "ord";
/// }
///
/// let id = PublicId::<Order>::new();
/// assert!(id.to_string().starts_with("ord_"));
/// ```
///
/// A prefix breaking the rules does not compile once the text form is used:
///
/// ```compile_fail
/// use idgen_core::{PublicId, PublicIdPrefix};
///
/// struct Order;
/// impl PublicIdPrefix for Order {
///     const PREFIX: &'static str = "Order"; // upper-case: not a TypeID prefix
/// }
///
/// println!("{}", PublicId::<Order>::new());
/// ```
pub trait PublicIdPrefix {
    /// The prefix, without the `_` separator; `""` for none.
    const PREFIX: &'static str;
}

/// The untyped form: no prefix.
///
/// ```
/// use idgen_core::PublicId;
///
/// let id: PublicId = "01h455vb4pex5vsknk084sn02q".parse()?;
/// assert_eq!(id.uuid().to_string(), "01890a5d-ac96-774b-bcce-b302099a8057");
/// # Ok::<(), idgen_core::Error>(())
/// ```
impl PublicIdPrefix for () {
    const PREFIX: &'static str = "";
}

/// The longest prefix TypeID allows.
pub(crate) const MAX_PREFIX_LEN: usize = 63;

/// Why `prefix` breaks the TypeID prefix rules (a-z and `_`, at most 63 characters, not
/// starting or ending with `_`), or `None` when it keeps them. [`PublicIdPrefix`] applies the
/// same check at compile time; this is for prefixes known only at run time.
///
/// ```
/// use idgen_core::public_id::prefix_problem;
/// assert_eq!(prefix_problem("ord"), None);
/// assert_eq!(prefix_problem(""), None);
/// assert_eq!(prefix_problem("Ord"), Some("a public ID prefix holds only the characters a-z and '_'"));
/// assert!(prefix_problem("_ord").is_some());
/// ```
pub const fn prefix_problem(prefix: &str) -> Option<&'static str> {
    let b = prefix.as_bytes();
    if b.len() > MAX_PREFIX_LEN {
        return Some("a public ID prefix has at most 63 characters");
    }
    if b.is_empty() {
        return None;
    }
    if b[0] == b'_' || b[b.len() - 1] == b'_' {
        return Some("a public ID prefix must not start or end with '_'");
    }
    let mut i = 0;
    while i < b.len() {
        if !(b[i].is_ascii_lowercase() || b[i] == b'_') {
            return Some("a public ID prefix holds only the characters a-z and '_'");
        }
        i += 1;
    }
    None
}

/// `T::PREFIX`, checked at compile time: a bad prefix fails the build where it is used.
pub(crate) struct CheckedPrefix<T: ?Sized>(core::marker::PhantomData<fn() -> T>);

impl<T: PublicIdPrefix + ?Sized> CheckedPrefix<T> {
    pub(crate) const PREFIX: &'static str = match prefix_problem(T::PREFIX) {
        None => T::PREFIX,
        Some(problem) => panic!("{}", problem),
    };
}

#[cfg(test)]
mod tests {
    use super::prefix_problem;

    #[test]
    fn follows_the_typeid_rules() {
        for ok in ["", "a", "ord", "pre_fix", "a_b_c", &"a".repeat(63)] {
            assert_eq!(prefix_problem(ok), None, "{ok:?}");
        }
        for (bad, why) in [
            ("_ord", "start or end"),
            ("ord_", "start or end"),
            ("_", "start or end"),
            ("Ord", "a-z"),
            ("or-d", "a-z"),
            ("ord1", "a-z"),
            ("ördr", "a-z"),
            (&"a".repeat(64), "63"),
        ] {
            assert!(prefix_problem(bad).unwrap().contains(why), "{bad:?}");
        }
    }
}
