//! TID-range chunks: how long work over a whole table (a recompute of statistics,
//! a refresh of signatures) is cut into pieces, so that it can be cancelled between
//! them and report its progress.

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
}
