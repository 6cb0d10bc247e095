//! Jobs on worker threads that a PostgreSQL backend can wait for and leave:
//! [`parallel_map`], which the SVM training's fits run on (`crate::svm`).
//!
//! Pure Rust (no pgrx). The backend thread only waits and calls its check; the
//! workers run with every signal blocked and own what they read, so a stop
//! returns at once and a job under way ends in the background.

use crate::error::{DedupError, Result};
use crate::interrupt::Check;

/// Most worker threads a training uses.
pub(crate) const MAX_WORKERS: usize = 4;

/// How often the calling thread of [`parallel_map`] wakes from waiting for its
/// workers to call its check.
pub const CHECK_EVERY: std::time::Duration = std::time::Duration::from_millis(50);

/// Worker threads of [`parallel_map`] alive in this process: after a stop, the
/// ones still finishing a fit.
static LIVE_WORKERS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// How many worker threads of [`parallel_map`] are alive: outside a call, those
/// of a stopped call still finishing the job they had begun.
pub fn live_workers() -> usize {
    LIVE_WORKERS.load(std::sync::atomic::Ordering::SeqCst)
}

/// A job function [`parallel_map`] hands to its worker threads.
type Job<J, T> = std::sync::Arc<dyn Fn(&J) -> Result<T> + Send + Sync>;

/// Counts one live worker while it exists.
struct LiveWorker;

impl LiveWorker {
    fn new() -> Self {
        LIVE_WORKERS.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        LiveWorker
    }
}

impl Drop for LiveWorker {
    fn drop(&mut self) {
        LIVE_WORKERS.fetch_sub(1, std::sync::atomic::Ordering::SeqCst);
    }
}

/// `f` over `jobs` on up to [`MAX_WORKERS`] threads (as many as the machine has
/// cores, at least one), results in job order. A panicking job surfaces as an
/// error for that job, not a crash.
///
/// Used inside a PostgreSQL backend, so the calling (backend) thread only waits
/// and calls `check`, every [`CHECK_EVERY`] and after each result; the workers run
/// only pure Rust and never call `check`. An `Err` from `check` (or an unwind out
/// of it: a cancel raised by PostgreSQL) returns at once: the workers take no new
/// job, and one under way (a linfa fit, which nothing can interrupt, and which
/// takes minutes at a large C) ends in the background, on a thread that owns what
/// it reads; [`live_workers`] counts them. (The workers used to be scoped, and a
/// stop waited for the fits under way: `statement_timeout`, a cancel and even a
/// terminate then waited minutes.) Only when no thread can be created do the jobs
/// run on the calling thread, `check` before each.
///
/// Signals: a PostgreSQL signal handler must never run on a worker, so every
/// worker runs with every signal blocked, from its first instruction: the calling
/// thread blocks them only while it creates the workers (which inherit its mask)
/// and restores its own mask before it starts waiting. So the postmaster's and
/// the client's signals (cancel, `statement_timeout`'s SIGALRM, terminate, latch
/// wakeups) are deliverable to the backend thread the whole time it waits and
/// checks; one arriving during the few microseconds of thread creation is held
/// pending and delivered to it when its mask is restored. (glibc's
/// `pthread_create` itself blocks every signal on the creating thread around
/// its `clone`; a worker that blocked its own signals once started would have
/// the backend's mask for a moment, and could take a signal that arrived
/// meanwhile.)
pub(crate) fn parallel_map<J: Send + Sync + 'static, T: Send + 'static>(
    jobs: std::sync::Arc<Vec<J>>,
    f: Job<J, T>,
    check: &mut Check<'_>,
) -> Result<Vec<Result<T>>> {
    use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering::Relaxed};
    use std::sync::mpsc::{channel, RecvTimeoutError};
    use std::sync::Arc;

    let workers = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .clamp(1, MAX_WORKERS)
        .min(jobs.len());
    if workers == 0 {
        return Ok(Vec::new());
    }
    let failed = || {
        Err(DedupError::invalid_input(
            "svm training failed in a worker thread",
        ))
    };
    let next = Arc::new(AtomicUsize::new(0));
    let stop = Arc::new(AtomicBool::new(false));
    // However the calling thread leaves (done, an error from `check`, an unwind
    // out of it), the workers take no new job.
    let _stop = StopOnDrop(stop.clone());
    let (tx, rx) = channel::<(usize, Result<T>)>();
    let spawning = SignalsBlocked::new();
    let handles: Vec<std::thread::JoinHandle<()>> = (0..workers)
        .filter_map(|_| {
            let (tx, jobs, f, next, stop) = (
                tx.clone(),
                jobs.clone(),
                f.clone(),
                next.clone(),
                stop.clone(),
            );
            let live = LiveWorker::new();
            std::thread::Builder::new()
                .spawn(move || {
                    let _live = live;
                    while !stop.load(Relaxed) {
                        let i = next.fetch_add(1, Relaxed);
                        let Some(job) = jobs.get(i) else { break };
                        let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| f(job)))
                            .unwrap_or_else(|_| failed());
                        if tx.send((i, r)).is_err() {
                            break;
                        }
                    }
                })
                .ok()
        })
        .collect();
    drop(spawning);
    drop(tx);
    if handles.is_empty() {
        // No thread could be created: the calling thread does the work.
        let mut out = Vec::with_capacity(jobs.len());
        for job in jobs.iter() {
            check()?;
            out.push(f(job));
        }
        return Ok(out);
    }
    let mut out: Vec<Option<Result<T>>> = (0..jobs.len()).map(|_| None).collect();
    loop {
        match rx.recv_timeout(CHECK_EVERY) {
            Ok((i, r)) => {
                if let Some(slot) = out.get_mut(i) {
                    *slot = Some(r);
                }
            }
            Err(RecvTimeoutError::Timeout) => {}
            // Every worker has ended: all jobs are done.
            Err(RecvTimeoutError::Disconnected) => break,
        }
        check()?;
    }
    // Each has sent its last result: the joins are immediate, and the workers no
    // longer count as live when this returns.
    for h in handles {
        let _ = h.join();
    }
    Ok(out.into_iter().map(|r| r.unwrap_or_else(failed)).collect())
}

/// Sets its flag when dropped, also during an unwind.
struct StopOnDrop(std::sync::Arc<std::sync::atomic::AtomicBool>);

impl Drop for StopOnDrop {
    fn drop(&mut self) {
        self.0.store(true, std::sync::atomic::Ordering::Relaxed);
    }
}

/// Blocks every signal on this thread while alive, so threads spawned meanwhile
/// start with a full mask; restores the previous mask on drop. Held by
/// [`parallel_map`] only around creating its workers, never while it waits.
struct SignalsBlocked(#[cfg(unix)] libc::sigset_t);

impl SignalsBlocked {
    fn new() -> Self {
        #[cfg(unix)]
        // SAFETY: sigfillset/pthread_sigmask on valid, owned sigset_t values.
        unsafe {
            let mut all: libc::sigset_t = std::mem::zeroed();
            let mut old: libc::sigset_t = std::mem::zeroed();
            libc::sigfillset(&mut all);
            libc::pthread_sigmask(libc::SIG_BLOCK, &all, &mut old);
            SignalsBlocked(old)
        }
        #[cfg(not(unix))]
        SignalsBlocked()
    }
}

impl Drop for SignalsBlocked {
    fn drop(&mut self) {
        #[cfg(unix)]
        // SAFETY: restores the mask saved in `new`.
        unsafe {
            libc::pthread_sigmask(libc::SIG_SETMASK, &self.0, std::ptr::null_mut());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parallel_map_keeps_order_and_errors() {
        let jobs: Vec<u32> = (0..9).collect();
        let mut never = crate::interrupt::never();
        let out = parallel_map(
            std::sync::Arc::new(jobs.clone()),
            std::sync::Arc::new(|&j: &u32| {
                if j == 4 {
                    Err(DedupError::invalid_parameter("four"))
                } else {
                    Ok(j * 10)
                }
            }),
            &mut never,
        )
        .unwrap();
        assert_eq!(out.len(), 9);
        for (j, r) in jobs.iter().zip(&out) {
            match r {
                Ok(v) => assert_eq!(*v, j * 10),
                Err(e) => assert!(j == &4 && e.to_string().contains("four")),
            }
        }
        // A panicking job is an error for that job only.
        let out = parallel_map(
            std::sync::Arc::new(jobs.clone()),
            std::sync::Arc::new(|&j: &u32| if j == 2 { panic!("boom") } else { Ok(j) }),
            &mut never,
        )
        .unwrap();
        assert!(out[2].is_err());
        assert_eq!(out.iter().filter(|r| r.is_ok()).count(), 8);
    }

    /// Whether `sig` is blocked on the calling thread.
    fn blocked(sig: libc::c_int) -> bool {
        // SAFETY: reads this thread's mask into an owned sigset_t.
        unsafe {
            let mut cur: libc::sigset_t = std::mem::zeroed();
            libc::pthread_sigmask(libc::SIG_BLOCK, std::ptr::null(), &mut cur);
            libc::sigismember(&cur, sig) == 1
        }
    }

    /// The calling thread waits and checks; it alone calls the check, and its
    /// signals stay deliverable throughout. Workers block every signal.
    #[test]
    fn parallel_map_checks_on_the_calling_thread_only() {
        let me = std::thread::current().id();
        assert!(!blocked(libc::SIGINT) && !blocked(libc::SIGALRM));
        let mut calls = 0;
        let mut check = || {
            assert_eq!(std::thread::current().id(), me);
            assert!(!blocked(libc::SIGINT) && !blocked(libc::SIGALRM));
            calls += 1;
            Ok(())
        };
        let jobs: Vec<u64> = (0..6).collect();
        let out = parallel_map(
            std::sync::Arc::new(jobs.clone()),
            std::sync::Arc::new(|_: &u64| {
                std::thread::sleep(CHECK_EVERY * 2);
                Ok((
                    std::thread::current().id(),
                    blocked(libc::SIGINT),
                    blocked(libc::SIGTERM),
                ))
            }),
            &mut check,
        )
        .unwrap();
        assert!(calls >= jobs.len(), "{calls} checks");
        // Every job on a worker, one core or several.
        for r in out {
            let (thread, int, term) = r.unwrap();
            assert!(thread != me && int && term);
        }
        assert!(!blocked(libc::SIGINT) && !blocked(libc::SIGALRM));
    }

    /// An error from the check stops the work: no new job starts, and the error
    /// comes back without waiting for the jobs under way, which end on their own.
    #[test]
    fn parallel_map_stops_at_a_failing_check() {
        use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering::SeqCst};
        use std::sync::Arc;
        let started = Arc::new(AtomicUsize::new(0));
        let release = Arc::new(AtomicBool::new(false));
        let ended = Arc::new(AtomicUsize::new(0));
        let jobs: Vec<u32> = (0..40).collect();
        let mut calls = 0;
        let mut check = || {
            calls += 1;
            if calls > 1 {
                Err(DedupError::invalid_input("cancelled"))
            } else {
                Ok(())
            }
        };
        let (s, r, e) = (started.clone(), release.clone(), ended.clone());
        let out = parallel_map(
            Arc::new(jobs),
            Arc::new(move |_: &u32| {
                s.fetch_add(1, SeqCst);
                // Runs until the test lets it go (or a minute at most): a fit
                // nothing can interrupt.
                for _ in 0..6000 {
                    if r.load(SeqCst) {
                        break;
                    }
                    std::thread::sleep(std::time::Duration::from_millis(10));
                }
                e.fetch_add(1, SeqCst);
                Ok(())
            }),
            &mut check,
        );
        assert_eq!(out.unwrap_err().to_string(), "cancelled");
        assert_eq!(
            ended.load(SeqCst),
            0,
            "returned while the jobs were under way"
        );
        release.store(true, SeqCst);
        let started = started.load(SeqCst);
        assert!(started <= MAX_WORKERS, "{started} jobs started");
        // The jobs under way end; none starts after the stop.
        while ended.load(SeqCst) < started {
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
        assert_eq!(ended.load(SeqCst), started);
    }
}
