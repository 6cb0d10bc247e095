//! `dedup.signature`: its I/O, `dedup.signature(doc, collection)`, the `%`
//! operator, the GIN support functions of `dedup.signature_ops`, and `candidates`.

use crate::document::Document;
use crate::error::DedupError;
use crate::gucs;
use crate::pg::collections::{self, Collection};
use crate::pg::fmgr::v1_function;
use crate::pg::lookup;
use crate::pg::privilege;
use crate::pg::spi_err;
use crate::pg::types::{DocumentDatum, SignatureDatum};
use crate::pg::{raise, OrRaise};
use crate::signature::{self, Scheme, Signature, SignatureOptions, Tri};
use pgrx::prelude::*;
use pgrx::{FromDatum, Internal, StringInfo};
use std::ffi::CStr;

// ---- type I/O (declared in sql/bootstrap.sql) ---------------------------------------

#[pg_extern(immutable, strict, parallel_safe, sql = false)]
fn signature_in(input: &CStr) -> SignatureDatum {
    let Ok(s) = input.to_str() else {
        raise(DedupError::invalid_input(
            "invalid input syntax for type dedup.signature: not valid UTF-8",
        ))
    };
    SignatureDatum::from_signature(&Signature::from_text(s).or_raise())
}

#[pg_extern(immutable, strict, parallel_safe, sql = false)]
fn signature_out(sig: SignatureDatum) -> &'static CStr {
    let mut s = StringInfo::new();
    s.push_str(&sig.decode().to_text());
    // SAFETY: the StringInfo was allocated in the current memory context just above.
    unsafe { s.leak_cstr() }
}

#[pg_extern(immutable, strict, parallel_safe, sql = false)]
fn signature_recv(mut buf: Internal) -> SignatureDatum {
    SignatureDatum(crate::pg::types::receive(
        &mut buf,
        "dedup.signature",
        |b| Signature::decode(b).map(|_| ()),
    ))
}

#[pg_extern(immutable, strict, parallel_safe, sql = false)]
fn signature_send(sig: SignatureDatum) -> Vec<u8> {
    sig.0
}

// ---- building and comparing -------------------------------------------------------

/// The signature settings of a collection (from its `options`).
pub fn options_of(coll: &Collection) -> SignatureOptions {
    SignatureOptions::from_json(&coll.options).or_raise()
}

/// The signature of `doc` in `coll`, from its body weights.
pub fn signature_of(doc: &Document, coll: &Collection, opts: &SignatureOptions) -> Signature {
    let (w, _) = crate::pg::weigher::document_weights(doc, coll, None);
    signature::signature(doc, &w, opts)
}

/// The signature of a document in a collection. STABLE: it reads the collection's
/// statistics and settings.
#[pg_extern(stable, strict, name = "signature")]
fn signature_fn(doc: DocumentDatum, collection: &str) -> SignatureDatum {
    crate::pg::privilege::reading_collection(collection, "dedup.signature", || {
        let coll = collections::load(collection);
        let opts = options_of(&coll);
        SignatureDatum::from_signature(&signature_of(&doc.decode(), &coll, &opts))
    })
}

/// Keys two signatures share.
#[pg_extern(immutable, strict, parallel_safe)]
fn shared_keys(a: SignatureDatum, b: SignatureDatum) -> i32 {
    a.decode().shared_keys(&b.decode()) as i32
}

/// Shared keys / the smaller key count (0 when either is empty).
#[pg_extern(immutable, strict, parallel_safe)]
fn similarity(a: SignatureDatum, b: SignatureDatum) -> f64 {
    a.decode().similarity(&b.decode())
}

pub(crate) fn min_shared() -> usize {
    gucs::min_shared_keys()
}

/// The `%` operator: true when the pair is a candidate under its scheme.
/// STABLE, not IMMUTABLE: `topwords` reads `dedup.min_shared_keys` and `longest`
/// reads `dedup.similarity_threshold`, so the answer can change with a SET.
#[pg_extern(stable, strict, parallel_safe, sql = false)]
fn signature_match(a: SignatureDatum, b: SignatureDatum) -> bool {
    signature::is_candidate(
        &a.decode(),
        &b.decode(),
        min_shared(),
        gucs::similarity_threshold(),
    )
}

// ---- GIN support (opclass dedup.signature_ops, sql/signature.sql) ---------------------
// Keys are int4 (the u32 key bits), compared with btint4cmp. Strategy 1 is `%`.
// A key does not say which scheme it came from, so (tri)consistent only rule rows
// out and ask for a recheck of every match (see `signature::gin_consistent`).

/// Per-query state handed from extractQuery to (tri)consistent through extra_data.
#[repr(C)]
struct QueryState {
    scheme: u8,
}

/// Palloc'd array of the signature's keys as int4 datums; writes the count.
unsafe fn keys_datums(sig: &Signature, nkeys: *mut i32) -> pg_sys::Datum {
    let n = sig.keys.len();
    // SAFETY: nkeys points at the int32 GIN passed for the key count.
    unsafe { *nkeys = n as i32 };
    if n == 0 {
        return pg_sys::Datum::from(std::ptr::null_mut::<pg_sys::Datum>());
    }
    // SAFETY: palloc returns n Datums of memory in the current (index build/scan) context.
    let arr =
        unsafe { pg_sys::palloc(n * std::mem::size_of::<pg_sys::Datum>()) } as *mut pg_sys::Datum;
    for (i, &k) in sig.keys.iter().enumerate() {
        // SAFETY: i < n, inside the allocation.
        unsafe { *arr.add(i) = pg_sys::Datum::from(k as i32) };
    }
    pg_sys::Datum::from(arr)
}

/// Reads argument `i` of a V1 call.
unsafe fn arg(fcinfo: pg_sys::FunctionCallInfo, i: usize) -> pg_sys::Datum {
    // SAFETY: the caller knows the function has more than `i` arguments.
    unsafe { (*fcinfo).args.as_slice((*fcinfo).nargs as usize)[i].value }
}

unsafe fn signature_arg(fcinfo: pg_sys::FunctionCallInfo, i: usize) -> Signature {
    // SAFETY: argument i is a non-null dedup.signature varlena.
    let bytes = unsafe { Vec::<u8>::from_datum(arg(fcinfo, i), false) }.unwrap_or_default();
    Signature::decode(&bytes).or_raise_stored()
}

// extractValue(signature, internal nkeys, internal nullFlags) → internal
v1_function!(
    dedup_gin_extract_value,
    pg_finfo_dedup_gin_extract_value,
    |fcinfo| unsafe {
        let sig = signature_arg(fcinfo, 0);
        keys_datums(&sig, arg(fcinfo, 1).cast_mut_ptr::<i32>())
    }
);

// extractQuery(signature, internal nkeys, int2 strategy, internal pmatch,
//              internal extra_data, internal nullFlags, internal searchMode) → internal
v1_function!(
    dedup_gin_extract_query,
    pg_finfo_dedup_gin_extract_query,
    |fcinfo| unsafe {
        let sig = signature_arg(fcinfo, 0);
        let nkeys = arg(fcinfo, 1).cast_mut_ptr::<i32>();
        let extra = arg(fcinfo, 4).cast_mut_ptr::<*mut *mut std::ffi::c_char>();
        let keys = keys_datums(&sig, nkeys);
        // An empty query signature matches nothing (as `%` says), so zero keys in the
        // default search mode is right: GIN returns no rows.
        let n = sig.keys.len();
        if n > 0 && !extra.is_null() {
            let state = pg_sys::palloc(std::mem::size_of::<QueryState>()) as *mut QueryState;
            *state = QueryState {
                scheme: sig.scheme.tag(),
            };
            let arr = pg_sys::palloc0(n * std::mem::size_of::<*mut std::ffi::c_char>())
                as *mut *mut std::ffi::c_char;
            *arr = state.cast();
            *extra = arr;
        }
        keys
    }
);

/// The query's scheme. Without a state (not expected) `imatch`, whose rule (one
/// shared key) every candidate meets: with the recheck, still the right rows.
unsafe fn query_scheme(extra: *mut *mut std::ffi::c_char) -> Scheme {
    if !extra.is_null() {
        // SAFETY: extractQuery stored a QueryState in extra_data[0].
        let st = unsafe { *extra } as *const QueryState;
        if !st.is_null() {
            let st = unsafe { &*st };
            return Scheme::from_tag(st.scheme).unwrap_or(Scheme::Imatch);
        }
    }
    Scheme::Imatch
}

// consistent(internal check, int2, signature, int4 nkeys, internal extra_data,
//            internal recheck, internal queryKeys, internal nullFlags) → bool
v1_function!(
    dedup_gin_consistent,
    pg_finfo_dedup_gin_consistent,
    |fcinfo| unsafe {
        let check = arg(fcinfo, 0).cast_mut_ptr::<bool>();
        let nkeys = arg(fcinfo, 3).value() as i32;
        let extra = arg(fcinfo, 4).cast_mut_ptr::<*mut std::ffi::c_char>();
        let recheck = arg(fcinfo, 5).cast_mut_ptr::<bool>();
        let matched = (0..nkeys.max(0) as usize)
            .filter(|&i| *check.add(i))
            .count();
        // The index does not know the row's scheme: every match is rechecked by `%`.
        let (ok, re) = signature::gin_consistent(
            query_scheme(extra),
            matched,
            min_shared(),
            gucs::similarity_threshold(),
        );
        *recheck = re;
        pg_sys::Datum::from(ok)
    }
);

// triConsistent(internal check, int2, signature, int4 nkeys, internal extra_data,
//               internal queryKeys, internal nullFlags) → "char" (GinTernaryValue)
v1_function!(
    dedup_gin_tri_consistent,
    pg_finfo_dedup_gin_tri_consistent,
    |fcinfo| unsafe {
        let check = arg(fcinfo, 0).cast_mut_ptr::<pg_sys::GinTernaryValue>();
        let nkeys = arg(fcinfo, 3).value() as i32;
        let extra = arg(fcinfo, 4).cast_mut_ptr::<*mut std::ffi::c_char>();
        let (mut yes, mut maybe) = (0usize, 0usize);
        for i in 0..nkeys.max(0) as usize {
            match *check.add(i) as u32 {
                pg_sys::GIN_TRUE => yes += 1,
                pg_sys::GIN_MAYBE => maybe += 1,
                _ => {}
            }
        }
        let t = signature::gin_tri_consistent(
            query_scheme(extra),
            yes,
            maybe,
            min_shared(),
            gucs::similarity_threshold(),
        );
        // As pg_trgm does, "maybe" also covers "true, but recheck".
        let v = match t {
            Tri::False => pg_sys::GIN_FALSE,
            Tri::True => pg_sys::GIN_TRUE,
            Tri::Maybe => pg_sys::GIN_MAYBE,
        };
        pg_sys::Datum::from(v as pg_sys::GinTernaryValue)
    }
);

// ---- lookups and quality --------------------------------------------------------------

/// The single `dedup.signature` column of `tbl` (the registered one when there are several).
pub fn signature_column(tbl: pg_sys::Oid) -> String {
    let cols: Vec<String> = Spi::connect(|c| {
        let t = c
            .select(
                "SELECT attname::pg_catalog.text FROM pg_catalog.pg_attribute WHERE attrelid = $1 AND attnum > 0 \
                 AND NOT attisdropped AND atttypid = 'dedup.signature'::pg_catalog.regtype ORDER BY attnum",
                None,
                &[tbl.into()],
            )
            .unwrap_or_else(|e| spi_err(e));
        t.into_iter()
            .filter_map(|r| r.get::<String>(1).ok().flatten())
            .collect()
    });
    match cols.len() {
        1 => cols.into_iter().next().unwrap_or_default(),
        0 => raise(DedupError::UndefinedColumn {
            msg: format!(
                "table {} has no column of type dedup.signature",
                lookup::relation_text(tbl)
                    .unwrap_or_default()
            ),
            hint: Some("dedup.enable adds one (dedup_sig), or add your own and fill it with dedup.signature".into()),
        }),
        _ => {
            let registered = lookup::one_with_args::<String>(
                "SELECT sig_column::text FROM dedup.collection_tables WHERE tbl = $1 AND sig_column IS NOT NULL LIMIT 1",
                &[tbl.into()],
            )
            .ok()
            .flatten();
            registered.unwrap_or_else(|| {
                raise(DedupError::invalid_parameter(
                    "table has several dedup.signature columns and none is registered",
                ))
            })
        }
    }
}

/// Rows of `tbl` whose signature is a candidate for `sig`, found through the GIN
/// index on the table's signature column; best first, at most `max`.
#[pg_extern(stable, strict)]
fn _candidates(
    tbl: pg_sys::Oid,
    sig: SignatureDatum,
    max: i32,
) -> TableIterator<
    'static,
    (
        name!(ctid, pg_sys::ItemPointerData),
        name!(key, Option<String>),
        name!(shared_keys, i32),
        name!(similarity, f64),
    ),
> {
    privilege::require_execute(
        "dedup.candidates(pg_catalog.regclass, dedup.signature, pg_catalog.int4)",
    );
    // Its queries run with the caller's rights, not its search_path.
    TableIterator::new(crate::pg::guc_scope::pinned_path(|| {
        crate::pg::guc_scope::without_jit(|| candidates_of(tbl, sig, max))
    }))
}

/// [`_candidates`]' rows, found with the search_path pinned.
fn candidates_of(
    tbl: pg_sys::Oid,
    sig: SignatureDatum,
    max: i32,
) -> Vec<(pg_sys::ItemPointerData, Option<String>, i32, f64)> {
    if max < 0 {
        raise(DedupError::invalid_parameter(format!(
            "max must not be negative, got {max}"
        )));
    }
    // Rows are named by their ctid: only a table has one (a view would fail on it).
    let kind = lookup::one_with_args::<String>(
        "SELECT relkind::text FROM pg_catalog.pg_class WHERE oid = $1",
        &[tbl.into()],
    )
    .ok()
    .flatten();
    match kind.as_deref() {
        None => {
            // The relation named by OID is gone (or never was).
            lookup::qualified_relation(tbl);
        }
        Some("r" | "p" | "m") => {}
        Some(k) => {
            let name = lookup::qualified_relation(tbl);
            raise(DedupError::WrongObjectType {
                msg: format!("dedup.candidates reads a table, and {name} is not one"),
                hint: (k == "v").then(|| "name the table the view reads".into()),
            });
        }
    }
    let col = pgrx::spi::quote_identifier(signature_column(tbl));
    let tname = lookup::relation_text(tbl).unwrap_or_default();
    // The key as text (see `crate::rowkey`): a key of several columns as their
    // composite value's text; and the key to break ties by, in its own order, as
    // the trigger's lookup does (the ctid only where there is no key).
    let key_cols = lookup::one_with_args::<Vec<String>>(
        "SELECT k.names::text[] FROM dedup._key_columns($1::regclass) k",
        &[tbl.into()],
    )
    .ok()
    .flatten()
    .map(|cols| {
        cols.into_iter()
            .map(pgrx::spi::quote_identifier)
            .collect::<Vec<_>>()
    });
    // An enabled table's key of several columns is compared as its composite
    // type (`duplicate_of`'s), as the trigger compares it.
    let key_type = lookup::one_with_args::<String>(
        "SELECT e.key_type::text FROM dedup.enabled_tables e WHERE e.tbl = $1::regclass",
        &[tbl.into()],
    )
    .ok()
    .flatten();
    // Columns qualified by the table's alias: in ORDER BY a bare name would be
    // the output column of that name, the key's text.
    let (key, tie) = match key_cols.as_deref() {
        Some([one]) => (format!("r.{one}::text"), format!("r.{one}, ")),
        Some(cols) if !cols.is_empty() => {
            let row = format!(
                "ROW({}){}",
                cols.iter()
                    .map(|c| format!("r.{c}"))
                    .collect::<Vec<_>>()
                    .join(", "),
                key_type.map(|t| format!("::{t}")).unwrap_or_default()
            );
            (format!("{row}::text"), format!("{row}, "))
        }
        _ => ("NULL::text".into(), String::new()),
    };
    let sql = format!(
        "SELECT r.ctid, {key}, dedup.shared_keys(r.{col}, $1), dedup.similarity(r.{col}, $1) FROM {tname} AS r \
         WHERE r.{col} OPERATOR(dedup.%) $1 ORDER BY 4 DESC, 3 DESC, {tie}1 LIMIT $2"
    );
    // An enabled table's collection decides what `%` matches, as for its trigger;
    // any other table's signatures are matched under the session's settings.
    let matching = lookup::one_with_args::<String>(
        "SELECT c.name FROM dedup.enabled_tables e JOIN dedup.collections c ON c.id = e.collection_id \
         WHERE e.tbl = $1::regclass",
        &[tbl.into()],
    )
    .ok()
    .flatten()
    .map(|name| crate::pg::guc_scope::MatchSettings::of(&crate::pg::collections::load(&name).limits));
    // Through the signature index whatever the caller's planner settings, as
    // `pairs` looks rows up (with bitmap scans off each call read the whole table).
    let mut settings: Vec<(&std::ffi::CStr, &std::ffi::CStr)> = vec![
        (c"enable_seqscan", c"off"),
        (c"enable_bitmapscan", c"on"),
        (c"jit", c"off"),
    ];
    settings.extend(
        matching
            .as_ref()
            .map(|m| m.pairs().to_vec())
            .unwrap_or_default(),
    );
    Spi::connect(|c| {
        // The key as text, a float key exactly.
        let t = crate::pg::guc_scope::with_settings(&settings, || {
            crate::pg::guc_scope::exact_floats(|| {
                c.select(sql.as_str(), None, &[sig.into(), (max as i64).into()])
            })
        })
        .unwrap_or_else(|e| spi_err(e));
        t.into_iter()
            .filter_map(|r| {
                Some((
                    r.get::<pg_sys::ItemPointerData>(1).ok()??,
                    r.get::<String>(2).ok().flatten(),
                    r.get::<i32>(3).ok().flatten().unwrap_or(0),
                    r.get::<f64>(4).ok().flatten().unwrap_or(0.0),
                ))
            })
            .collect::<Vec<_>>()
    })
}
