//! The build's use of the machine's cores, and the one rule that keeps it deterministic:
//! work is split into jobs whose results depend on their inputs alone, run on up to
//! [`threads`] scoped threads, and gathered **in the jobs' order**, never in the order they
//! finish. A build with one thread and a build with many give the same bytes and the same
//! diagnostics in the same order (`tests/threads.rs`).
//!
//! The thread count is decided once, by the driver ([`crate::compile::compile`]): the
//! stages take it as a parameter and read no environment themselves.

use std::num::NonZeroUsize;
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

/// The environment variable that sets the build's thread count (a positive integer). Unset
/// or not a positive integer: the machine's available parallelism.
pub const THREADS_VAR: &str = "FLEETC_THREADS";

/// How many threads a build uses: [`THREADS_VAR`] when it is a positive integer, else
/// `std::thread::available_parallelism()` (1 when that is unknown).
pub fn threads() -> usize {
    let machine = std::thread::available_parallelism().map_or(1, NonZeroUsize::get);
    threads_from(std::env::var(THREADS_VAR).ok().as_deref(), machine)
}

/// [`threads`] from the variable's value and the machine's parallelism.
fn threads_from(var: Option<&str>, machine: usize) -> usize {
    match var.and_then(|v| v.trim().parse::<usize>().ok()) {
        Some(n) if n > 0 => n,
        _ => machine.max(1),
    }
}

/// Runs every job and returns their results in the jobs' order. With `threads` ≤ 1 or a
/// single job, the jobs run one after another on this thread; otherwise on
/// `min(threads, jobs)` scoped threads, each taking the next job not yet taken (so a long
/// job does not hold back the short ones queued behind it on the same thread). Which thread
/// ran a job never shows in the results.
pub fn run<T: Send, F: FnOnce() -> T + Send>(threads: usize, jobs: Vec<F>) -> Vec<T> {
    let workers = threads.min(jobs.len());
    if workers <= 1 {
        return jobs.into_iter().map(|job| job()).collect();
    }
    let count = jobs.len();
    let queue: Vec<Mutex<Option<F>>> = jobs.into_iter().map(|j| Mutex::new(Some(j))).collect();
    let slots: Vec<Mutex<Option<T>>> = (0..count).map(|_| Mutex::new(None)).collect();
    let next = AtomicUsize::new(0);
    let work = || {
        loop {
            let i = next.fetch_add(1, Ordering::Relaxed);
            if i >= count {
                break;
            }
            let job = queue[i].lock().unwrap_or_else(|e| e.into_inner()).take();
            if let Some(job) = job {
                let result = job();
                *slots[i].lock().unwrap_or_else(|e| e.into_inner()) = Some(result);
            }
        }
    };
    std::thread::scope(|s| {
        // This thread is one of the workers.
        let others: Vec<_> = (1..workers).map(|_| s.spawn(work)).collect();
        work();
        for h in others {
            if let Err(panic) = h.join() {
                std::panic::resume_unwind(panic);
            }
        }
    });
    slots.into_iter().map(|s| s.into_inner().unwrap_or_else(|e| e.into_inner()).expect("every job ran")).collect()
}

/// `items` cut into at most `parts` contiguous, non-empty chunks of nearly equal length, in
/// order (the concatenation of the chunks is `items`).
pub fn chunks<T>(items: &[T], parts: usize) -> Vec<&[T]> {
    if items.is_empty() {
        return Vec::new();
    }
    let parts = parts.clamp(1, items.len());
    let (base, extra) = (items.len() / parts, items.len() % parts);
    let mut out = Vec::with_capacity(parts);
    let mut start = 0;
    for k in 0..parts {
        let len = base + usize::from(k < extra);
        out.push(&items[start..start + len]);
        start += len;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_variable_wins_when_it_is_a_positive_integer() {
        assert_eq!(threads_from(Some("3"), 2), 3);
        assert_eq!(threads_from(Some(" 1 "), 8), 1);
        assert_eq!(threads_from(Some("0"), 2), 2);
        assert_eq!(threads_from(Some("many"), 2), 2);
        assert_eq!(threads_from(None, 2), 2);
        assert_eq!(threads_from(None, 0), 1);
    }

    #[test]
    fn results_come_back_in_the_jobs_order_whatever_the_thread_count() {
        for threads in [0, 1, 2, 3, 16] {
            let jobs: Vec<_> = (0..20u64)
                .map(|i| {
                    move || {
                        // Uneven work, so that jobs finish out of order on several threads.
                        let mut x = i;
                        for _ in 0..(20 - i) * 10_000 {
                            x = x.wrapping_mul(6364136223846793005).wrapping_add(1);
                        }
                        (i, std::hint::black_box(x) | 1)
                    }
                })
                .collect();
            let order: Vec<u64> = run(threads, jobs).into_iter().map(|(i, _)| i).collect();
            assert_eq!(order, (0..20).collect::<Vec<_>>(), "{threads} threads");
        }
    }

    #[test]
    fn chunks_are_contiguous_and_cover_everything() {
        let items: Vec<usize> = (0..10).collect();
        for parts in [0, 1, 2, 3, 4, 10, 11] {
            let cs = chunks(&items, parts);
            assert!(cs.iter().all(|c| !c.is_empty()));
            assert_eq!(cs.concat(), items, "{parts} parts");
            assert!(cs.len() <= parts.max(1));
            let (min, max) = (cs.iter().map(|c| c.len()).min(), cs.iter().map(|c| c.len()).max());
            assert!(max.unwrap() - min.unwrap() <= 1);
        }
        assert!(chunks::<u8>(&[], 2).is_empty());
    }
}
