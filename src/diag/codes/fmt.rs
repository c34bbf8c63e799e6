//! The `fleet::fmt` code: a fleet.kdl `fleetc fmt` cannot print back without losing something.
//! Raised by the formatter, in `src/syntax/fmt/mod.rs`.

codes! {
    FMT_CANNOT_REPRINT = "fleet::fmt::cannot-reprint", Error, None,
    Some("move the comment to its own line above the node, or to the end of the node's line; `fleetc fmt` changes only whitespace and refuses to move or drop a comment"),
"## What it does
`fleetc fmt` reports a comment written where its canonical layout has no room for one:
inside a type annotation `( … )`, between a type annotation and what it annotates, between
a property's name and `=` or between `=` and the value, or after a line continuation `\\`
(where it would end the node's line). The file is left as it is.

## Why
The canonical layout writes `key=value`, `(type)value` and each node on one line. Keeping
such a comment would need moving it, and `fleetc fmt` changes nothing but whitespace: it
refuses rather than reorder or drop what was written.

## Example
    pool \"system\" count= /* was 3 */ 2

## Instead
    pool \"system\" count=2 /* was 3 */
";
}
