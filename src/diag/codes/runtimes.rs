//! The `fleet::runtimes` codes: container runtimes (gVisor, Kata) a cluster declares without what
//! they need on its pools' machines. Checked in `src/check/runtimes.rs`.

codes! {
    RUNTIME_EXTENSION = "fleet::runtimes::missing-extension", Error, Some("R17"),
    None,
"## What it does
Reports a runtime (gvisor, kata) declared for a cluster whose pool installs a schematic
without that runtime's system extension.

## Why (R17)
Runtimes are system extensions baked into the installer image. A pool whose schematic lacks
the extension has no `runsc` or `kata` handler: pods asking for the RuntimeClass never start.
And the standard installer removes the extensions from every node at the next upgrade, and
reports success.

## Example
    schematic \"plain\" { }
    runtimes \"gvisor\"
    pool \"system\" schematic=\"plain\"

## Instead
    schematic \"isolated\" { extension \"siderolabs/gvisor\" }
    pool \"system\" schematic=\"isolated\"
";

    KATA_KVM = "fleet::runtimes::kata-needs-kvm", Warning, Some("F6"),
    Some("Kata runs pods in lightweight VMs and needs /dev/kvm (F6); say `kvm=#true` on the size once you know its instances expose it"),
"## What it does
Warns when a cluster declares the Kata runtime on a pool whose size does not say that its
instances expose hardware virtualization.

## Why (F6)
Kata starts every pod in a lightweight virtual machine and needs `/dev/kvm`. Not every
instance type exposes nested virtualization; on those, Kata pods never start.

## Example
    runtimes \"kata\"
    size \"small\" type=\"PRO2-S\"

## Instead
Use a size whose instances expose /dev/kvm and say so:
    size \"metal\" type=\"EM-A115X-SSD\" kvm=#true
";
}
