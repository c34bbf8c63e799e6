//! The `fleet::internal` code: a bug in fleetc, reported rather than a panic. Raised by
//! `src/emit/mod.rs` and `src/syntax/fmt/mod.rs`.

codes! {
    INTERNAL = "fleet::internal::bug", Error, None,
    Some("this is a bug in fleetc; please report it with the fleet.kdl that triggers it"),
"## What it does
Reports a failure inside fleetc that is not the fleet's fault.

## Why
fleetc must never panic nor write a broken file; when an emitter fails unexpectedly, the run
stops with this diagnostic and writes nothing.

## Instead
Report it with the input that triggers it.
";
}
