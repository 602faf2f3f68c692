//! idgen-cli's `web` modules that read and answer the API's request bodies (paths relative to
//! `fuzz/src/`, this file's directory).

#[path = "../../idgen-cli/src/web/compose.rs"]
pub(crate) mod compose;
#[path = "../../idgen-cli/src/web/free_body.rs"]
pub(crate) mod free_body;
#[path = "../../idgen-cli/src/web/inspect.rs"]
pub(crate) mod inspect;
#[path = "../../idgen-cli/src/web/view.rs"]
pub(crate) mod view;
