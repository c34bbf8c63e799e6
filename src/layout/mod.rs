//! Layout: the contract of `out/`, written once. Every path under the output directory, every
//! name of a root variable or output, resource address, sealed input and cross-family name that
//! a writer (`emit`) and a reader (`apply`, `review`, `check`) must agree on is one function or
//! constant here, and both sides call it. It imports nothing of the crate, so every stage can.

pub mod inventory;
pub mod names;
pub mod paths;
