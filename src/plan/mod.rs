//! Plans: pure functions from the fleet to an ordered list of operations that a person
//! carries out, one commit (or one command) at a time. Nothing here touches a cluster.

pub mod upgrade;
