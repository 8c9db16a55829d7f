//! Shared helpers for the integration tests (see `tests/`).
