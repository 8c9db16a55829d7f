//! Library part of the `ppwave` program.
#![warn(missing_docs)]

pub mod bench;
