//! Macros shared by the ID types.

/// The impls of an ID type `$ty<T: ?Sized>` that holds a `$value` in its field `$field` and
/// uses `T` only as a tag: `Clone`, `Copy`, `PartialEq`, `Eq`, `PartialOrd`, `Ord` and `Hash`,
/// each by the field (`#[derive]` cannot write them: it would ask the tag `T` for each trait
/// too), and `From` both ways between the ID and its value (`$new` makes the ID). The
/// attributes given last document `Ord`'s order.
macro_rules! tagged_value_impls {
    ($ty:ident { $field:ident: $value:ty } from $new:ident, $(#[$ord:meta])*) => {
        impl<T: ?Sized> Clone for $ty<T> {
            #[inline]
            fn clone(&self) -> Self {
                *self
            }
        }

        impl<T: ?Sized> Copy for $ty<T> {}

        impl<T: ?Sized> PartialEq for $ty<T> {
            #[inline]
            fn eq(&self, other: &Self) -> bool {
                self.$field == other.$field
            }
        }

        impl<T: ?Sized> Eq for $ty<T> {}

        impl<T: ?Sized> PartialOrd for $ty<T> {
            #[inline]
            fn partial_cmp(&self, other: &Self) -> Option<::std::cmp::Ordering> {
                Some(self.cmp(other))
            }
        }

        $(#[$ord])*
        impl<T: ?Sized> Ord for $ty<T> {
            #[inline]
            fn cmp(&self, other: &Self) -> ::std::cmp::Ordering {
                self.$field.cmp(&other.$field)
            }
        }

        impl<T: ?Sized> ::std::hash::Hash for $ty<T> {
            #[inline]
            fn hash<H: ::std::hash::Hasher>(&self, state: &mut H) {
                ::std::hash::Hash::hash(&self.$field, state);
            }
        }

        impl<T: ?Sized> From<$value> for $ty<T> {
            #[inline]
            fn from(value: $value) -> Self {
                Self::$new(value)
            }
        }

        impl<T: ?Sized> From<$ty<T>> for $value {
            #[inline]
            fn from(id: $ty<T>) -> $value {
                id.$field
            }
        }
    };
}
