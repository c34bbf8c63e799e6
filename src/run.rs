//! The command-line driver: runs a parsed command, prints its results and diagnostics, and
//! maps the outcome to an exit code (0 ok, 1 problems in the fleet or a difference found,
//! 2 usage or I/O error). This is the only module that prints.

use std::ffi::OsString;
use std::io::{IsTerminal, Read, Write};
use std::path::{Path, PathBuf};

use clap::Parser;

use crate::artifacts::{self, ArtifactSet};
use crate::cli::{
    Cli, ColorChoice, Command, DiagFormat, DiffArgs, DiffFormat, FleetArgs, GraphFormat, SchematicCommand,
};
use crate::compile::{Compilation, FsLoader, compile};
use crate::diag::{codes, render};
use crate::review;

pub const EXIT_OK: i32 = 0;
pub const EXIT_PROBLEMS: i32 = 1;
pub const EXIT_ERROR: i32 = 2;

/// Runs fleetc with `args` (the program name first) and returns the exit code.
pub fn run(args: impl IntoIterator<Item = OsString>) -> i32 {
    let cli = match Cli::try_parse_from(args) {
        Ok(c) => c,
        Err(e) => {
            let _ = e.print();
            return if e.use_stderr() { EXIT_ERROR } else { EXIT_OK };
        }
    };
    let ui = Ui::new(&cli);
    match cli.command {
        Command::Build { fleet, out, check, full } => build(&ui, &fleet, out, check, full),
        Command::Check { fleet, base } => check(&ui, &fleet, base.as_deref()),
        Command::Diff(args) => diff(&ui, &args),
        Command::Explain { code } => explain(code.as_deref()),
        Command::Schematic { command: SchematicCommand::Id { file } } => schematic_id(&file),
        Command::UpgradePlan { cluster, kubernetes, talos, base, out, fleet } => {
            let flags = UpgradePlanFlags {
                kubernetes: kubernetes.as_deref(),
                talos: talos.as_deref(),
                base: base.as_deref(),
                out,
            };
            upgrade_plan(&ui, &fleet, &cluster, &flags)
        }
        Command::Secrets { command } => secrets_command(&ui, command),
        Command::Apply(args) => apply_command(&ui, &args),
        Command::Upgrade(crate::cli::UpgradeArgs { run: a }) => {
            let opts = crate::apply::UpgradeOptions { plan: a.plan, yes: a.yes, identity: a.identity.clone() };
            on_cluster(&ui, &a.fleet, &a.cluster, a.out.clone(), a.plan, |inp, cluster, runner, sink| {
                crate::apply::upgrade(inp, cluster, &opts, runner, sink)
            })
        }
        Command::Restore(crate::cli::RestoreArgs { run: a, from }) => {
            let opts = crate::apply::RestoreOptions { plan: a.plan, yes: a.yes, identity: a.identity.clone(), from };
            on_cluster(&ui, &a.fleet, &a.cluster, a.out.clone(), a.plan, |inp, cluster, runner, sink| {
                crate::apply::restore(inp, cluster, &opts, runner, sink)
            })
        }
        Command::Drift(args) => drift_command(&ui, &args),
        Command::Talos { command } => talos_command(&ui, command),
        Command::Fmt { fleet, check } => fmt(&ui, &fleet, check),
        Command::Init { dir, platform } => init(&ui, &dir, platform),
        Command::Import { source: crate::cli::ImportSource::Talhelper { config, env, talos_at_least, out } } => {
            import_written(
                &ui,
                crate::import::talhelper(&config, &env, &crate::import::Options { talos_at_least }),
                &out,
            )
        }
        Command::Import { source: crate::cli::ImportSource::Topf { config, talos_at_least, out } } => {
            import_written(&ui, crate::import::topf::import(&config, &crate::import::Options { talos_at_least }), &out)
        }
        Command::Graph { fleet, format } => graph(&ui, fleet, format),
        Command::Completions { shell } => completions(shell),
        Command::Man => man(),
        Command::Targets { what, fleet } => targets(&what, &fleet),
    }
}

/// `upgrade-plan`'s options.
struct UpgradePlanFlags<'a> {
    kubernetes: Option<&'a str>,
    talos: Option<&'a str>,
    base: Option<&'a str>,
    out: Option<PathBuf>,
}

/// `upgrade-plan`: from what runs (the fleet at `--base`, else the versions in out/, else
/// fleet.kdl's with a note) to the flags' versions, defaulting to fleet.kdl's.
fn upgrade_plan(ui: &Ui, args: &FleetArgs, target: &str, flags: &UpgradePlanFlags<'_>) -> i32 {
    use crate::model::Version;
    let k8s = match flags.kubernetes.map(str::parse::<Version>).transpose() {
        Ok(v) => v,
        Err(e) => return fail(format_args!("--kubernetes: {e}")),
    };
    let talos = match flags.talos.map(str::parse::<Version>).transpose() {
        Ok(v) => v,
        Err(e) => return fail(format_args!("--talos: {e}")),
    };
    let c = match load(ui, args) {
        Ok(c) => c,
        Err(code) => return code,
    };
    let Some(fleet) = c.fleet.filter(|_| !c.diags.has_errors()) else { return EXIT_PROBLEMS };
    let Some(edited) = target
        .split_once('/')
        .and_then(|(e, n)| fleet.environment(e).and_then(|e| e.cluster(n)))
        .map(|c| (c.kubernetes.value, c.talos.value))
    else {
        eprintln!(
            "fleetc: no upgrade plan: no cluster `{target}` (`<environment>/<cluster>`) in {}",
            args.fleet.display()
        );
        return EXIT_PROBLEMS;
    };
    let base_fleet;
    let (from, running) = match flags.base {
        Some(rev) => {
            let dir = fleet_dir(&args.fleet);
            let name =
                args.fleet.file_name().map_or_else(|| "fleet.kdl".to_owned(), |n| n.to_string_lossy().into_owned());
            let (loader, old_text) = match fleet_at(&dir, rev, &name) {
                Ok(v) => v,
                Err(code) => return code,
            };
            let mut old = compile(&format!("{rev}:{name}"), &old_text, &loader);
            match old.fleet.take() {
                Some(f) if !old.diags.has_errors() => base_fleet = f,
                _ => {
                    print_diagnostics(ui, DiagFormat::Human, &old);
                    return fail(format_args!("{name} at `{rev}` has errors; no plan from it"));
                }
            }
            let Some(c) =
                target.split_once('/').and_then(|(e, n)| base_fleet.environment(e).and_then(|e| e.cluster(n)))
            else {
                eprintln!(
                    "fleetc: no upgrade plan: `{target}` does not exist at `{rev}`: a new cluster has nothing to upgrade"
                );
                return EXIT_PROBLEMS;
            };
            let running = crate::plan::upgrade::Running {
                talos: c.talos.value,
                kubernetes: c.kubernetes.value,
                source: format!("`{rev}:{name}` (--base)"),
            };
            (&base_fleet, Some(running))
        }
        None => {
            let out = out_dir(&args.fleet, flags.out.clone());
            let read = |p: &str| std::fs::read_to_string(out.join(p)).ok();
            let running = crate::plan::upgrade::running_in_out(&fleet, target, &read);
            if running.is_none() {
                ui.info(&format!(
                    "fleetc: {} holds no build of `{target}`: planning from {}'s versions, as if they ran (`--base REV` plans from a revision)",
                    out.display(),
                    args.fleet.display()
                ));
            }
            (&fleet, running)
        }
    };
    let start_talos = running.as_ref().map_or(edited.1, |r| r.talos);
    let k8s = k8s.unwrap_or(edited.0);
    // fleet.kdl's Talos is a target when it differs from what runs; else Talos is raised
    // only where Kubernetes needs it.
    let talos = talos.or((edited.1 != start_talos).then_some(edited.1));
    match crate::plan::upgrade::plan_from(from, target, k8s, talos, running.as_ref()) {
        Ok(p) => {
            print!("{p}");
            EXIT_OK
        }
        Err(e) => {
            eprintln!("fleetc: no upgrade plan: {e}");
            EXIT_PROBLEMS
        }
    }
}

struct Ui {
    /// The global `--diagnostics-format`, when given.
    diagnostics_format: Option<DiagFormat>,
    quiet: bool,
    verbose: bool,
    color: bool,
    /// Colour for what goes to stdout (`diff`): the same choice, asked of stdout.
    stdout_color: bool,
}

impl Ui {
    fn new(cli: &Cli) -> Self {
        let no_color = std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty());
        let choose = |terminal: bool| match cli.color {
            ColorChoice::Always => true,
            ColorChoice::Never => false,
            ColorChoice::Auto => !no_color && terminal,
        };
        let color = choose(std::io::stderr().is_terminal());
        let stdout_color = choose(std::io::stdout().is_terminal());
        Ui { diagnostics_format: cli.diagnostics_format, quiet: cli.quiet, verbose: cli.verbose, color, stdout_color }
    }

    /// How diagnostics are printed: a command's own `--format` (where its output is
    /// diagnostics), else the global `--diagnostics-format`, else rendered for people.
    fn diag_format(&self, args: &FleetArgs) -> DiagFormat {
        args.format.or(self.diagnostics_format).unwrap_or_default()
    }

    fn info(&self, msg: &str) {
        if !self.quiet {
            eprintln!("{msg}");
        }
    }
}

/// The fleet file `name` of `dir`'s repository at revision `rev`, with the loader that reads its
/// other files at that revision; on failure, the exit code after saying why.
fn fleet_at(dir: &std::path::Path, rev: &str, name: &str) -> Result<(crate::git_loader::GitLoader, String), i32> {
    let loader = crate::git_loader::GitLoader::open(dir, rev).map_err(fail)?;
    let text = crate::model::Loader::read(&loader, name)
        .map_err(|e| fail(format_args!("cannot read {name} at `{rev}`: {e}")))?;
    Ok((loader, text))
}

fn fail(msg: impl std::fmt::Display) -> i32 {
    eprintln!("fleetc: error: {msg}");
    EXIT_ERROR
}

/// Reads the fleet file as text. Bytes that are not UTF-8 are named by their byte offset,
/// line and column (the column counts characters of the valid text before them).
fn read_fleet(path: &Path) -> Result<String, String> {
    // A FIFO would block the open, a device never end the read.
    match std::fs::metadata(path) {
        Ok(m) if m.is_file() => {}
        Ok(m) if m.is_dir() => return Err(format!("cannot read {}: it is a directory", path.display())),
        Ok(_) => {
            return Err(format!(
                "cannot read {}: it is not a regular file (a FIFO, a socket or a device)",
                path.display()
            ));
        }
        Err(e) => {
            let mut msg = format!("cannot read {}: {e}", path.display());
            if e.kind() == std::io::ErrorKind::NotFound {
                msg.push_str(&not_found_hint(path));
            }
            return Err(msg);
        }
    }
    let bytes = std::fs::read(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    String::from_utf8(bytes).map_err(|e| {
        let at = e.utf8_error().valid_up_to();
        let valid = std::str::from_utf8(&e.as_bytes()[..at]).unwrap_or_default();
        let line = valid.matches('\n').count() + 1;
        let column = valid.rsplit('\n').next().unwrap_or_default().chars().count() + 1;
        let byte = e.as_bytes()[at];
        format!(
            "cannot read {}: it is not UTF-8 text: invalid byte 0x{byte:02x} at byte offset {at} (line {line}, column {column})",
            path.display()
        )
    })
}

/// What to do when the fleet file is not there: the nearest fleet.kdl in a parent directory,
/// if any, then `--fleet` and `fleetc init`.
fn not_found_hint(path: &Path) -> String {
    let name = path.file_name().map_or_else(|| "fleet.kdl".into(), |n| n.to_string_lossy().into_owned());
    let nearest = std::env::current_dir().ok().and_then(|cwd| {
        let start = cwd.join(path.parent().unwrap_or(Path::new("")));
        start.ancestors().skip(1).map(|d| d.join(&name)).find(|p| p.is_file())
    });
    let mut hint = String::from("\n  hint: fleetc reads fleet.kdl from the current directory; ");
    if let Some(p) = nearest {
        hint.push_str(&format!(
            "there is one at {}: run fleetc there, or pass `--fleet {}`; ",
            p.display(),
            p.display()
        ));
    } else {
        hint.push_str("pass `--fleet PATH` for another one; ");
    }
    hint.push_str("`fleetc init` writes a starter");
    hint
}

/// Reads and compiles the fleet; prints its diagnostics.
fn load(ui: &Ui, args: &FleetArgs) -> Result<Compilation, i32> {
    let text = read_fleet(&args.fleet).map_err(fail)?;
    let dir = fleet_dir(&args.fleet);
    let name = args.fleet.file_name().map_or_else(|| "fleet.kdl".to_owned(), |n| n.to_string_lossy().into_owned());
    let c = compile(&name, &text, &FsLoader::new(dir));
    print_diagnostics(ui, ui.diag_format(args), &c);
    Ok(c)
}

/// [`load`], then the version changes since git revision `rev` (the fleet there is read
/// through `git`, no checkout) checked on the new fleet's values (R26, F1).
fn load_against(ui: &Ui, args: &FleetArgs, rev: &str) -> Result<Compilation, i32> {
    let text = read_fleet(&args.fleet).map_err(fail)?;
    let dir = fleet_dir(&args.fleet);
    let name = args.fleet.file_name().map_or_else(|| "fleet.kdl".to_owned(), |n| n.to_string_lossy().into_owned());
    let loader = crate::git_loader::GitLoader::open(&dir, rev).map_err(fail)?;
    let old_text = crate::model::Loader::read(&loader, &name)
        .map_err(|e| fail(format_args!("cannot read {name} at `{rev}`: {e}")))?;
    let old = compile(&format!("{rev}:{name}"), &old_text, &loader);
    let Some(old_fleet) = old.fleet else {
        print_diagnostics(ui, DiagFormat::Human, &old);
        return Err(fail(format_args!("{name} at `{rev}` cannot be read as a fleet; nothing to compare")));
    };
    let mut c = compile(&name, &text, &FsLoader::new(dir));
    if let Some(new_fleet) = &c.fleet {
        crate::check::check_upgrade_path(&old_fleet, new_fleet, &mut c.diags);
    }
    print_diagnostics(ui, ui.diag_format(args), &c);
    Ok(c)
}

fn print_diagnostics(ui: &Ui, format: DiagFormat, c: &Compilation) {
    match format {
        DiagFormat::Json => print!("{}", render::json(&c.diags, &c.sources)),
        DiagFormat::Short => eprint!("{}", render::short(&c.diags, &c.sources)),
        DiagFormat::Human => {
            if !c.diags.is_empty() && (!ui.quiet || c.diags.has_errors()) {
                let width = if ui.color { terminal_width() } else { 80 };
                eprint!("{}", render::text(&c.diags, &c.sources, render::Style { color: ui.color, width }));
            }
        }
    }
}

fn terminal_width() -> usize {
    std::env::var("COLUMNS").ok().and_then(|c| c.parse().ok()).unwrap_or(100)
}

fn fleet_dir(fleet: &Path) -> PathBuf {
    match fleet.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_owned(),
        _ => PathBuf::from("."),
    }
}

fn out_dir(fleet: &Path, out: Option<PathBuf>) -> PathBuf {
    out.unwrap_or_else(|| match fleet.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.join("out"),
        _ => PathBuf::from("out"),
    })
}

fn artifacts_or_exit(c: Compilation) -> Result<ArtifactSet, i32> {
    match c.artifacts {
        Some(a) if !c.diags.has_errors() => Ok(a),
        _ => Err(EXIT_PROBLEMS),
    }
}

fn build(ui: &Ui, args: &FleetArgs, out: Option<PathBuf>, check_only: bool, full: bool) -> i32 {
    let out = out_dir(&args.fleet, out);
    let text = match read_fleet(&args.fleet) {
        Ok(t) => t,
        Err(e) => return fail(e),
    };
    let dir = fleet_dir(&args.fleet);
    let name = args.fleet.file_name().map_or_else(|| "fleet.kdl".to_owned(), |n| n.to_string_lossy().into_owned());
    let loader = FsLoader::new(&dir);
    if !full && let Some(code) = verify_only(ui, ui.diag_format(args), &out, &dir, (&name, &text), &loader, check_only)
    {
        return code;
    }
    let recording = crate::inputs::Recording::new(&loader);
    let c = compile(&name, &text, &recording);
    print_diagnostics(ui, ui.diag_format(args), &c);
    let (diags, sources) = (c.diags.clone(), c.sources.clone());
    let mut set = match artifacts_or_exit(c) {
        Ok(s) => s,
        Err(code) => return code,
    };
    // A build records its inputs (and its warnings): while they are unchanged, the next
    // build only verifies out/ (inputs.rs).
    if let Some(record) = recording.record(&name, &text, &set.manifest(), &diags, &sources)
        && let Err(e) = set.insert(crate::inputs::INPUTS, record)
    {
        return fail(e);
    }
    if let Err(e) = artifacts::refuse_out_dir(&out, &fleet_dir(&args.fleet)) {
        return fail(e);
    }
    if check_only {
        return match set.check(&out) {
            Ok(r) if r.is_fresh() => {
                ui.info(&format!("{} is up to date ({} files)", out.display(), set.len()));
                EXIT_OK
            }
            Ok(r) => report_not_fresh(&out, &r),
            Err(e) => fail(e),
        };
    }
    match set.write_with(&out, crate::parallel::threads()) {
        Ok(r) => {
            if ui.verbose {
                for p in &r.written {
                    eprintln!("wrote {}", out.join(p).display());
                }
                for p in &r.removed {
                    eprintln!("removed {}", out.join(p).display());
                }
            }
            for p in &r.kept {
                eprintln!(
                    "fleetc: warning: kept {}: the previous build made it and this one does not, but it was edited since; remove it if it is not yours",
                    out.join(p).display()
                );
            }
            ui.info(&format!(
                "built {}: {} written, {} unchanged, {} removed",
                out.display(),
                r.written.len(),
                r.unchanged,
                r.removed.len()
            ));
            EXIT_OK
        }
        Err(e) => fail(e),
    }
}

/// The no-op build: when out/ records inputs (inputs.rs) that are all unchanged, out/ is
/// verified against its own manifest (every file hashed; edited, missing and extra files
/// found) without compiling. `Some(exit code)` when that settles the command: out/ is fresh,
/// or `--check` found it is not. `None`: compile (nothing recorded, an input changed, or
/// `build` must repair out/).
#[allow(clippy::too_many_arguments)]
fn verify_only(
    ui: &Ui,
    format: DiagFormat,
    out: &Path,
    fleet_dir: &Path,
    (name, text): (&str, &str),
    loader: &dyn crate::model::Loader,
    check_only: bool,
) -> Option<i32> {
    use crate::inputs;
    let record = std::fs::read(out.join(inputs::INPUTS)).ok()?;
    if !inputs::unchanged(&record, name, text, loader) || artifacts::refuse_out_dir(out, fleet_dir).is_err() {
        return None;
    }
    let (mut report, manifest) = ArtifactSet::verify_manifest(out).ok()?;
    let recorded_output = inputs::recorded_output(&record)?;
    if crate::digest::sha256_hex(&inputs::manifest_without_record(&manifest)) != recorded_output
        && !report.stale.iter().any(|p| p == artifacts::MANIFEST)
    {
        report.stale.push(artifacts::MANIFEST.to_owned());
    }
    let files = manifest.split(|b| *b == b'\n').filter(|l| !l.is_empty() && !l.starts_with(b"#")).count();
    if report.is_fresh() || check_only {
        // The build's warnings, as it showed them.
        let (diags, sources) = inputs::recorded_diagnostics(&record, name, text, loader)?;
        print_diagnostics(ui, format, &Compilation { sources, fleet: None, diags, artifacts: None });
    }
    if report.is_fresh() {
        ui.info(&if check_only {
            format!("{} is up to date ({files} files; inputs unchanged: verified, not compiled)", out.display())
        } else {
            format!(
                "built {}: 0 written, {files} unchanged, 0 removed (inputs unchanged: verified, not compiled)",
                out.display()
            )
        });
        return Some(EXIT_OK);
    }
    if check_only {
        return Some(report_not_fresh(out, &report));
    }
    None
}

fn report_not_fresh(out: &Path, r: &artifacts::CheckReport) -> i32 {
    let mut stdout = std::io::stdout().lock();
    for (what, list) in [("stale", &r.stale), ("missing", &r.missing), ("extra", &r.extra)] {
        for p in list {
            let _ = writeln!(stdout, "{what}: {}", out.join(p).display());
        }
    }
    eprintln!(
        "fleetc: {} is not what fleet.kdl builds ({} stale, {} missing, {} extra); run `fleetc build`",
        out.display(),
        r.stale.len(),
        r.missing.len(),
        r.extra.len()
    );
    EXIT_PROBLEMS
}

fn check(ui: &Ui, args: &FleetArgs, base: Option<&str>) -> i32 {
    let loaded = match base {
        None => load(ui, args),
        Some(rev) => load_against(ui, args, rev),
    };
    match loaded {
        Ok(c) if c.diags.has_errors() => EXIT_PROBLEMS,
        Ok(c) => {
            if ui.diag_format(args) == DiagFormat::Human {
                ui.info(&format!("{}: {}", args.fleet.display(), render::summary(&c.diags)));
            }
            EXIT_OK
        }
        Err(code) => code,
    }
}

/// Compiles a fleet for `diff`, its diagnostics on stderr whatever their format (stdout
/// carries the diff); errors end the command with exit 2, like diff(1).
fn compile_for_diff(
    ui: &Ui,
    format: DiagFormat,
    name: &str,
    text: &str,
    loader: &dyn crate::model::Loader,
) -> Result<(ArtifactSet, crate::model::Fleet, (crate::diag::Diagnostics, crate::diag::Sources)), i32> {
    let c = compile(name, text, loader);
    match format {
        DiagFormat::Json => eprint!("{}", render::json(&c.diags, &c.sources)),
        _ => print_diagnostics(ui, format, &c),
    }
    match (c.artifacts, c.fleet) {
        (Some(a), Some(f)) if !c.diags.has_errors() => Ok((a, f, (c.diags, c.sources))),
        _ => {
            eprintln!("fleetc: error: {name} has errors; nothing to compare");
            Err(EXIT_ERROR)
        }
    }
}

fn diff(ui: &Ui, args: &DiffArgs) -> i32 {
    let dir = fleet_dir(&args.fleet);
    let name = args.fleet.file_name().map_or_else(|| "fleet.kdl".to_owned(), |n| n.to_string_lossy().into_owned());
    let text = match read_fleet(&args.fleet) {
        Ok(t) => t,
        Err(e) => return fail(e),
    };
    let fs_loader = FsLoader::new(&dir);
    let recording = crate::inputs::Recording::new(&fs_loader);
    let (mut new_set, new_fleet, (diags, sources)) =
        match compile_for_diff(ui, ui.diagnostics_format.unwrap_or_default(), &name, &text, &recording) {
            Ok(v) => v,
            Err(code) => return code,
        };
    // Against out/, the new build includes the inputs record a build would write there.
    if args.base.is_none()
        && let Some(record) = recording.record(&name, &text, &new_set.manifest(), &diags, &sources)
        && let Err(e) = new_set.insert(crate::inputs::INPUTS, record)
    {
        return fail(e);
    }
    let (base, old_set, old_fleet) = match &args.base {
        Some(rev) => {
            let (loader, old_text) = match fleet_at(&dir, rev, &name) {
                Ok(v) => v,
                Err(code) => return code,
            };
            match compile_for_diff(
                ui,
                ui.diagnostics_format.unwrap_or_default(),
                &format!("{rev}:{name}"),
                &old_text,
                &loader,
            ) {
                Ok((set, fleet, _)) => (rev.clone(), set, Some(fleet)),
                Err(code) => return code,
            }
        }
        None => {
            let out = out_dir(&args.fleet, args.out.clone());
            match ArtifactSet::read_dir(&out) {
                Ok(s) => (out.display().to_string(), s, None),
                Err(e) => return fail(e),
            }
        }
    };
    let review = review::review(base, &old_set, old_fleet.as_ref(), &new_set, &new_fleet);
    print_review(ui, &review, args.format, args.max_chars)
}

/// A review on stdout in the chosen format (`diff` and `drift`); exit 0 when it is empty, 1
/// when it is not, 2 when stdout cannot be written (a closed pipe is not an error).
fn print_review(ui: &Ui, review: &review::Review, format: DiffFormat, max_chars: usize) -> i32 {
    let text = match format {
        DiffFormat::Unified => review::render::unified::render(review, ui.stdout_color),
        DiffFormat::Stat => review::render::stat::render(review, ui.stdout_color),
        DiffFormat::Markdown => review::render::markdown::render(review, max_chars),
        DiffFormat::Json => review::render::json::render(review),
    };
    let mut stdout = std::io::stdout().lock();
    if let Err(e) = stdout.write_all(text.as_bytes()).and_then(|()| stdout.flush())
        && e.kind() != std::io::ErrorKind::BrokenPipe
    {
        return fail(e);
    }
    if review.is_empty() { EXIT_OK } else { EXIT_PROBLEMS }
}

fn explain(code: Option<&str>) -> i32 {
    match code {
        None => {
            for c in codes::ALL {
                let rule = c.rule.map(|r| format!(" ({r})")).unwrap_or_default();
                println!("{:<8} {}{rule}", c.severity.as_str(), c.name);
            }
            EXIT_OK
        }
        Some(name) => match codes::lookup(name) {
            Some(c) => {
                println!(
                    "{} ({}{})\n",
                    c.name,
                    c.severity.as_str(),
                    c.rule.map(|r| format!(", rule {r}")).unwrap_or_default()
                );
                print!("{}", c.explanation);
                EXIT_OK
            }
            None => match crate::diag::rules::lookup(name) {
                Some(r) => {
                    println!("{}: {}", r.id, r.text);
                    if let Some(why) = r.why {
                        println!("\nWhy: {why}");
                    }
                    let enforced: Vec<&str> =
                        codes::ALL.iter().filter(|c| c.rule == Some(r.id)).map(|c| c.name).collect();
                    if !enforced.is_empty() {
                        println!("\nDiagnostics that enforce it (`fleetc explain <code>`):");
                        for c in enforced {
                            println!("  {c}");
                        }
                    }
                    println!("\ndocs/rules.md lists every rule and upstream fact.");
                    EXIT_OK
                }
                None => fail(format_args!(
                    "no diagnostic code or rule `{name}`; `fleetc explain` lists the codes, docs/rules.md the rules (R1–R29, F1–F13)"
                )),
            },
        },
    }
}

fn schematic_id(file: &Path) -> i32 {
    let mut text = String::new();
    let read = if file.as_os_str() == "-" {
        std::io::stdin().read_to_string(&mut text).map(|_| ())
    } else {
        std::fs::read_to_string(file).map(|t| text = t)
    };
    if let Err(e) = read {
        return fail(format_args!("cannot read {}: {e}", file.display()));
    }
    match crate::schematic::parse(&text).map_err(|e| e.to_string()).and_then(|s| s.id().map_err(|e| e.to_string())) {
        Ok(id) => {
            println!("{id}");
            EXIT_OK
        }
        Err(e) => {
            eprintln!("fleetc: {}: {e}", file.display());
            EXIT_PROBLEMS
        }
    }
}

// ------------------------------------------------------------------ secrets, apply, upgrade

/// The fleet, its model and its fresh build, or the exit code.
fn load_model(ui: &Ui, args: &FleetArgs) -> Result<(crate::model::Fleet, ArtifactSet), i32> {
    let c = load(ui, args)?;
    if c.diags.has_errors() {
        return Err(EXIT_PROBLEMS);
    }
    match (c.fleet, c.artifacts) {
        (Some(f), Some(a)) => Ok((f, a)),
        _ => Err(EXIT_PROBLEMS),
    }
}

/// `<env>/<cluster>` → the environment's apply target and the cluster's name.
fn env_cluster(fleet: &crate::model::Fleet, spec: &str) -> Result<(crate::apply::Target, String), i32> {
    let Some((env, cluster)) = spec.split_once('/') else {
        return Err(fail(format_args!("`{spec}` is not `<env>/<cluster>`")));
    };
    let target = crate::apply::target::of(fleet, env)
        .ok_or_else(|| fail(format_args!("fleet.kdl has no environment `{env}`")))?;
    if !target.clusters.iter().any(|c| c.name == cluster) {
        return Err(fail(format_args!("environment `{env}` has no cluster `{cluster}`")));
    }
    Ok((target, cluster.to_owned()))
}

fn secrets_command(ui: &Ui, command: crate::cli::SecretsCommand) -> i32 {
    let crate::cli::SecretsCommand::Import { fleet, cluster, name, file, force, identity } = command;
    let (model, _) = match load_model(ui, &fleet) {
        Ok(m) => m,
        Err(code) => return code,
    };
    let (target, cluster) = match env_cluster(&model, &cluster) {
        Ok(t) => t,
        Err(code) => return code,
    };
    let listed = target.clusters.iter().find(|c| c.name == cluster).is_some_and(|c| c.sealed.contains(&name));
    if !listed {
        return fail(format_args!(
            "cluster `{}/{cluster}` does not list `{name}`; add `sealed \"{name}\"` to it in fleet.kdl first",
            target.env
        ));
    }
    let mut plaintext = Vec::new();
    let read = if file.as_os_str() == "-" {
        std::io::stdin().read_to_end(&mut plaintext).map(|_| ())
    } else {
        std::fs::read(&file).map(|b| plaintext = b)
    };
    if let Err(e) = read {
        return fail(format_args!("cannot read {}: {e}", file.display()));
    }
    let plaintext = crate::secrets::Plaintext::new(plaintext);
    let id = match crate::secrets::Identity::locate(identity.as_deref(), std::env::var_os(crate::secrets::IDENTITY_VAR))
    {
        Some(p) => match crate::secrets::Identity::from_file(&p) {
            Ok(i) => Some(i),
            Err(e) => return fail(e),
        },
        None => None,
    };
    let root = fleet_dir(&fleet.fleet);
    let req = crate::secrets::Import {
        root: &root,
        env: &target.env,
        cluster: &cluster,
        name: &name,
        plaintext: plaintext.bytes(),
        recipients: &target.recipients,
        identity: id.as_ref(),
        force,
    };
    let rel = crate::secrets::rel_path(&target.env, &cluster, &name);
    match crate::secrets::import(&req) {
        Ok(outcome) => {
            use crate::secrets::Imported;
            let what = match outcome {
                Imported::Created => "sealed",
                Imported::Unchanged => "unchanged (same plaintext: the committed file is kept)",
                Imported::Resealed => "sealed again to the current recipients (same plaintext)",
                Imported::Replaced => "replaced (--force)",
            };
            ui.info(&format!("{rel}: {what}; commit it"));
            EXIT_OK
        }
        Err(e) => {
            eprintln!("fleetc: error: {e}");
            EXIT_PROBLEMS
        }
    }
}

fn mode_of(m: crate::cli::ModeArg) -> crate::model::ApplyMode {
    use crate::cli::ModeArg;
    use crate::model::ApplyMode;
    match m {
        ModeArg::Auto => ApplyMode::Auto,
        ModeArg::NoReboot => ApplyMode::NoReboot,
        ModeArg::Reboot => ApplyMode::Reboot,
        ModeArg::Staged => ApplyMode::Staged,
        ModeArg::StagedIfNeedingReboot => ApplyMode::StagedIfNeedingReboot,
    }
}

/// Where a run's log goes: the plan to stdout (it is the command's output), a real run's
/// log to stderr beside the tools' own output.
fn log_sink(plan: bool) -> impl FnMut(&str) {
    move |line: &str| {
        if plan {
            println!("{line}");
        } else {
            eprintln!("{line}");
        }
    }
}

/// The exit code of a run: 128 + the signal's number when a SIGINT, SIGTERM or SIGHUP stopped
/// it (after the switch was closed and the private directory removed), as a shell reports a
/// process that a signal ended.
fn finish(result: Result<(), crate::apply::Failure>) -> i32 {
    match result {
        Ok(()) => EXIT_OK,
        Err(f) => {
            eprintln!("fleetc: error: {f}");
            match crate::apply::signals::pending() {
                Some(sig) => {
                    eprintln!("fleetc: stopped by {}", crate::apply::signals::name(sig));
                    128 + sig
                }
                None => EXIT_PROBLEMS,
            }
        }
    }
}

fn apply_command(ui: &Ui, args: &crate::cli::ApplyArgs) -> i32 {
    let json_plan = args.plan && args.fleet.format == Some(DiagFormat::Json);
    // With the plan as the one JSON document on stdout, diagnostics go to stderr, one a line.
    let short = FleetArgs { fleet: args.fleet.fleet.clone(), format: Some(DiagFormat::Short) };
    let (model, build) = match load_model(ui, if json_plan { &short } else { &args.fleet }) {
        Ok(m) => m,
        Err(code) => return code,
    };
    let Some(target) = crate::apply::target::of(&model, &args.env) else {
        return fail(format_args!("fleet.kdl has no environment `{}`", args.env));
    };
    let out = out_dir(&args.fleet.fleet, args.out.clone());
    let root = fleet_dir(&args.fleet.fleet);
    let env = crate::apply::env::capture();
    let inputs = crate::apply::Inputs { fleet_dir: &root, out_dir: &out, build: &build, target: &target, env: &env };
    let opts = crate::apply::ApplyOptions {
        plan: args.plan,
        yes: args.yes,
        mode: args.mode.map(mode_of),
        identity: args.identity.clone(),
        allow_stand_ins: args.allow_stand_ins,
        tools: crate::apply::env::ToolPath {
            provider_mirror: args.provider_mirror.clone(),
            ca_bundle: args.ca_bundle.clone(),
        },
        leases: args.leases.clone(),
    };
    let mut runner = match crate::apply::SystemRunner::for_run(&env) {
        Ok(r) => r,
        Err(e) => return fail(e),
    };
    if json_plan {
        // `--format json`, as for build and check: machine-readable output, here the plan.
        let mut lines = Vec::new();
        let mut sink = |l: &str| lines.push(l.to_owned());
        let result = crate::apply::apply(&inputs, &opts, &mut runner, &mut sink);
        let doc = crate::apply::plan_json(&args.env, &lines, &result);
        println!("{}", serde_json::to_string_pretty(&doc).unwrap_or_default());
        return if result.is_ok() { EXIT_OK } else { EXIT_PROBLEMS };
    }
    let mut sink = log_sink(args.plan);
    finish(crate::apply::apply(&inputs, &opts, &mut runner, &mut sink))
}

/// The inputs of a command on one running cluster (`upgrade`, `restore`, `talos render`):
/// the fleet and its fresh build, `<env>/<cluster>`, out/, the operator's environment and a
/// runner; `step` does the work.
fn on_cluster(
    ui: &Ui,
    fleet: &FleetArgs,
    spec: &str,
    out: Option<PathBuf>,
    plan: bool,
    step: impl FnOnce(
        &crate::apply::Inputs<'_>,
        &str,
        &mut crate::apply::SystemRunner,
        &mut dyn FnMut(&str),
    ) -> Result<(), crate::apply::Failure>,
) -> i32 {
    let (model, build) = match load_model(ui, fleet) {
        Ok(m) => m,
        Err(code) => return code,
    };
    let (target, cluster) = match env_cluster(&model, spec) {
        Ok(t) => t,
        Err(code) => return code,
    };
    let out = out_dir(&fleet.fleet, out);
    let root = fleet_dir(&fleet.fleet);
    let env = crate::apply::env::capture();
    let inputs = crate::apply::Inputs { fleet_dir: &root, out_dir: &out, build: &build, target: &target, env: &env };
    let mut sink = log_sink(plan);
    let mut runner = match crate::apply::SystemRunner::for_run(&env) {
        Ok(r) => r,
        Err(e) => return fail(e),
    };
    finish(step(&inputs, &cluster, &mut runner, &mut sink))
}

/// `fleetc drift`: the report on stdout in diff's format, the run's log on stderr (on stdout
/// under `--plan`, which has no report). Exit 0: nothing drifted; 1: something did; 2: an
/// error (the fleet does not build, a tool failed, a node did not answer), as `fleetc diff`.
fn drift_command(ui: &Ui, args: &crate::cli::DriftArgs) -> i32 {
    let fleet = FleetArgs { fleet: args.fleet.clone(), format: None };
    let (model, build) = match load_model(ui, &fleet) {
        Ok(m) => m,
        Err(_) => return EXIT_ERROR,
    };
    let (env_name, cluster) = match args.target.split_once('/') {
        Some((e, c)) => (e, Some(c)),
        None => (args.target.as_str(), None),
    };
    let Some(target) = crate::apply::target::of(&model, env_name) else {
        return fail(format_args!("fleet.kdl has no environment `{env_name}`"));
    };
    let out = out_dir(&args.fleet, args.out.clone());
    let root = fleet_dir(&args.fleet);
    let env = crate::apply::env::capture();
    let inputs = crate::apply::Inputs { fleet_dir: &root, out_dir: &out, build: &build, target: &target, env: &env };
    let opts = crate::apply::DriftOptions { plan: args.plan, identity: args.identity.clone() };
    let mut runner = match crate::apply::SystemRunner::for_run(&env) {
        Ok(r) => r,
        Err(e) => return fail(e),
    };
    let mut sink = log_sink(args.plan);
    let review = match crate::apply::drift(&inputs, cluster, &opts, &mut runner, &mut sink) {
        Ok(r) => r,
        Err(f) => {
            let code = finish(Err(f));
            return if code == EXIT_PROBLEMS { EXIT_ERROR } else { code };
        }
    };
    if args.plan {
        return EXIT_OK;
    }
    print_review(ui, &review, args.format, args.max_chars)
}

fn talos_command(ui: &Ui, command: crate::cli::TalosCommand) -> i32 {
    let crate::cli::TalosCommand::Render { fleet, cluster, identity, dest, plan, build_dir } = command;
    let opts = crate::apply::RenderOptions { plan, identity, dest };
    on_cluster(ui, &fleet, &cluster, build_dir, plan, |inp, cluster, runner, sink| {
        crate::apply::render(inp, cluster, &opts, runner, sink)
    })
}

fn fmt(ui: &Ui, args: &FleetArgs, check_only: bool) -> i32 {
    let path = &args.fleet;
    let text = match read_fleet(path) {
        Ok(t) => t,
        Err(e) => return fail(e),
    };
    let formatted = match crate::syntax::fmt::format(crate::diag::FileId(0), &text) {
        Ok(f) => f,
        Err(diags) => {
            let name = path.file_name().map_or_else(|| "fleet.kdl".to_owned(), |n| n.to_string_lossy().into_owned());
            let mut sources = crate::diag::Sources::default();
            sources.add(name, text);
            let c = Compilation { sources, fleet: None, diags, artifacts: None };
            print_diagnostics(ui, ui.diag_format(args), &c);
            return EXIT_PROBLEMS;
        }
    };
    if formatted == text {
        ui.info(&format!("{} is in the canonical layout", path.display()));
        return EXIT_OK;
    }
    if check_only {
        println!("{}", path.display());
        if ui.verbose {
            let diff = similar::TextDiff::from_lines(&text, &formatted);
            eprint!("{}", diff.unified_diff().header(&path.display().to_string(), "formatted"));
        }
        eprintln!("fleetc: {} is not in the canonical layout; run `fleetc fmt`", path.display());
        return EXIT_PROBLEMS;
    }
    match replace_file(path, &formatted) {
        Ok(()) => {
            ui.info(&format!("formatted {}", path.display()));
            EXIT_OK
        }
        Err(e) => fail(format_args!("cannot write {}: {e}", path.display())),
    }
}

/// Replaces a file's content through a temporary file and a rename, keeping its permissions
/// (and writing through a symbolic link to its target).
fn replace_file(path: &Path, content: &str) -> std::io::Result<()> {
    let real = std::fs::canonicalize(path)?;
    let perms = std::fs::metadata(&real)?.permissions();
    let name = real.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let tmp = real.with_file_name(format!(".{name}.fleetc-fmt"));
    std::fs::write(&tmp, content)?;
    std::fs::set_permissions(&tmp, perms)?;
    std::fs::rename(&tmp, &real).inspect_err(|_| {
        let _ = std::fs::remove_file(&tmp);
    })
}

fn init(ui: &Ui, dir: &Path, platform: crate::cli::PlatformArg) -> i32 {
    let platform = match platform {
        crate::cli::PlatformArg::Scaleway => crate::init::Platform::Scaleway,
        crate::cli::PlatformArg::Proxmox => crate::init::Platform::Proxmox,
        crate::cli::PlatformArg::Metal => crate::init::Platform::Metal,
    };
    match crate::init::write(dir, platform) {
        Ok(path) => {
            ui.info(&format!(
                "wrote {} (with {}, apps/hello/ and {}): replace the placeholders marked CHANGE, then run `fleetc build`; the comment at the top of fleet.kdl says what a first `fleetc apply` needs",
                path.display(),
                crate::init::ARGOCD_PATH,
                crate::init::GITIGNORE_PATH
            ));
            EXIT_OK
        }
        Err(e) => fail(e),
    }
}

fn import_written(ui: &Ui, imported: Result<crate::import::Imported, crate::import::ImportError>, out: &Path) -> i32 {
    use crate::import::{ImportError, Imported};
    let written = imported.and_then(|i: Imported| crate::import::write(out, &i).map(|()| i));
    match written {
        Ok(i) => {
            use crate::import::report::Kind;
            ui.info(&format!(
                "wrote {} ({} files): {} placeholders to fill, {} fields not carried over, {} changed on purpose; read {} then run `fleetc check`",
                out.join("fleet.kdl").display(),
                i.files.len(),
                i.reports.iter().map(|r| r.count(Kind::Placeholder)).sum::<usize>(),
                i.reports.iter().map(|r| r.count(Kind::NotCarried)).sum::<usize>(),
                i.reports.iter().map(|r| r.count(Kind::Deliberate)).sum::<usize>(),
                out.join(crate::import::REPORT).display()
            ));
            EXIT_OK
        }
        Err(ImportError::Problems(sources, diags)) => {
            let c = Compilation { sources, fleet: None, diags, artifacts: None };
            print_diagnostics(ui, DiagFormat::Human, &c);
            EXIT_PROBLEMS
        }
        Err(ImportError::Io(e)) => fail(e),
    }
}

fn graph(ui: &Ui, fleet: PathBuf, format: GraphFormat) -> i32 {
    let args = FleetArgs { fleet, format: None };
    let c = match load(ui, &args) {
        Ok(c) => c,
        Err(code) => return code,
    };
    match c.fleet {
        Some(f) if !c.diags.has_errors() => {
            let g = crate::graph::build(&f);
            print!("{}", if format == GraphFormat::Dot { crate::graph::dot(&g) } else { crate::graph::mermaid(&g) });
            EXIT_OK
        }
        _ => EXIT_PROBLEMS,
    }
}

fn completions(shell: clap_complete::Shell) -> i32 {
    let mut cmd = <Cli as clap::CommandFactory>::command();
    clap_complete::generate(shell, &mut cmd, "fleetc", &mut std::io::stdout());
    // clap's scripts are static; what follows completes the fleet's own names (environments,
    // `<env>/<cluster>`) by asking `fleetc __targets` in the directory the shell is in.
    if let Some(extra) = crate::completions::fleet_names(shell) {
        print!("{extra}");
    }
    EXIT_OK
}

/// `fleetc __targets`: the names the completions offer. Silent on any problem: a completion
/// prints candidates or nothing.
fn targets(what: &str, fleet: &Path) -> i32 {
    let Ok(text) = std::fs::read_to_string(fleet) else { return EXIT_OK };
    let c = compile("fleet.kdl", &text, &FsLoader::new(fleet_dir(fleet)));
    let Some(f) = c.fleet else { return EXIT_OK };
    for env in &f.environments {
        match what {
            "environments" => println!("{}", env.name.value),
            "clusters" => {
                for cl in &env.clusters {
                    println!("{}/{}", env.name.value, cl.name.value);
                }
            }
            _ => {}
        }
    }
    EXIT_OK
}

fn man() -> i32 {
    let cmd = <Cli as clap::CommandFactory>::command();
    match clap_mangen::Man::new(cmd).render(&mut std::io::stdout()) {
        Ok(()) => EXIT_OK,
        Err(e) => fail(e),
    }
}
