//! The `fleet::limits` codes: the bounds that keep every run short whatever the input. The
//! file size, nesting depth and line length are refused before parsing in `src/syntax/limits.rs`,
//! the node count in `src/syntax/mod.rs`, the diagnostic cap in `src/diag/mod.rs`, and a pool's
//! `count` in `src/model/resolve/mod.rs` and `src/check/network.rs`.

codes! {
    FILE_TOO_LARGE = "fleet::limits::file-too-large", Error, None,
    Some("fleetc reads at most 1 MiB of fleet.kdl, so that every run ends in about a second; split vendored content into files under vendor/"),
"## What it does
Refuses a fleet.kdl larger than 1 MiB (1,048,576 bytes) before parsing it.

## Why
The KDL parser reads about 1 MB per second; a fleet of any size fits in a few kilobytes,
because pools carry a `count` rather than one node per machine. A bound keeps every run short
and its memory small, whatever the input.

## Example
    // a 10 MB comment pasted into fleet.kdl

## Instead
Keep long content (manifests, values) in files the fleet references (`vendor/`, `apps/`).
";

    TOO_DEEP = "fleet::limits::too-deep", Error, None,
    Some("blocks nest at most 64 deep (the deepest fleet node is 6); fleetc refuses deeper text before parsing it, so no input can exhaust the parser's stack"),
"## What it does
Refuses text whose `{ }` blocks (or nested `/* */` comments) go deeper than 64 levels, at
the brace that goes one level too deep.

## Why
The KDL parser descends once per level; a few kilobytes of `{` would exhaust its stack and
abort fleetc. The deepest place in the fleet language is six levels down, so 64 leaves room.

## Example
    fleet \"a\" { x { x { x { … 65 levels … } } } }

## Instead
Remove the stray braces; a `{` inside a string value must be quoted.
";

    LINE_TOO_LONG = "fleet::limits::line-too-long", Error, None,
    Some("a line holds at most 16,384 characters; use a multi-line string (`\"\"\"`) or a vendored file for long content"),
"## What it does
Refuses a line longer than 16,384 characters, at the first character past the limit.

## Why
Diagnostics show the line they point at; a line of megabytes cannot be shown, and no
setting of a fleet needs one.

## Example
    fleet \"a\" { gitops repo=\"https://…100,000 characters…\" }

## Instead
Break the value into a multi-line string, or keep it in a file under `vendor/`.
";

    TOO_MANY_NODES = "fleet::limits::too-many-nodes", Error, None,
    Some("a fleet.kdl holds at most 10,000 nodes; machines come from a pool's `count`, not from one node each"),
"## What it does
Refuses a fleet.kdl with more than 10,000 KDL nodes, at the first node past the limit.

## Why
Every node is read, inherited into environments and checked; a bound keeps that work and the
diagnostics it can produce small. The reference fleet has under 100 nodes.

## Example
    label \"a\" \"1\"
    label \"a\" \"1\"   // … 10,000 times

## Instead
Use `count=` on a pool and `pool-defaults` for settings shared by many pools.
";

    TOO_MANY_DIAGNOSTICS = "fleet::limits::too-many-diagnostics", Error, None,
    Some("fleetc reports the first 200 problems; fix them and run again to see the rest"),
"## What it does
Stands for every problem past the 200th: it points at the first one not reported, and the run
fails if any omitted problem is an error.

## Why
Past a few hundred, more diagnostics help nobody and cost time to sort and render; one broken
brace can make thousands.

## Example
    // 10,000 lines of an unknown node
    nod \"x\"

## Instead
Fix the first problems (usually one syntax error causes the rest) and run again.
";

    COUNT_TOO_LARGE = "fleet::limits::count-too-large", Error, None,
    Some("a cluster holds at most 5,000 nodes (Kubernetes' tested limit) and a pool no more nodes than its environment's network has addresses"),
"## What it does
Refuses a pool `count` larger than 5,000, or larger than the number of host addresses of the
environment's private network.

## Why
Kubernetes is tested up to 5,000 nodes per cluster; every node needs an address in the
private network (R6); and fleetc materializes one machine per node, so an unbounded count
would exhaust memory before anything else could be said.

## Example
    network \"10.10.0.0/22\"
    pool \"workers\" count=2147483649

## Instead
    pool \"workers\" count=40
";
}
