//! [`Runner`]: the one door to the outside world. Every external tool (tofu, talosctl,
//! kubectl, curl, qemu-img, scw) is a [`Cmd`] handed to a runner; [`SystemRunner`] spawns it,
//! tests hand in a recording double. Waiting and asking the operator go through the runner
//! too, so a test never sleeps and never blocks on a prompt.

use std::collections::BTreeSet;
use std::io::{self, BufRead, IsTerminal, Write};
use std::path::PathBuf;
use std::time::Duration;

/// One external command.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Cmd {
    pub program: String,
    pub args: Vec<String>,
    /// Variables added to the child's environment (nothing is removed: the parent's
    /// environment was checked for Scaleway SDK variables before anything ran).
    pub env: Vec<(String, String)>,
    /// Names in `env` whose values are secrets: logged as `***`.
    pub secret_env: BTreeSet<String>,
    /// Bytes written to the child's standard input. Never logged.
    pub stdin: Option<Vec<u8>>,
    /// Capture standard output (to parse it) instead of letting it through to the operator.
    pub capture: bool,
    /// What `--plan` pretends the command printed, so that the steps after it can be shown.
    pub plan_stdout: String,
}

impl Cmd {
    pub fn new(program: &str) -> Cmd {
        Cmd { program: program.to_owned(), ..Cmd::default() }
    }
    pub fn arg(mut self, a: impl Into<String>) -> Cmd {
        self.args.push(a.into());
        self
    }
    pub fn args<I: IntoIterator<Item = S>, S: Into<String>>(mut self, it: I) -> Cmd {
        self.args.extend(it.into_iter().map(Into::into));
        self
    }
    pub fn env(mut self, k: &str, v: impl Into<String>) -> Cmd {
        self.env.push((k.to_owned(), v.into()));
        self
    }
    pub fn secret_env(mut self, k: &str, v: impl Into<String>) -> Cmd {
        self.secret_env.insert(k.to_owned());
        self.env(k, v)
    }
    pub fn envs(mut self, vars: &[(String, String, bool)]) -> Cmd {
        for (k, v, secret) in vars {
            self = if *secret { self.secret_env(k, v.clone()) } else { self.env(k, v.clone()) };
        }
        self
    }
    pub fn stdin(mut self, bytes: Vec<u8>) -> Cmd {
        self.stdin = Some(bytes);
        self
    }
    pub fn capture(mut self) -> Cmd {
        self.capture = true;
        self
    }
    pub fn plan_stdout(mut self, s: impl Into<String>) -> Cmd {
        self.plan_stdout = s.into();
        self.capture()
    }
    /// The value of `--flag=value` or `--flag value` among the arguments.
    pub fn flag(&self, name: &str) -> Option<&str> {
        let eq = format!("{name}=");
        self.args.iter().enumerate().find_map(|(i, a)| {
            a.strip_prefix(&eq).or_else(|| (a == name).then(|| self.args.get(i + 1).map(String::as_str)).flatten())
        })
    }
}

/// What a command did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Output {
    /// The exit code (`-1` when killed by a signal).
    pub code: i32,
    pub stdout: Vec<u8>,
    pub stderr: Vec<u8>,
}

impl Output {
    pub fn ok(stdout: impl Into<Vec<u8>>) -> Output {
        Output { code: 0, stdout: stdout.into(), stderr: Vec::new() }
    }
    pub fn failed(code: i32, stderr: impl Into<Vec<u8>>) -> Output {
        Output { code, stdout: Vec::new(), stderr: stderr.into() }
    }
    pub fn success(&self) -> bool {
        self.code == 0
    }
    pub fn stdout_str(&self) -> String {
        String::from_utf8_lossy(&self.stdout).into_owned()
    }
}

/// The outside world, as the apply step sees it.
pub trait Runner {
    /// Runs `cmd` to completion. `Err` only when it could not be started.
    fn run(&mut self, cmd: &Cmd) -> io::Result<Output>;
    /// Waits between two polls.
    fn sleep(&mut self, d: Duration);
    /// Asks the operator a yes/no question; `false` when nobody can answer.
    fn confirm(&mut self, question: &str) -> bool;
}

/// Spawns real processes. The only process-spawning code in fleetc's apply step.
#[derive(Debug, Default)]
pub struct SystemRunner {
    /// Where the children run (the fleet's directory); the current directory when `None`.
    pub dir: Option<PathBuf>,
}

impl Runner for SystemRunner {
    #[allow(clippy::disallowed_methods)]
    fn run(&mut self, cmd: &Cmd) -> io::Result<Output> {
        use std::process::{Command, Stdio};
        let mut c = Command::new(&cmd.program);
        c.args(&cmd.args);
        c.envs(cmd.env.iter().map(|(k, v)| (k, v)));
        if let Some(d) = &self.dir {
            c.current_dir(d);
        }
        c.stdin(if cmd.stdin.is_some() { Stdio::piped() } else { Stdio::inherit() });
        c.stdout(if cmd.capture { Stdio::piped() } else { Stdio::inherit() });
        c.stderr(if cmd.capture { Stdio::piped() } else { Stdio::inherit() });
        let mut child = c.spawn()?;
        if let (Some(bytes), Some(mut sink)) = (&cmd.stdin, child.stdin.take()) {
            sink.write_all(bytes)?;
        }
        let out = child.wait_with_output()?;
        Ok(Output { code: out.status.code().unwrap_or(-1), stdout: out.stdout, stderr: out.stderr })
    }

    fn sleep(&mut self, d: Duration) {
        std::thread::sleep(d);
    }

    fn confirm(&mut self, question: &str) -> bool {
        if !io::stdin().is_terminal() {
            return false;
        }
        eprint!("{question} [y/N] ");
        let _ = io::stderr().flush();
        let mut line = String::new();
        io::stdin().lock().read_line(&mut line).is_ok() && matches!(line.trim(), "y" | "Y" | "yes")
    }
}
