//! The row trigger `dedup._trigger()` that `dedup.enable` installs: BEFORE INSERT,
//! and BEFORE UPDATE OF the text columns.
//!
//! It reads the configured columns straight from the new tuple, runs
//! [`ingest::check`] (document, statistics, signature, candidates, decision) and
//! writes `dedup_doc`, `dedup_sig`, `dedup_verdict` and `duplicate_of` into the
//! tuple it returns. A duplicate under action `'skip'` is recorded in
//! `dedup.rejected` and not inserted; under `'error'` it raises 23505.
//!
//! It replaced a PL/pgSQL function that read the row through `to_jsonb(NEW)` and
//! called an SQL function per row; that wrapper was about a tenth of an insert.

use crate::error::DedupError;
use crate::pg::ingest::{self, Action, TableConfig};
use crate::pg::lookup;
use crate::pg::models::verdict;
use crate::pg::privilege::{self, as_owner};
use crate::pg::raise;
use crate::pg::statement;
use crate::pg::types::DocumentDatum;
use crate::pg::types::SignatureDatum;
use pgrx::prelude::*;
use std::ffi::{CStr, CString};

/// One column of the trigger's relation: its number and type.
#[derive(Clone, Copy)]
struct Col {
    attno: i32,
    typid: pg_sys::Oid,
    typmod: i32,
}

/// The trigger's tuple, with its descriptor.
struct Row {
    tuple: pg_sys::HeapTuple,
    /// The relation the tuple belongs to, open while the trigger fires; its
    /// descriptor is read at each use (see `row_trigger`).
    rel: pg_sys::Relation,
}

impl Row {
    fn desc(&self) -> pg_sys::TupleDesc {
        // SAFETY: the trigger's relation, open while it fires.
        unsafe { (*self.rel).rd_att }
    }

    /// A column by name; None when the table has no such (live) column.
    fn col(&self, name: &str) -> Option<Col> {
        let c = CString::new(name).ok()?;
        // SAFETY: `desc` is the trigger relation's descriptor.
        let attno = unsafe { pg_sys::SPI_fnumber(self.desc(), c.as_ptr()) };
        if attno <= 0 {
            return None;
        }
        // SAFETY: attno is within the descriptor (SPI_fnumber found it).
        let att = unsafe { &*(*self.desc()).attrs.as_ptr().add(attno as usize - 1) };
        Some(Col {
            attno,
            typid: att.atttypid,
            typmod: att.atttypmod,
        })
    }

    fn datum(&self, col: Col) -> Option<pg_sys::Datum> {
        let mut isnull = false;
        // SAFETY: the tuple matches the descriptor; attno is a live column.
        let d = unsafe { pg_sys::heap_getattr(self.tuple, col.attno, self.desc(), &mut isnull) };
        (!isnull).then_some(d)
    }

    /// A column's value as text: text and varchar as they are, other types through
    /// their output function (as a cast to text would).
    fn text(&self, col: Option<Col>) -> Option<String> {
        let col = col?;
        let d = self.datum(col)?;
        if col.typid == pg_sys::TEXTOID || col.typid == pg_sys::VARCHAROID {
            // SAFETY: a non-null text or varchar datum.
            return unsafe { String::from_datum(d, false) };
        }
        Some(output(col.typid, d))
    }

    /// A column's value as timestamptz: directly, or through its text form (a
    /// `timestamp`, `date` or text column), raising as a cast would.
    fn timestamptz(&self, col: Option<Col>) -> Option<TimestampWithTimeZone> {
        let col = col?;
        let d = self.datum(col)?;
        if col.typid == pg_sys::TIMESTAMPTZOID {
            // SAFETY: a non-null timestamptz datum.
            return unsafe { TimestampWithTimeZone::from_datum(d, false) };
        }
        if col.typid == pg_sys::TIMESTAMPOID || col.typid == pg_sys::DATEOID {
            // As UTC, whatever the writer's TimeZone (see `times::to_timestamptz`).
            // SAFETY: a non-null datum of that type.
            let t = unsafe { crate::pg::times::to_timestamptz(col.typid, d) }?;
            // SAFETY: any i64 is a timestamptz datum (the ends are the infinities).
            return unsafe { TimestampWithTimeZone::from_datum(pg_sys::Datum::from(t), false) };
        }
        let text = output(col.typid, d);
        let parsed = crate::pg::times::parse_time(&text);
        if parsed.is_none() {
            pgrx::ereport!(
                PgLogLevel::WARNING,
                PgSqlErrorCode::ERRCODE_INVALID_DATETIME_FORMAT,
                format!(
                    "the time column's value {:?} is not a time: the row is checked as one without a time",
                    text.chars().take(64).collect::<String>()
                ),
                "the row is stored as it is; a value timestamptz reads (or NULL) gives it its time"
            );
        }
        parsed
    }
}

/// A datum through its type's output function.
fn output(typid: pg_sys::Oid, d: pg_sys::Datum) -> String {
    let mut func = pg_sys::InvalidOid;
    let mut varlena = false;
    // SAFETY: catalog lookups for an existing type; the output function returns a
    // palloc'd C string.
    unsafe {
        pg_sys::getTypeOutputInfo(typid, &mut func, &mut varlena);
        let s = pg_sys::OidOutputFunctionCall(func, d);
        CStr::from_ptr(s).to_string_lossy().into_owned()
    }
}

/// A value of `col`'s type from text, through the type's input function.
fn input(col: Col, text: &str) -> Option<pg_sys::Datum> {
    let c = CString::new(text).ok()?;
    let mut func = pg_sys::InvalidOid;
    let mut ioparam = pg_sys::InvalidOid;
    // SAFETY: catalog lookups for an existing type and a call of its input function.
    unsafe {
        pg_sys::getTypeInputInfo(col.typid, &mut func, &mut ioparam);
        Some(pg_sys::OidInputFunctionCall(
            func,
            c.as_ptr() as *mut _,
            ioparam,
            col.typmod,
        ))
    }
}

const RESTORE_COLUMNS: &str =
    "dedup.disable and dedup.enable the table again to restore its dedup columns";

/// The dedup columns `enable` added; a trigger on a table that lost one raises.
fn dedup_col(row: &Row, name: &str, cfg: &TableConfig) -> Col {
    let col = row.col(name).unwrap_or_else(|| {
        raise(DedupError::UndefinedColumn {
            msg: format!("column \"{name}\" of relation {} does not exist", cfg.tname),
            hint: Some(RESTORE_COLUMNS.into()),
        })
    });
    let expected = match name {
        "dedup_doc" => cfg.column_types[0],
        "dedup_sig" => cfg.column_types[1],
        "dedup_verdict" => cfg.column_types[2],
        _ => cfg.column_types[3],
    };
    if col.typid != expected {
        raise(DedupError::DatatypeMismatch {
            msg: format!(
                "column \"{name}\" of relation {} no longer has the type dedup.enable gave it",
                cfg.tname
            ),
            hint: Some(RESTORE_COLUMNS.into()),
        });
    }
    col
}

/// A column `enable` was given (body, title, time, source, model): a table that
/// no longer has it raises, rather than storing rows unchecked or without their
/// time. A rename is followed (`dedup._columns_renamed`) and a drop refused
/// (`dedup._forget_dropped`), so only a change those event triggers did not see
/// reaches this.
fn given_col(row: &Row, name: &str, cfg: &TableConfig) -> Col {
    row.col(name).unwrap_or_else(|| {
        raise(DedupError::UndefinedColumn {
            msg: format!(
                "column \"{name}\" of relation {}, which dedup.enable was given, does not exist",
                cfg.tname
            ),
            hint: Some(format!(
                "rename it back, or dedup.disable('{t}') and dedup.enable the table with its new columns",
                t = cfg.tname.replace('\'', "''")
            )),
        })
    })
}

/// The row's primary key as text (see `crate::rowkey`), None when a key column is
/// missing or NULL.
fn row_key(row: &Row, cfg: &TableConfig) -> Option<String> {
    let parts: Vec<String> = cfg
        .key
        .columns
        .iter()
        .map(|c| row.text(row.col(c)))
        .collect::<Option<_>>()?;
    let refs: Vec<&str> = parts.iter().map(String::as_str).collect();
    Some(crate::rowkey::key_text(&refs))
}

/// Whether an UPDATE sets a column the document is made of (the text columns,
/// the model column or `dedup_doc`), by the columns the statement names.
fn updates_document(
    data: &pg_sys::TriggerData,
    row: &Row,
    cfg: &TableConfig,
    doc_col: Col,
) -> bool {
    let c = &cfg.columns;
    let names = [
        Some(c.body.as_str()),
        c.title.as_deref(),
        c.published_at.as_deref(),
        c.source.as_deref(),
        c.model.as_deref(),
    ];
    let cols = names
        .into_iter()
        .flatten()
        .filter_map(|n| row.col(n))
        .chain(std::iter::once(doc_col));
    let updated = data.tg_updatedcols;
    cols.into_iter().any(|col| {
        // SAFETY: a Bitmapset PostgreSQL built for this trigger event (NULL is empty).
        unsafe {
            pg_sys::bms_is_member(
                col.attno - pg_sys::FirstLowInvalidHeapAttributeNumber,
                updated,
            )
        }
    })
}

/// An identity of a stored document's bytes, to recognise it again within a
/// statement (see `txdelta::Statement::take_move_delete`): the content hash its
/// header carries (see `document::content_key`).
pub fn doc_identity(bytes: &[u8]) -> u64 {
    crate::document::content_key(bytes) as u64
}

fn _trigger<'a>(
    trigger: &'a pgrx::PgTrigger<'a>,
) -> Result<Option<PgHeapTuple<'a, AllocatedByPostgres>>, std::convert::Infallible> {
    // Keys travel as text (the original's key into duplicate_of).
    crate::pg::guc_scope::exact_floats(|| row_trigger(trigger))
}

/// [`_trigger`]'s body.
fn row_trigger<'a>(
    trigger: &'a pgrx::PgTrigger<'a>,
) -> Result<Option<PgHeapTuple<'a, AllocatedByPostgres>>, std::convert::Infallible> {
    let data = trigger.trigger_data();
    // Only as dedup.enable installs it: a row trigger, BEFORE INSERT or UPDATE.
    let fired_right = matches!(trigger.level(), pgrx::PgTriggerLevel::Row)
        && matches!(trigger.when(), Ok(pgrx::PgTriggerWhen::Before))
        && matches!(
            trigger.op(),
            Ok(pgrx::PgTriggerOperation::Insert | pgrx::PgTriggerOperation::Update)
        );
    if !fired_right {
        raise(DedupError::TriggerProtocol {
            msg: "dedup._trigger() must be fired as a row trigger BEFORE INSERT OR UPDATE".into(),
            hint: Some("dedup.enable installs it; do not create triggers on it by hand".into()),
        });
    }
    // The relation's descriptor is read where it is used, never kept across the
    // lookups and statistics reads below: an invalidation they take in (another
    // session's ALTER TABLE of the parent, a DETACH … CONCURRENTLY) can rebuild
    // the relation's cache entry and free the descriptor it had (an audit crashed
    // a backend with a kept one: SIGSEGV in heap_modify_tuple_by_cols). The
    // relation itself stays open, and its rows' layout cannot change meanwhile.
    let rel = data.tg_relation;
    // SAFETY: a row trigger always has its relation, open while it fires.
    let desc = || unsafe { (*rel).rd_att };
    let is_update = matches!(trigger.op(), Ok(pgrx::PgTriggerOperation::Update));
    let new_tuple = if is_update {
        data.tg_newtuple
    } else {
        data.tg_trigtuple
    };
    // SAFETY: `new_tuple` is the trigger's new row, described by the relation's
    // descriptor; the returned PgHeapTuple hands it back to the executor.
    let unchanged = || unsafe {
        PgHeapTuple::from_heap_tuple(pgrx::PgTupleDesc::from_pg_unchecked(desc()), new_tuple)
    };
    let Ok(tbl) = trigger.relid() else {
        return Ok(Some(unchanged()));
    };
    // The extension's own tables are read and written with its owner's rights
    // (src/pg/privilege.rs): the writer needs no rights on them.
    let Some(cfg) = ingest::enabled_table(tbl) else {
        // On Citus, where every node holds a copy of the extension's tables, a
        // trigger on a table that copy does not name means the copy is wrong (a
        // node added after enable got the tables' OIDs of the coordinator) or
        // the table was made anew by Citus: the row would go in unchecked.
        if crate::pg::citus::catalog_distributed() {
            crate::pg::citus::raise_unregistered(tbl);
        }
        warn_unregistered(tbl);
        statement::row_returned(tbl, false);
        return Ok(Some(unchanged()));
    };
    // The trigger fires on `tbl`, a partition when the enabled table `cfg.tbl` is
    // partitioned; its statements are followed as the enabled table's.
    let root = cfg.tbl;
    let row = Row {
        tuple: new_tuple,
        rel,
    };
    // An insert needs its key only as the second half of a move, and only an
    // UPDATE statement of a partitioned table has moves to match.
    let key = if is_update
        || (cfg.partitioned
            && statement::with_statement(root, |s| !s.updating.is_empty()).unwrap_or(false))
    {
        row_key(&row, &cfg)
    } else {
        None
    };
    // The second half of an update that moved the row to another partition (see
    // `txdelta::Statement::take_move`): the row keeps the document the update
    // gave it, or had. Counted once, as the update's.
    if cfg.partitioned && !is_update {
        if let Some(counted) = key
            .as_deref()
            .and_then(|k| statement::with_statement(root, |s| s.take_move(k)))
            .flatten()
        {
            if !counted {
                statement::row_returned(root, false);
            }
            return Ok(Some(unchanged()));
        }
    }
    let doc_col = dedup_col(&row, "dedup_doc", &cfg);
    // The old row's key, for an update.
    let old_key = if is_update {
        row_key(
            &Row {
                tuple: data.tg_trigtuple,
                rel,
            },
            &cfg,
        )
    } else {
        None
    };
    // An update moves a row to another partition only when it changes the
    // partition key, whose columns (of every level) PostgreSQL requires the primary
    // key to include: only an update that changes the key is noted as a possible
    // move, so a statement updating many rows in place keeps no note of each.
    let may_move = cfg.partitioned && is_update && key.is_some() && key != old_key;
    // On a partitioned table the trigger fires for every UPDATE (an update of any
    // column may move the row to another partition); one that changes none of the
    // columns the document is made of leaves the row as it is.
    if cfg.partitioned && is_update && !updates_document(data, &row, &cfg, doc_col) {
        if let Some(k) = key.clone().filter(|_| may_move) {
            // SAFETY: the old row of an update trigger is a heap tuple with its
            // tuple id.
            let at = unsafe { statement::tid_of(&(*data.tg_trigtuple).t_self) };
            let old = Row {
                tuple: data.tg_trigtuple,
                rel,
            };
            let doc_id = old.datum(doc_col).and_then(|d| {
                // SAFETY: a non-null dedup.document datum.
                unsafe { DocumentDatum::from_datum(d, false) }.map(|d| doc_identity(&d.0))
            });
            statement::with_statement(root, |s| {
                s.note_update(k, (tbl.to_u32(), at), doc_id, false)
            });
        }
        return Ok(Some(unchanged()));
    }
    // A row that arrives with its document and verdict already set, from the
    // table's owner, in a session with an empty search_path, is a restored one (a
    // data-only pg_restore, a dump run by psql: pg_dump's output empties the
    // search_path before it writes rows, and an application's session never runs
    // so): it is taken as it is, neither checked again nor counted (the
    // statistics come back with the restore). An owner's copy of rows with their
    // dedup columns elsewhere (`INSERT … SELECT *`, an ORM's clone of a record)
    // is checked and counted as any insert: taken as it was, it slipped past
    // 'error' and 'skip' and a later DELETE took out a document never counted.
    // (On Citus a worker's shard sees every write through the coordinator's
    // connections, which keep the rule as it was: `create_distributed_table`
    // moves the rows with their dedup columns that way.)
    // Anyone else's values are replaced, and so are
    // a logical replication apply worker's (session_replication_role replica,
    // where only ENABLE ALWAYS triggers fire): a row it moves to another
    // partition arrives with the local row's old document and verdict, and rows
    // published with their dedup columns were counted by no one here.
    // SAFETY: reads a GUC variable of this backend.
    let replica = unsafe { pg_sys::SessionReplicationRole }
        == pg_sys::SESSION_REPLICATION_ROLE_REPLICA as i32;
    if !is_update
        && !replica
        && row.datum(doc_col).is_some()
        && row.datum(dedup_col(&row, "dedup_verdict", &cfg)).is_some()
        && (restoring_session() || crate::pg::citus::internal_backend())
        && privilege::owns(tbl, privilege::caller())
    {
        statement::row_returned(root, true);
        return Ok(Some(unchanged()));
    }
    let c = &cfg.columns;
    let col = |n: &str| Some(given_col(&row, n, &cfg));
    let body = row.text(col(&c.body));
    let title = c.title.as_deref().and_then(|n| row.text(col(n)));
    let published_at = c
        .published_at
        .as_deref()
        .and_then(|n| row.timestamptz(col(n)));
    let source = c.source.as_deref().and_then(|n| row.text(col(n)));
    let model = c.model.as_deref().and_then(|n| row.text(col(n)));
    // An update's new document, when it was made to compare with the old one.
    let mut analysed = None;
    if is_update {
        let old = Row {
            tuple: data.tg_trigtuple,
            rel,
        };
        let old_doc = old.datum(doc_col).and_then(|d| {
            // SAFETY: a non-null dedup.document datum.
            unsafe { DocumentDatum::from_datum(d, false) }
        });
        // A row whose text is stored again as it was (`UPDATE t SET body = body`,
        // an edit undone, a column of the text touched with its own value) keeps
        // its document, signature, verdict and mark, and the statistics stay as
        // they are: checked again, it would be compared with rows stored after it
        // too, and an original that a later, longer post contains would become a
        // copy of that post. A text analysed otherwise than the stored document
        // (an edit, another analyser version, a row stored unchecked) is checked.
        let verdict_col = dedup_col(&row, "dedup_verdict", &cfg);
        if !may_move && old.datum(verdict_col).is_some() {
            let old_model = c.model.as_deref().and_then(|n| old.text(col(n)));
            let same = match &old_doc {
                Some(d) if old_model == model => as_owner(|| {
                    ingest::analyses_to(
                        &cfg,
                        body.as_deref(),
                        title.as_deref(),
                        published_at,
                        source.as_deref(),
                        d,
                    )
                }),
                _ => Err(None),
            };
            let same = match same {
                Ok(()) => true,
                Err(doc) => {
                    analysed = doc.map(|d| *d);
                    false
                }
            };
            if same {
                // Counted as any update is (its document less the same one), so a
                // statement's repair rebuilds it as nothing changed.
                statement::row_returned(root, false);
                return Ok(Some(with_old_marks(
                    new_tuple,
                    data.tg_trigtuple,
                    desc(),
                    &row,
                    &cfg,
                    doc_col,
                )));
            }
        }
        if may_move {
            if let Some(k) = key.clone() {
                // SAFETY: the old row of an update trigger is a heap tuple with its
                // tuple id.
                let at = unsafe { statement::tid_of(&(*data.tg_trigtuple).t_self) };
                let doc_id = old_doc.as_ref().map(|d| doc_identity(&d.0));
                statement::with_statement(root, |s| {
                    s.note_update(k, (tbl.to_u32(), at), doc_id, true)
                });
            }
        }
        if let Some(doc) = &old_doc {
            as_owner(|| ingest::forget(&cfg, doc, true));
        }
    }
    // An updated row must not be compared with itself: the version the lookup
    // sees is the old one, so it is known by the old row's key (an UPDATE may
    // change the key, as one of a partitioned table's time column does). An
    // inserted row whose key a row has already is headed for that row's ON
    // CONFLICT clause (or a unique violation): it is compared with the other rows,
    // as an update of that row would be, never with the row it would replace.
    let self_key = if is_update {
        old_key
    } else {
        key.clone().or_else(|| row_key(&row, &cfg))
    };
    let analysed = std::cell::Cell::new(analysed);
    let check = |store| {
        as_owner(|| {
            ingest::check_row(
                &cfg,
                body.as_deref(),
                title.as_deref(),
                published_at,
                source.as_deref(),
                model.as_deref(),
                self_key.as_deref(),
                store,
                analysed.take(),
            )
        })
    };
    // A duplicate that 'skip' keeps out of the table stays out of its statistics
    // too.
    let mut checked = check(if cfg.action == Action::Skip && !is_update {
        ingest::Store::UnlessDuplicate
    } else {
        ingest::Store::Always
    });
    // An inserted duplicate whose key a row has already is headed for that row's
    // ON CONFLICT clause (or a unique violation): an upsert is an update of that
    // row, which 'skip' and 'error' store and mark, so it is not refused here.
    // A row that holds the new row's values in a unique index an `ON CONFLICT` can
    // take (the primary key, or `ON CONFLICT (url)` with a surrogate key) is the
    // one the insert is headed for. One another transaction inserted and has not
    // committed is waited for, as PostgreSQL's own check waits, and the indexes
    // are looked at again: an upsert racing the insert of its key would otherwise
    // be refused.
    let upsert = !is_update && checked.original.is_some() && cfg.action != Action::Mark && {
        // The table is read as its owner, who must be able to.
        privilege::require_owner_reads(tbl);
        loop {
            // SAFETY: the trigger's relation, open while it fires, and its new row.
            match unsafe { crate::pg::scan::unique_conflict(rel, new_tuple) } {
                crate::pg::scan::Conflict::Stored => break true,
                crate::pg::scan::Conflict::InProgress(xid) => crate::pg::keylocks::wait_for(xid),
                crate::pg::scan::Conflict::None => break false,
            }
        }
    };
    if upsert && checked.doc.is_none() {
        checked = check(ingest::Store::Always);
    }

    if let (Some(original), false) = (&checked.original, is_update || upsert) {
        match cfg.action {
            Action::Mark => {}
            Action::Skip => {
                // A model the writer named (model_column) leaves no score in
                // dedup.rejected, as in the 23505 DETAIL below.
                let score = if model.is_some() { None } else { checked.score };
                as_owner(|| {
                    crate::pg::citus::nested(|| {
                        reject(&cfg, new_tuple, desc(), data, original, &checked, score)
                    })
                });
                return Ok(None);
            }
            Action::Error => {
                let name = lookup::relation_text(root).unwrap_or_else(|| cfg.tname.clone());
                let v = checked.verdict.map(verdict_label).unwrap_or_default();
                let score = checked.score.map(|s| format!("{s:.4}")).unwrap_or_default();
                // The original's key, the verdict and the score only for a writer
                // who may read the original, as in a unique violation's DETAIL:
                // the score would measure how close a text is to rows it cannot see.
                // A model the writer named (model_column) shows no score: its
                // weights are for who may read its collection (models.rs).
                let detail = if privilege::may_read(root, privilege::caller()) {
                    if model.is_some() {
                        format!("The row duplicates the row with key {original} in {name} (verdict {v}).")
                    } else {
                        format!("The row duplicates the row with key {original} in {name} (verdict {v}, score {score}).")
                    }
                } else {
                    format!("The row duplicates a row of {name}.")
                };
                // The refusal names the table and the text column it fired on,
                // as a unique violation names its table (the partition, for a
                // partitioned table).
                let body = row.col(&cfg.columns.body).map_or(0, |c| c.attno);
                crate::pg::raise_on_column(DedupError::DuplicateText {
                    msg: "duplicate text rejected by pg_dedup".into(),
                    detail,
                    hint: Some(
                        "to store duplicates and mark them instead, the table's owner can dedup.disable it and dedup.enable it again with action => 'mark'"
                            .into(),
                    ),
                }, rel, body);
            }
        }
    }

    let sig_col = dedup_col(&row, "dedup_sig", &cfg);
    let verdict_col = dedup_col(&row, "dedup_verdict", &cfg);
    let dup_col = dedup_col(&row, "duplicate_of", &cfg);
    let values: [Option<pg_sys::Datum>; 4] = [
        checked.doc.and_then(|d| d.into_datum()),
        checked
            .sig
            .as_ref()
            .and_then(|s| SignatureDatum::from_signature(s).into_datum()),
        checked.verdict.and_then(|v| v.into_datum()),
        // Under row-level security the original may be a row the writer cannot
        // see: its key is not revealed (the verdict still marks the row), as
        // PostgreSQL leaves a unique violation's DETAIL out. So for a writer who
        // reads the partition it writes to but not the whole table: the original
        // may be in another partition.
        checked
            .original
            .as_deref()
            .filter(|_| privilege::may_see_original_key(tbl, root, privilege::caller()))
            .and_then(|o| input(dup_col, o)),
    ];
    let mut cols = [
        doc_col.attno,
        sig_col.attno,
        verdict_col.attno,
        dup_col.attno,
    ];
    let mut datums: Vec<pg_sys::Datum> = values
        .iter()
        .map(|v| v.unwrap_or(pg_sys::Datum::from(0)))
        .collect();
    let mut nulls: Vec<bool> = values.iter().map(Option::is_none).collect();
    // SAFETY: the columns belong to the descriptor and the datums have their types;
    // the new tuple is palloc'd in the trigger's (per-tuple) memory context.
    let modified = unsafe {
        pg_sys::heap_modify_tuple_by_cols(
            new_tuple,
            desc(),
            cols.len() as i32,
            cols.as_mut_ptr(),
            datums.as_mut_ptr(),
            nulls.as_mut_ptr(),
        )
    };
    statement::row_returned(root, false);
    // SAFETY: as above.
    Ok(Some(unsafe {
        PgHeapTuple::from_heap_tuple(pgrx::PgTupleDesc::from_pg_unchecked(desc()), modified)
    }))
}

/// `new` with the old row's document, signature, verdict and mark: an update that
/// leaves the text as it was keeps them (whatever values the update wrote there).
fn with_old_marks<'a>(
    new: pg_sys::HeapTuple,
    old: pg_sys::HeapTuple,
    desc: pg_sys::TupleDesc,
    row: &Row,
    cfg: &TableConfig,
    doc_col: Col,
) -> PgHeapTuple<'a, AllocatedByPostgres> {
    let old_row = Row {
        tuple: old,
        rel: row.rel,
    };
    let mut cols = [
        doc_col.attno,
        dedup_col(row, "dedup_sig", cfg).attno,
        dedup_col(row, "dedup_verdict", cfg).attno,
        dedup_col(row, "duplicate_of", cfg).attno,
    ];
    let values: Vec<Option<pg_sys::Datum>> = cols
        .iter()
        .map(|&attno| {
            let mut isnull = false;
            // SAFETY: a column of the old tuple's own descriptor.
            let d = unsafe { pg_sys::heap_getattr(old_row.tuple, attno, desc, &mut isnull) };
            (!isnull).then_some(d)
        })
        .collect();
    let mut datums: Vec<pg_sys::Datum> = values
        .iter()
        .map(|v| v.unwrap_or(pg_sys::Datum::from(0)))
        .collect();
    let mut nulls: Vec<bool> = values.iter().map(Option::is_none).collect();
    // SAFETY: the columns belong to the descriptor and the datums are the old
    // tuple's, of the same types, alive for the trigger call; the new tuple is
    // palloc'd in the trigger's (per-tuple) memory context.
    unsafe {
        let modified = pg_sys::heap_modify_tuple_by_cols(
            new,
            desc,
            cols.len() as i32,
            cols.as_mut_ptr(),
            datums.as_mut_ptr(),
            nulls.as_mut_ptr(),
        );
        PgHeapTuple::from_heap_tuple(pgrx::PgTupleDesc::from_pg_unchecked(desc), modified)
    }
}

/// Removes a row's document from its table's collection statistics (UPDATE,
/// DELETE): `dedup._delete_trigger()` calls it with the relation the row was
/// deleted from. The delete half of an update that moved a row to another
/// partition removes nothing (the update did).
#[pg_extern(volatile, strict, parallel_unsafe)]
pub fn _forget(tbl: pg_sys::Oid, doc: DocumentDatum) {
    let cfg = ingest::table_config(tbl);
    if cfg.partitioned
        && statement::with_statement(cfg.tbl, |s| {
            !s.moved_docs.is_empty() && s.take_move_delete(doc_identity(&doc.0))
        })
        .unwrap_or(false)
    {
        return;
    }
    ingest::forget(&cfg, &doc, false);
}

/// `dedup_statement_start`, BEFORE INSERT OR UPDATE FOR EACH STATEMENT: opens the
/// statement's level of statistics changes (see `pg::statement`).
fn _statement_start<'a>(
    trigger: &'a pgrx::PgTrigger<'a>,
) -> Result<Option<PgHeapTuple<'a, AllocatedByPostgres>>, std::convert::Infallible> {
    if let Ok(rel) = trigger.relation() {
        statement::start(&rel);
    }
    Ok(None)
}

/// `dedup_row_stored`, AFTER INSERT OR UPDATE OF the text columns FOR EACH ROW:
/// records that a row the row trigger handed back was stored (see
/// `pg::statement`).
fn _row_stored<'a>(
    trigger: &'a pgrx::PgTrigger<'a>,
) -> Result<Option<PgHeapTuple<'a, AllocatedByPostgres>>, std::convert::Infallible> {
    let data = trigger.trigger_data();
    let Ok(tbl) = trigger.relid() else {
        return Ok(None);
    };
    // SAFETY: an AFTER row trigger's slots hold the stored row (and for an update
    // the version it replaced), with their tuple ids.
    unsafe {
        if matches!(trigger.op(), Ok(pgrx::PgTriggerOperation::Update)) {
            if !data.tg_trigslot.is_null() && !data.tg_newslot.is_null() {
                statement::row_stored(
                    tbl,
                    Some(&(*data.tg_trigslot).tts_tid),
                    &(*data.tg_newslot).tts_tid,
                );
            }
        } else if !data.tg_trigslot.is_null() {
            statement::row_stored(tbl, None, &(*data.tg_trigslot).tts_tid);
        }
    }
    Ok(None)
}

/// `dedup_statement_end`, AFTER INSERT OR UPDATE FOR EACH STATEMENT: every row of
/// the statement is in the table and its index now, so the signature-key locks of
/// its last row can go (see `pg::keylocks`) rather than wait for the commit; and
/// the statement's statistics changes are checked against the rows stored (see
/// `pg::statement`).
fn _statement_end<'a>(
    trigger: &'a pgrx::PgTrigger<'a>,
) -> Result<Option<PgHeapTuple<'a, AllocatedByPostgres>>, std::convert::Infallible> {
    crate::pg::keylocks::release();
    if let Ok(rel) = trigger.relation() {
        statement::end(&rel);
    }
    Ok(None)
}

fn verdict_label(v: verdict) -> String {
    match v {
        verdict::distinct => "distinct",
        verdict::a_duplicates_b => "a_duplicates_b",
        verdict::b_duplicates_a => "b_duplicates_a",
        verdict::mutual => "mutual",
    }
    .to_owned()
}

/// Records a row that action `'skip'` keeps out of its table: the row as it was
/// given (before the trigger set its dedup columns), as jsonb, with its verdict
/// and `score` (None for a model the writer named).
fn reject(
    cfg: &TableConfig,
    tuple: pg_sys::HeapTuple,
    desc: pg_sys::TupleDesc,
    data: &pg_sys::TriggerData,
    original: &str,
    checked: &ingest::Checked,
    score: Option<f64>,
) {
    // SAFETY: the relation's row type, and the tuple copied as a composite datum of
    // that type (in the current memory context).
    let (rowtype, datum) = unsafe {
        (
            (*(*data.tg_relation).rd_rel).reltype,
            pg_sys::heap_copy_tuple_as_datum(tuple, desc),
        )
    };
    // SAFETY: `datum` is a composite of type `rowtype`.
    let row = unsafe { pgrx::datum::DatumWithOid::new(datum, rowtype) };
    // SAFETY: the trigger's relation, open while it fires.
    let rel = unsafe { (*data.tg_relation).rd_id };
    // As the table's owner: to_jsonb calls a cast to json its owner may have
    // written for a column's type (see `privilege::as_table_owner`).
    let row_json = privilege::as_table_owner(rel, || {
        lookup::one_with_args::<String>("SELECT pg_catalog.to_jsonb($1)::pg_catalog.text", &[row])
    })
    .ok()
    .flatten();
    Spi::connect_mut(|c| {
        crate::pg::cache::update(
            c,
            // The table by name: on Citus this runs on a worker, whose OID for it
            // is its own (see `pg::citus`).
            // The key cast back in the writer's style, stored in one style any
            // session reads (an audit's writer under DateStyle 'SQL, DMY' stored
            // a key that named another day, or no row, in other sessions).
            &format!(
                "INSERT INTO dedup.rejected (tbl, row_data, original_key, verdict, score) \
                 VALUES ($1::pg_catalog.regclass, $2::pg_catalog.jsonb, \
                         dedup._key_text($3::pg_catalog.text::{ty}), $4, $5)",
                ty = cfg.key.sql_type
            ),
            None,
            &[
                cfg.tname.as_str().into(),
                row_json.into(),
                original.into(),
                checked.verdict.into(),
                score.into(),
            ],
        );
    });
}

crate::pg::trigger_entry::trigger_entry!(
    _trigger_wrapper,
    pg_finfo__trigger_wrapper,
    "_trigger",
    Some("dedup_trigger"),
    crate::pg::trigger_entry::Fired::RowBeforeWrite,
    _trigger
);
crate::pg::trigger_entry::trigger_entry!(
    _statement_start_wrapper,
    pg_finfo__statement_start_wrapper,
    "_statement_start",
    Some("dedup_statement_start"),
    crate::pg::trigger_entry::Fired::StatementBeforeWrite,
    _statement_start
);
crate::pg::trigger_entry::trigger_entry!(
    _row_stored_wrapper,
    pg_finfo__row_stored_wrapper,
    "_row_stored",
    Some("dedup_row_stored"),
    crate::pg::trigger_entry::Fired::RowAfterWrite,
    _row_stored
);
crate::pg::trigger_entry::trigger_entry!(
    _statement_end_wrapper,
    pg_finfo__statement_end_wrapper,
    "_statement_end",
    Some("dedup_statement_end"),
    crate::pg::trigger_entry::Fired::StatementAfterWrite,
    _statement_end
);

thread_local! {
    /// The statement [`warn_unregistered`] last warned in: the table, the local
    /// transaction and the statement's start.
    static WARNED_UNREGISTERED: std::cell::Cell<Option<(pg_sys::Oid, u32, i64)>> =
        const { std::cell::Cell::new(None) };
}

/// A row into a table that has pg_dedup's triggers but no registration (a table
/// restored alone with `pg_dump -t`, or a restore that lost
/// `dedup.enabled_tables`) is stored unchecked: said once per statement, with the
/// fix (an audit's writer stored a near copy so, without a word). Not in a
/// restoring session, which writes rows as they were (see [`restoring_session`]).
fn warn_unregistered(tbl: pg_sys::Oid) {
    if restoring_session() {
        return;
    }
    // SAFETY: reads this backend's PGPROC and the statement's start.
    let stmt = unsafe {
        (
            tbl,
            (*pg_sys::MyProc).lxid,
            pg_sys::GetCurrentStatementStartTimestamp(),
        )
    };
    if WARNED_UNREGISTERED.with(|w| w.replace(Some(stmt))) == Some(stmt) {
        return;
    }
    let name = lookup::current_name(tbl).unwrap_or_else(|| tbl.to_u32().to_string());
    pgrx::pg_sys::panic::ErrorReport::new(
        PgSqlErrorCode::ERRCODE_WARNING,
        format!("table {name} has pg_dedup's triggers but is not enabled: its rows are stored unchecked"),
        "pg_dedup",
    )
    .set_hint(format!(
        "SELECT dedup.disable('{lit}') removes them (and pg_dedup's columns); then dedup.enable the table to check its rows",
        lit = name.replace('\'', "''")
    ))
    .report(pgrx::PgLogLevel::WARNING);
}

/// Whether this session's `search_path` is empty, as pg_dump's output (plain,
/// or through pg_restore) sets it before it writes rows (PostgreSQL 10.3 on):
/// `set_config('search_path', '', false)`, or `SET search_path = ''`, which
/// stores it as `""`.
fn restoring_session() -> bool {
    // SAFETY: reads a GUC string variable of this backend (NULL before the GUCs
    // are set up, which no trigger sees).
    let path = unsafe {
        let p = pg_sys::namespace_search_path;
        if p.is_null() {
            return false;
        }
        std::ffi::CStr::from_ptr(p)
    };
    matches!(path.to_bytes().trim_ascii(), b"" | b"\"\"")
}
