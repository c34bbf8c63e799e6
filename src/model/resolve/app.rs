//! `app "<name>" path=… | chart=… repo=…`: an Argo CD application of a cluster, its source
//! ([`AppSource`]: a directory of the fleet's repository, or a Helm chart), namespace, sync
//! policy and ordering (`after`, `wave`, `postgres` it waits for), into an [`App`].

use super::reader::{Reader, missing, unknown_child};
use super::urls::{UrlUse, expect_url};
use super::{Loader, Resolver, check_relative, nearest_path, refuse_outside};
use crate::diag::{Diagnostic, Diagnostics, codes};
use crate::model::{App, AppSource, Spanned};
use crate::syntax::Node;

impl Resolver<'_> {
    pub(super) fn app(&mut self, node: &Node) -> Option<App> {
        let d = &mut *self.diags;
        let mut r =
            Reader::new(node, &["path", "repo", "chart", "version", "values", "namespace", "after", "wave", "sync"], d);
        let name = r.name_arg(d);
        let source = app_source(node, &r, self.loader, d);
        let namespace = if r.has_prop("namespace") || r.misspelt("namespace") {
            r.require_str("namespace", d)
        } else {
            d.push(missing(node, "property `namespace`").help(
                "the namespace Argo CD syncs the app into (created for it: `CreateNamespace=true`), e.g. `namespace=\"hello\"` (R23)",
            ));
            None
        };
        let mut after: Vec<Spanned<String>> = r.prop_str("after", d).into_iter().collect();
        let wave = r.prop_int::<i64>("wave", d);
        let auto_sync = sync_policy(&r, d);
        r.finish(true, d);
        let mut postgres = Vec::new();
        for child in node.children() {
            match child.name.value.as_str() {
                "after" => {
                    let mut r = Reader::new(child, &[], d);
                    after.extend(r.rest_str(d, "app names"));
                    r.finish(false, d);
                }
                "postgres" => {
                    let mut r = Reader::new(child, &[], d);
                    postgres.extend(r.rest_str(d, "postgres instance names"));
                    r.finish(false, d);
                }
                _ => unknown_child(child, "app", &["after", "postgres"], d),
            }
        }
        Some(App {
            name: name?,
            source: source?,
            namespace: namespace?,
            after,
            wave,
            auto_sync,
            postgres,
            span: node.head_span(),
        })
    }
}

/// Where the app comes from: `path=` (a directory of the fleet's repository, which should
/// exist) or `chart=` with `repo=` (and an optional `version=` and `values=` file), not both.
fn app_source(node: &Node, r: &Reader<'_>, loader: &dyn Loader, d: &mut Diagnostics) -> Option<AppSource> {
    let path = r.prop_str("path", d);
    let chart = r.prop_str("chart", d);
    match (path, chart) {
        (Some(p), None) => {
            for prop in ["repo", "version", "values"] {
                if let Some(pr) = node.prop(prop) {
                    d.push(
                        Diagnostic::new(&codes::UNKNOWN_PROPERTY, format!("a `path` app takes no `{prop}`"))
                            .at(pr.name.span)
                            .label("only for chart apps"),
                    );
                }
            }
            refuse_outside(
                &p,
                "Argo CD reads the app from the fleet's own repository (`gitops repo=`) only: `path` is a directory of it, relative to fleet.kdl's directory. Move or copy the app into the repository",
                d,
            );
            // A path refused above is not also reported missing (one cause, one error).
            let exists = check_relative(&p.value).is_err() || loader.exists(&p.value);
            let nearest =
                if exists || check_relative(&p.value).is_err() { None } else { nearest_path(loader, &p.value) };
            Some(AppSource::Path { path: p, exists, nearest })
        }
        (None, Some(chart)) => {
            let repo = r.require_str("repo", d);
            if let Some(repo) = &repo {
                expect_url(repo, "the chart repository", UrlUse::ChartRepo, d);
            }
            let values = r.prop_str("values", d).inspect(|v| {
                refuse_outside(v, "`values` is a file of the fleet's repository, relative to fleet.kdl's directory", d);
            });
            let values_exists =
                values.as_ref().is_none_or(|v| check_relative(&v.value).is_err() || loader.exists(&v.value));
            let values_nearest = match &values {
                Some(v) if !values_exists => nearest_path(loader, &v.value),
                _ => None,
            };
            repo.map(|repo| AppSource::Chart {
                repo,
                chart,
                version: r.prop_str("version", d),
                values,
                values_exists,
                values_nearest,
            })
        }
        (Some(p), Some(chart)) => {
            d.push(
                Diagnostic::new(&codes::INVALID_VALUE, "an app comes from a `path` or a `chart`, not both")
                    .at(p.span)
                    .label("path here")
                    .related(chart.span, "chart here")
                    .help("keep one source: `path=` for a directory of the fleet's repository, or `chart=` with `repo=` for a Helm chart"),
            );
            // The app is kept (as its `path`), so that an `after` naming it is not also
            // reported as naming no app (one cause, one error).
            Some(AppSource::Path { path: p, exists: true, nearest: None })
        }
        (None, None) => {
            d.push(missing(node, "a source: `path=` (a directory of the fleet's repo) or `chart=` with `repo=`"));
            None
        }
    }
}

/// `sync="auto"` (prune and self-heal, the default) or `sync="manual"`: whether Argo CD syncs
/// the app by itself.
fn sync_policy(r: &Reader<'_>, d: &mut Diagnostics) -> bool {
    match r.prop_str("sync", d) {
        None => true,
        Some(s) if s.value == "auto" => true,
        Some(s) if s.value == "manual" => false,
        Some(s) => {
            d.push(
                Diagnostic::new(&codes::INVALID_VALUE, format!("`{}` is not a sync policy", s.value))
                    .at(s.span)
                    .help("use `auto` (prune and self-heal, the default) or `manual`"),
            );
            true
        }
    }
}
