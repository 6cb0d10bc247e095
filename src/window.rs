//! The time window of an enabled table: which stored rows, and which partitions,
//! a new row is compared with.
//!
//! With a window `w`, a new row published at `t` is compared with the rows
//! published in `[t - w, t + w]`: before it, and after it too, so that a feed that
//! arrives out of order still pairs a reprint with an original stored after it.
//! Where a time is missing there is nothing to compare: a new row without a time
//! is compared with every row, and a stored row without one is a candidate of every
//! new row. Times are microseconds, as PostgreSQL's `timestamptz`.
//!
//! On a table partitioned by range of the time column, a partition is searched only
//! when its range meets the window ([`Span::meets`]); the spans come from the
//! partition bounds ([`range_spans`]).

/// A closed interval of times `[lo, hi]`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Interval {
    pub lo: i64,
    pub hi: i64,
}

/// The times a new row published at `at` is compared with under a window of
/// `window` microseconds; None when either is missing (no limit).
pub fn around(at: Option<i64>, window: Option<i64>) -> Option<Interval> {
    let (t, w) = (at?, window?);
    Some(Interval {
        lo: t.saturating_sub(w),
        hi: t.saturating_add(w),
    })
}

/// Whether a stored row published at `t` (None: no time) is a candidate under
/// `limit` (None: no window).
pub fn admits(limit: Option<Interval>, t: Option<i64>) -> bool {
    match (limit, t) {
        (Some(l), Some(t)) => l.lo <= t && t <= l.hi,
        _ => true,
    }
}

/// The times one partition can hold: from `lo` (inclusive) to `hi` (exclusive);
/// None is unbounded on that side. A partition whose rows may lack a time (a
/// default partition, one not bounded by time) is [`Span::ALL`], and so is searched
/// for every row.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Span {
    pub lo: Option<i64>,
    pub hi: Option<i64>,
    /// Rows without a time may be in it.
    pub nulls: bool,
}

impl Span {
    pub const ALL: Span = Span {
        lo: None,
        hi: None,
        nulls: true,
    };

    /// Whether the partition may hold a row `limit` admits.
    pub fn meets(&self, limit: Option<Interval>) -> bool {
        let Some(l) = limit else { return true };
        if self.nulls {
            return true;
        }
        self.lo.is_none_or(|lo| lo <= l.hi) && self.hi.is_none_or(|hi| hi > l.lo)
    }

    /// The part of `self` that `inner` (a sub-partition's span) also covers.
    pub fn within(&self, inner: Span) -> Span {
        let max = |a: Option<i64>, b: Option<i64>| match (a, b) {
            (Some(a), Some(b)) => Some(a.max(b)),
            (a, None) => a,
            (None, b) => b,
        };
        let min = |a: Option<i64>, b: Option<i64>| match (a, b) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, None) => a,
            (None, b) => b,
        };
        Span {
            lo: max(self.lo, inner.lo),
            hi: min(self.hi, inner.hi),
            nulls: self.nulls && inner.nulls,
        }
    }
}

/// One bound of a range partitioning (PostgreSQL's `PartitionRangeDatumKind`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Bound {
    MinValue,
    Value(i64),
    MaxValue,
}

/// The span of each of `nparts` range partitions of one column, from the bounds as
/// PostgreSQL keeps them (`PartitionBoundInfo`: the distinct bounds in order, and
/// `indexes[i]`, the partition whose upper bound is `bounds[i]`, or -1 when the
/// values below `bounds[i]` belong to no partition), and the default partition's
/// index, if there is one. A range partition never holds a NULL; the default one may,
/// and so may one open at an end, in effect: MINVALUE or from `-infinity` (it may
/// hold `-infinity`), MAXVALUE or up to the end of time (`infinity`, or a date past
/// the last timestamp, year 294276, which reads as the end of time): an infinite
/// time counts as no time, so those are searched for every row too.
pub fn range_spans(
    bounds: &[Bound],
    indexes: &[i32],
    default: Option<usize>,
    nparts: usize,
) -> Vec<Span> {
    let mut spans = vec![Span::ALL; nparts];
    let value = |b: Bound| match b {
        Bound::Value(v) => Some(v),
        _ => None,
    };
    for (i, &p) in indexes.iter().enumerate().take(bounds.len()) {
        let Ok(p) = usize::try_from(p) else { continue };
        if p >= nparts || Some(p) == default {
            continue;
        }
        let lo = if i == 0 { None } else { value(bounds[i - 1]) };
        let hi = value(bounds[i]);
        spans[p] = Span {
            lo,
            hi,
            nulls: lo.is_none_or(|t| t == i64::MIN) || hi.is_none_or(|t| t == i64::MAX),
        };
    }
    spans
}

#[cfg(test)]
mod tests {
    use super::*;

    const DAY: i64 = 86_400_000_000;

    #[test]
    fn window_is_both_sides_of_the_time() {
        let l = around(Some(10 * DAY), Some(3 * DAY));
        assert_eq!(
            l,
            Some(Interval {
                lo: 7 * DAY,
                hi: 13 * DAY
            })
        );
        assert!(admits(l, Some(7 * DAY)) && admits(l, Some(13 * DAY)));
        assert!(!admits(l, Some(7 * DAY - 1)) && !admits(l, Some(13 * DAY + 1)));
        assert!(
            admits(l, None),
            "a row without a time is every row's candidate"
        );
        assert_eq!(
            around(None, Some(DAY)),
            None,
            "a new row without a time: no limit"
        );
        assert_eq!(around(Some(DAY), None), None);
        assert!(admits(None, Some(0)));
        assert!(around(Some(i64::MAX - 1), Some(DAY)).is_some_and(|l| l.hi == i64::MAX));
    }

    #[test]
    fn partitions_reaching_the_ends_of_time_may_hold_no_time() {
        // FROM ('-infinity') TO (31), FROM (31) TO (59), FROM (59) TO ('infinity'):
        // the first holds -infinity (no time); the last cannot hold infinity (its
        // upper bound is excluded) but, on a date column, may hold a date past the
        // last timestamp, which reads as the end of time: no time either.
        let bounds = [
            Bound::Value(i64::MIN),
            Bound::Value(31),
            Bound::Value(59),
            Bound::Value(i64::MAX),
        ];
        let s = range_spans(&bounds, &[-1, 0, 1, 2, -1], None, 3);
        assert!(s[0].nulls && !s[1].nulls && s[2].nulls);
        let w = Some(Interval { lo: 40, hi: 45 });
        assert!(s[0].meets(w) && s[1].meets(w) && s[2].meets(w));
        assert!(!s[1].meets(Some(Interval { lo: 10, hi: 20 })));
    }

    #[test]
    fn spans_of_monthly_partitions() {
        // FROM (MINVALUE) TO (31), FROM (31) TO (59), a gap, FROM (90) TO (MAXVALUE),
        // as partitions 0, 1, 2, and a default partition 3.
        let bounds = [
            Bound::MinValue,
            Bound::Value(31),
            Bound::Value(59),
            Bound::Value(90),
            Bound::MaxValue,
        ];
        let indexes = [-1, 0, 1, -1, 2, -1];
        let s = range_spans(&bounds, &indexes, Some(3), 4);
        let span = |lo, hi, nulls| Span { lo, hi, nulls };
        // The two open ones may hold -infinity or infinity: no time.
        assert_eq!(s[0], span(None, Some(31), true));
        assert_eq!(s[1], span(Some(31), Some(59), false));
        assert_eq!(s[2], span(Some(90), None, true));
        assert_eq!(s[3], Span::ALL);
        let w = |lo, hi| Some(Interval { lo, hi });
        assert!(s[1].meets(w(40, 45)) && s[0].meets(w(40, 45)) && s[2].meets(w(40, 45)));
        assert!(s[1].meets(w(31, 31)), "lower bound included");
        assert!(
            !s[1].meets(w(30, 30)) && !s[1].meets(w(59, 60)),
            "upper bound excluded"
        );
        assert!(
            s[3].meets(w(40, 45)),
            "a default partition is always searched"
        );
        assert!(
            s[2].meets(None) && s[0].meets(None),
            "no window: every partition"
        );
    }

    #[test]
    fn sub_partitions_narrow_their_parent() {
        let month = Span {
            lo: Some(31),
            hi: Some(59),
            nulls: false,
        };
        assert_eq!(month.within(Span::ALL), month);
        let half = Span {
            lo: Some(45),
            hi: None,
            nulls: false,
        };
        assert_eq!(
            month.within(half),
            Span {
                lo: Some(45),
                hi: Some(59),
                nulls: false
            }
        );
        assert_eq!(Span::ALL.within(half), half);
    }
}
