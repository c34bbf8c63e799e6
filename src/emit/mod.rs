//! Emitters: typed writers that turn the checked model into artifact text.

pub mod hcl;
