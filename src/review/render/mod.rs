//! The four formats of a [`Review`](super::Review): [`unified`] (the default, a patch with the
//! impact before its first `---`), [`stat`] (one line per file and object), [`markdown`] (a
//! pull-request comment with a size cap) and [`json`]. Renderers read a finished review and
//! never compute one; colour is the caller's choice.

pub mod json;
pub mod markdown;
pub mod stat;
pub mod unified;
