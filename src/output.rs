//! Text renderings of the store for commands that print and exit (`snapshot`, `parse`).

pub mod json;
pub mod latest;
pub mod prom;
pub mod stdout;
pub mod table;

use clap::ValueEnum;

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Format {
    Table,
    Json,
    Prom,
}
