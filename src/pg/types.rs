//! Rust handles for the extension's varlena types (`dedup.document`).
//!
//! The SQL types themselves are hand-declared in `sql/bootstrap.sql` (shell type,
//! I/O functions, `CREATE TYPE`), so pgrx sees them as external types named by SQL.
//! A handle holds the detoasted payload bytes; decoding is left to the caller so a
//! function that only needs the size never parses the document. [`JsonArg`] is a
//! `jsonb` argument read without pgrx's panic on JSON that serde cannot hold.

use pgrx::callconv::{Arg, ArgAbi, BoxRet, FcInfo};
use pgrx::pgrx_sql_entity_graph::metadata::{
    ArgumentError, ReturnsError, ReturnsRef, SqlMappingRef, SqlTranslatable, TypeOrigin,
};
use pgrx::{pg_sys, FromDatum, IntoDatum};

/// An argument of one of our types; a NULL one (possible only when a function is
/// called through a non-STRICT path) raises 22004 instead of reaching Rust.
///
/// # Safety
/// `arg` must be an argument of the SQL type `T` maps.
unsafe fn unbox_non_null<'fcx, T: FromDatum>(arg: Arg<'_, 'fcx>) -> T {
    let index = arg.index();
    // SAFETY: by the caller's contract.
    match unsafe { arg.unbox_arg_using_from_datum() } {
        Some(v) => v,
        None => crate::pg::raise(crate::error::DedupError::NullNotAllowed(format!(
            "argument {index} must not be null"
        ))),
    }
}

/// A publication time as microseconds since 2000-01-01, or None for none and for
/// `infinity` / `-infinity` (which have no distance to another time: the time
/// features count them unknown, as a missing time).
pub fn finite_time(ts: Option<pgrx::datum::TimestampWithTimeZone>) -> Option<pg_sys::TimestampTz> {
    ts.map(pg_sys::TimestampTz::from)
        .filter(|t| *t != pg_sys::TimestampTz::MAX && *t != pg_sys::TimestampTz::MIN)
}

/// A required argument of a function that is not STRICT (another argument may be
/// NULL): NULL raises 22004, naming the argument.
pub fn required<T>(value: Option<T>, name: &str) -> T {
    match value {
        Some(v) => v,
        None => crate::pg::raise(crate::error::DedupError::NullNotAllowed(format!(
            "{name} must not be null"
        ))),
    }
}

/// The payload of a varlena datum in any storage form, copied out; the plain copy
/// detoasting made, when it made one, is freed. pgrx's `Vec<u8>` conversion leaves
/// it in the memory context current (for `SpiHeapTupleData::get`, that context's
/// parent: the SPI connection's own), one copy per row read for as long as the
/// connection lasts: 6 GB over 100,000 pairs of one long document.
///
/// # Safety
/// `datum` must be a live, non-null varlena.
unsafe fn payload(datum: pg_sys::Datum) -> Vec<u8> {
    // SAFETY: by the caller's contract; `plain` is the datum itself or a fresh
    // palloc'd copy, read before it is freed.
    unsafe {
        let stored = datum.cast_mut_ptr::<pg_sys::varlena>();
        let plain = pg_sys::pg_detoast_datum_packed(stored);
        let bytes = pgrx::varlena::varlena_to_byte_slice(plain).to_vec();
        if plain != stored {
            pg_sys::pfree(plain.cast());
        }
        bytes
    }
}

macro_rules! varlena_handle {
    ($name:ident, $sql:literal, $short:literal) => {
        #[doc = concat!("The payload bytes of one `", $sql, "` value.")]
        #[derive(Debug, Clone)]
        pub struct $name(pub Vec<u8>);

        impl FromDatum for $name {
            unsafe fn from_polymorphic_datum(
                datum: pg_sys::Datum,
                is_null: bool,
                typoid: pg_sys::Oid,
            ) -> Option<Self> {
                let _ = typoid;
                // SAFETY: the datum is a varlena of our type handed to us by PostgreSQL.
                (!is_null && !datum.is_null()).then(|| $name(unsafe { payload(datum) }))
            }
        }

        impl IntoDatum for $name {
            fn into_datum(self) -> Option<pg_sys::Datum> {
                self.0.into_datum()
            }
            /// Two syscache probes rather than `regtypein`'s parse of the name (a
            /// signature is an argument of every trigger insert's candidate query).
            fn type_oid() -> pg_sys::Oid {
                dedup_type_oid($short).unwrap_or_else(|| pgrx::regtypein($sql))
            }
        }

        unsafe impl<'fcx> ArgAbi<'fcx> for $name {
            unsafe fn unbox_arg_unchecked(arg: Arg<'_, 'fcx>) -> Self {
                // SAFETY: pgrx only calls this for an argument of our SQL type.
                unsafe { unbox_non_null(arg) }
            }
        }

        unsafe impl BoxRet for $name {
            unsafe fn box_into<'fcx>(self, fcinfo: &mut FcInfo<'fcx>) -> pgrx::datum::Datum<'fcx> {
                match self.into_datum() {
                    // SAFETY: a freshly palloc'd varlena in the current memory context.
                    Some(d) => unsafe { fcinfo.return_raw_datum(d) },
                    None => fcinfo.return_null(),
                }
            }
        }

        unsafe impl SqlTranslatable for $name {
            const TYPE_IDENT: &'static str = concat!(module_path!(), "::", stringify!($name));
            const TYPE_ORIGIN: TypeOrigin = TypeOrigin::External;
            const ARGUMENT_SQL: Result<SqlMappingRef, ArgumentError> =
                Ok(SqlMappingRef::literal($sql));
            const RETURN_SQL: Result<ReturnsRef, ReturnsError> =
                Ok(ReturnsRef::One(SqlMappingRef::literal($sql)));
        }
    };
}

varlena_handle!(DocumentDatum, "dedup.document", c"document");

impl DocumentDatum {
    /// Decodes the stored document; corrupt bytes raise XX001.
    pub fn decode(&self) -> crate::document::Document {
        use crate::pg::OrRaise;
        crate::document::Document::decode(&self.0).or_raise_stored()
    }

    pub fn from_document(doc: &crate::document::Document) -> Self {
        DocumentDatum(doc.encode())
    }
}

/// A stored document's bytes, or a handle that yields them: what
/// `Weigher::weigh_stored` reads.
pub trait StoredDoc {
    /// The content hash of a version-2 document, read without its body; None for
    /// version 1.
    fn stored_key(&self) -> Option<u128>;
    /// The whole payload.
    fn bytes(&self) -> std::borrow::Cow<'_, [u8]>;
    /// The payload's size uncompressed, read without detoasting it.
    fn raw_size(&self) -> usize;
}

impl StoredDoc for DocumentDatum {
    fn stored_key(&self) -> Option<u128> {
        crate::document::stored_key(&self.0)
    }
    fn bytes(&self) -> std::borrow::Cow<'_, [u8]> {
        std::borrow::Cow::Borrowed(&self.0)
    }
    fn raw_size(&self) -> usize {
        self.0.len()
    }
}

/// A `dedup.document` left as PostgreSQL handed it over: maybe compressed, maybe
/// out of line. Its content key comes from a 17-byte slice, so a document already
/// in the backend cache is never decompressed; the payload is read only on a miss.
///
/// The datum belongs to the caller: a function argument lives for the call, an SPI
/// value until its `Spi::connect` closure returns. A `DocRef` must not outlive it,
/// so it is neither `Clone` nor returned from any function.
pub struct DocRef(pg_sys::Datum);

impl StoredDoc for DocRef {
    fn stored_key(&self) -> Option<u128> {
        use crate::document::HEADER_LEN;
        // SAFETY: the datum is a live, non-null varlena of our type (see the type's
        // docs). detoast_attr_slice handles every storage form and returns a fresh
        // palloc'd copy of at most HEADER_LEN bytes (or the datum itself when it is
        // already a plain varlena), which we read and free.
        unsafe {
            let ptr = self.0.cast_mut_ptr::<pg_sys::varlena>();
            let slice = pg_sys::detoast_attr_slice(ptr, 0, HEADER_LEN as i32);
            let len = pgrx::varlena::varsize_any_exhdr(slice);
            let data = pgrx::varlena::vardata_any(slice).cast::<u8>();
            let key = crate::document::stored_key(std::slice::from_raw_parts(data, len));
            if slice != ptr {
                pg_sys::pfree(slice.cast());
            }
            key
        }
    }
    fn bytes(&self) -> std::borrow::Cow<'_, [u8]> {
        // SAFETY: as above.
        std::borrow::Cow::Owned(unsafe { payload(self.0) })
    }
    fn raw_size(&self) -> usize {
        // SAFETY: as above; reads the varlena's (or its TOAST pointer's) header.
        unsafe { pg_sys::toast_raw_datum_size(self.0) }
    }
}

impl FromDatum for DocRef {
    unsafe fn from_polymorphic_datum(
        datum: pg_sys::Datum,
        is_null: bool,
        _typoid: pg_sys::Oid,
    ) -> Option<Self> {
        (!is_null).then_some(DocRef(datum))
    }
}

impl IntoDatum for DocRef {
    fn into_datum(self) -> Option<pg_sys::Datum> {
        Some(self.0)
    }
    fn type_oid() -> pg_sys::Oid {
        dedup_type_oid(c"document").unwrap_or_else(|| pgrx::regtypein("dedup.document"))
    }
    /// Checked for every SPI value read: two syscache probes rather than
    /// `regtypein`'s parse of the type name.
    fn is_compatible_with(other: pg_sys::Oid) -> bool {
        dedup_type_oid(c"document") == Some(other)
    }
}

unsafe impl<'fcx> ArgAbi<'fcx> for DocRef {
    unsafe fn unbox_arg_unchecked(arg: Arg<'_, 'fcx>) -> Self {
        // SAFETY: pgrx only calls this for an argument of our SQL type.
        unsafe { unbox_non_null(arg) }
    }
}

unsafe impl SqlTranslatable for DocRef {
    const TYPE_IDENT: &'static str = concat!(module_path!(), "::DocRef");
    const TYPE_ORIGIN: TypeOrigin = TypeOrigin::External;
    const ARGUMENT_SQL: Result<SqlMappingRef, ArgumentError> =
        Ok(SqlMappingRef::literal("dedup.document"));
    const RETURN_SQL: Result<ReturnsRef, ReturnsError> =
        Ok(ReturnsRef::One(SqlMappingRef::literal("dedup.document")));
}

varlena_handle!(SignatureDatum, "dedup.signature", c"signature");

impl SignatureDatum {
    /// Decodes the stored signature; corrupt bytes raise XX001.
    pub fn decode(&self) -> crate::signature::Signature {
        use crate::pg::OrRaise;
        crate::signature::Signature::decode(&self.0).or_raise_stored()
    }

    pub fn from_signature(s: &crate::signature::Signature) -> Self {
        SignatureDatum(s.encode())
    }
}

/// `dedup.verdict`, the four outcomes of comparing a pair in both directions
/// (declared in sql/bootstrap.sql). Hand-written rather than `PostgresEnum`, whose
/// generated lookup uses the unqualified type name and fails outside `dedup`'s
/// search path.
#[allow(non_camel_case_types)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    distinct,
    a_duplicates_b,
    b_duplicates_a,
    mutual,
}

impl Verdict {
    pub fn label(self) -> &'static str {
        match self {
            Verdict::distinct => "distinct",
            Verdict::a_duplicates_b => "a_duplicates_b",
            Verdict::b_duplicates_a => "b_duplicates_a",
            Verdict::mutual => "mutual",
        }
    }
}

thread_local! {
    /// The OID of `dedup.verdict` and its four label OIDs, as last looked up.
    static VERDICT_LABELS: std::cell::Cell<Option<(pg_sys::Oid, [pg_sys::Oid; 4])>> =
        const { std::cell::Cell::new(None) };
}

/// The OID of type `dedup.<name>` through two syscache probes (no parsing), or None.
fn dedup_type_oid(name: &std::ffi::CStr) -> Option<pg_sys::Oid> {
    // SAFETY: catalog lookups by name with missing_ok; the C strings are static.
    unsafe {
        let nsp = pg_sys::get_namespace_oid(c"dedup".as_ptr(), true);
        if nsp == pg_sys::InvalidOid {
            return None;
        }
        let oid = pg_sys::GetSysCacheOid(
            pg_sys::SysCacheIdentifier::TYPENAMENSP as i32,
            pg_sys::Anum_pg_type_oid as pg_sys::AttrNumber,
            pg_sys::Datum::from(name.as_ptr()),
            pg_sys::Datum::from(nsp),
            pg_sys::Datum::from(0),
            pg_sys::Datum::from(0),
        );
        (oid != pg_sys::InvalidOid).then_some(oid)
    }
}

fn verdict_type_oid() -> Option<pg_sys::Oid> {
    dedup_type_oid(c"verdict")
}

impl IntoDatum for Verdict {
    /// The label's OID. `lookup_enum_by_label` parses the type name on every call (a
    /// tenth of `classify_pair`); the label OIDs are kept per backend and reused while
    /// `dedup.verdict` still has the same OID (a dropped and re-created extension
    /// gives it a new one).
    fn into_datum(self) -> Option<pg_sys::Datum> {
        let idx = self as usize;
        let typ = verdict_type_oid();
        if let (Some(t), Some((ct, labels))) = (typ, VERDICT_LABELS.with(|c| c.get())) {
            if t == ct {
                return Some(pg_sys::Datum::from(labels[idx]));
            }
        }
        let all = [
            Verdict::distinct,
            Verdict::a_duplicates_b,
            Verdict::b_duplicates_a,
            Verdict::mutual,
        ];
        let labels = all.map(|v| {
            let d = pgrx::enum_helper::lookup_enum_by_label("dedup.verdict", v.label());
            pg_sys::Oid::from(d.value() as u32)
        });
        if let Some(t) = typ {
            VERDICT_LABELS.with(|c| c.set(Some((t, labels))));
        }
        Some(pg_sys::Datum::from(labels[idx]))
    }
    fn type_oid() -> pg_sys::Oid {
        pgrx::regtypein("dedup.verdict")
    }
}

unsafe impl BoxRet for Verdict {
    unsafe fn box_into<'fcx>(self, fcinfo: &mut FcInfo<'fcx>) -> pgrx::datum::Datum<'fcx> {
        match self.into_datum() {
            // SAFETY: an enum label OID, passed by value.
            Some(d) => unsafe { fcinfo.return_raw_datum(d) },
            None => fcinfo.return_null(),
        }
    }
}

unsafe impl SqlTranslatable for Verdict {
    const TYPE_IDENT: &'static str = concat!(module_path!(), "::Verdict");
    const TYPE_ORIGIN: TypeOrigin = TypeOrigin::External;
    const ARGUMENT_SQL: Result<SqlMappingRef, ArgumentError> =
        Ok(SqlMappingRef::literal("dedup.verdict"));
    const RETURN_SQL: Result<ReturnsRef, ReturnsError> =
        Ok(ReturnsRef::One(SqlMappingRef::literal("dedup.verdict")));
}

/// The bytes of a binary-receive call (the rest of the `StringInfo`), checked by
/// `check`; anything malformed is 22P03 invalid_binary_representation.
pub fn receive<E: std::fmt::Display>(
    buf: &mut pgrx::Internal,
    type_name: &str,
    check: impl FnOnce(&[u8]) -> Result<(), E>,
) -> Vec<u8> {
    // SAFETY: PostgreSQL passes a StringInfo as a receive function's argument.
    let Some(info) = (unsafe { buf.get_mut::<pg_sys::StringInfoData>() }) else {
        crate::pg::raise(crate::error::DedupError::InvalidBinary(format!(
            "missing binary input for {type_name}"
        )))
    };
    let len = info.len.max(0) as usize;
    let start = (info.cursor.max(0) as usize).min(len);
    // SAFETY: `data` holds `len` bytes; we read [cursor, len) and then consume them.
    let bytes =
        unsafe { std::slice::from_raw_parts(info.data.cast::<u8>().add(start), len - start) }
            .to_vec();
    info.cursor = info.len;
    if let Err(e) = check(&bytes) {
        crate::pg::raise(crate::error::DedupError::InvalidBinary(format!(
            "invalid binary representation of {type_name}: {e}"
        )));
    }
    bytes
}

/// A `jsonb` argument (options, a model's export) as a `serde_json::Value`.
/// PostgreSQL's `jsonb` holds what serde_json refuses (a number such as `1e400`,
/// nesting deeper than 128): pgrx's `JsonB` panics on those (XX000), this raises
/// 22023 with serde's reason.
#[derive(Debug, Clone)]
pub struct JsonArg(pub serde_json::Value);

impl FromDatum for JsonArg {
    unsafe fn from_polymorphic_datum(
        datum: pg_sys::Datum,
        is_null: bool,
        _typoid: pg_sys::Oid,
    ) -> Option<Self> {
        if is_null {
            return None;
        }
        // SAFETY: a non-null jsonb datum PostgreSQL handed over; `jsonb_out` takes a
        // (possibly toasted) jsonb and returns a palloc'd C string.
        let text = unsafe {
            let c =
                pgrx::direct_function_call::<&core::ffi::CStr>(pg_sys::jsonb_out, &[Some(datum)])?;
            let t = c.to_string_lossy().into_owned();
            pg_sys::pfree(c.as_ptr() as *mut core::ffi::c_void);
            t
        };
        match serde_json::from_str(&text) {
            Ok(v) => Some(JsonArg(v)),
            Err(e) => crate::pg::raise(crate::error::DedupError::invalid_parameter(format!(
                "a jsonb argument holds a value pg_dedup cannot read: {}",
                json_reason(&e, &text)
            ))),
        }
    }
}

/// serde's reason for refusing `text` (jsonb's own text form, one line), with
/// the text it stopped in (the key before a value, the value's start) instead of
/// a position in that form, which the caller never wrote.
fn json_reason(e: &serde_json::Error, text: &str) -> String {
    let full = e.to_string().to_lowercase();
    let reason = full.split(" at line ").next().unwrap_or(&full);
    // serde counts the column in bytes, from 1.
    let mut end = e.column().min(text.len());
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    // The value serde stopped in starts after the last delimiter before `end`.
    let token = text[..end].rfind([':', ',', '[', '{']).map_or(0, |i| i + 1);
    let start = text[..token]
        .char_indices()
        .rev()
        .nth(24)
        .map_or(0, |(i, _)| i);
    let shown: String = text[token..].chars().take(12).collect();
    format!(
        "{reason} at \"{}{}…\"",
        &text[start..token],
        shown.trim_end()
    )
}

unsafe impl<'fcx> ArgAbi<'fcx> for JsonArg {
    unsafe fn unbox_arg_unchecked(arg: Arg<'_, 'fcx>) -> Self {
        // SAFETY: pgrx only calls this for a jsonb argument.
        unsafe { unbox_non_null(arg) }
    }
}

unsafe impl SqlTranslatable for JsonArg {
    const TYPE_IDENT: &'static str = concat!(module_path!(), "::JsonArg");
    const TYPE_ORIGIN: TypeOrigin = TypeOrigin::External;
    const ARGUMENT_SQL: Result<SqlMappingRef, ArgumentError> = Ok(SqlMappingRef::literal("jsonb"));
    const RETURN_SQL: Result<ReturnsRef, ReturnsError> =
        Ok(ReturnsRef::One(SqlMappingRef::literal("jsonb")));
}

/// A `jsonb` result given as its text form, which `jsonb_in` reads: for a result
/// too large to build as a `serde_json::Value` first (pgrx's `JsonB` does, and
/// then prints it), such as `term_stats_agg`'s millions of terms.
#[derive(Debug, Clone)]
pub struct JsonText(pub String);

impl IntoDatum for JsonText {
    fn into_datum(self) -> Option<pg_sys::Datum> {
        let Ok(text) = std::ffi::CString::new(self.0) else {
            crate::pg::raise(crate::error::DedupError::Internal(
                "a jsonb result holds a NUL byte".into(),
            ));
        };
        // SAFETY: jsonb_in reads a NUL-terminated C string, which outlives the call.
        unsafe {
            pgrx::direct_function_call_as_datum(pg_sys::jsonb_in, &[Some(text.as_ptr().into())])
        }
    }
    fn type_oid() -> pg_sys::Oid {
        pg_sys::JSONBOID
    }
}

unsafe impl BoxRet for JsonText {
    unsafe fn box_into<'fcx>(self, fcinfo: &mut FcInfo<'fcx>) -> pgrx::datum::Datum<'fcx> {
        match self.into_datum() {
            // SAFETY: a freshly palloc'd jsonb in the current memory context.
            Some(d) => unsafe { fcinfo.return_raw_datum(d) },
            None => fcinfo.return_null(),
        }
    }
}

unsafe impl SqlTranslatable for JsonText {
    const TYPE_IDENT: &'static str = concat!(module_path!(), "::JsonText");
    const TYPE_ORIGIN: TypeOrigin = TypeOrigin::External;
    const ARGUMENT_SQL: Result<SqlMappingRef, ArgumentError> = Ok(SqlMappingRef::literal("jsonb"));
    const RETURN_SQL: Result<ReturnsRef, ReturnsError> =
        Ok(ReturnsRef::One(SqlMappingRef::literal("jsonb")));
}
