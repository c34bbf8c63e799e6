//! Bare metal (docs/metal.md): for each cluster of a `metal` environment, the inventory of
//! its machines (`metal/<env>/<cluster>/machines.yaml`: hostname, role, pool, address, MAC,
//! install disk, architecture, installer and boot assets) and, per environment, a README on
//! how to boot them. There is no infrastructure to build: the Talos documents are
//! `talos/<env>/<cluster>/` like everywhere, with the `metal` installer, and `fleetc apply`
//! sends each machine its config through talosctl in maintenance mode after checking that the
//! machine is the declared one (its MAC, or its disks).
//!
//! The boot asset URLs are the Image Factory's (siderolabs/image-factory v1.5.0
//! `internal/frontend/http/http.go` l.200-204, routes `/image/:schematic/:version/:path` and
//! `/pxe/:schematic/:version/:path`; the path names of
//! `internal/frontend/http/templates/llms.txt` l.79-92 and l.110-120; the installer
//! reference of `internal/frontend/http/ui.go` l.698-704, `<platform>-installer`).

use super::{EmitError, EmitResult, HEADER, yaml};
use crate::artifacts::set::ArtifactSet;
use crate::layout::inventory::{BootAssets, Disk, Machine as MachineEntry, MetalInventory};
use crate::layout::paths;
use crate::model::{Cluster, Environment, Fleet, IMAGE_FACTORY, Machine, Pool, Provider, Schematic, Version};

/// The Image Factory's PXE host (`llms.txt` l.110, "PXE API").
pub const PXE_HOST: &str = "pxe.talos.dev";

/// The boot assets of `schematic` at `talos` for `arch` (`amd64`, `arm64`), the SecureBoot
/// variants when `secure_boot` (siderolabs/image-factory v1.4.0 `internal/profile/profile.go`:
/// `<platform>-<arch>[-secureboot]` for the ISO and the disk image, `parsePlatformArch`;
/// `<platform>-<arch>[-secureboot]-uki.efi`; kernel, initramfs and cmdline have no variant).
pub fn boot_assets(schematic: &Schematic, talos: Version, arch: &str, secure_boot: bool) -> BootAssets {
    let base = format!("https://{IMAGE_FACTORY}/image/{}/{}", schematic.id, talos.v());
    let sb = if secure_boot { "-secureboot" } else { "" };
    BootAssets {
        iso: format!("{base}/metal-{arch}{sb}.iso"),
        kernel: format!("{base}/kernel-{arch}"),
        initramfs: format!("{base}/initramfs-{arch}.xz"),
        cmdline: format!("{base}/cmdline-metal-{arch}"),
        ipxe: format!("https://{PXE_HOST}/pxe/{}/{}/metal-{arch}{sb}", schematic.id, talos.v()),
        raw: format!("{base}/metal-{arch}{sb}.raw.xz"),
        uki: secure_boot.then(|| format!("{base}/metal-{arch}-secureboot-uki.efi")),
    }
}

fn entry(
    fleet: &Fleet,
    env: &Environment,
    cluster: &Cluster,
    pool: &Pool,
    m: &Machine,
) -> Result<MachineEntry, EmitError> {
    let schematic = fleet
        .schematic(&pool.schematic.value)
        .ok_or_else(|| EmitError(format!("schematic `{}` of pool `{}` is not declared", pool.schematic, pool.name)))?;
    let address = m.address.as_ref().ok_or_else(|| EmitError(format!("machine `{}` has no address", m.hostname)))?;
    let v = |f: &Option<crate::model::Spanned<String>>| f.as_ref().map(|x| x.value.clone());
    let disk = |d: &crate::model::InstallDisk| Disk {
        size: v(&d.size),
        model: v(&d.model),
        serial: v(&d.serial),
        wwid: v(&d.wwid),
        bus_path: v(&d.bus_path),
        device: v(&d.device),
    };
    let install_disk = m.settings.install_disk.as_ref().map(disk);
    let ephemeral_disk = m.settings.ephemeral_disk.as_ref().map(disk);
    let talos = cluster.talos.value;
    Ok(MachineEntry {
        hostname: m.hostname.clone(),
        role: pool.role.as_str().to_owned(),
        pool: pool.name.value.clone(),
        address: address.value.to_string(),
        maintenance_address: m.maintenance_address.as_ref().map(|a| a.value.to_string()),
        mac: m.mac.as_ref().map(|x| x.value.to_ascii_lowercase()),
        arch: m.settings.arch().to_owned(),
        install_disk,
        ephemeral_disk,
        schematic: schematic.id.clone(),
        installer: fleet
            .installer(env, cluster, pool)
            .ok_or_else(|| EmitError(format!("no installer for pool `{}`", pool.name)))?,
        boot: boot_assets(schematic, talos, m.settings.arch(), pool.disk.secure_boot()),
    })
}

/// The inventory of one cluster of a metal environment.
pub fn inventory(fleet: &Fleet, env: &Environment, cluster: &Cluster) -> Result<MetalInventory, EmitError> {
    let mut machines = Vec::new();
    for pool in cluster.pools() {
        for m in &pool.machines {
            machines.push(entry(fleet, env, cluster, pool, m)?);
        }
    }
    Ok(MetalInventory {
        cluster: cluster.name.value.clone(),
        talos_version: cluster.talos.value.v(),
        kubernetes_version: cluster.kubernetes.value.to_string(),
        endpoint: cluster.endpoint_url(),
        platform: env.platform().to_owned(),
        machines,
    })
}

pub fn emit(fleet: &Fleet) -> EmitResult {
    let mut out = ArtifactSet::new();
    for env in fleet.environments.iter().filter(|e| matches!(e.provider, Provider::Metal(_))) {
        let mut readme = readme_head(env);
        for cluster in &env.clusters {
            let inv = inventory(fleet, env, cluster)?;
            let text = yaml::documents(Some(HEADER), &[&inv]).map_err(|e| EmitError(e.to_string()))?;
            out.insert(paths::metal_inventory(&env.name.value, &cluster.name.value), text.as_bytes())?;
            readme.push_str(&readme_cluster(env, &inv));
        }
        out.insert(paths::readme(&paths::metal_env_dir(&env.name.value)), readme.as_bytes())?;
    }
    Ok(out)
}

fn readme_head(env: &Environment) -> String {
    format!(
        "<!-- {HEADER} -->\n# Bare metal: environment `{env}`\n\n\
         No infrastructure is built here: each machine below boots a Talos image from the Image\n\
         Factory, waits in maintenance mode, and `fleetc apply {env}` sends it its config (after\n\
         checking that it is the declared machine: its MAC address, or its disks), one\n\
         control-plane node at a time, then bootstraps etcd once, then the workers, then Argo CD.\n\
         See docs/metal.md.\n\n\
         Boot each machine from one of its assets:\n\n\
         - **ISO** (USB stick, BMC virtual media): write `iso` to the medium and boot it.\n\
         - **PXE**: serve `kernel` and `initramfs` with the kernel arguments of `cmdline`, or chain\n\
         \x20 the iPXE script: `chain --replace --autofree <ipxe>`.\n\
         - **Raw image** (single-board computers): `xz -d < raw | dd of=<the install disk>`.\n\n\
         Every asset carries the schematic (its extensions, an SBC board overlay), so the booted\n\
         machine is the one the installer will install.\n",
        env = env.name.value
    )
}

fn readme_cluster(env: &Environment, inv: &MetalInventory) -> String {
    let mut s = format!(
        "\n## Cluster `{}` (Talos {}, Kubernetes {})\n\nInventory: `{}`.\n\n\
         | machine | role | address | MAC | arch | ISO | iPXE |\n|---|---|---|---|---|---|---|\n",
        inv.cluster,
        inv.talos_version,
        inv.kubernetes_version,
        paths::metal_inventory(&env.name.value, &inv.cluster)
    );
    for m in &inv.machines {
        s.push_str(&format!(
            "| `{}` | {} | `{}` | {} | {} | <{}> | <{}> |\n",
            m.hostname,
            m.role,
            m.address,
            m.mac.as_deref().map_or("-".to_owned(), |x| format!("`{x}`")),
            m.arch,
            m.boot.iso,
            m.boot.ipxe
        ));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The asset names the Image Factory serves (siderolabs/image-factory v1.5.0
    /// `internal/frontend/http/templates/llms.txt` l.79-92; its profile parser,
    /// `internal/profile/profile.go`, reads `kernel-<arch>`, `initramfs-<arch>.xz` and
    /// `<platform>-<arch>.<disk format>[.xz]`).
    #[test]
    fn boot_asset_urls_follow_the_factory_routes() {
        let spec = crate::schematic::Schematic::default();
        let canonical = spec.canonical_yaml().unwrap();
        let id = spec.id().unwrap();
        let s = Schematic {
            name: crate::model::Spanned::new("base".into(), crate::diag::Span::default()),
            spec,
            extensions: Vec::new(),
            canonical,
            id: id.clone(),
            span: crate::diag::Span::default(),
        };
        let v: Version = "1.13.9".parse().unwrap();
        let a = boot_assets(&s, v, "arm64", false);
        assert_eq!(a.iso, format!("https://factory.talos.dev/image/{id}/v1.13.9/metal-arm64.iso"));
        assert_eq!(a.kernel, format!("https://factory.talos.dev/image/{id}/v1.13.9/kernel-arm64"));
        assert_eq!(a.initramfs, format!("https://factory.talos.dev/image/{id}/v1.13.9/initramfs-arm64.xz"));
        assert_eq!(a.cmdline, format!("https://factory.talos.dev/image/{id}/v1.13.9/cmdline-metal-arm64"));
        assert_eq!(a.ipxe, format!("https://pxe.talos.dev/pxe/{id}/v1.13.9/metal-arm64"));
        assert_eq!(a.raw, format!("https://factory.talos.dev/image/{id}/v1.13.9/metal-arm64.raw.xz"));
        assert_eq!(s.installer("metal", v, false), format!("factory.talos.dev/metal-installer/{id}:v1.13.9"));
    }
}
