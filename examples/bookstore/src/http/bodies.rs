//! The request and response bodies (and the paging query) with their OpenAPI schemas.

use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};

use crate::model::{CustomerId, NewLine, OrderPublicId, OrderView};

/// The most orders one page of `GET /customers/{id}/orders` holds, and the default.
pub const MAX_PAGE: u32 = 100;

/// The body of `POST /orders`. Unknown fields are refused.
#[derive(Debug, Deserialize, Serialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct CreateOrder {
    /// Must be the caller (`X-Customer-Id`). A string of canonical decimal digits from "1"; a
    /// JSON number is refused.
    pub customer_id: CustomerId,
    /// 1 to 50 lines.
    #[schema(min_items = 1, max_items = 50)]
    pub lines: Vec<NewLine>,
}

/// The query of `GET /customers/{id}/orders`. Unknown parameters are refused.
#[derive(Debug, Deserialize, Serialize, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct PageQuery {
    /// Orders per page, 1 to 100 (default 100).
    #[param(minimum = 1, maximum = 100)]
    pub limit: Option<u32>,
    /// The `next_cursor` of the previous page: that page's last order.
    pub after: Option<OrderPublicId>,
}

/// A page of a customer's orders, newest first.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct CustomerOrders {
    /// The customer.
    pub customer_id: CustomerId,
    /// At most `limit` orders.
    pub orders: Vec<OrderView>,
    /// The `after` for the next page; `null` on the last page.
    pub next_cursor: Option<OrderPublicId>,
}

/// The body of every error.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
#[schema(example = json!({"error": "not found"}))]
pub struct ErrorBody {
    /// What went wrong, for people.
    pub error: String,
}
