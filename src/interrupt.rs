//! Cancellation points for long work in the pure modules, without pgrx.
//!
//! A pure function whose running time grows with its input (the analysis of a
//! text, SVM training, the transitivity of a large relation) takes a
//! [`Check`]: a callback it calls now and then, on the thread that called it. An
//! `Err` from the callback stops the work, which returns that error as soon as it
//! can. The pgrx glue passes [`crate::pg::interrupts`], which runs PostgreSQL's
//! `CHECK_FOR_INTERRUPTS`: on a cancel or `statement_timeout` that raises the
//! SQL error itself (an unwind through the pure code) and never returns `Err`.
//! Tests pass closures that count calls or fail after a number of them.
//!
//! The error type is a parameter so that the uncancellable forms of these
//! functions can pass [`unstoppable`], whose error type has no values, and so
//! return their result without an `unwrap`.

use crate::error::DedupError;
use std::convert::Infallible;

/// The callback a long computation calls at its cancellation points.
pub type Check<'a, E = DedupError> = dyn FnMut() -> Result<(), E> + 'a;

/// A [`Check`] that never stops anything.
pub fn never() -> impl FnMut() -> Result<(), DedupError> {
    || Ok(())
}

/// A [`Check`] that cannot stop anything, by its type.
pub fn unstoppable() -> impl FnMut() -> Result<(), Infallible> {
    || Ok(())
}

/// The value of a computation that cannot have been stopped.
pub fn finished<T>(r: Result<T, Infallible>) -> T {
    match r {
        Ok(v) => v,
        Err(never) => match never {},
    }
}

/// Calls a [`Check`] once every `every` units of work, so that a loop can report
/// each small step without paying for a call each time.
pub struct Pacer<'a, 'c, E = DedupError> {
    check: &'a mut Check<'c, E>,
    every: u64,
    left: u64,
}

impl<'a, 'c, E> Pacer<'a, 'c, E> {
    /// `every` is clamped to at least 1; the first call comes after `every` units.
    pub fn new(check: &'a mut Check<'c, E>, every: u64) -> Self {
        let every = every.max(1);
        Pacer {
            check,
            every,
            left: every,
        }
    }

    /// Counts `work` units done; calls the check when `every` have passed since
    /// its last call.
    #[inline]
    pub fn tick(&mut self, work: u64) -> Result<(), E> {
        if work < self.left {
            self.left -= work;
            Ok(())
        } else {
            self.left = self.every;
            (self.check)()
        }
    }

    /// Calls the check now (at a natural boundary: a stage ends, a large step
    /// begins) and starts counting afresh.
    pub fn now(&mut self) -> Result<(), E> {
        self.left = self.every;
        (self.check)()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::DedupError;

    #[test]
    fn pacer_calls_once_per_budget() {
        let mut calls = 0;
        let mut check = || {
            calls += 1;
            Ok::<(), DedupError>(())
        };
        {
            let mut p = Pacer::new(&mut check, 10);
            for _ in 0..95 {
                p.tick(1).unwrap();
            }
            p.tick(1000).unwrap();
            p.now().unwrap();
        }
        assert_eq!(calls, 9 + 1 + 1);
    }

    #[test]
    fn pacer_passes_the_error_on() {
        let mut check = || Err(DedupError::invalid_input("stop"));
        let mut p = Pacer::new(&mut check, 0);
        assert!(p.tick(0).is_ok());
        assert!(p.tick(1).is_err());
        let mut ok = unstoppable();
        finished(Pacer::new(&mut ok, 1).tick(5));
    }
}
