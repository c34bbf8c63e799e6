//! The `fleet::discovery` code: Talos discovery on a cluster that is not public (R21). Checked in
//! `src/check/discovery.rs`.

codes! {
    DISCOVERY_PRIVATE = "fleet::discovery::private-cluster", Error, Some("R21"),
    Some("Talos discovery talks to a hosted service by default: a cluster with no public address would still announce its membership to a third party (R21)"),
"## What it does
Reports discovery turned on for a cluster whose API endpoint is not public.

## Why (R21)
Talos ships with discovery on, towards a hosted service. A cluster that has no public address
would still announce its members to a third party.

## Example
    endpoint address=\"10.10.0.10\"
    discovery #true

## Instead
    discovery #false   // the default
";
}
