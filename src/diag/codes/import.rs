//! The `fleet::import::*` codes: a foreign fleet description `fleetc import` cannot read.
//! Raised by `src/import/`; each points into the foreign file, and nothing is written.

codes! {
    IMPORT_NOT_TALHELPER = "fleet::import::not-talhelper", Error, None,
    Some("give `fleetc import talhelper` the talconfig.yaml that `talhelper genconfig` reads (a mapping with `clusterName` and `nodes`)"),
"## What it does
`fleetc import talhelper` reports a file that is not a talhelper config: not YAML, not one
mapping, or a mapping without talhelper's required `clusterName` and `nodes` (talhelper
v3.1.16 `pkg/config/config.go`, `TalhelperConfig`). Nothing is written.

## Why
Guessing what another file means would write a fleet that describes nothing real.

## Example
    fleetc import talhelper kustomization.yaml

## Instead
    fleetc import talhelper talos/talconfig.yaml
";
    IMPORT_INVALID = "fleet::import::invalid", Error, None,
    Some("fix the value in the imported config (talhelper: `talhelper validate talconfig` reports the same field; topf: `topf render` refuses it too)"),
"## What it does
`fleetc import talhelper` and `fleetc import topf` report a field of the config whose value
has the wrong form for that tool itself: a list where talhelper reads a mapping, a node
without `hostname` (talhelper) or `host` or `role` (topf), an endpoint that is not a URL, a
topf patch file that is not YAML or is a JSON patch. Every such field is reported at once,
and nothing is written.

## Why
The tool would refuse the same file (talhelper and topf unmarshal it into typed Go structs
and validate it; topf v0.4.2 `pkg/config/node.go` `UnmarshalYAML`, `pkg/config/patches.go`
`parsePatches`), so there is no configuration to carry over.

## Example
    nodes:
      - ipAddress: 10.0.0.11

## Instead
    nodes:
      - hostname: cp-1
        ipAddress: 10.0.0.11
";
    IMPORT_UNSET_VARIABLE = "fleet::import::unset-variable", Error, None,
    Some("give the file that defines it with `--env FILE` (talenv.yaml beside the talconfig is read on its own), or a default: `${NAME:-value}`"),
"## What it does
`fleetc import talhelper` reports a `${NAME}` (or `$NAME`) in the talhelper config that no env
file defines, or defines empty. talhelper substitutes these from its env files and the
environment, and refuses an unset or empty one (talhelper v3.1.16
`pkg/substitute/envsubst.go`, `envsubst.BytesRestricted(…, true, true)`). The import reads
only the env files (talenv.yaml beside the config, or those given with `--env`), never the
process environment, so that two imports of the same files write the same fleet. An
encrypted (SOPS) env file is not read.

## Why
talhelper would refuse the same config; writing the `${NAME}` through would put a literal
`${NAME}` into fleet.kdl or a patch, which no tool substitutes later.

## Example
    endpoint: https://${CLUSTER_VIP}:6443

## Instead
    fleetc import talhelper talconfig.yaml --env talenv.yaml   # talenv.yaml: CLUSTER_VIP: 10.0.0.10
";
    IMPORT_FILE_UNREADABLE = "fleet::import::file-unreadable", Error, None,
    Some("check the path: talhelper reads `@<path>` relative to the talconfig's directory, topf an `@<path>` schematicId relative to topf.yaml's"),
"## What it does
`fleetc import talhelper` reports a patch or env file the talhelper config names (`@./patches/x.yaml`)
that cannot be read; `fleetc import topf` a schematic file a node's `schematicId: \"@<path>\"`
names, or a patch folder that cannot be listed. Nothing is written.

## Why
talhelper would fail on the same reference; the import copies the file into the fleet
directory, so it needs it.

## Example
    patches:
      - \"@./patches/missing.yaml\"

## Instead
    patches:
      - \"@./patches/kubelet.yaml\"
";
    IMPORT_NOT_TOPF = "fleet::import::not-topf", Error, None,
    Some("give `fleetc import topf` the topf.yaml that `topf render` reads (a mapping with `clusterName`, `clusterEndpoint` and `nodes`)"),
"## What it does
`fleetc import topf` reports a file that is not a topf config: not YAML, not a mapping, or a
mapping with neither topf's `clusterEndpoint` nor its `nodes` (postfinance/topf v0.4.2
`pkg/config/topf_config.go`, `TopfConfig`). A talhelper config is named as such. Nothing is
written.

## Why
Guessing what another file means would write a fleet that describes nothing real.

## Example
    fleetc import topf talos/talconfig.yaml

## Instead
    fleetc import topf talos/topf.yaml
";
}
