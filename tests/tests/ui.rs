//! Compile-fail suite: every mistake in `tests/ui/fail/` must be rejected with the message
//! checked in next to it (`.stderr`); every program in `tests/ui/pass/` must build and run.
//!
//! The `.stderr` files are rustc 1.95's output. After a deliberate change to a diagnostic,
//! regenerate them with `TRYBUILD=overwrite cargo test -p ppstencil-tests --test ui` and read
//! every diff: each message must say what is wrong and what to write instead.

#[test]
fn ui() {
    let t = trybuild::TestCases::new();
    t.compile_fail("ui/fail/*.rs");
    t.pass("ui/pass/*.rs");
}
