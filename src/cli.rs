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
    /// How to print diagnostics.
    #[arg(long, value_enum, default_value_t = DiagFormat::Human)]
    pub format: DiagFormat,
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
    },
    /// Parse and validate the fleet; write nothing.
    Check {
        #[command(flatten)]
        fleet: FleetArgs,
    },
    /// Show how a fresh build differs from out/.
    Diff {
        #[command(flatten)]
        fleet: FleetArgs,
        /// The output directory [default: out/ beside the fleet file].
        #[arg(long)]
        out: Option<PathBuf>,
    },
    /// Print the long explanation of a diagnostic code.
    Explain {
        /// A code such as `fleet::quorum::even-control-plane`, or its last part. Without it, list every code.
        code: Option<String>,
    },
    /// Print the ordered steps that upgrade a cluster to a Kubernetes (and Talos) version.
    UpgradePlan {
        /// The cluster, as `<environment>/<cluster>`.
        cluster: String,
        /// The target Kubernetes version (full, e.g. 1.36.2).
        #[arg(long)]
        kubernetes: String,
        /// The target Talos version (e.g. v1.13.9); raised only where needed when absent.
        #[arg(long)]
        talos: Option<String>,
        #[command(flatten)]
        fleet: FleetArgs,
    },
    /// Image Factory schematic tools.
    Schematic {
        #[command(subcommand)]
        command: SchematicCommand,
    },
}

#[derive(Debug, Subcommand)]
pub enum SchematicCommand {
    /// Print the ID the Image Factory computes for a schematic file (YAML or JSON; `-` reads stdin).
    Id { file: PathBuf },
}
