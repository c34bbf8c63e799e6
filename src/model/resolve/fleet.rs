//! The `fleet "<name>" { … }` block and its fleet-wide children: the settings every
//! environment inherits, `gitops` ([`Gitops`]), `argocd` ([`ArgoCd`]), `addon`s ([`Addon`]),
//! `schematic`s (read in `schematic`) and the `environment`s (read in `environment`, after
//! their `from=` chain is applied in `inherit`), gathered into the [`Fleet`].

use std::collections::BTreeMap;

use super::reader::{Reader, unknown_child};
use super::settings::{SETTINGS, Settings};
use super::urls::{UrlUse, expect_url};
use super::{Resolver, check_relative, duplicates};
use crate::diag::{Diagnostic, codes};
use crate::model::{Addon, ArgoCd, Fleet, Gitops, PatchLevel, Schematic, Spanned};
use crate::syntax::Node;

impl Resolver<'_> {
    pub(super) fn fleet(&mut self, node: &Node) -> Option<Fleet> {
        let mut r = Reader::new(node, &[], self.diags);
        let name = r.name_arg(self.diags);
        r.finish(true, self.diags);
        let mut settings = Settings::default();
        let mut gitops = None;
        let mut argocd = None;
        let mut schematics: BTreeMap<String, Schematic> = BTreeMap::new();
        let mut addons: BTreeMap<String, Addon> = BTreeMap::new();
        let mut env_nodes: Vec<&Node> = Vec::new();
        let mut unresolved = std::collections::BTreeSet::new();
        self.patch_level = PatchLevel::Fleet;
        for child in node.children() {
            // A repeat is reported on the tree (`duplicates`) and not read: the first counts.
            if duplicates::is_repeat(child, node.children()) {
                continue;
            }
            if self.setting(child, &mut settings) {
                continue;
            }
            match child.name.value.as_str() {
                "gitops" => gitops = self.gitops(child),
                "argocd" => argocd = self.argocd(child),
                "schematic" => match self.schematic(child) {
                    Some(s) => {
                        schematics.insert(s.name.value.clone(), s);
                    }
                    None => unresolved.extend(duplicates::named_key(child).map(|(_, n)| format!("schematic {n}"))),
                },
                "addon" => match self.addon(child) {
                    Some(a) => {
                        addons.insert(a.name.value.clone(), a);
                    }
                    None => unresolved.extend(duplicates::named_key(child).map(|(_, n)| format!("add-on {n}"))),
                },
                "environment" => env_nodes.push(child),
                _ => unknown_child(
                    child,
                    "fleet",
                    &[SETTINGS, &["gitops", "argocd", "schematic", "addon", "environment"]].concat(),
                    self.diags,
                ),
            }
        }
        let name = name?;
        let fleet_name = name.value.clone();
        let mut environments = Vec::new();
        for env in &env_nodes {
            let Some(merged) = self.inherited_env(env, &env_nodes, &mut Vec::new()) else { continue };
            if let Some(e) = self.environment(&merged, env, &fleet_name, &settings) {
                environments.push(e);
            }
        }
        Some(Fleet { name, gitops, argocd, schematics, addons, environments, unresolved })
    }

    fn gitops(&mut self, node: &Node) -> Option<Gitops> {
        let r = Reader::new(node, &["repo", "revision", "path"], self.diags);
        let repo = r.require_str("repo", self.diags);
        if let Some(repo) = &repo {
            expect_url(repo, "the `gitops` repository", UrlUse::GitRepo, self.diags);
        }
        let revision = r.prop_str("revision", self.diags).unwrap_or_else(|| Spanned::new("main".into(), r.span()));
        let path = r.prop_str("path", self.diags).filter(|p| {
            let ok = check_relative(&p.value);
            if let Err(e) = &ok {
                self.diags.push(Diagnostic::new(&codes::INVALID_VALUE, e.clone()).at(p.span).help(
                    "`path` is where fleet.kdl's directory sits inside the repository, e.g. `path=\"infra/fleet\"`",
                ));
            }
            ok.is_ok()
        });
        r.finish(false, self.diags);
        Some(Gitops { repo: repo?, revision, path, span: node.head_span() })
    }

    fn argocd(&mut self, node: &Node) -> Option<ArgoCd> {
        let r = Reader::new(node, &["version", "namespace", "manifest", "sha256"], self.diags);
        let version = r.require_parsed("version", self.diags);
        let namespace = r.prop_str("namespace", self.diags).unwrap_or_else(|| Spanned::new("argocd".into(), r.span()));
        let manifest = self.vendored(&r);
        r.finish(false, self.diags);
        Some(ArgoCd { version: version?, namespace, manifest: manifest?, span: node.head_span() })
    }

    fn addon(&mut self, node: &Node) -> Option<Addon> {
        let mut r = Reader::new(node, &["version", "manifest", "sha256"], self.diags);
        let name = r.name_arg(self.diags);
        let version = r.require_str("version", self.diags);
        let manifest = self.vendored(&r);
        r.finish(false, self.diags);
        Some(Addon { name: name?, version: version?, manifest: manifest?, span: node.head_span() })
    }
}
