//! Argo CD apps (R23, R28, F7): a fleet with apps has a git repository; `after` has no circle
//! and explicit waves respect it; path apps name a directory that exists; charts are pinned;
//! Application names are unique on each Argo CD; apps that read a postgres password can get
//! it. App names unique per cluster are checked in `names`.
//!
//! Apps declared on an environment are copies in each of its clusters, with the same spans:
//! a problem in one is reported once.

use std::collections::{BTreeMap, BTreeSet};

use crate::diag::{Diagnostic, Diagnostics, Span, codes, did_you_mean};
use crate::layout::names::SCALEWAY_API_KEY_INPUT;
use crate::model::gitops;
use crate::model::{App, AppSource, Cluster, Environment, Fleet, Provider};

pub(super) fn check(fleet: &Fleet, diags: &mut Diagnostics) {
    let mut found = Vec::new();
    if fleet.gitops.is_none()
        && let Some((_, app)) = fleet.clusters().find_map(|(e, c)| c.apps.first().map(|a| (e, a)))
    {
        found.push(
            Diagnostic::new(
                &codes::NO_GITOPS,
                format!("app `{}` is declared but the fleet has no `gitops` repository", app.name.value),
            )
            .at(app.name.span)
            .label("delivered by Argo CD from git"),
        );
    }
    for env in &fleet.environments {
        for c in &env.clusters {
            for app in &c.apps {
                source(app, &mut found);
                postgres(env, c, app, &mut found);
            }
            if !cycles(c, &mut found) {
                waves(c, &mut found);
            }
            manual(env, c, &mut found);
            store_credential(env, c, &mut found);
            if let (Some(_), Some(argocd)) = (&fleet.gitops, &fleet.argocd)
                && gitops::has_root(env, c)
            {
                found.extend(super::versions::addon_range("argo-cd", argocd.version.value, argocd.version.span, c));
            }
            if fleet.gitops.is_some() && gitops::runs_argocd(c) {
                name_clashes(env, c, &mut found);
            }
        }
    }
    let mut seen: BTreeSet<(&str, Option<Span>, String)> = BTreeSet::new();
    for d in found {
        if seen.insert((d.code.name, d.span, d.message.clone())) {
            diags.push(d);
        }
    }
}

/// A pinned chart version names one release: no range, wildcard or moving tag.
fn is_exact_version(v: &str) -> bool {
    let v = v.strip_prefix('v').unwrap_or(v);
    let core = v.split(['-', '+']).next().unwrap_or("");
    let parts: Vec<&str> = core.split('.').collect();
    !v.is_empty()
        && parts.len() == 3
        && parts.iter().all(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()))
        && !v.contains([' ', '*', '^', '~', '>', '<', '=', '|', ','])
}

fn source(app: &App, found: &mut Vec<Diagnostic>) {
    if let AppSource::Chart { values: Some(v), values_exists: false, values_nearest, .. } = &app.source {
        let near = values_nearest.as_ref().map(|n| format!("did you mean `{n}`? ")).unwrap_or_default();
        found.push(
                Diagnostic::new(
                    &codes::APP_VALUES_MISSING,
                    format!("chart app `{}` reads values from `{}`, which does not exist beside fleet.kdl", app.name.value, v.value),
                )
                .at(v.span)
                .label("no such file")
                .help(format!(
                    "{near}Argo CD reads the values file from the fleet's repository (`$values/{}`), and a file it cannot open fails the app's manifest generation (R23): commit the file, or correct the path",
                    v.value
                )),
            );
    }
    match &app.source {
        AppSource::Path { path, exists: false, nearest } => {
            let mut d = Diagnostic::new(
                &codes::APP_PATH_MISSING,
                format!("app `{}` reads `{}`, which does not exist beside fleet.kdl", app.name.value, path.value),
            )
            .at(path.span)
            .label("no such directory");
            if let Some(near) = nearest {
                d = d.help(format!(
                    "did you mean `{near}`? Argo CD reads the path from the fleet's repository (R23); until the directory is committed there, the app stays out of sync"
                ));
            }
            found.push(d)
        }
        AppSource::Chart { chart, version: None, .. } => found.push(
            Diagnostic::new(
                &codes::CHART_UNPINNED,
                format!("chart app `{}` has no `version` for chart `{}`", app.name.value, chart.value),
            )
            .at(app.name.span)
            .label("unpinned chart"),
        ),
        AppSource::Chart { version: Some(v), .. } if !is_exact_version(&v.value) => found.push(
            Diagnostic::new(
                &codes::CHART_UNPINNED,
                format!("chart app `{}` asks for version `{}`, not one exact release", app.name.value, v.value),
            )
            .at(v.span)
            .label("a range or tag moves"),
        ),
        _ => {}
    }
}

fn postgres(env: &Environment, c: &Cluster, app: &App, found: &mut Vec<Diagnostic>) {
    for p in &app.postgres {
        if !env.postgres.iter().any(|x| x.name.value == p.value) {
            let known: Vec<&str> = env.postgres.iter().map(|x| x.name.value.as_str()).collect();
            let help = match did_you_mean(&p.value, known.iter().copied()) {
                Some(m) => format!("did you mean `{m}`?"),
                None if known.is_empty() => format!("environment `{}` declares no postgres instance", env.name.value),
                None => format!("declared: {}", known.iter().map(|k| format!("`{k}`")).collect::<Vec<_>>().join(", ")),
            };
            found.push(
                Diagnostic::new(&codes::DANGLING_REFERENCE, format!("no postgres instance `{}`", p.value))
                    .at(p.span)
                    .label("unknown postgres instance")
                    .help(help),
            );
        } else if !matches!(env.provider, Provider::Scaleway(_)) {
            found.push(
                Diagnostic::new(
                    &codes::NO_SECRET_STORE,
                    format!(
                        "app `{}` reads the password of `{}`, but environment `{}` has no Secret Manager",
                        app.name.value, p.value, env.name.value
                    ),
                )
                .at(p.span)
                .label(format!("{} has no secret store fleetc can use", env.provider.name())),
            );
        } else if gitops::eso_app(c).is_none() {
            found.push(
                Diagnostic::new(
                    &codes::NO_SECRET_OPERATOR,
                    format!(
                        "app `{}` reads the password of `{}`, but no app of cluster `{}` installs External Secrets Operator",
                        app.name.value, p.value, c.name.value
                    ),
                )
                .at(p.span)
                .label("delivered by an ExternalSecret"),
            );
        }
    }
}

/// Reports every circle in `after`, once each; true when there is one.
fn cycles(c: &Cluster, found: &mut Vec<Diagnostic>) -> bool {
    let index: BTreeMap<&str, usize> = c.apps.iter().enumerate().map(|(i, a)| (a.name.value.as_str(), i)).collect();
    // Edges i → j with the place of the `after` entry that makes them.
    let edges: Vec<Vec<(usize, Span)>> = c
        .apps
        .iter()
        .map(|a| a.after.iter().filter_map(|s| index.get(s.value.as_str()).map(|&j| (j, s.span))).collect())
        .collect();
    let mut reported: BTreeSet<Vec<usize>> = BTreeSet::new();
    let mut state = vec![0u8; c.apps.len()]; // 0 new, 1 on the stack, 2 done
    let mut stack: Vec<(usize, Span)> = Vec::new();
    #[allow(clippy::too_many_arguments)]
    fn dfs(
        i: usize,
        via: Span,
        edges: &[Vec<(usize, Span)>],
        state: &mut [u8],
        stack: &mut Vec<(usize, Span)>,
        cycles: &mut Vec<Vec<(usize, Span)>>,
    ) {
        state[i] = 1;
        stack.push((i, via));
        for &(j, span) in &edges[i] {
            match state[j] {
                0 => dfs(j, span, edges, state, stack, cycles),
                1 => {
                    let start = stack.iter().position(|(k, _)| *k == j).unwrap_or(0);
                    // Each entry: (app, span of the `after` that leads to the next one).
                    let nodes: Vec<usize> = stack[start..].iter().map(|(k, _)| *k).collect();
                    let mut cyc = Vec::new();
                    for (n, &k) in nodes.iter().enumerate() {
                        let span = if n + 1 < nodes.len() { stack[start + n + 1].1 } else { span };
                        cyc.push((k, span));
                    }
                    cycles.push(cyc);
                }
                _ => {}
            }
        }
        stack.pop();
        state[i] = 2;
    }
    let mut all = Vec::new();
    for i in 0..c.apps.len() {
        if state[i] == 0 {
            dfs(i, Span::default(), &edges, &mut state, &mut stack, &mut all);
        }
    }
    for mut cyc in all {
        // Start at the app declared first, so the same circle always reads the same way.
        let first = cyc.iter().enumerate().min_by_key(|(_, (k, _))| *k).map_or(0, |(n, _)| n);
        cyc.rotate_left(first);
        let key: Vec<usize> = cyc.iter().map(|(k, _)| *k).collect();
        if !reported.insert(key) {
            continue;
        }
        let name = |k: usize| c.apps[k].name.value.as_str();
        let mut path: Vec<String> = cyc.iter().map(|(k, _)| format!("`{}`", name(*k))).collect();
        path.push(format!("`{}`", name(cyc[0].0)));
        let (last, closing) = cyc[cyc.len() - 1];
        let mut d =
            Diagnostic::new(&codes::APP_CYCLE, format!("apps wait for each other in a circle: {}", path.join(" → ")))
                .at(closing)
                .label(format!("`{}` waits for `{}`, closing the circle", name(last), name(cyc[0].0)));
        for w in cyc.windows(2) {
            d = d.related(w[0].1, format!("`{}` waits for `{}`", name(w[0].0), name(w[1].0)));
        }
        found.push(d);
    }
    !reported.is_empty()
}

/// An explicit wave must come after the waves of the apps the app waits for.
fn waves(c: &Cluster, found: &mut Vec<Diagnostic>) {
    let nodes: Vec<gitops::WaveNode> = c
        .apps
        .iter()
        .map(|a| gitops::WaveNode {
            name: a.name.value.clone(),
            after: a.after.iter().map(|s| s.value.clone()).collect(),
            wave: a.wave.as_ref().map(|w| w.value),
        })
        .collect();
    let waves = gitops::waves(&nodes);
    for app in &c.apps {
        let Some(w) = &app.wave else { continue };
        for dep in &app.after {
            let Some(&dw) = waves.get(&dep.value) else { continue };
            if w.value <= dw {
                found.push(
                    Diagnostic::new(
                        &codes::WAVE_BEFORE_DEPENDENCY,
                        format!(
                            "app `{}` is in wave {} but waits for `{}`, in wave {dw}",
                            app.name.value, w.value, dep.value
                        ),
                    )
                    .at(w.span)
                    .label(format!("not after wave {dw}"))
                    .related(dep.span, "waits for it here"),
                );
            }
        }
    }
}

/// The secret store's API key is written at apply from the cluster's sealed
/// `scaleway-api-key` (apply::argocd): a cluster whose apps read a password lists it.
fn store_credential(env: &Environment, c: &Cluster, found: &mut Vec<Diagnostic>) {
    if !gitops::needs_secrets(env, c) || c.sealed.iter().any(|n| n.value == SCALEWAY_API_KEY_INPUT) {
        return;
    }
    let Some((app, p)) = c.apps.iter().find_map(|a| a.postgres.first().map(|p| (a, p))) else { return };
    found.push(
        Diagnostic::new(
            &codes::NO_STORE_CREDENTIAL,
            format!(
                "cluster `{}` reads postgres passwords through External Secrets, but lists no sealed `{SCALEWAY_API_KEY_INPUT}` for the secret store's API key",
                c.name.value
            ),
        )
        .at(p.span)
        .label(format!("app `{}` reads the password of `{}` through the store", app.name.value, p.value))
        .help(format!(
            "add `sealed \"{SCALEWAY_API_KEY_INPUT}\"` to cluster `{}` and import the key with `fleetc secrets import {}/{} {SCALEWAY_API_KEY_INPUT} key.yaml` (a YAML map with `access_key` and `secret_key`): `fleetc apply` writes the store's Secret from it, never out/ (R23, F11)",
            c.name.value, env.name.value, c.name.value
        )),
    );
}

/// An app synced by hand is in the root's last wave (emit::argocd): nothing may wait for it,
/// and it takes no explicit wave.
fn manual(env: &Environment, c: &Cluster, found: &mut Vec<Diagnostic>) {
    let is_manual = |name: &str| c.apps.iter().any(|a| a.name.value == name && !a.auto_sync);
    for app in &c.apps {
        for dep in app.after.iter().filter(|d| is_manual(&d.value)) {
            found.push(
                Diagnostic::new(
                    &codes::WAITS_FOR_MANUAL,
                    format!("app `{}` waits for `{}`, which is synced by hand", app.name.value, dep.value),
                )
                .at(dep.span)
                .label(format!("the root's sync would stop here until someone syncs `{}`", dep.value))
                .help(format!(
                    "drop `{}` from `after`, or let Argo CD sync it (remove `sync=\"manual\"`): the root waits for each wave to be Healthy, and a manual app is not until it is synced (F7)",
                    dep.value
                )),
            );
        }
        if let (false, Some(w)) = (app.auto_sync, &app.wave) {
            found.push(
                Diagnostic::new(
                    &codes::WAITS_FOR_MANUAL,
                    format!("app `{}` is synced by hand and has an explicit `wave`", app.name.value),
                )
                .at(w.span)
                .label("a manual app takes the root's last wave")
                .help("remove `wave=`: fleetc puts every manual app in the root's last wave, the only one the root does not wait for; in an earlier wave it would hold back every later one until someone syncs it (F7)"),
            );
        }
    }
    if gitops::needs_secrets(env, c)
        && let Some(eso) = gitops::eso_app(c).filter(|a| !a.auto_sync)
    {
        found.push(
            Diagnostic::new(
                &codes::WAITS_FOR_MANUAL,
                format!(
                    "app `{}` installs External Secrets Operator and is synced by hand, but the secrets of cluster `{}` wait for it",
                    eso.name.value, c.name.value
                ),
            )
            .at(eso.name.span)
            .label("the secrets Application waits for this app")
            .help("let Argo CD sync the External Secrets chart (remove `sync=\"manual\"`): the secrets Application and every app that reads a password come after it (F7)"),
        );
    }
}

fn name_clashes(env: &Environment, inst: &Cluster, found: &mut Vec<Diagnostic>) {
    let mut first: BTreeMap<String, Option<Span>> = BTreeMap::new();
    for (name, span) in gitops::applications(env, inst) {
        match first.get(&name) {
            None => {
                first.insert(name, span);
            }
            Some(prev) => {
                let (at, other) = match (span, *prev) {
                    (Some(s), p) => (s, p),
                    (None, Some(p)) => (p, None),
                    (None, None) => continue,
                };
                let mut d = Diagnostic::new(
                    &codes::APPLICATION_NAME_CLASH,
                    format!(
                        "two Applications on the Argo CD of `{}/{}` would be named `{name}`",
                        env.name.value, inst.name.value
                    ),
                )
                .at(at)
                .label(if other.is_some() || span.is_none() {
                    format!("becomes Application `{name}`")
                } else {
                    "fleetc names one of its own Applications so".to_owned()
                });
                if let Some(o) = other {
                    d = d.related(o, format!("also Application `{name}`"));
                }
                found.push(d);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::is_exact_version;
    use crate::compile::{MapLoader, compile};

    /// An app declared on the environment is a copy in each cluster: one problem, one report.
    #[test]
    fn inherited_app_is_reported_once() {
        let cluster = |name: &str, ip: &str| {
            format!(
                r#"cluster "{name}" {{
                    runtimes "gvisor"
                    endpoint address="{ip}"
                    pool-defaults schematic="isolated" size="small"
                    control-plane count=3
                }}"#
            )
        };
        let text = staging(&format!(
            r#"app "eso" chart="external-secrets" repo="https://charts.external-secrets.io" namespace="eso"
        app "a" path="apps/nowhere" namespace="a" after="a"
        {}
        {}"#,
            cluster("one", "10.10.0.10"),
            cluster("two", "10.10.0.20")
        ));
        let c = compile("fleet.kdl", &text, &MapLoader::default());
        let count = |code: &str| c.diags.iter().filter(|d| d.code.name == code).count();
        assert_eq!(count("fleet::argocd::chart-unpinned"), 1);
        assert_eq!(count("fleet::argocd::after-cycle"), 1);
        assert_eq!(count("fleet::argocd::path-missing"), 1);
    }

    /// A fleet with Argo CD's repository and one Scaleway environment whose body is `body`.
    fn staging(body: &str) -> String {
        format!(
            r#"fleet "acme" {{
    talos "v1.13.9"
    kubernetes "1.36.2"
    gitops repo="https://git.example.org/acme/fleet.git"
    schematic "isolated" {{
        extension "siderolabs/gvisor"
    }}
    environment "staging" {{
        scaleway project="11111111-2222-3333-4444-555555555555" region="fr-par" zone="fr-par-2" {{
            size "small" type="PRO2-XS"
        }}
        state bucket="acme-tofu-state"
        network "10.10.0.0/22"
        {body}
    }}
}}"#
        )
    }

    /// The Argo CD codes of a one-cluster fleet with postgres `app` and the given cluster lines.
    fn codes_of(cluster_lines: &str) -> Vec<&'static str> {
        let text = staging(&format!(
            r#"postgres "app" node-type="DB-DEV-S"
        cluster "main" {{
            runtimes "gvisor"
            endpoint address="10.10.0.10"
            pool-defaults schematic="isolated" size="small"
            control-plane count=3
            {cluster_lines}
        }}"#
        ));
        let mut loader = MapLoader::default();
        for dir in ["apps/a", "apps/b", "apps/c"] {
            loader.files.insert(format!("{dir}/kustomization.yaml"), "resources: []\n".to_owned());
        }
        let c = compile("fleet.kdl", &text, &loader);
        c.diags.iter().map(|d| d.code.name).filter(|n| n.starts_with("fleet::argocd::")).collect()
    }

    const ESO: &str = r#"app "eso" chart="external-secrets" repo="https://charts.external-secrets.io" version="0.20.4" namespace="eso""#;

    /// controllers-3 D3: the root waits for each wave to be Healthy, and a manual app is not
    /// until someone syncs it.
    #[test]
    fn nothing_waits_for_an_app_synced_by_hand() {
        let fine = codes_of(&format!(
            r#"sealed "scaleway-api-key"
            {ESO}
            app "a" path="apps/a" namespace="a" sync="manual"
            app "b" path="apps/b" namespace="b" after="eso" {{ postgres "app" }}"#
        ));
        assert!(!fine.contains(&"fleet::argocd::waits-for-manual"), "{fine:?}");
        let broken = codes_of(&format!(
            r#"sealed "scaleway-api-key"
            {ESO}
            app "a" path="apps/a" namespace="a" sync="manual"
            app "b" path="apps/b" namespace="b" after="a"
            app "c" path="apps/c" namespace="c" sync="manual" wave=2"#
        ));
        assert_eq!(broken.iter().filter(|c| **c == "fleet::argocd::waits-for-manual").count(), 2, "{broken:?}");
        let manual_eso = codes_of(
            r#"sealed "scaleway-api-key"
            app "eso" chart="external-secrets" repo="https://charts.external-secrets.io" version="0.20.4" namespace="eso" sync="manual"
            app "b" path="apps/b" namespace="b" { postgres "app" }"#,
        );
        assert_eq!(manual_eso, ["fleet::argocd::waits-for-manual"]);
    }

    /// controllers-3 D1: the store's API key is written at apply from the sealed input.
    #[test]
    fn password_readers_need_the_store_key_as_a_sealed_input() {
        let readers = format!(
            r#"{ESO}
            app "b" path="apps/b" namespace="b" after="eso" {{ postgres "app" }}"#
        );
        assert_eq!(codes_of(&readers), ["fleet::argocd::no-store-credential"]);
        assert!(codes_of(&format!("sealed \"scaleway-api-key\"\n{readers}")).is_empty());
        assert!(
            codes_of(&format!(
                r#"{ESO}
            app "b" path="apps/b" namespace="b""#
            ))
            .is_empty(),
            "no reader, no key needed"
        );
    }

    #[test]
    fn exact_versions() {
        for v in ["0.20.4", "v1.2.3", "1.2.3-rc.1", "1.2.3+build.5"] {
            assert!(is_exact_version(v), "{v}");
        }
        for v in ["", "*", "1.x", "^1.2.3", "~1.2", ">=1.0.0", "1.2", "latest", "1.2.3 || 1.2.4", "1.2.*"] {
            assert!(!is_exact_version(v), "{v}");
        }
    }
}
