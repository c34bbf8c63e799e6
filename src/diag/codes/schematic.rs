//! The `fleet::schematic` codes: Image Factory schematics fleetc cannot encode, or extensions it
//! does not know. Reported while resolving, in `src/model/resolve/mod.rs`, and by
//! `src/check/extensions.rs`.

codes! {
    SCHEMATIC_UNENCODABLE = "fleet::schematic::unencodable", Error, Some("F2"),
    Some("the schematic ID is the SHA-256 of the factory's own encoding; fleetc refuses values whose encoding it cannot reproduce with certainty rather than publish a wrong ID"),
"## What it does
Reports a schematic value (kernel argument, META value, overlay option) whose exact bytes in
the Image Factory's encoding fleetc cannot be sure of.

## Why (F2)
The schematic ID is the SHA-256 of the bytes the factory encodes. A wrong guess gives an ID
that the factory does not serve, or worse, one that names another schematic.

## Example
    kernel-arg \"console=ttyS0\\r\"

## Instead
Remove carriage returns, U+2028/U+2029 and other unusual characters from the value.
";

    UNKNOWN_EXTENSION = "fleet::schematic::unknown-extension", Error, Some("R17"), None,
"## What it does
Reports a schematic extension that is not an official Talos system extension of the cluster's
Talos minor (the table fleetc ships, from github.com/siderolabs/extensions at the tag of each
minor; see `src/upstream/extensions.rs`), with the closest official name.

## Why (R17)
The Image Factory builds the installer from the schematic; an unknown name fails at the factory
during `fleetc apply`, long after review, and the schematic ID in out/ is computed from the typo.
The installer must carry the extensions the pools need (R17).

## Example
    schematic \"base\" {
        extension \"siderolabs/qemu-guest-agnet\"
    }

## Instead
    schematic \"base\" {
        extension \"siderolabs/qemu-guest-agent\"
    }
";
}
