//! Device tests.
