//! A talhelper node's `networkInterfaces` (Talos's v1alpha1 `Device` list) as the multi-document
//! network configuration talhelper v3.1.16 writes for Talos ≥ 1.12 instead of
//! `machine.network.interfaces` (`pkg/talos/multidocs.go` `genMultiDocs`, gated on
//! `VersionContract.MultidocNetworkConfigSupported`, i.e. Talos > 1.11: siderolabs/talos
//! machinery v1.14.0-alpha.2 `pkg/machinery/config/contract.go`; `pkg/talos/nodeconfig.go`
//! `applyNodeOverride` leaves the v1alpha1 list out then). The documents follow
//! `pkg/talos/networkconfig.go`, generator by generator:
//!
//! - `LinkAliasConfig` for each device with a `deviceSelector`, named by its `interface` or
//!   `ethSel<n>`/`bond<n>` (the first unused), its selector a CEL `&&` of the selector's fields
//!   (`buildDeviceSelectorCELExpression`); each bond member selector `<bond>-m<i>`;
//! - `BondConfig` for a bond (its links, mode, hash policy, LACP rate, timers, addresses,
//!   routes, MTU), `DHCPv4Config`/`DHCPv6Config` for `dhcp: true` (`dhcpOptions.ipv4`
//!   defaulting to true, `ipv6` to false, `routeMetric`), `Layer2VIPConfig` for `vip.ip` on
//!   the device's link, `LinkConfig` for a device that is not a bond with addresses, routes or
//!   an MTU (a default route's destination left out), `VLANConfig` `<link>.<id>` for each VLAN
//!   with its own addresses, routes, MTU, DHCP and VIP.
//!
//! A device with a field this does not translate (a bridge, WireGuard, a dummy or ignored
//! link, a bond option beyond those above) makes the whole list `None`: the caller keeps the
//! v1alpha1 list instead and reports it.

use serde_json::{Map, Value, json};

/// The fields of Talos's `Device` (siderolabs/talos v1.13.9
/// `pkg/machinery/config/types/v1alpha1/v1alpha1_types.go` l.1854, `Device`).
pub(super) const DEVICE_FIELDS: &[&str] = &[
    "interface",
    "deviceSelector",
    "addresses",
    "routes",
    "bond",
    "bridge",
    "bridgePort",
    "cidr",
    "vlans",
    "mtu",
    "dhcp",
    "ignore",
    "dummy",
    "dhcpOptions",
    "wireguard",
    "vip",
];
/// talhelper's bond options carried into `BondConfig` (the `Bond` field → the document's).
const BOND_FIELDS: &[(&str, &str)] = &[
    ("mode", "bondMode"),
    ("xmitHashPolicy", "xmitHashPolicy"),
    ("lacpRate", "lacpRate"),
    ("miimon", "miimon"),
    ("updelay", "updelay"),
    ("downdelay", "downdelay"),
    ("minLinks", "minLinks"),
];

/// The selector fields and their CEL form, in talhelper's order.
fn selector_cel(sel: &Map<String, Value>) -> Option<String> {
    let mut parts = Vec::new();
    for key in sel.keys() {
        if !["hardwareAddr", "permanentAddr", "busPath", "driver", "pciID", "physical"].contains(&key.as_str()) {
            return None;
        }
    }
    for (key, form) in [
        ("hardwareAddr", "glob(\"{}\", mac(link.hardware_addr))"),
        ("permanentAddr", "glob(\"{}\", mac(link.permanent_addr))"),
        ("busPath", "glob(\"{}\", link.bus_path)"),
        ("driver", "glob(\"{}\", link.driver)"),
        ("pciID", "glob(\"{}\", link.pciid)"),
    ] {
        if let Some(v) = sel.get(key) {
            let s = v.as_str()?;
            if s.contains('"') || s.contains('\\') {
                return None;
            }
            parts.push(form.replace("{}", s));
        }
    }
    match sel.get("physical") {
        None => {}
        Some(Value::Bool(true)) => parts.push("link.type == 1".into()),
        Some(Value::Bool(false)) => parts.push("link.type != 1".into()),
        Some(_) => return None,
    }
    Some(parts.join(" && "))
}

fn doc(kind: &str, name: &str) -> Map<String, Value> {
    let mut m = Map::new();
    m.insert("apiVersion".into(), json!("v1alpha1"));
    m.insert("kind".into(), json!(kind));
    m.insert("name".into(), json!(name));
    m
}

/// An address as Talos's `netip.Prefix`: a bare address gets its full length.
fn prefix(a: &str) -> String {
    if a.contains('/') {
        a.to_owned()
    } else if a.contains(':') {
        format!("{a}/128")
    } else {
        format!("{a}/32")
    }
}

/// Addresses, routes and MTU of a device or VLAN into a link document (`addCommonLinkConfig`).
fn common(o: &Map<String, Value>, d: &mut Map<String, Value>) -> Option<()> {
    let addresses: Vec<Value> = o
        .get("addresses")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .map(|a| a.as_str().map(|a| json!({"address": prefix(a)})))
        .collect::<Option<_>>()?;
    if !addresses.is_empty() {
        d.insert("addresses".into(), Value::Array(addresses));
    }
    let mut routes = Vec::new();
    for r in o.get("routes").and_then(Value::as_array).into_iter().flatten() {
        let r = r.as_object()?;
        let mut out = Map::new();
        for (key, v) in r {
            match key.as_str() {
                "network" => {
                    let net = v.as_str()?;
                    if net != "0.0.0.0/0" && net != "::/0" && !net.is_empty() {
                        out.insert("destination".into(), json!(net));
                    }
                }
                "gateway" | "source" if !v.as_str()?.is_empty() => {
                    out.insert(key.clone(), v.clone());
                }
                "metric" | "mtu" if v.as_u64()? > 0 => {
                    out.insert(key.clone(), v.clone());
                }
                // Not a field of Talos's `Route`: yaml.v3 drops it when talhelper reads it.
                _ => {}
            }
        }
        routes.push(Value::Object(out));
    }
    if !routes.is_empty() {
        d.insert("routes".into(), Value::Array(routes));
    }
    if let Some(mtu) = o.get("mtu").and_then(Value::as_u64).filter(|m| *m > 0) {
        d.insert("mtu".into(), json!(mtu));
    }
    Some(())
}

fn dhcp(name: &str, options: Option<&Value>, docs: &mut Vec<Value>) -> Option<()> {
    let o = match options {
        None => Map::new(),
        Some(v) => v.as_object()?.clone(),
    };
    if o.keys().any(|k| !["ipv4", "ipv6", "routeMetric"].contains(&k.as_str())) {
        return None;
    }
    let metric = o.get("routeMetric").and_then(Value::as_u64).filter(|m| *m > 0);
    for (key, default, kind) in [("ipv4", true, "DHCPv4Config"), ("ipv6", false, "DHCPv6Config")] {
        if o.get(key).map_or(Some(default), Value::as_bool)? {
            let mut d = doc(kind, name);
            if let Some(m) = metric {
                d.insert("routeMetric".into(), json!(m));
            }
            docs.push(Value::Object(d));
        }
    }
    Some(())
}

fn vip(v: &Value, link: &str, docs: &mut Vec<Value>) -> Option<()> {
    let ip = v.as_object()?.get("ip").and_then(Value::as_str).unwrap_or("");
    if !ip.is_empty() {
        let mut d = doc("Layer2VIPConfig", ip);
        d.insert("link".into(), json!(link));
        docs.push(Value::Object(d));
    }
    Some(())
}

fn truthy(v: Option<&Value>) -> Option<bool> {
    match v {
        None | Some(Value::Null) => Some(false),
        Some(Value::Bool(b)) => Some(*b),
        Some(_) => None,
    }
}

/// The documents talhelper writes for `ifaces` on Talos ≥ 1.12, or `None` when a device sets
/// something this does not translate.
pub fn documents(ifaces: &[Value]) -> Option<Vec<Value>> {
    const DEVICE: &[&str] =
        &["interface", "deviceSelector", "addresses", "routes", "bond", "vlans", "mtu", "dhcp", "dhcpOptions", "vip"];
    let devices: Vec<&Map<String, Value>> = ifaces.iter().map(Value::as_object).collect::<Option<_>>()?;
    // Keys talhelper's decoding would keep but this does not translate refuse the list; keys
    // that are no field of `Device` are dropped, as yaml.v3 drops them.
    for d in &devices {
        if d.keys().any(|k| !DEVICE.contains(&k.as_str()) && DEVICE_FIELDS.contains(&k.as_str())) {
            return None;
        }
    }
    // Names: the interface's own, else the first unused alias (`GenerateLinkAliasConfigBytes`).
    let mut used: Vec<String> =
        devices.iter().filter_map(|d| d.get("interface").and_then(Value::as_str)).map(str::to_owned).collect();
    let mut names = Vec::new();
    let (mut eth, mut bond) = (0, 0);
    let mut docs = Vec::new();
    for d in &devices {
        let own = d.get("interface").and_then(Value::as_str).filter(|s| !s.is_empty());
        let name = match (own, d.get("deviceSelector")) {
            (Some(n), _) => n.to_owned(),
            (None, Some(_)) => {
                let (counter, stem) = if d.contains_key("bond") { (&mut bond, "bond") } else { (&mut eth, "ethSel") };
                let name = loop {
                    let n = format!("{stem}{counter}");
                    *counter += 1;
                    if !used.contains(&n) {
                        break n;
                    }
                };
                used.push(name.clone());
                name
            }
            (None, None) => return None,
        };
        if let Some(sel) = d.get("deviceSelector") {
            let cel = selector_cel(sel.as_object()?)?;
            if !cel.is_empty() {
                let mut a = doc("LinkAliasConfig", &name);
                a.insert("selector".into(), json!({"match": cel}));
                docs.push(Value::Object(a));
            }
        }
        names.push(name);
    }
    // Bond member aliases, then bonds, DHCP, VIPs, links, VLANs: talhelper's order.
    for (d, name) in devices.iter().zip(&names) {
        if let Some(b) = d.get("bond") {
            for (i, sel) in b.get("deviceSelectors").and_then(Value::as_array).into_iter().flatten().enumerate() {
                let cel = selector_cel(sel.as_object()?)?;
                if !cel.is_empty() {
                    let mut a = doc("LinkAliasConfig", &format!("{name}-m{i}"));
                    a.insert("selector".into(), json!({"match": cel}));
                    docs.push(Value::Object(a));
                }
            }
        }
    }
    for (d, name) in devices.iter().zip(&names) {
        let Some(b) = d.get("bond") else { continue };
        let b = b.as_object()?;
        let mut out = doc("BondConfig", name);
        let mut links: Vec<Value> = b.get("interfaces").and_then(Value::as_array).cloned().unwrap_or_default();
        for i in 0..b.get("deviceSelectors").and_then(Value::as_array).map_or(0, Vec::len) {
            links.push(json!(format!("{name}-m{i}")));
        }
        if !links.is_empty() {
            out.insert("links".into(), Value::Array(links));
        }
        for (key, v) in b {
            if matches!(key.as_str(), "interfaces" | "deviceSelectors") {
                continue;
            }
            let (_, field) = BOND_FIELDS.iter().find(|(k, _)| k == key)?;
            if !is_zero(v) {
                out.insert((*field).into(), v.clone());
            }
        }
        common(d, &mut out)?;
        docs.push(Value::Object(out));
    }
    for (d, name) in devices.iter().zip(&names) {
        if truthy(d.get("dhcp"))? {
            dhcp(name, d.get("dhcpOptions"), &mut docs)?;
        }
    }
    for (d, name) in devices.iter().zip(&names) {
        if let Some(v) = d.get("vip") {
            vip(v, name, &mut docs)?;
        }
    }
    for (d, name) in devices.iter().zip(&names) {
        if d.contains_key("bond") {
            continue;
        }
        let mut out = doc("LinkConfig", name);
        common(d, &mut out)?;
        if out.len() > 3 {
            docs.push(Value::Object(out));
        }
    }
    for (d, name) in devices.iter().zip(&names) {
        for v in d.get("vlans").and_then(Value::as_array).into_iter().flatten() {
            let v = v.as_object()?;
            if v.keys()
                .any(|k| !["vlanId", "addresses", "routes", "mtu", "dhcp", "dhcpOptions", "vip"].contains(&k.as_str()))
            {
                return None;
            }
            let id = v.get("vlanId").and_then(Value::as_u64).filter(|i| *i > 0)?;
            let vname = format!("{name}.{id}");
            let mut out = doc("VLANConfig", &vname);
            out.insert("vlanID".into(), json!(id));
            out.insert("parent".into(), json!(name));
            common(v, &mut out)?;
            docs.push(Value::Object(out));
            if truthy(v.get("dhcp"))? {
                dhcp(&vname, v.get("dhcpOptions"), &mut docs)?;
            }
            if let Some(x) = v.get("vip") {
                vip(x, &vname, &mut docs)?;
            }
        }
    }
    Some(docs)
}

/// A value Go's encoder leaves out as its type's zero (`omitempty`, talhelper's `> 0` tests).
pub(super) fn is_zero(v: &Value) -> bool {
    match v {
        Value::Null => true,
        Value::Bool(b) => !b,
        Value::String(s) => s.is_empty(),
        Value::Number(n) => n.as_f64() == Some(0.0),
        Value::Array(a) => a.is_empty(),
        Value::Object(o) => o.is_empty(),
    }
}

/// Removes the mappings left empty.
pub(super) fn prune(v: &mut Value) {
    if let Value::Object(o) = v {
        for x in o.values_mut() {
            prune(x);
        }
        o.retain(|_, x| !x.as_object().is_some_and(Map::is_empty));
    }
}

/// A patch document's `machine.network.disableSearchDomain`, taken out of it (and the mappings
/// it leaves empty pruned), as the `ResolverConfig` document Talos ≥ 1.12 takes instead: its
/// `searchDomains.disableDefault` (siderolabs/talos v1.13.3
/// `pkg/machinery/config/types/network/resolver.go` l.101). Talos refuses the v1alpha1 field
/// beside a `ResolverConfig`, which fleetc writes for a node with `nameservers`
/// (`fleet::talos::patch-deprecated-conflict`). `None`, the document untouched, without it.
pub(super) fn search_domain_as_resolver(v: &mut Value) -> Option<Value> {
    let x = v
        .pointer_mut("/machine/network")
        .and_then(Value::as_object_mut)
        .and_then(|net| net.remove("disableSearchDomain"))?;
    prune(v);
    Some(json!({"apiVersion": "v1alpha1", "kind": "ResolverConfig", "searchDomains": {"disableDefault": x}}))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_search_domain_flag_moves_to_the_resolver_document() {
        let mut v = json!({"machine": {"network": {"disableSearchDomain": true}, "kubelet": {"image": "k"}}});
        assert_eq!(
            search_domain_as_resolver(&mut v),
            Some(
                json!({"apiVersion": "v1alpha1", "kind": "ResolverConfig", "searchDomains": {"disableDefault": true}})
            )
        );
        assert_eq!(v, json!({"machine": {"kubelet": {"image": "k"}}}));
        let mut w = json!({"machine": {"network": {"hostname": "a"}}});
        assert_eq!(search_domain_as_resolver(&mut w), None);
        assert_eq!(w, json!({"machine": {"network": {"hostname": "a"}}}));
    }

    #[test]
    fn a_selected_static_link_with_a_vip_is_an_alias_a_link_and_the_vip() {
        let ifaces = json!([{
            "deviceSelector": {"hardwareAddr": "bc:24:11:86:13:e4"},
            "dhcp": false,
            "addresses": ["10.20.0.70/24"],
            "routes": [{"network": "0.0.0.0/0", "gateway": "10.20.0.1"}],
            "mtu": 1500,
            "vip": {"ip": "10.20.0.79"},
        }]);
        let docs = documents(ifaces.as_array().unwrap()).unwrap();
        assert_eq!(
            docs,
            vec![
                json!({"apiVersion": "v1alpha1", "kind": "LinkAliasConfig", "name": "ethSel0",
                       "selector": {"match": "glob(\"bc:24:11:86:13:e4\", mac(link.hardware_addr))"}}),
                json!({"apiVersion": "v1alpha1", "kind": "Layer2VIPConfig", "name": "10.20.0.79", "link": "ethSel0"}),
                json!({"apiVersion": "v1alpha1", "kind": "LinkConfig", "name": "ethSel0",
                       "addresses": [{"address": "10.20.0.70/24"}], "routes": [{"gateway": "10.20.0.1"}], "mtu": 1500}),
            ]
        );
    }

    #[test]
    fn dhcp_bonds_and_vlans_follow_talhelper() {
        let ifaces = json!([
            {"interface": "bond0", "bond": {"interfaces": ["eno1"], "deviceSelectors": [{"busPath": "0000:01:00.0"}], "mode": "802.3ad", "miimon": 100},
             "dhcp": true, "dhcpOptions": {"routeMetric": 50}},
            {"interface": "eth1", "dhcp": false, "vlans": [{"vlanId": 30, "addresses": ["10.0.30.2/24"], "vip": {"ip": "10.0.30.9"}}]},
        ]);
        let docs = documents(ifaces.as_array().unwrap()).unwrap();
        let kinds: Vec<(&str, &str)> =
            docs.iter().map(|d| (d["kind"].as_str().unwrap(), d["name"].as_str().unwrap())).collect();
        assert_eq!(
            kinds,
            [
                ("LinkAliasConfig", "bond0-m0"),
                ("BondConfig", "bond0"),
                ("DHCPv4Config", "bond0"),
                ("VLANConfig", "eth1.30"),
                ("Layer2VIPConfig", "10.0.30.9"),
            ]
        );
        assert_eq!(docs[1]["links"], json!(["eno1", "bond0-m0"]));
        assert_eq!(docs[1]["bondMode"], json!("802.3ad"));
        assert_eq!(docs[2]["routeMetric"], json!(50));
        assert_eq!(docs[4]["link"], json!("eth1.30"));
    }

    #[test]
    fn what_it_does_not_translate_keeps_the_list() {
        for d in [
            json!({"interface": "br0", "bridge": {"interfaces": ["eno1"]}}),
            json!({"interface": "eno1", "bond": {"interfaces": ["a"], "arpValidate": "all"}}),
            json!({"addresses": ["10.0.0.2/24"]}),
        ] {
            assert_eq!(documents(std::slice::from_ref(&d)), None, "{d}");
        }
    }
}
