//! SIGINT, SIGTERM and SIGHUP during `apply`, `upgrade` and `talos render`.
//!
//! [`install`] replaces their default action (the process dies at once, leaving the Talos API
//! switch open and the private directory on disk) with a handler that only records the
//! signal. [`super::SystemRunner`] watches the record while a tool runs: it forwards the signal
//! to the tool's process group, waits for it to end, and answers that the command was
//! interrupted; every command after that fails without starting, except the ones marked
//! [`super::Cmd::cleanup`] (closing a switch), which run to their end whatever more arrives.
//! The step's failure then unwinds through `with_switch` (the switch is closed) and drops the
//! private directory (its files are overwritten and removed) before fleetc exits with
//! 128 + the signal's number. Only SIGKILL, which no process can catch, skips this
//! (docs/apply.md, "Signals, deadlines and SIGKILL").

use std::sync::atomic::{AtomicI32, Ordering};

static PENDING: AtomicI32 = AtomicI32::new(0);

/// The signals fleetc turns into an orderly stop.
pub const HANDLED: [i32; 3] = [libc::SIGINT, libc::SIGTERM, libc::SIGHUP];

extern "C" fn record(sig: libc::c_int) {
    // Async-signal-safe: one atomic store, the first signal wins.
    let _ = PENDING.compare_exchange(0, sig, Ordering::SeqCst, Ordering::SeqCst);
}

/// Installs the handler for [`HANDLED`] (idempotent). No `SA_RESTART`: a blocking read of
/// the confirmation prompt returns `EINTR` and sees the signal.
#[allow(unsafe_code)]
pub fn install() {
    for sig in HANDLED {
        // SAFETY: a zeroed sigaction with a handler that only stores into an atomic is a
        // valid, async-signal-safe disposition; the pointers passed live for the call.
        unsafe {
            let mut act: libc::sigaction = std::mem::zeroed();
            act.sa_sigaction = record as extern "C" fn(libc::c_int) as libc::sighandler_t;
            libc::sigemptyset(&mut act.sa_mask);
            act.sa_flags = 0;
            libc::sigaction(sig, &act, std::ptr::null_mut());
        }
    }
}

/// The first signal received since [`install`], if any.
pub fn pending() -> Option<i32> {
    match PENDING.load(Ordering::SeqCst) {
        0 => None,
        s => Some(s),
    }
}

/// A signal's name for messages.
pub fn name(sig: i32) -> &'static str {
    match sig {
        libc::SIGINT => "SIGINT",
        libc::SIGTERM => "SIGTERM",
        libc::SIGHUP => "SIGHUP",
        libc::SIGKILL => "SIGKILL",
        _ => "a signal",
    }
}

/// Sends `sig` to the process group `pgid` (a tool and whatever it started).
#[allow(unsafe_code)]
pub fn kill_group(pgid: u32, sig: i32) {
    if let Ok(p) = libc::pid_t::try_from(pgid)
        && p > 0
    {
        // SAFETY: kill(2) with a negative pid signals a process group; no memory is involved.
        unsafe {
            libc::kill(-p, sig);
        }
    }
}
