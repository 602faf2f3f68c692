//! What the fuzz targets call in idgen-cli, a binary crate: its parser files are included here
//! by path (unchanged, so the targets run the command's own code), and [`cli`] gives the targets
//! a public door to them. Only the files the parsers need are included; the handlers' few lines
//! around them (read the JSON body, pick the layout, call the parser) are repeated in [`cli`].
#![allow(dead_code, unused_imports, clippy::all)]

#[path = "../../idgen-cli/src/bits.rs"]
mod bits;
#[path = "../../idgen-cli/src/describe_uuid.rs"]
mod describe_uuid;
#[path = "../../idgen-cli/src/layout_arg.rs"]
mod layout_arg;
#[path = "../../idgen-cli/src/subject.rs"]
mod subject;
#[path = "../../idgen-cli/src/time_arg.rs"]
mod time_arg;

/// `crate::commands::inspect::{Subject, parse_subject}`, as the web's inspect form imports them.
mod commands {
    pub(crate) mod inspect {
        pub(crate) use crate::subject::{Subject, parse_subject};
    }
}

/// The web API's request bodies and what answers them (`crate::web::…`).
mod web;

pub mod cli;

/// The public ID prefixes the targets parse with: a plain one, and one with an underscore (which
/// TypeID text separates from the suffix by its last underscore).
pub mod prefixes {
    use idgen_core::PublicIdPrefix;

    /// `ord`.
    pub struct Order;
    impl PublicIdPrefix for Order {
        const PREFIX: &'static str = "ord";
    }

    /// `pre_fix`.
    pub struct PreFix;
    impl PublicIdPrefix for PreFix {
        const PREFIX: &'static str = "pre_fix";
    }
}
