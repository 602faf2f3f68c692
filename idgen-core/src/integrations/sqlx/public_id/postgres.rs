//! PostgreSQL: `UUID`, and `UUID[]` for `WHERE public_id = ANY($1)`.
//!
//! sqlx's `Uuid` has exactly this layout (16 bytes in the binary format, the hyphenated text in
//! the text format), and a PostgreSQL `uuid` always holds 16 bytes, so everything delegates to it.

use sqlx::encode::IsNull;
use sqlx::error::BoxDynError;
use sqlx::postgres::{PgArgumentBuffer, PgHasArrayType, PgTypeInfo, PgValueRef};
use sqlx::{Decode, Encode, Postgres, Type};
use uuid::Uuid;

use crate::public_id::PublicId;

impl<T: ?Sized> Type<Postgres> for PublicId<T> {
    fn type_info() -> PgTypeInfo {
        <Uuid as Type<Postgres>>::type_info()
    }

    fn compatible(ty: &PgTypeInfo) -> bool {
        <Uuid as Type<Postgres>>::compatible(ty)
    }
}

impl<T: ?Sized> PgHasArrayType for PublicId<T> {
    fn array_type_info() -> PgTypeInfo {
        <Uuid as PgHasArrayType>::array_type_info()
    }

    fn array_compatible(ty: &PgTypeInfo) -> bool {
        <Uuid as PgHasArrayType>::array_compatible(ty)
    }
}

impl<T: ?Sized> Encode<'_, Postgres> for PublicId<T> {
    fn encode_by_ref(&self, buf: &mut PgArgumentBuffer) -> Result<IsNull, BoxDynError> {
        <Uuid as Encode<'_, Postgres>>::encode_by_ref(&self.uuid(), buf)
    }

    fn size_hint(&self) -> usize {
        16
    }
}

impl<'r, T: ?Sized> Decode<'r, Postgres> for PublicId<T> {
    fn decode(value: PgValueRef<'r>) -> Result<Self, BoxDynError> {
        <Uuid as Decode<'r, Postgres>>::decode(value).map(PublicId::from_uuid)
    }
}
