//! R9/F9 in the code itself: every Scaleway resource and data source names its project, and
//! its zone or region where it takes one, from the module's variables. The provider's own
//! arguments lose to the SDK's `SCW_*` variables (scaleway v2.81.0 `internal/meta/meta.go`,
//! `MergeProfiles(…, envProfile)`), but a resource's `project_id`, `zone` and `region` are
//! used as given: with them set, a plain `tofu apply` in a shell that exports
//! `SCW_DEFAULT_PROJECT_ID` still builds in the variables file's project.

use crate::emit::hcl::{Block, Body, Item};

/// The placement arguments each type takes (optional, not deprecated), read from the
/// provider's schema (scaleway 2.81.0, `tofu providers schema -json`): `zone` of
/// `scaleway_vpc_private_network` is deprecated, `zone` of `scaleway_ipam_ip` and `region` of
/// `scaleway_lb` are computed, `scaleway_lb_acl`, `scaleway_lb_backend` and
/// `scaleway_lb_frontend` take none (they follow their load balancer).
pub(super) const PLACEMENT: &[(&str, &[&str])] = &[
    ("scaleway_block_volume", &["project_id", "zone"]),
    ("scaleway_instance_image", &["project_id", "zone"]),
    ("scaleway_instance_server", &["project_id", "zone"]),
    ("scaleway_ipam_ip", &["project_id", "region"]),
    ("scaleway_lb", &["project_id", "zone"]),
    ("scaleway_lb_acl", &[]),
    ("scaleway_lb_backend", &[]),
    ("scaleway_lb_frontend", &[]),
    ("scaleway_object_bucket", &["project_id", "region"]),
    ("scaleway_rdb_instance", &["project_id", "region"]),
    ("scaleway_registry_namespace", &["project_id", "region"]),
    ("scaleway_secret", &["project_id", "region"]),
    ("scaleway_secret_version", &["region"]),
    ("scaleway_vpc", &["project_id", "region"]),
    ("scaleway_vpc_gateway_network", &["zone"]),
    ("scaleway_vpc_private_network", &["project_id", "region"]),
    ("scaleway_vpc_public_gateway", &["project_id", "zone"]),
    ("scaleway_vpc_public_gateway_ip", &["project_id", "zone"]),
    ("scaleway_vpc_public_gateway_pat_rule", &["zone"]),
];

/// The placement arguments of `ty`; `Err` for a Scaleway type the table does not know, so that
/// a new type cannot slip through unplaced.
pub(super) fn of(ty: &str) -> Result<&'static [&'static str], String> {
    PLACEMENT
        .iter()
        .find(|(t, _)| *t == ty)
        .map(|(_, a)| *a)
        .ok_or_else(|| format!("`{ty}`: no placement (project, zone, region) is known for this Scaleway type (R9)"))
}

/// Adds `project_id = var.project_id`, `zone = var.zone`, `region = var.region` (as each type
/// takes them) to every Scaleway `resource` and `data` block of `body`, after its `for_each`.
pub(super) fn place(body: &Body) -> Result<Body, String> {
    let mut out = Body::new();
    for item in body.items() {
        match item {
            Item::Block(b)
                if matches!(b.ident(), "resource" | "data")
                    && b.labels().first().is_some_and(|t| t.starts_with("scaleway_")) =>
            {
                let args = of(&b.labels()[0])?;
                let mut inner = Body::new();
                let items = b.body().items();
                let skip = usize::from(matches!(items.first(), Some(Item::Attr(a)) if a.name() == "for_each"));
                for it in &items[..skip] {
                    inner.push(it.clone());
                }
                for a in args {
                    inner.attr(*a, super::hclx::r(&format!("var.{a}")));
                }
                for it in &items[skip..] {
                    inner.push(it.clone());
                }
                let labels: Vec<&str> = b.labels().iter().map(String::as_str).collect();
                out.push(Block::new(b.ident(), &labels, inner));
            }
            other => {
                out.push(other.clone());
            }
        }
    }
    Ok(out)
}

/// The placement variables `body`'s Scaleway blocks use, in a fixed order.
pub(super) fn used(body: &Body) -> Result<Vec<&'static str>, String> {
    let mut used = Vec::new();
    for item in body.items() {
        if let Item::Block(b) = item
            && matches!(b.ident(), "resource" | "data")
            && let Some(t) = b.labels().first()
            && t.starts_with("scaleway_")
        {
            used.extend(of(t)?.iter().copied());
        }
    }
    Ok(["project_id", "region", "zone"].into_iter().filter(|a| used.contains(a)).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_block_gets_its_placement_after_for_each() {
        let mut b = Body::new();
        b.block("resource", &["scaleway_secret", "this"], |r| {
            r.attr("for_each", super::super::hclx::r("var.secrets")).attr("name", "x");
        });
        let placed = place(&b).unwrap().render().unwrap();
        assert!(placed.contains("for_each   = var.secrets\n  project_id = var.project_id\n  region     = var.region\n  name       = \"x\""), "{placed}");
        let mut unknown = Body::new();
        unknown.block("resource", &["scaleway_unknown_thing", "x"], |_| {});
        assert!(place(&unknown).is_err());
    }
}
