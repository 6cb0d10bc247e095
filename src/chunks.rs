//! How long work is cut into pieces: TID-range chunks of a whole table (a
//! recompute of statistics, a refresh of signatures), so that it can be cancelled
//! between them and report its progress; and runs of rows whose documents fit in
//! a memory budget, so that a batch of rows is never held decoded all at once.

/// One chunk of a table: heap pages `lo..hi` (`hi` None: to the end, so rows added
/// while the work runs are not missed), and the progress once it is done.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Chunk {
    pub lo: i64,
    pub hi: Option<i64>,
    /// Percent done after this chunk: 100 for the last one.
    pub pct: i64,
}

impl Chunk {
    /// The chunk as a condition on `ctid`.
    pub fn ctid_range(&self) -> String {
        match self.hi {
            None => format!("ctid >= '({},0)'::tid", self.lo),
            Some(hi) => format!("ctid >= '({},0)'::tid AND ctid < '({hi},0)'::tid", self.lo),
        }
    }
}

/// A table of `pages` heap pages in at most `steps` chunks of equal size; the last
/// one is open-ended. An empty table is one open chunk.
pub fn tid_chunks(pages: i64, steps: i64) -> Vec<Chunk> {
    let steps = steps.max(1);
    let step = ((pages.max(0) + steps - 1) / steps).max(1);
    let mut out = Vec::new();
    for i in 0..steps {
        let lo = i * step;
        let last = i == steps - 1 || (i + 1) * step >= pages;
        out.push(Chunk {
            lo,
            hi: (!last).then_some((i + 1) * step),
            pct: if last { 100 } else { (i + 1) * 100 / steps },
        });
        if last {
            break;
        }
    }
    out
}

/// The bytes of stored documents a batch of rows is read and decoded in at once:
/// a batch of a cursor (1,000 rows of a table, 256 labelled pairs) holds only
/// pointers to its values, and is read in runs of at most this many uncompressed
/// document bytes (a run holds at least one row). Decoded and weighed, a document
/// takes about five times its stored size: 1,000 stored papers of 1.3 MB held
/// 571 MB at once in `recompute`, 256 pairs of them 725 MB in `evaluate`.
/// The `#[pg_test]` build cuts runs of 64 kB, so that its tests cross runs'
/// ends with small documents.
pub const RUN_BYTES: usize = if cfg!(feature = "pg_test") {
    64 * 1024
} else {
    8 * 1024 * 1024
};

/// Items gathered into runs whose sizes total at most a budget. The size of an
/// item is known before the item is read (a stored value's size is in its
/// header), so [`Runs::make_room`] hands the run so far back before the item
/// that would not fit is read: memory holds one run, or one item larger than the
/// budget.
#[derive(Debug)]
pub struct Runs<T> {
    budget: usize,
    bytes: usize,
    items: Vec<T>,
}

impl<T> Runs<T> {
    pub fn new(budget: usize) -> Self {
        Runs {
            budget,
            bytes: 0,
            items: Vec::new(),
        }
    }

    /// The run so far, to be processed before an item of `size` bytes is read,
    /// when the item would take the run past the budget; None while it fits (or
    /// the run is empty).
    pub fn make_room(&mut self, size: usize) -> Option<Vec<T>> {
        if self.items.is_empty() || self.bytes.saturating_add(size) <= self.budget {
            return None;
        }
        self.bytes = 0;
        Some(std::mem::take(&mut self.items))
    }

    /// Adds an item of `size` bytes to the run (after [`Runs::make_room`]).
    pub fn push(&mut self, size: usize, item: T) {
        self.bytes = self.bytes.saturating_add(size);
        self.items.push(item);
    }

    /// The last run, maybe empty.
    pub fn finish(self) -> Vec<T> {
        self.items
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chunks_cover_the_table_once_and_end_open() {
        for pages in [0, 1, 5, 9, 10, 11, 99, 1000, 1001] {
            let c = tid_chunks(pages, 10);
            assert!(!c.is_empty() && c.len() <= 10, "{pages}: {c:?}");
            assert_eq!(c[0].lo, 0);
            for w in c.windows(2) {
                assert_eq!(w[0].hi, Some(w[1].lo), "{pages}: contiguous");
                assert!(w[0].pct < w[1].pct);
            }
            let last = c.last().unwrap();
            assert_eq!((last.hi, last.pct), (None, 100));
            assert!(last.lo <= pages.max(0));
        }
        assert_eq!(tid_chunks(0, 10).len(), 1);
        assert_eq!(tid_chunks(1000, 10).len(), 10);
        assert_eq!(
            tid_chunks(1000, 10)[0].ctid_range(),
            "ctid >= '(0,0)'::tid AND ctid < '(100,0)'::tid"
        );
        assert_eq!(tid_chunks(5, 10)[4].ctid_range(), "ctid >= '(4,0)'::tid");
    }

    /// Cuts `sizes` into runs as a caller of `Runs` does.
    fn runs_of(sizes: &[usize], budget: usize) -> Vec<Vec<usize>> {
        let mut runs = Runs::new(budget);
        let mut out = Vec::new();
        for &s in sizes {
            out.extend(runs.make_room(s));
            runs.push(s, s);
        }
        out.push(runs.finish());
        out
    }

    #[test]
    fn runs_stay_within_the_budget_and_keep_every_item_in_order() {
        assert_eq!(runs_of(&[3, 3, 3, 3], 6), vec![vec![3, 3], vec![3, 3]]);
        assert_eq!(runs_of(&[3, 3, 3], 100), vec![vec![3, 3, 3]]);
        // An item larger than the budget is a run of its own.
        assert_eq!(runs_of(&[1, 50, 1], 10), vec![vec![1], vec![50], vec![1]]);
        assert_eq!(runs_of(&[50, 50], 10), vec![vec![50], vec![50]]);
        assert_eq!(runs_of(&[], 10), vec![Vec::<usize>::new()]);
        assert_eq!(
            runs_of(&[0, 0, usize::MAX, 0], 10),
            vec![vec![0, 0], vec![usize::MAX], vec![0]]
        );
        for budget in [1, 5, 17, 1000] {
            let sizes: Vec<usize> = (0..200).map(|i| (i * 7919) % 23).collect();
            let runs = runs_of(&sizes, budget);
            assert_eq!(runs.concat(), sizes);
            for r in &runs {
                assert!(
                    r.len() == 1 || r.iter().sum::<usize>() <= budget,
                    "{budget}: {r:?}"
                );
            }
        }
    }
}
