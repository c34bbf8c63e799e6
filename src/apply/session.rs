//! [`Session`]: one run of `apply`, `upgrade` or `talos render`. It logs every command before
//! it runs (arguments shell-quoted, secret values masked), runs it through the [`Runner`] —
//! or, under `--plan`, runs nothing and answers with the command's planned output — and turns
//! a failure into a [`Failure`] that names the step and what to do next.

use std::collections::BTreeSet;
use std::fmt;
use std::time::Duration;

use super::runner::{Cmd, Output, Runner};

/// The steps of `fleetc apply`, in order (and those of `upgrade` and `talos render`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Step {
    Preflight,
    Schematics,
    Images,
    CloudRoot,
    OpenSwitch,
    ClusterRoot,
    CloseSwitch,
    ArgoCd,
    Upgrade,
    /// `fleetc restore`: etcd recovered from a snapshot (docs/restore.md).
    Restore,
    Render,
    /// Bare metal: each machine checked and configured in maintenance mode (docs/metal.md).
    Machines,
    /// `fleetc drift`: what runs read and compared with out/ (docs/day-two.md).
    Drift,
}

impl Step {
    pub const APPLY: [Step; 8] = [
        Step::Preflight,
        Step::Schematics,
        Step::Images,
        Step::CloudRoot,
        Step::OpenSwitch,
        Step::ClusterRoot,
        Step::CloseSwitch,
        Step::ArgoCd,
    ];

    pub fn title(self) -> &'static str {
        match self {
            Step::Preflight => "0. preflight",
            Step::Schematics => "1. schematics registered with the Image Factory (F2)",
            Step::Images => "2. image pipeline (R22)",
            Step::CloudRoot => "3. cloud root",
            Step::OpenSwitch => "4. open the Talos API switch (R13)",
            Step::ClusterRoot => "5. cluster root, one control-plane node at a time (R19, F3)",
            Step::CloseSwitch => "6. close the Talos API switch (R13)",
            Step::ArgoCd => "7. Argo CD (F7, R23)",
            Step::Upgrade => "upgrade (F1)",
            Step::Restore => "restore etcd from a snapshot (R28)",
            Step::Render => "talos render",
            Step::Drift => "drift: what runs against what out/ would apply (read-only)",
            Step::Machines => {
                "3. machines in maintenance mode: identity checked, config applied, one control-plane node at a time (R13, F3)"
            }
        }
    }

    /// What to do after a failure at this step.
    pub fn next(self) -> &'static str {
        match self {
            Step::Preflight => "fix what the message says; nothing ran",
            Step::Schematics => {
                "nothing was created; compare out/schematics with the factory's answer, rebuild with `fleetc build` if fleet.kdl changed, and run `fleetc apply` again"
            }
            Step::Images => {
                "delete the image or snapshot in error (its name carries the schematic ID and Talos version) and run `fleetc apply` again: finished images are reused"
            }
            Step::CloudRoot => {
                "read tofu's message, fix the cause, and run `fleetc apply` again: tofu resumes from the state"
            }
            Step::OpenSwitch | Step::CloseSwitch => {
                "the switch's state is in the cloud root; run `fleetc apply` again, or close it by hand with `tofu -chdir=out/tofu/<env>/cloud apply -var=gateway_ip_id=<zone>/<id> -var=talos_api_open=false`"
            }
            Step::ClusterRoot => {
                "the switch was closed; check the node named above with `talosctl health`, fix the cause, and run `fleetc apply` again: applied nodes are left as they are"
            }
            Step::ArgoCd => {
                "Argo CD's install and the root application are idempotent; fix the cause and run `fleetc apply` again"
            }
            Step::Upgrade => {
                "nodes already upgraded stay upgraded; fix the cause and run `fleetc upgrade` again, it resumes with the first node not at the target"
            }
            Step::Restore => {
                "the switch was closed; see docs/restore.md, \"etcd is lost\": check the node named above with `talosctl -n <node> service etcd`, then run `fleetc restore` again (a reset node is reset again, which is harmless while etcd is down)"
            }
            Step::Render => "nothing was written outside the private temporary directory; fix the cause and run again",
            Step::Drift => {
                "drift changed nothing (the switch, if opened, was closed); fix the cause and run `fleetc drift` again"
            }
            Step::Machines => {
                "a refused machine got nothing: boot the declared machine (or correct its `mac`/`install-disk`) and run `fleetc apply` again; configured machines are left as they are"
            }
        }
    }
}

/// A step that failed: what, where, and what next.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Failure {
    pub step: Step,
    pub message: String,
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "step {} failed: {}\nnext: {}", self.step.title(), self.message, self.step.next())
    }
}

impl std::error::Error for Failure {}

pub type StepResult<T = ()> = Result<T, Failure>;

/// Replaces secret values in log lines with `***`.
#[derive(Debug, Default, Clone)]
pub struct Masker {
    secrets: Vec<String>,
}

impl Masker {
    /// Registers a secret, and each of its lines and YAML values long enough to identify it.
    pub fn add(&mut self, secret: &str) {
        let mut add = |s: &str| {
            let s = s.trim();
            if s.len() >= 6 && !self.secrets.iter().any(|x| x == s) {
                self.secrets.push(s.to_owned());
            }
        };
        add(secret);
        for line in secret.lines() {
            add(line);
            if let Some((_, v)) = line.split_once(": ") {
                add(v.trim_matches(|c| c == '"' || c == '\''));
            }
        }
        // Longest first, so that a secret containing another is masked whole.
        self.secrets.sort_by_key(|s| std::cmp::Reverse(s.len()));
    }

    pub fn mask(&self, line: &str) -> String {
        let mut out = line.to_owned();
        for s in &self.secrets {
            if out.contains(s.as_str()) {
                out = out.replace(s.as_str(), "***");
            }
        }
        out
    }
}

/// Shell-quotes one word for display.
pub fn quote(w: &str) -> String {
    if !w.is_empty() && w.bytes().all(|b| b.is_ascii_alphanumeric() || b"-_./:=@,+%".contains(&b)) {
        w.to_owned()
    } else {
        format!("'{}'", w.replace('\'', r"'\''"))
    }
}

/// The command as one log line (before masking).
#[cfg(test)]
pub fn render(cmd: &Cmd) -> String {
    render_without(cmd, &BTreeSet::new())
}

/// The command as one log line, leaving out the run-wide variables `quiet` (listed once).
pub fn render_without(cmd: &Cmd, quiet: &BTreeSet<String>) -> String {
    let mut parts = Vec::new();
    for (k, v) in cmd.env.iter().filter(|(k, _)| !quiet.contains(k)) {
        parts.push(if cmd.secret_env.contains(k) { format!("{k}=***") } else { format!("{k}={}", quote(v)) });
    }
    parts.push(quote(&cmd.program));
    parts.extend(cmd.args.iter().map(|a| quote(a)));
    let mut line = parts.join(" ");
    if cmd.stdin.is_some() {
        line.push_str(" <<(stdin not shown)");
    }
    line
}

/// One run.
pub struct Session<'a> {
    runner: &'a mut dyn Runner,
    /// `--plan`: print, run nothing.
    pub plan: bool,
    /// `--yes`: no confirmation prompt.
    pub yes: bool,
    pub masker: Masker,
    sink: &'a mut dyn FnMut(&str),
    pub step: Step,
    /// Run-wide variables (credentials, tool settings) listed once at the start instead of on
    /// every command.
    pub quiet_env: BTreeSet<String>,
    /// A switch is open ([`super::switch::with_switch`]): every command gets a deadline.
    pub window: bool,
}

impl<'a> Session<'a> {
    pub fn new(runner: &'a mut dyn Runner, plan: bool, yes: bool, sink: &'a mut dyn FnMut(&str)) -> Session<'a> {
        Session {
            runner,
            plan,
            yes,
            masker: Masker::default(),
            sink,
            step: Step::Preflight,
            quiet_env: BTreeSet::new(),
            window: false,
        }
    }

    /// Every line goes out masked.
    pub fn log(&mut self, line: &str) {
        let masked = self.masker.mask(line);
        (self.sink)(&masked);
    }

    pub fn begin(&mut self, step: Step) {
        self.step = step;
        self.log(&format!("== {}", step.title()));
    }

    /// A comment line in the log and the plan.
    pub fn note(&mut self, msg: &str) {
        self.log(&format!("# {msg}"));
    }

    pub fn secret(&mut self, value: &str) {
        self.masker.add(value);
    }

    pub fn fail<T>(&self, message: impl Into<String>) -> StepResult<T> {
        Err(self.failure(message))
    }

    pub fn failure(&self, message: impl Into<String>) -> Failure {
        Failure { step: self.step, message: self.masker.mask(&message.into()) }
    }

    /// Runs a command; a non-zero exit is a failure of the current step.
    pub fn run(&mut self, cmd: Cmd) -> StepResult<Output> {
        let out = self.try_run(cmd.clone())?;
        if out.success() {
            Ok(out)
        } else {
            let stderr = String::from_utf8_lossy(&out.stderr);
            let last = stderr.lines().rev().find(|l| !l.trim().is_empty()).unwrap_or("").trim().to_owned();
            let detail = if last.is_empty() { String::new() } else { format!(": {last}") };
            self.fail(format!("`{}` exited with code {}{detail}", cmd.program, out.code))
        }
    }

    /// Runs a command and returns whatever it did (a non-zero exit is the caller's to judge).
    pub fn try_run(&mut self, mut cmd: Cmd) -> StepResult<Output> {
        cmd.in_window = self.window;
        let line = format!("$ {}", render_without(&cmd, &self.quiet_env));
        self.log(&line);
        if self.plan {
            return Ok(Output::ok(cmd.plan_stdout.clone().into_bytes()));
        }
        let out = match self.runner.run(&cmd) {
            Ok(out) => out,
            Err(e) => return self.fail(format!("cannot run `{}`: {e} (is it installed and on PATH?)", cmd.program)),
        };
        // A signal or a deadline ends the step even where the caller tolerates a failed
        // command (a lookup, a best-effort mark): nothing after it but closing may run.
        if !cmd.cleanup {
            if let Some(sig) = super::signals::pending() {
                return self.fail(format!("fleetc received {} while `{}` ran", super::signals::name(sig), cmd.program));
            }
            if cmd.in_window && out.code == super::runner::DEADLINE_EXIT {
                let stderr = String::from_utf8_lossy(&out.stderr);
                let last = stderr.lines().rev().find(|l| !l.trim().is_empty()).unwrap_or("").trim().to_owned();
                return self.fail(last);
            }
        }
        Ok(out)
    }

    pub fn sleep(&mut self, d: Duration) {
        if !self.plan {
            self.runner.sleep(d);
        }
    }

    /// Asks before a change: `--yes` answers for the operator; `--plan` never gets here.
    /// The runner's clock ([`Runner::now`]).
    pub fn now(&mut self) -> u64 {
        self.runner.now()
    }

    pub fn confirm(&mut self, question: &str) -> StepResult {
        if self.plan {
            self.note(&format!("asks: {question} (skipped with --yes)"));
            return Ok(());
        }
        if self.yes {
            self.note(&format!("{question} yes (--yes)"));
            return Ok(());
        }
        if self.runner.confirm(question) { Ok(()) } else { self.fail("not confirmed (answer `y`, or pass --yes)") }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn masking_covers_lines_and_values() {
        let mut m = Masker::default();
        m.add("cluster:\n    id: c2VjcmV0LWlk\n    secret: \"abcdefgh\"\n");
        assert_eq!(m.mask("id is c2VjcmV0LWlk, secret abcdefgh"), "id is ***, secret ***");
        assert_eq!(m.mask("nothing here"), "nothing here");
    }

    #[test]
    fn rendering_quotes_and_hides_secret_env_and_stdin() {
        let cmd =
            Cmd::new("tofu").arg("-var=x=a b").secret_env("TF_VAR_k", "hunter22").env("A", "1").stdin(b"s".to_vec());
        assert_eq!(render(&cmd), "TF_VAR_k=*** A=1 tofu '-var=x=a b' <<(stdin not shown)");
    }
}
