//! The command line, as clap types. Parsing only: [`crate::run`] does the work.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};

#[derive(Debug, Parser)]
#[command(
    name = "fleetc",
    version,
    about = "Compiles fleet.kdl into OpenTofu roots, Talos machine configs, Cluster API manifests, Argo CD applications and Image Factory schematics",
    max_term_width = 100
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
    /// Print only errors.
    #[arg(long, short, global = true, conflicts_with = "verbose")]
    pub quiet: bool,
    /// Print every file written.
    #[arg(long, short, global = true)]
    pub verbose: bool,
    /// When to use colour (NO_COLOR is honoured with `auto`).
    #[arg(long, global = true, value_enum, default_value_t = ColorChoice::Auto)]
    pub color: ColorChoice,
    /// How every command prints diagnostics (on stderr; `json` on stdout for check, build and fmt).
    #[arg(long = "diagnostics-format", global = true, value_enum, value_name = "FORMAT")]
    pub diagnostics_format: Option<DiagFormat>,
}

#[derive(Debug, Clone, Copy, ValueEnum, PartialEq, Eq)]
pub enum ColorChoice {
    Auto,
    Always,
    Never,
}

#[derive(Debug, Clone, Copy, ValueEnum, PartialEq, Eq, Default)]
pub enum DiagFormat {
    /// Rendered diagnostics with source excerpts.
    #[default]
    Human,
    /// One line per diagnostic: file:line:column: severity[code]: message.
    Short,
    /// A JSON array of diagnostics.
    Json,
}

#[derive(Debug, Args)]
pub struct FleetArgs {
    /// The fleet description.
    #[arg(long, default_value = "fleet.kdl")]
    pub fleet: PathBuf,
    /// The format of this command's output. For the commands whose output is diagnostics
    /// (check, build, fmt, and the fleet checks of the others), this is `--diagnostics-format`.
    #[arg(long, value_enum)]
    pub format: Option<DiagFormat>,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Compile the fleet and write out/ (only files whose bytes changed).
    Build {
        #[command(flatten)]
        fleet: FleetArgs,
        /// The output directory [default: out/ beside the fleet file].
        #[arg(long)]
        out: Option<PathBuf>,
        /// Write nothing; exit 1 when out/ differs from a fresh build (stale, missing or extra files).
        #[arg(long)]
        check: bool,
        /// Compile even when out/ records unchanged inputs (the no-op path trusts a record made
        /// by the same fleetc version; CI, and a fleetc built from changed sources, want a real
        /// build).
        #[arg(long)]
        full: bool,
    },
    /// Parse and validate the fleet; write nothing.
    ///
    /// With `--base REV`, also compare it with the fleet as of git revision REV and refuse
    /// version changes a running cluster cannot take (a skipped Kubernetes or Talos minor,
    /// workers moving ahead of their control plane).
    Check {
        #[command(flatten)]
        fleet: FleetArgs,
        /// A git revision (e.g. `origin/main`, `HEAD~1`) to compare versions with.
        #[arg(long)]
        base: Option<String>,
    },
    /// Review a change: what differs in the artifacts, and its impact on running clusters.
    ///
    /// Compares a fresh build with out/, or with `--base REV` the builds of the fleet as of a
    /// git revision and of the working tree. Exit 0 when equal, 1 when different, 2 on error.
    Diff(DiffArgs),
    /// Print the long explanation of a diagnostic code.
    Explain {
        /// A code such as `fleet::quorum::even-control-plane`, or its last part. Without it, list every code.
        code: Option<String>,
    },
    /// Print the ordered steps that upgrade a cluster from what it runs to a Kubernetes (and Talos) version.
    ///
    /// What runs is read from the committed out/ (the last build), or with `--base REV` from
    /// the fleet at a git revision; the targets default to fleet.kdl's versions.
    UpgradePlan {
        /// The cluster, as `<environment>/<cluster>`.
        cluster: String,
        /// The target Kubernetes version (full, e.g. 1.36.2) [default: fleet.kdl's].
        #[arg(long)]
        kubernetes: Option<String>,
        /// The target Talos version (e.g. v1.13.9) [default: fleet.kdl's; otherwise raised only where needed].
        #[arg(long)]
        talos: Option<String>,
        /// Plan from the fleet as of this git revision (what runs), instead of from out/.
        #[arg(long, value_name = "REV")]
        base: Option<String>,
        /// The output directory whose build is what runs [default: out/ beside the fleet file].
        #[arg(long)]
        out: Option<PathBuf>,
        #[command(flatten)]
        fleet: FleetArgs,
    },
    /// Image Factory schematic tools.
    Schematic {
        #[command(subcommand)]
        command: SchematicCommand,
    },
    /// Sealed inputs (age): secrets the apply step needs, committed encrypted beside fleet.kdl.
    Secrets {
        #[command(subcommand)]
        command: SecretsCommand,
    },
    /// Build an environment from a fresh out/: images, cloud root, cluster root node by node, Argo CD.
    Apply(ApplyArgs),
    /// Upgrade Talos and Kubernetes on a running cluster, node by node (control plane first).
    ///
    /// An etcd snapshot is taken and checked before each control-plane node; after each node
    /// what it runs is read back and must be the target, or the run stops there (a rerun
    /// resumes at that node). Nothing disruptive starts outside fleet.kdl's `window`.
    Upgrade(UpgradeArgs),
    /// Recover a cluster's etcd from a snapshot with Talos's procedure: the control-plane
    /// nodes' EPHEMERAL partitions wiped, then `talosctl bootstrap --recover-from`
    /// (docs/restore.md).
    Restore(RestoreArgs),
    /// Compare what runs with what out/ would apply, read-only: each node's machine config,
    /// the OpenTofu roots' plans, Argo CD's applications, and the versions each node runs.
    ///
    /// Each difference is classified as `fleetc diff` classifies a change (live, reboot,
    /// replace, identity, quorum) and printed in diff's formats. Writes nothing; opens the
    /// Talos API switch only where apply does, and closes it. Exit 0 when nothing drifted, 1
    /// when something did, 2 on error (docs/day-two.md).
    Drift(DriftArgs),
    /// Talos tools that need the decrypted secrets bundle.
    Talos {
        #[command(subcommand)]
        command: TalosCommand,
    },
    /// Reprint fleet.kdl in the canonical layout, keeping every comment.
    Fmt {
        #[command(flatten)]
        fleet: FleetArgs,
        /// Write nothing; exit 1 and print the file's name when it is not in the canonical layout.
        #[arg(long)]
        check: bool,
    },
    /// Write a commented starter fleet (fleet.kdl, its vendored Argo CD stand-in, one app) that builds and plans as written; never overwrites.
    Init {
        /// The directory to write the starter in (created if needed).
        #[arg(long, default_value = ".")]
        dir: PathBuf,
        /// The platform of the starter's environment.
        #[arg(long, value_enum, default_value_t = PlatformArg::Scaleway)]
        platform: PlatformArg,
    },
    /// Import another tool's fleet description as a fleet directory (fleet.kdl, patch files, IMPORT-REPORT.md); never overwrites.
    Import {
        #[command(subcommand)]
        source: ImportSource,
    },
    /// Print environments, clusters, pools and nodes, and each environment's apply order.
    Graph {
        /// The fleet description.
        #[arg(long, default_value = "fleet.kdl")]
        fleet: PathBuf,
        /// The format of this command's output: the graph language.
        #[arg(long, value_enum, default_value_t = GraphFormat::Mermaid)]
        format: GraphFormat,
    },
    /// Print a shell completion script for fleetc.
    Completions {
        /// The shell.
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
    /// Print fleetc's man page (roff).
    Man,
    /// Print the fleet's environments or `<env>/<cluster>` names, one a line, for the shell
    /// completions (`fleetc completions` calls it); prints nothing when there is no fleet.
    #[command(hide = true, name = "__targets")]
    Targets {
        /// `environments` or `clusters`.
        what: String,
        /// The fleet description.
        #[arg(long, default_value = "fleet.kdl")]
        fleet: PathBuf,
    },
}

#[derive(Debug, Subcommand)]
pub enum SecretsCommand {
    /// Seal FILE (`-` reads stdin) as sealed input NAME of a cluster, into secrets/<env>/<cluster>/<name>.age.
    Import {
        #[command(flatten)]
        fleet: FleetArgs,
        /// `<env>/<cluster>`
        cluster: String,
        /// The input's name, as the cluster's `sealed` lists it (`talos-secrets`, …).
        name: String,
        file: PathBuf,
        /// Replace an existing sealed input that differs (or that cannot be compared).
        #[arg(long)]
        force: bool,
        /// An age identity file, to compare with the committed input [env: FLEETC_AGE_IDENTITY].
        #[arg(long)]
        identity: Option<PathBuf>,
    },
}

/// The apply modes of the Talos provider (F10).
#[derive(Debug, Clone, Copy, ValueEnum, PartialEq, Eq)]
pub enum ModeArg {
    Auto,
    #[value(name = "no_reboot")]
    NoReboot,
    Reboot,
    Staged,
    #[value(name = "staged_if_needing_reboot")]
    StagedIfNeedingReboot,
}

#[derive(Debug, Args)]
pub struct ApplyArgs {
    #[command(flatten)]
    pub fleet: FleetArgs,
    /// The environment to apply.
    pub env: String,
    /// Print the exact ordered commands; run nothing.
    #[arg(long)]
    pub plan: bool,
    /// Do not ask before applying a plan.
    #[arg(long)]
    pub yes: bool,
    /// The apply mode for this run, instead of fleet.kdl's (R19).
    #[arg(long, value_enum)]
    pub mode: Option<ModeArg>,
    /// The age identity that decrypts the sealed inputs [env: FLEETC_AGE_IDENTITY].
    #[arg(long)]
    pub identity: Option<PathBuf>,
    /// The output directory [default: out/ beside the fleet file].
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Install a stand-in manifest `fleetc init` wrote (a lab whose clusters run Argo CD
    /// already); without it apply refuses one.
    #[arg(long)]
    pub allow_stand_ins: bool,
    /// Where tofu installs providers from instead of the registry: an https:// network mirror
    /// or a directory (`tofu providers mirror DIR`); passed as TF_CLI_CONFIG_FILE.
    #[arg(long, value_name = "URL|DIR")]
    pub provider_mirror: Option<String>,
    /// A PEM bundle of the CA certificates of your network path (a TLS-intercepting proxy, a
    /// private S3 endpoint); tofu gets it as AWS_CA_BUNDLE and SSL_CERT_FILE.
    #[arg(long, value_name = "FILE")]
    pub ca_bundle: Option<PathBuf>,
    /// Bare metal: a DHCP server's lease file (dnsmasq or ISC dhcpd), where apply finds each
    /// machine's maintenance-mode address by its MAC (docs/metal.md).
    #[arg(long, value_name = "FILE")]
    pub leases: Option<PathBuf>,
}

/// What every command on one running cluster takes (`upgrade`, `restore`).
#[derive(Debug, Args)]
pub struct ClusterRunArgs {
    #[command(flatten)]
    pub fleet: FleetArgs,
    /// `<env>/<cluster>`
    pub cluster: String,
    /// Print the commands; run nothing.
    #[arg(long)]
    pub plan: bool,
    /// Do not ask before the disruptive steps.
    #[arg(long)]
    pub yes: bool,
    /// The age identity that decrypts the sealed inputs [env: FLEETC_AGE_IDENTITY].
    #[arg(long)]
    pub identity: Option<PathBuf>,
    /// The output directory [default: out/ beside the fleet file].
    #[arg(long)]
    pub out: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub struct UpgradeArgs {
    #[command(flatten)]
    pub run: ClusterRunArgs,
}

#[derive(Debug, Args)]
pub struct RestoreArgs {
    #[command(flatten)]
    pub run: ClusterRunArgs,
    /// The etcd snapshot (`talosctl etcd snapshot`, or one `fleetc upgrade` kept); checked
    /// as etcd checks it before any node is touched.
    #[arg(long, value_name = "SNAPSHOT")]
    pub from: PathBuf,
}

/// `fleetc drift`. As for `fleetc diff`, `--format` is the report's format; diagnostics follow
/// the global `--diagnostics-format`.
#[derive(Debug, Args)]
pub struct DriftArgs {
    /// The fleet description.
    #[arg(long, default_value = "fleet.kdl")]
    pub fleet: PathBuf,
    /// `<env>` (every cluster the roots build) or `<env>/<cluster>`.
    pub target: String,
    /// Print the commands; run nothing.
    #[arg(long)]
    pub plan: bool,
    /// The age identity that decrypts the sealed inputs [env: FLEETC_AGE_IDENTITY].
    #[arg(long)]
    pub identity: Option<PathBuf>,
    /// The output directory [default: out/ beside the fleet file].
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// The format of the report, as `fleetc diff`'s.
    #[arg(long, value_enum, default_value_t = DiffFormat::Unified)]
    pub format: DiffFormat,
    /// With `--format markdown`: the most characters the comment may have.
    #[arg(long, value_name = "CHARS", default_value_t = crate::review::render::markdown::DEFAULT_CAP)]
    pub max_chars: usize,
}

#[derive(Debug, Subcommand)]
pub enum TalosCommand {
    /// Render complete per-node machine configs and a talosconfig with `talosctl gen config`.
    Render {
        #[command(flatten)]
        fleet: FleetArgs,
        /// `<env>/<cluster>`
        cluster: String,
        /// The age identity that decrypts the bundle [env: FLEETC_AGE_IDENTITY].
        #[arg(long)]
        identity: Option<PathBuf>,
        /// Where to write the configs (mode 0600; never inside out/).
        #[arg(long = "out")]
        dest: PathBuf,
        /// Print the commands; run nothing.
        #[arg(long)]
        plan: bool,
        /// The output directory fleetc builds into [default: out/ beside the fleet file].
        #[arg(long)]
        build_dir: Option<PathBuf>,
    },
}

/// `fleetc diff`. `--format` is, in every command, the format of the command's output: here
/// the diff; diagnostics follow the global `--diagnostics-format`.
#[derive(Debug, Args)]
pub struct DiffArgs {
    /// The fleet description.
    #[arg(long, default_value = "fleet.kdl")]
    pub fleet: PathBuf,
    /// The output directory to compare with [default: out/ beside the fleet file].
    #[arg(long, conflicts_with = "base")]
    pub out: Option<PathBuf>,
    /// Compare with the fleet as of this git revision (read with the local `git`, built in
    /// memory) instead of out/.
    #[arg(long, value_name = "REV")]
    pub base: Option<String>,
    /// The format of this command's output: the diff. Diagnostics follow the global
    /// `--diagnostics-format` (always on stderr).
    #[arg(long, value_enum, default_value_t = DiffFormat::Unified)]
    pub format: DiffFormat,
    /// With `--format markdown`: the most characters the comment may have.
    #[arg(long, value_name = "CHARS", default_value_t = crate::review::render::markdown::DEFAULT_CAP)]
    pub max_chars: usize,
}

#[derive(Debug, Clone, Copy, ValueEnum, PartialEq, Eq, Default)]
pub enum DiffFormat {
    /// The impact list, then a unified diff whose hunks name their objects.
    #[default]
    Unified,
    /// The impact list, then added/removed line counts per file and per object.
    Stat,
    /// A pull-request comment: impact table, file table, collapsible diffs, size-capped.
    Markdown,
    /// Impacts, and per file its status, objects and hunks.
    Json,
}

#[derive(Debug, Clone, Copy, ValueEnum, PartialEq, Eq, Default)]
pub enum GraphFormat {
    /// A Mermaid flowchart.
    #[default]
    Mermaid,
    /// A Graphviz digraph.
    Dot,
}

#[derive(Debug, Subcommand)]
pub enum SchematicCommand {
    /// Print the ID the Image Factory computes for a schematic file (YAML or JSON; `-` reads stdin).
    Id { file: PathBuf },
}

#[derive(Debug, Subcommand)]
pub enum ImportSource {
    /// A talhelper config (talconfig.yaml, talhelper v3.1.16's format).
    Talhelper {
        /// The talconfig.yaml; several make one fleet with an environment (and cluster) for each.
        #[arg(required = true)]
        config: Vec<PathBuf>,
        /// An env file for `${VAR}` substitution (repeatable); default: talenv.yaml, talenv.sops.yaml, talenv.yml, talenv.sops.yml beside the config.
        #[arg(long = "env", value_name = "FILE")]
        env: Vec<PathBuf>,
        /// Import a cluster on an older Talos at this version (e.g. v1.12.11): its nodes are upgraded to it first (docs/import.md).
        #[arg(long, value_name = "VERSION")]
        talos_at_least: Option<crate::model::Version>,
        /// The fleet directory to write (created if needed).
        #[arg(long, default_value = ".")]
        out: PathBuf,
    },
    /// A topf config (topf.yaml and its patch folders, topf v0.4.2's format).
    Topf {
        /// The topf.yaml.
        config: PathBuf,
        /// Import a cluster on an older Talos at this version (e.g. v1.12.11): its nodes are upgraded to it first (docs/import.md).
        #[arg(long, value_name = "VERSION")]
        talos_at_least: Option<crate::model::Version>,
        /// The fleet directory to write (created if needed).
        #[arg(long, default_value = ".")]
        out: PathBuf,
    },
}

#[derive(Debug, Clone, Copy, ValueEnum, PartialEq, Eq)]
pub enum PlatformArg {
    /// Scaleway Instances.
    Scaleway,
    /// A Proxmox VE host.
    Proxmox,
    /// Machines you own, with no API (docs/metal.md).
    Metal,
}
