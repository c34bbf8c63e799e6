//! Names two stages must spell alike: the sealed inputs a cluster lists (`sealed "…"`), which
//! `fleetc secrets`, `fleetc apply`, the Cluster API family and the review all name, and the
//! add-ons other families look for by name.

/// The sealed input that holds a cluster's Talos machine secrets bundle (R14): fleetc never
/// generates one; `fleetc secrets import` seals the operator's.
pub const TALOS_SECRETS_INPUT: &str = "talos-secrets";
/// The sealed input of a management cluster that holds the Proxmox API token (CAPMOX's
/// credentials, F11).
pub const PROXMOX_API_INPUT: &str = "proxmox-api";
/// The add-on that copies the nocloud `provider-id` into `Node.spec.providerID` (F8).
pub const PROVIDER_ID_ADDON: &str = "talos-ccm";
