//! The tables that hold an enabled table's rows: the table itself, or, for a
//! partitioned table, each of its leaf partitions (at any depth), with the times
//! each can hold when a level is partitioned by range of the time column (see
//! `crate::window`). The candidate lookup (`pg::scan`) reads each leaf's own
//! signature index and skips the leaves a time window rules out.

use crate::pg::cache;
use crate::pg::times;
use crate::window::{range_spans, Bound, Span};
use pgrx::prelude::*;

/// A leaf: its OID and the times it can hold.
#[derive(Clone, Debug)]
pub struct Leaf {
    pub rel: pg_sys::Oid,
    pub span: Span,
}

/// The leaves of `tbl` (itself when it is not partitioned), in partition-bound
/// order; `time_column` is the column a time window compares.
pub fn leaves(tbl: pg_sys::Oid, time_column: Option<&str>) -> Vec<Leaf> {
    let mut out = Vec::new();
    if is_partitioned(tbl) {
        walk(tbl, Span::ALL, time_column, &mut out);
    } else {
        out.push(Leaf {
            rel: tbl,
            span: Span::ALL,
        });
    }
    out
}

/// Whether `tbl` is a partitioned table.
pub fn is_partitioned(tbl: pg_sys::Oid) -> bool {
    // SAFETY: a syscache lookup; 0 for a relation that does not exist.
    unsafe { pg_sys::get_rel_relkind(tbl) as u8 == pg_sys::RELKIND_PARTITIONED_TABLE }
}

/// The partition key of a partitioned table when it is a range of one time column
/// named `time_column`: that column's type.
fn time_range_key(tbl: pg_sys::Oid, time_column: Option<&str>) -> Option<pg_sys::Oid> {
    let col = time_column?;
    Spi::connect(|c| {
        let t = cache::select(
            c,
            "SELECT a.atttypid FROM pg_catalog.pg_partitioned_table p \
             JOIN pg_catalog.pg_attribute a ON a.attrelid = p.partrelid AND a.attnum = p.partattrs[0] \
             WHERE p.partrelid = $1 AND p.partstrat = 'r' AND p.partnatts = 1 AND a.attname = $2",
            Some(1),
            &[tbl.into(), col.into()],
        );
        if t.is_empty() {
            return None;
        }
        t.first().get::<pg_sys::Oid>(1).ok().flatten()
    })
    .filter(|&typ| time_type(typ))
}

/// The column types whose values [`times::to_timestamptz`] turns into times without text.
fn time_type(typ: pg_sys::Oid) -> bool {
    typ == pg_sys::TIMESTAMPTZOID || typ == pg_sys::TIMESTAMPOID || typ == pg_sys::DATEOID
}

/// Adds the leaves under the partitioned table `tbl`, whose rows lie in `span`.
fn walk(tbl: pg_sys::Oid, span: Span, time_column: Option<&str>, out: &mut Vec<Leaf>) {
    let key_type = time_range_key(tbl, time_column);
    // SAFETY: the relation is opened and closed with the same lock (the caller's
    // statement holds at least this one on it for its duration); the partition
    // descriptor lives in the relation's cache entry and is copied out before the
    // relation closes.
    //
    // As the table's owner: the descriptor's first build simplifies the partition
    // key's expressions, running their immutable functions as whoever builds it
    // (see `privilege::as_table_owner`; registration also refuses such keys).
    let children: Vec<(pg_sys::Oid, bool, Span)> =
        crate::pg::privilege::as_table_owner(tbl, || unsafe {
            let rel = pg_sys::relation_open(tbl, pg_sys::AccessShareLock as pg_sys::LOCKMODE);
            let desc = pg_sys::RelationGetPartitionDesc(rel, true);
            let mut children = Vec::new();
            // A partitioned table without partitions has no arrays at all (NULL, which
            // a slice may not start at even when empty).
            if !desc.is_null() && (*desc).nparts > 0 {
                let n = (*desc).nparts as usize;
                let oids = std::slice::from_raw_parts((*desc).oids, n);
                let is_leaf = std::slice::from_raw_parts((*desc).is_leaf, n);
                let spans = match key_type {
                    Some(typ) if !(*desc).boundinfo.is_null() => {
                        bound_spans((*desc).boundinfo, typ, n)
                    }
                    _ => vec![Span::ALL; n],
                };
                for i in 0..n {
                    children.push((oids[i], is_leaf[i], span.within(spans[i])));
                }
            }
            pg_sys::relation_close(rel, pg_sys::AccessShareLock as pg_sys::LOCKMODE);
            children
        });
    for (oid, leaf, s) in children {
        if leaf {
            out.push(Leaf { rel: oid, span: s });
        } else {
            walk(oid, s, time_column, out);
        }
    }
}

/// The spans of the partitions of a range partitioning of one time column of type
/// `typ`.
///
/// # Safety
/// `info` is a live range `PartitionBoundInfo` of a one-column key of type `typ`.
unsafe fn bound_spans(info: pg_sys::PartitionBoundInfo, typ: pg_sys::Oid, n: usize) -> Vec<Span> {
    // SAFETY: the caller upholds this function's contract (see its comment).
    unsafe {
        if (*info).strategy as u8 != pg_sys::PARTITION_STRATEGY_RANGE {
            return vec![Span::ALL; n];
        }
        let nd = (*info).ndatums.max(0) as usize;
        let mut bounds = Vec::with_capacity(nd);
        for i in 0..nd {
            let kind = *(*(*info).kind.add(i));
            bounds.push(match kind {
                pg_sys::PartitionRangeDatumKind::PARTITION_RANGE_DATUM_MINVALUE => Bound::MinValue,
                pg_sys::PartitionRangeDatumKind::PARTITION_RANGE_DATUM_MAXVALUE => Bound::MaxValue,
                _ => match times::to_timestamptz(typ, *(*(*info).datums.add(i))) {
                    Some(t) => Bound::Value(t),
                    None => return vec![Span::ALL; n],
                },
            });
        }
        let ni = (*info).nindexes.max(0) as usize;
        let indexes: &[i32] = if ni == 0 || (*info).indexes.is_null() {
            &[]
        } else {
            std::slice::from_raw_parts((*info).indexes, ni)
        };
        let default = usize::try_from((*info).default_index).ok();
        range_spans(&bounds, indexes, default, n)
    }
}
