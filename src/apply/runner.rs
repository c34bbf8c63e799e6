//! [`Runner`]: the one door to the outside world. Every external tool (tofu, talosctl,
//! kubectl, curl, qemu-img, scw) is a [`Cmd`] handed to a runner; [`SystemRunner`] spawns it,
//! tests hand in a recording double. Waiting and asking the operator go through the runner
//! too, so a test never sleeps and never blocks on a prompt.

use std::collections::BTreeSet;
use std::io::{self, IsTerminal, Read, Write};
use std::path::PathBuf;
use std::time::{Duration, Instant};

use super::env::Env;
use super::signals;

/// One external command.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Cmd {
    pub program: String,
    pub args: Vec<String>,
    /// Variables set in the child's environment. The child gets nothing else of fleetc's
    /// environment but the allow-list of [`super::env::child_env`].
    pub env: Vec<(String, String)>,
    /// Names in `env` whose values are secrets: logged as `***`.
    pub secret_env: BTreeSet<String>,
    /// Bytes written to the child's standard input. Never logged.
    pub stdin: Option<Vec<u8>>,
    /// Capture standard output (to parse it) instead of letting it through to the operator.
    pub capture: bool,
    /// What `--plan` pretends the command printed, so that the steps after it can be shown.
    pub plan_stdout: String,
    /// Runs while a switch is open: it has a deadline ([`SystemRunner::window_deadline`]).
    /// Set by the session, not by the steps.
    pub in_window: bool,
    /// Part of the cleanup after a failure or a signal (closing a switch): it still starts
    /// after a signal, and a further signal is not forwarded to it.
    pub cleanup: bool,
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
    pub fn cleanup(mut self) -> Cmd {
        self.cleanup = true;
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
    /// The time now, in seconds since the Unix epoch (UTC): what a maintenance window and a
    /// snapshot's name are read against. Tests give their own clock.
    fn now(&mut self) -> u64 {
        std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs())
    }
}

/// The default of [`SystemRunner::window_deadline`]: longer than anything a step inside a
/// window waits for by itself (`talosctl health --wait-timeout 10m`, `kubectl wait
/// --timeout=5m`, a node's config apply and reboot).
pub const DEFAULT_WINDOW_DEADLINE: Duration = Duration::from_secs(20 * 60);

/// The variable that sets [`SystemRunner::window_deadline`]: seconds, or a number with `s`,
/// `m` or `h`.
pub const DEADLINE_VAR: &str = "FLEETC_STEP_TIMEOUT";

/// How long a tool has to end after a forwarded signal or its deadline before its process
/// group gets SIGKILL.
pub const GRACE: Duration = Duration::from_secs(10);

/// The exit code [`SystemRunner`] reports for a command killed at its deadline (timeout(1)'s).
pub const DEADLINE_EXIT: i32 = 124;

/// Parses [`DEADLINE_VAR`]'s value.
pub fn parse_deadline(v: &str) -> Result<Duration, String> {
    let v = v.trim();
    let (num, unit) = match v.char_indices().last() {
        Some((i, 's')) => (&v[..i], 1),
        Some((i, 'm')) => (&v[..i], 60),
        Some((i, 'h')) => (&v[..i], 3600),
        _ => (v, 1),
    };
    match num.parse::<u64>().ok().and_then(|n| n.checked_mul(unit)) {
        Some(secs) if secs > 0 && secs <= 7 * 24 * 3600 => Ok(Duration::from_secs(secs)),
        _ => Err(format!(
            "{DEADLINE_VAR}={v} is not a deadline: give seconds (`900`) or a number with s, m or h (`15m`), at most a week"
        )),
    }
}

/// Spawns real processes. The only process-spawning code in fleetc's apply step.
///
/// Each child starts in its own process group with an environment built from an allow-list
/// ([`super::env`]), standard input from the command's bytes or `/dev/null`, and (on
/// Linux) SIGTERM as its parent-death signal, so that a tool does not outlive a fleetc killed
/// with SIGKILL. While it runs, a SIGINT, SIGTERM or SIGHUP fleetc receives
/// ([`signals`]) is forwarded to its group, and a command inside a switch window that
/// outlives [`SystemRunner::window_deadline`] gets SIGTERM, then SIGKILL after [`GRACE`].
#[derive(Debug)]
pub struct SystemRunner {
    /// Where the children run (the fleet's directory); the current directory when `None`.
    pub dir: Option<PathBuf>,
    /// The operator's environment, filtered per child.
    pub parent_env: Env,
    /// How long one command inside a switch window may run ([`DEADLINE_VAR`]).
    pub window_deadline: Duration,
}

impl Default for SystemRunner {
    fn default() -> SystemRunner {
        SystemRunner { dir: None, parent_env: super::env::capture(), window_deadline: DEFAULT_WINDOW_DEADLINE }
    }
}

impl SystemRunner {
    /// The runner of a real `apply`, `upgrade` or `talos render`: the operator's environment,
    /// the deadline from [`DEADLINE_VAR`], and the signal handler installed.
    pub fn for_run(env: &Env) -> Result<SystemRunner, String> {
        let window_deadline = match env.get(DEADLINE_VAR) {
            Some(v) => parse_deadline(v)?,
            None => DEFAULT_WINDOW_DEADLINE,
        };
        signals::install();
        Ok(SystemRunner { dir: None, parent_env: env.clone(), window_deadline })
    }
}

fn note(mut stderr: Vec<u8>, line: &str) -> Vec<u8> {
    if !stderr.is_empty() && !stderr.ends_with(b"\n") {
        stderr.push(b'\n');
    }
    stderr.extend_from_slice(line.as_bytes());
    stderr.push(b'\n');
    stderr
}

fn reader(pipe: Option<impl Read + Send + 'static>) -> Option<std::thread::JoinHandle<Vec<u8>>> {
    pipe.map(|mut p| {
        std::thread::spawn(move || {
            let mut buf = Vec::new();
            let _ = p.read_to_end(&mut buf);
            buf
        })
    })
}

impl Runner for SystemRunner {
    #[allow(clippy::disallowed_methods, unsafe_code)]
    fn run(&mut self, cmd: &Cmd) -> io::Result<Output> {
        use std::os::unix::process::CommandExt;
        use std::process::{Command, Stdio};
        if !cmd.cleanup
            && let Some(sig) = signals::pending()
        {
            return Ok(Output {
                code: 128 + sig,
                stdout: Vec::new(),
                stderr: note(
                    Vec::new(),
                    &format!("fleetc received {}: `{}` not started", signals::name(sig), cmd.program),
                ),
            });
        }
        let mut c = Command::new(&cmd.program);
        c.args(&cmd.args);
        c.env_clear();
        c.envs(super::env::child_env(&cmd.program, &self.parent_env, &cmd.env));
        if let Some(d) = &self.dir {
            c.current_dir(d);
        }
        c.stdin(if cmd.stdin.is_some() { Stdio::piped() } else { Stdio::null() });
        c.stdout(if cmd.capture { Stdio::piped() } else { Stdio::inherit() });
        c.stderr(if cmd.capture { Stdio::piped() } else { Stdio::inherit() });
        // Its own process group: the terminal's Ctrl-C reaches fleetc only, which forwards it
        // once (a second SIGINT makes tofu abandon its state lock).
        c.process_group(0);
        #[cfg(target_os = "linux")]
        {
            // SAFETY: prctl(2) is async-signal-safe and touches no memory of the parent.
            unsafe {
                c.pre_exec(|| {
                    libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGTERM);
                    Ok(())
                });
            }
        }
        let mut child = c.spawn()?;
        let pgid = child.id();
        let feeder = match (&cmd.stdin, child.stdin.take()) {
            (Some(bytes), Some(mut sink)) => {
                let bytes = bytes.clone();
                Some(std::thread::spawn(move || {
                    let _ = sink.write_all(&bytes);
                }))
            }
            _ => None,
        };
        let out_reader = reader(child.stdout.take());
        let err_reader = reader(child.stderr.take());
        let started = Instant::now();
        let mut forwarded: Option<i32> = None;
        let mut timed_out = false;
        let mut escalate: Option<Instant> = None;
        // Polls quickly at first (most commands end within milliseconds), then every 25 ms.
        let mut pause = Duration::from_millis(1);
        let status = loop {
            if let Some(status) = child.try_wait()? {
                break status;
            }
            if !cmd.cleanup
                && forwarded.is_none()
                && let Some(sig) = signals::pending()
            {
                signals::kill_group(pgid, sig);
                forwarded = Some(sig);
                escalate.get_or_insert(Instant::now() + GRACE);
            }
            if cmd.in_window && !timed_out && started.elapsed() >= self.window_deadline {
                signals::kill_group(pgid, libc::SIGTERM);
                timed_out = true;
                escalate.get_or_insert(Instant::now() + GRACE);
            }
            if escalate.is_some_and(|t| Instant::now() >= t) {
                signals::kill_group(pgid, libc::SIGKILL);
                escalate = None;
            }
            std::thread::sleep(pause);
            pause = (pause * 2).min(Duration::from_millis(25));
        };
        if forwarded.is_some() || timed_out {
            // Whatever the tool started in its group goes too (it would hold the pipes open).
            signals::kill_group(pgid, libc::SIGKILL);
        }
        if let Some(f) = feeder {
            let _ = f.join();
        }
        let stdout = out_reader.and_then(|h| h.join().ok()).unwrap_or_default();
        let mut stderr = err_reader.and_then(|h| h.join().ok()).unwrap_or_default();
        let mut code = status.code().unwrap_or(-1);
        if let Some(sig) = forwarded {
            code = 128 + sig;
            stderr = note(
                stderr,
                &format!("fleetc received {}: forwarded to `{}`, which ended", signals::name(sig), cmd.program),
            );
        } else if timed_out {
            code = DEADLINE_EXIT;
            stderr = note(
                stderr,
                &format!(
                    "`{}` ran past its deadline of {} s inside a switch window and was killed ({DEADLINE_VAR})",
                    cmd.program,
                    self.window_deadline.as_secs()
                ),
            );
        }
        Ok(Output { code, stdout, stderr })
    }

    fn sleep(&mut self, d: Duration) {
        let end = Instant::now() + d;
        while signals::pending().is_none() {
            let now = Instant::now();
            if now >= end {
                break;
            }
            std::thread::sleep((end - now).min(Duration::from_millis(50)));
        }
    }

    #[allow(unsafe_code)]
    fn confirm(&mut self, question: &str) -> bool {
        if !io::stdin().is_terminal() {
            return false;
        }
        eprint!("{question} [y/N] ");
        let _ = io::stderr().flush();
        // read(2) byte by byte rather than std's line reader, which retries on EINTR: a
        // signal at the prompt must end the prompt.
        let mut line = Vec::new();
        loop {
            if signals::pending().is_some() {
                return false;
            }
            let mut b = 0u8;
            // SAFETY: reads at most one byte into a live local.
            let n = unsafe { libc::read(0, (&raw mut b).cast(), 1) };
            match n {
                1 if b == b'\n' => break,
                1 => line.push(b),
                0 => break,
                _ if io::Error::last_os_error().kind() == io::ErrorKind::Interrupted => continue,
                _ => return false,
            }
        }
        matches!(String::from_utf8_lossy(&line).trim(), "y" | "Y" | "yes")
    }
}
