//! The readable text form of `dedup.document`: a JSON object that round-trips.
//!
//! ```text
//! {"v":1,"words":12,"images":0,"links":1,"published_at":"2024-11-10T07:08:05Z",
//!  "source":"tass","fingerprint":"…32 hex…","terms":{"книг":2,"run":2},
//!  "title":{"книг":1},"numbers":["3.5","2024"],
//!  "sentences":[{"h":"…16 hex…","t":["книг","run"]}],"paragraphs":[…]}
//! ```
//! Segment terms are written as the term strings (not indices) so that a person
//! can read them; parsing maps them back. Any deviation is `InvalidInput` (22P02).
//!
//! Every document either form accepts prints and reads back as itself:
//! `published_at` is any `i64` (see [`format_time`]: `infinity`, `-infinity`, and
//! years with a sign outside 0000..=9999), `numbers` are decimal strings (a JSON
//! number is accepted only when it prints as one: `3.5` yes, `1e300` no).
//!
//! The parser accepts what the binary form holds, no more: terms of 1 to
//! [`MAX_TERM_BYTES`] bytes with counts from 1 to [`MAX_TF`], numbers that are normalised decimals.
//! What it builds is bounded by its input, and not many times it: the segments, most
//! of a document's text, are read straight into the document's own vectors (see
//! [`from_text`]); the other values go through serde_json's value tree, which is
//! linear in their text (and nests at most 128 deep).

use crate::document::{Document, Segment, TermFreq, MAX_TERM_BYTES, MAX_TF};

/// The `"v"` of the text form (independent of the binary format's version).
pub const TEXT_VERSION: u8 = 1;
use crate::error::{DedupError, Result};
use serde_json::{Map, Value};

/// Microseconds between 1970-01-01 and 2000-01-01 (PostgreSQL's epoch).
const PG_EPOCH_UNIX_US: i64 = 946_684_800_000_000;

/// Days since 1970-01-01 → (year, month, day), proleptic Gregorian (H. Hinnant's algorithm).
fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (if m <= 2 { y + 1 } else { y }, m, d)
}

fn days_from_civil(y: i64, m: u32, d: u32) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y.rem_euclid(400);
    let mp = (m as i64 + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d as i64 - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// PostgreSQL microseconds → `YYYY-MM-DDTHH:MM:SS[.ffffff]Z` (UTC). Total over
/// `i64`: `i64::MAX` and `i64::MIN` are PostgreSQL's `infinity` and `-infinity`
/// and print so; a year outside 0000..=9999 is written with its sign and as many
/// digits as it has (ISO 8601's expanded years: `-4713-11-24T00:00:00Z`,
/// `+294276-12-31T23:59:59Z`). [`parse_time`] reads back every string this gives.
pub fn format_time(pg_us: i64) -> String {
    match pg_us {
        i64::MAX => return "infinity".into(),
        i64::MIN => return "-infinity".into(),
        _ => {}
    }
    // In i128: near the ends of i64 the shift to the Unix epoch overflows i64.
    let unix = pg_us as i128 + PG_EPOCH_UNIX_US as i128;
    let secs = unix.div_euclid(1_000_000);
    let frac = unix.rem_euclid(1_000_000);
    // |secs| < 2^63 / 10^6, so the day count fits an i64 with room to spare.
    let (y, mo, d) = civil_from_days(secs.div_euclid(86_400) as i64);
    let sod = secs.rem_euclid(86_400);
    let (h, mi, s) = (sod / 3600, (sod / 60) % 60, sod % 60);
    let year = match y {
        0..=9999 => format!("{y:04}"),
        _ if y < 0 => format!("-{:04}", -y),
        _ => format!("+{y}"),
    };
    if frac == 0 {
        format!("{year}-{mo:02}-{d:02}T{h:02}:{mi:02}:{s:02}Z")
    } else {
        format!("{year}-{mo:02}-{d:02}T{h:02}:{mi:02}:{s:02}.{frac:06}Z")
    }
}

/// Inverse of [`format_time`]: `YYYY-MM-DDTHH:MM:SS[.f{1,6}]Z`, where the year is
/// 4 digits, or a sign and 4 to 6 digits; or `infinity`, `+infinity`,
/// `-infinity` (any case). None for anything else, or for a time outside `i64`
/// microseconds.
pub fn parse_time(s: &str) -> Option<i64> {
    match s.to_ascii_lowercase().as_str() {
        "infinity" | "+infinity" => return Some(i64::MAX),
        "-infinity" => return Some(i64::MIN),
        _ => {}
    }
    let (neg, signed, rest) = match s.as_bytes().first()? {
        b'+' => (false, true, &s[1..]),
        b'-' => (true, true, &s[1..]),
        _ => (false, false, s),
    };
    let digits = |t: &str| -> Option<i64> {
        if !t.is_empty() && t.len() <= 6 && t.bytes().all(|c| c.is_ascii_digit()) {
            t.parse().ok()
        } else {
            None
        }
    };
    let ylen = rest.bytes().position(|c| c == b'-')?;
    if !(ylen == 4 || signed && (4..=6).contains(&ylen)) {
        return None;
    }
    let y = digits(&rest[..ylen])?;
    let y = if neg { -y } else { y };
    let t = &rest[ylen..];
    let b = t.as_bytes();
    // "-MM-DDTHH:MM:SS" then "Z" or ".f{1,6}Z"
    if b.len() < 16 || b[0] != b'-' || b[3] != b'-' || b[6] != b'T' || b[9] != b':' || b[12] != b':'
    {
        return None;
    }
    let two =
        |r: std::ops::Range<usize>| t.get(r.clone()).filter(|x| x.len() == 2).and_then(digits);
    let (mo, d) = (two(1..3)?, two(4..6)?);
    let (h, mi, sec) = (two(7..9)?, two(10..12)?, two(13..15)?);
    // Only what `format_time` writes: a real day of the month ("2024-02-31" is no
    // date, as PostgreSQL says too) and no leap second.
    if !(1..=12).contains(&mo) || !(1..=31).contains(&d) || h > 23 || mi > 59 || sec > 59 {
        return None;
    }
    if civil_from_days(days_from_civil(y, mo as u32, d as u32)) != (y, mo as u32, d as u32) {
        return None;
    }
    let frac = match (b[15], b.len()) {
        (b'Z', 16) => 0,
        (b'.', n) if n > 17 && b[n - 1] == b'Z' && n - 17 <= 6 => {
            let digits = digits(t.get(16..n - 1)?)?;
            digits * 10i64.pow(6 - (n - 17) as u32)
        }
        _ => return None,
    };
    let days = days_from_civil(y, mo as u32, d as u32) as i128;
    let unix = (days * 86_400 + (h * 3600 + mi * 60 + sec) as i128) * 1_000_000 + frac as i128;
    i64::try_from(unix - PG_EPOCH_UNIX_US as i128).ok()
}

fn terms_json(terms: &[TermFreq]) -> Value {
    let mut m = Map::new();
    for t in terms {
        m.insert(t.term.to_string(), Value::from(t.tf));
    }
    Value::Object(m)
}

/// Appends `segs` as JSON, `[{"h":"…16 hex…","t":["term",…]},…]`, as serde_json
/// writes that value, without building it (a value tree of every term of every
/// segment took about 90 times the document).
fn write_segments(out: &mut String, doc: &Document, segs: &[Segment]) {
    out.push('[');
    for (i, s) in segs.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        out.push_str(&format!("{{\"h\":\"{:016x}\",\"t\":[", s.hash));
        for (j, &t) in s.terms.iter().enumerate() {
            if j > 0 {
                out.push(',');
            }
            let term = doc.terms.get(t as usize).map_or("", |x| x.term.as_str());
            out.push_str(&Value::from(term).to_string());
        }
        out.push_str("]}");
    }
    out.push(']');
}

/// The text output of `dedup.document`.
pub fn to_text(doc: &Document) -> String {
    let mut m = Map::new();
    m.insert("v".into(), Value::from(TEXT_VERSION));
    // Written when it is not 1 (0.1.0's analyser, which documents without it are).
    if doc.analyzer != 1 {
        m.insert("analyzer".into(), Value::from(doc.analyzer));
    }
    m.insert("words".into(), Value::from(doc.words));
    m.insert("images".into(), Value::from(doc.images));
    m.insert("links".into(), Value::from(doc.links));
    if let Some(t) = doc.published_at {
        m.insert("published_at".into(), Value::from(format_time(t)));
    }
    if let Some(s) = &doc.source {
        m.insert("source".into(), Value::from(s.clone()));
    }
    m.insert(
        "fingerprint".into(),
        Value::from(format!("{:032x}", doc.fingerprint)),
    );
    m.insert("terms".into(), terms_json(&doc.terms));
    m.insert("title".into(), terms_json(&doc.title_terms));
    m.insert(
        "numbers".into(),
        Value::Array(doc.numbers.iter().map(|n| Value::from(n.clone())).collect()),
    );
    // Placeholders: the segments are written in their place below.
    m.insert("sentences".into(), Value::Null);
    m.insert("paragraphs".into(), Value::Null);
    if let Some(t) = &doc.trigrams {
        let words = t
            .words()
            .map(|w| Value::from(w.iter().map(|k| format!("{k:04x}")).collect::<String>()));
        m.insert("trigrams".into(), Value::Array(words.collect()));
    }
    // The object as serde_json writes it (keys in order, no spaces).
    let mut out = String::new();
    out.push('{');
    for (i, (k, v)) in m.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        out.push_str(&Value::from(k.as_str()).to_string());
        out.push(':');
        match k.as_str() {
            "sentences" => write_segments(&mut out, doc, &doc.sentences),
            "paragraphs" => write_segments(&mut out, doc, &doc.paragraphs),
            _ => out.push_str(&v.to_string()),
        }
    }
    out.push('}');
    out
}

fn bad(msg: impl Into<String>) -> DedupError {
    DedupError::invalid_input(format!(
        "invalid input syntax for type dedup.document: {}",
        msg.into()
    ))
}

fn get_u32(m: &Map<String, Value>, key: &str) -> Result<u32> {
    match m.get(key) {
        None => Ok(0),
        Some(v) => v
            .as_u64()
            .and_then(|x| u32::try_from(x).ok())
            .ok_or_else(|| {
                bad(format!(
                    "\"{}\" must be a non-negative integer",
                    crate::error::excerpt(key)
                ))
            }),
    }
}

fn parse_terms(v: Option<&Value>, key: &str) -> Result<Vec<TermFreq>> {
    let Some(v) = v else { return Ok(Vec::new()) };
    let obj = v.as_object().ok_or_else(|| {
        bad(format!(
            "\"{}\" must be an object of term: count",
            crate::error::excerpt(key)
        ))
    })?;
    let mut out: Vec<TermFreq> = Vec::with_capacity(obj.len());
    for (term, tf) in obj {
        let tf = tf
            .as_u64()
            .and_then(|x| u32::try_from(x).ok())
            .filter(|&x| (1..=MAX_TF).contains(&x))
            .ok_or_else(|| {
                bad(format!(
                    "count of term \"{term}\" must be an integer from 1 to {MAX_TF}"
                ))
            })?;
        if term.is_empty() {
            return Err(bad("terms must not be empty strings"));
        }
        if term.contains('\0') {
            return Err(bad("terms must not hold the character U+0000"));
        }
        if term.len() > MAX_TERM_BYTES {
            let head: String = term.chars().take(16).collect();
            return Err(bad(format!(
                "term \"{head}...\" is longer than {MAX_TERM_BYTES} bytes"
            )));
        }
        out.push(TermFreq {
            term: term.as_str().into(),
            tf,
        });
    }
    // serde_json's map is a BTreeMap: sorted by bytes and unique already; keep the
    // check so a future `preserve_order` feature cannot break the invariant silently.
    out.sort_by(|a, b| a.term.cmp(&b.term));
    out.dedup_by(|a, b| a.term == b.term);
    Ok(out)
}

/// `sentences` or `paragraphs` from their raw JSON text, each term mapped to its
/// index in `terms` as it is read ([`SegmentsSeed`]).
fn parse_segments(
    v: Option<&serde_json::value::RawValue>,
    key: &str,
    terms: &[TermFreq],
) -> Result<Vec<Segment>> {
    use serde::de::DeserializeSeed;
    let Some(v) = v else { return Ok(Vec::new()) };
    let failed = std::cell::RefCell::new(None);
    let seed = SegmentsSeed {
        key,
        terms,
        failed: &failed,
    };
    let mut de = serde_json::Deserializer::from_str(v.get());
    let r = seed
        .deserialize(&mut de)
        .and_then(|segs| de.end().map(|()| segs));
    match (r, failed.into_inner()) {
        (_, Some(msg)) => Err(bad(msg)),
        (Ok(segs), None) => Ok(segs),
        (Err(e), None) => Err(bad(e.to_string())),
    }
}

/// Reads an array of `{"h": hex, "t": [term, …]}` into [`Segment`]s. A message of
/// ours goes to `failed` (serde_json would append a position to it), and the
/// parse stops with a placeholder error.
struct SegmentsSeed<'a> {
    key: &'a str,
    terms: &'a [TermFreq],
    failed: &'a std::cell::RefCell<Option<String>>,
}

impl SegmentsSeed<'_> {
    fn fail<E: serde::de::Error>(&self, msg: String) -> E {
        self.failed.borrow_mut().get_or_insert(msg);
        E::custom("invalid segment")
    }

    fn wrong_shape<E: serde::de::Error>(&self) -> E {
        self.fail(format!("\"{}\" must be an array", self.key))
    }
}

/// The visits of the JSON shapes a seed here does not accept (every scalar, and
/// `map` or `seq` as named): each fails with the seed's `wrong_shape` message.
macro_rules! refuse_shapes {
    ($($shape:ident),*) => {
        fn visit_bool<E: serde::de::Error>(self, _: bool) -> std::result::Result<Self::Value, E> {
            Err(self.wrong_shape())
        }
        fn visit_i64<E: serde::de::Error>(self, _: i64) -> std::result::Result<Self::Value, E> {
            Err(self.wrong_shape())
        }
        fn visit_u64<E: serde::de::Error>(self, _: u64) -> std::result::Result<Self::Value, E> {
            Err(self.wrong_shape())
        }
        fn visit_f64<E: serde::de::Error>(self, _: f64) -> std::result::Result<Self::Value, E> {
            Err(self.wrong_shape())
        }
        fn visit_str<E: serde::de::Error>(self, _: &str) -> std::result::Result<Self::Value, E> {
            Err(self.wrong_shape())
        }
        fn visit_unit<E: serde::de::Error>(self) -> std::result::Result<Self::Value, E> {
            Err(self.wrong_shape())
        }
        $(refuse_shapes!(@ $shape);)*
    };
    (@ map) => {
        fn visit_map<A: serde::de::MapAccess<'de>>(self, _: A) -> std::result::Result<Self::Value, A::Error> {
            Err(self.wrong_shape())
        }
    };
    (@ seq) => {
        fn visit_seq<A: serde::de::SeqAccess<'de>>(self, _: A) -> std::result::Result<Self::Value, A::Error> {
            Err(self.wrong_shape())
        }
    };
}

impl<'de> serde::de::DeserializeSeed<'de> for SegmentsSeed<'_> {
    type Value = Vec<Segment>;
    fn deserialize<D: serde::Deserializer<'de>>(
        self,
        d: D,
    ) -> std::result::Result<Self::Value, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> serde::de::Visitor<'de> for SegmentsSeed<'_> {
    type Value = Vec<Segment>;
    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        write!(f, "an array of segments")
    }
    refuse_shapes!(map);
    fn visit_seq<A: serde::de::SeqAccess<'de>>(
        self,
        mut seq: A,
    ) -> std::result::Result<Self::Value, A::Error> {
        // Capacity from the input's own hint only up to a bound: the vector grows
        // with what is actually read.
        let mut out = Vec::with_capacity(seq.size_hint().unwrap_or(0).min(1024));
        while let Some(seg) = seq.next_element_seed(SegmentSeed { of: &self })? {
            out.push(seg);
        }
        Ok(out)
    }
}

/// One segment object (see [`SegmentsSeed`]); keys other than `h` and `t` are
/// ignored.
struct SegmentSeed<'s, 'a> {
    of: &'s SegmentsSeed<'a>,
}

impl<'de> serde::de::DeserializeSeed<'de> for SegmentSeed<'_, '_> {
    type Value = Segment;
    fn deserialize<D: serde::Deserializer<'de>>(
        self,
        d: D,
    ) -> std::result::Result<Self::Value, D::Error> {
        d.deserialize_any(self)
    }
}

impl SegmentSeed<'_, '_> {
    fn wrong_shape<E: serde::de::Error>(&self) -> E {
        self.of
            .fail(format!("each of \"{}\" must be an object", self.of.key))
    }
}

impl<'de> serde::de::Visitor<'de> for SegmentSeed<'_, '_> {
    type Value = Segment;
    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        write!(f, "a segment object")
    }
    refuse_shapes!(seq);
    fn visit_map<A: serde::de::MapAccess<'de>>(
        self,
        mut map: A,
    ) -> std::result::Result<Self::Value, A::Error> {
        let key = self.of.key;
        let (mut h, mut t): (Option<Value>, Option<Vec<u32>>) = (None, None);
        while let Some(k) = map.next_key::<std::borrow::Cow<'de, str>>()? {
            match k.as_ref() {
                "h" => h = Some(map.next_value::<Value>()?),
                "t" => t = Some(map.next_value_seed(TermsSeed { of: self.of })?),
                _ => {
                    map.next_value::<serde::de::IgnoredAny>()?;
                }
            }
        }
        let Some(h) = h.as_ref().and_then(Value::as_str) else {
            return Err(self.of.fail(format!("{key}: \"h\" must be a hex string")));
        };
        let Ok(hash) = u64::from_str_radix(h, 16) else {
            return Err(self
                .of
                .fail(format!("{key}: bad hash \"{}\"", crate::error::excerpt(h))));
        };
        let Some(terms) = t else {
            return Err(self.of.fail(format!("{key}: \"t\" must be an array")));
        };
        Ok(Segment { hash, terms })
    }
}

/// A segment's `t`: term strings, each looked up among the document's terms.
struct TermsSeed<'s, 'a> {
    of: &'s SegmentsSeed<'a>,
}

impl<'de> serde::de::DeserializeSeed<'de> for TermsSeed<'_, '_> {
    type Value = Vec<u32>;
    fn deserialize<D: serde::Deserializer<'de>>(
        self,
        d: D,
    ) -> std::result::Result<Self::Value, D::Error> {
        d.deserialize_any(self)
    }
}

impl TermsSeed<'_, '_> {
    fn wrong_shape<E: serde::de::Error>(&self) -> E {
        self.of
            .fail(format!("{}: \"t\" must be an array", self.of.key))
    }
}

impl<'de> serde::de::Visitor<'de> for TermsSeed<'_, '_> {
    type Value = Vec<u32>;
    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        write!(f, "an array of terms")
    }
    refuse_shapes!(map);
    fn visit_seq<A: serde::de::SeqAccess<'de>>(
        self,
        mut seq: A,
    ) -> std::result::Result<Self::Value, A::Error> {
        let key = self.of.key;
        let mut idx = Vec::with_capacity(seq.size_hint().unwrap_or(0).min(1024));
        while let Some(v) = seq.next_element::<Value>()? {
            let Some(term) = v.as_str() else {
                return Err(self.of.fail(format!("{key}: terms must be strings")));
            };
            match self
                .of
                .terms
                .binary_search_by(|x| x.term.as_str().cmp(term))
            {
                Ok(i) => idx.push(i as u32),
                Err(_) => {
                    return Err(self.of.fail(format!(
                        "{key}: term \"{term}\" is not among the document's terms"
                    )))
                }
            }
        }
        Ok(idx)
    }
}

/// The text input of `dedup.document`. Errors are `InvalidInput` (22P02).
///
/// The object's values are first kept as raw JSON text: an unknown key is refused
/// before any value is parsed, and `sentences` and `paragraphs`, most of a
/// document's text (every term of every segment), are read straight into
/// [`Segment`]s ([`SegmentsSeed`]) rather than into a value tree, which took about
/// 90 times the input.
pub fn from_text(s: &str) -> Result<Document> {
    let raw: std::collections::BTreeMap<String, &serde_json::value::RawValue> =
        serde_json::from_str(s).map_err(|e| {
            match serde_json::from_str::<serde::de::IgnoredAny>(s) {
                Ok(_) => bad("expected a JSON object"),
                Err(_) => bad(e.to_string()),
            }
        })?;
    const KEYS: [&str; 14] = [
        "v",
        "analyzer",
        "words",
        "images",
        "links",
        "published_at",
        "source",
        "fingerprint",
        "terms",
        "title",
        "numbers",
        "sentences",
        "paragraphs",
        "trigrams",
    ];
    if let Some(k) = raw.keys().find(|k| !KEYS.contains(&k.as_str())) {
        return Err(bad(format!("unknown key \"{}\"", crate::error::excerpt(k))));
    }
    let mut m = Map::new();
    for (k, v) in &raw {
        if k != "sentences" && k != "paragraphs" {
            let v: Value = serde_json::from_str(v.get()).map_err(|e| bad(e.to_string()))?;
            m.insert(k.clone(), v);
        }
    }
    let m = &m;
    match m.get("v").and_then(Value::as_u64) {
        Some(v) if v == TEXT_VERSION as u64 => {}
        _ => return Err(bad(format!("\"v\" must be {TEXT_VERSION}"))),
    }
    let published_at = match m.get("published_at") {
        None | Some(Value::Null) => None,
        Some(Value::String(t)) => Some(
            parse_time(t)
                .ok_or_else(|| bad(format!("bad published_at \"{}\"", crate::error::excerpt(t))))?,
        ),
        Some(Value::Number(n)) => Some(n.as_i64().ok_or_else(|| bad("bad published_at"))?),
        Some(_) => return Err(bad("\"published_at\" must be a timestamp string")),
    };
    let source = match m.get("source") {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) if !s.contains('\0') => Some(s.clone()),
        Some(Value::String(_)) => return Err(bad("\"source\" must not hold the character U+0000")),
        Some(_) => return Err(bad("\"source\" must be a string")),
    };
    let fingerprint = match m.get("fingerprint") {
        None => 0,
        Some(Value::String(h)) if h.len() == 32 => {
            u128::from_str_radix(h, 16).map_err(|_| bad("\"fingerprint\" must be 32 hex digits"))?
        }
        Some(_) => return Err(bad("\"fingerprint\" must be 32 hex digits")),
    };
    let terms = parse_terms(m.get("terms"), "terms")?;
    let title_terms = parse_terms(m.get("title"), "title")?;
    let numbers = match m.get("numbers") {
        None => Vec::new(),
        Some(Value::Array(a)) => a
            .iter()
            .map(|n| match n {
                Value::String(s) if crate::document::is_number(s) => Ok(s.clone()),
                // A JSON number is taken as it prints, when that is a plain
                // decimal: 1e300 prints as "1e300", which the binary form does not
                // hold, so it is refused rather than turned into 301 digits.
                Value::Number(x) if crate::document::is_number(&x.to_string()) => Ok(x.to_string()),
                _ => Err(bad(format!(
                    "\"numbers\" must hold decimal numbers without an exponent, got {}",
                    crate::error::excerpt(&n.to_string())
                ))),
            })
            .collect::<Result<Vec<_>>>()?,
        Some(_) => return Err(bad("\"numbers\" must be an array")),
    };
    let sentences = parse_segments(raw.get("sentences").copied(), "sentences", &terms)?;
    let paragraphs = parse_segments(raw.get("paragraphs").copied(), "paragraphs", &terms)?;
    let analyzer = match m.get("analyzer") {
        None => 1,
        Some(v) => match v.as_u64().map(u16::try_from) {
            Some(Ok(a)) if a >= 1 => a,
            _ => return Err(bad("\"analyzer\" must be a version number from 1 to 65535")),
        },
    };
    let trigrams = match m.get("trigrams") {
        None | Some(Value::Null) => None,
        Some(Value::Array(words)) => Some(parse_trigrams(words)?),
        Some(_) => return Err(bad("\"trigrams\" must be an array of hex strings")),
    };
    Ok(Document {
        trigrams,
        analyzer,
        words: get_u32(m, "words")?,
        images: get_u32(m, "images")?,
        links: get_u32(m, "links")?,
        published_at,
        source,
        fingerprint,
        terms,
        title_terms,
        numbers,
        sentences,
        paragraphs,
    })
}

/// The trigram keys of the text form: one string per word, 4 hex digits per key,
/// in increasing order; as many words and keys as the binary form holds.
fn parse_trigrams(words: &[Value]) -> Result<crate::trigrams::Trigrams> {
    use crate::trigrams::{Trigrams, MAX_WORDS, MAX_WORD_KEYS};
    if words.len() > MAX_WORDS {
        return Err(bad(format!(
            "\"trigrams\" holds more than {MAX_WORDS} words"
        )));
    }
    let mut out = Trigrams::default();
    for w in words {
        let h = w
            .as_str()
            .filter(|h| {
                !h.is_empty() && h.len() % 4 == 0 && h.bytes().all(|c| c.is_ascii_hexdigit())
            })
            .ok_or_else(|| {
                bad("\"trigrams\" must hold one string of 4 hex digits per key for each word")
            })?;
        if h.len() / 4 > MAX_WORD_KEYS {
            return Err(bad(format!(
                "a word of \"trigrams\" holds more than {MAX_WORD_KEYS} keys"
            )));
        }
        let start = out.keys.len();
        for i in (0..h.len()).step_by(4) {
            let k = u16::from_str_radix(&h[i..i + 4], 16)
                .map_err(|_| bad("\"trigrams\" must be hex digits"))?;
            if out.keys.len() > start && out.keys.last().is_some_and(|&p| p >= k) {
                return Err(bad("each word of \"trigrams\" must be in increasing order"));
            }
            out.keys.push(k);
        }
        out.lens.push((out.keys.len() - start) as u8);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::document::codec_tests::{empty_head, put_var, sample, v2};

    #[test]
    fn text_round_trip() {
        let d = sample();
        let t = to_text(&d);
        assert_eq!(from_text(&t).unwrap(), d);
        assert!(t.contains("\"книг\":2"));
    }

    #[test]
    fn the_analyser_version_is_recorded_and_read_back() {
        use crate::document::{analyzer_of, ANALYZER_VERSION};
        let mut d = sample();
        // Version 1 is written as nothing: 0.1.0's bytes are unchanged.
        let one = d.encode();
        assert_eq!(
            (analyzer_of(&one), Document::decode(&one).unwrap().analyzer),
            (1, 1)
        );
        assert!(!to_text(&d).contains("analyzer"));
        assert_eq!(ANALYZER_VERSION, 2);
        for v in [2u16, 300, u16::MAX] {
            d.analyzer = v;
            let b = d.encode();
            assert_eq!(
                b.len(),
                one.len()
                    + if v < 128 {
                        1
                    } else if v < 16384 {
                        2
                    } else {
                        3
                    }
            );
            assert_eq!(analyzer_of(&b), v);
            assert_eq!(Document::decode(&b).unwrap(), d);
            let t = to_text(&d);
            assert!(t.contains(&format!("\"analyzer\":{v}")), "{t}");
            assert_eq!(from_text(&t).unwrap(), d);
        }
        assert!(from_text(r#"{"v":1,"analyzer":0}"#).is_err());
        assert!(from_text(r#"{"v":1,"analyzer":70000}"#).is_err());
        assert_eq!(from_text(r#"{"v":1,"analyzer":1}"#).unwrap().analyzer, 1);
        assert_eq!(analyzer_of(&[]), 1);
    }

    #[test]
    fn binary_rejects_what_the_text_form_rejects() {
        // tf 0, an empty term, a NUL byte, a number that is not a decimal: each refused by the
        // text form, so the binary form refuses them too (22P03).
        let one_term = |term: &[u8], tf: u64| {
            let mut b = empty_head();
            put_var(&mut b, 1);
            put_var(&mut b, 0);
            put_var(&mut b, term.len() as u64);
            b.extend_from_slice(term);
            put_var(&mut b, tf);
            b.extend_from_slice(&[0, 0, 0, 0]);
            v2(&b)
        };
        assert!(Document::decode(&one_term(b"a", 1)).is_ok());
        assert!(Document::decode(&one_term(b"a", MAX_TF as u64)).is_ok());
        // A count above MAX_TF (stored before the limit) reads capped.
        let capped = Document::decode(&one_term(b"a", u32::MAX as u64)).unwrap();
        assert_eq!(capped.terms[0].tf, MAX_TF);
        for b in [one_term(b"a", 0), one_term(b"", 1), one_term(b"a\0", 1)] {
            assert_eq!(Document::decode(&b).unwrap_err().sqlstate(), "22P03");
            assert_eq!(Document::skim(&b).unwrap_err().sqlstate(), "22P03");
        }
        for n in [&b""[..], b"1e300", b"+1", b"1.", b"abc", b"-", b"\xff"] {
            let mut b = empty_head();
            b.extend_from_slice(&[0, 0, 1]);
            put_var(&mut b, n.len() as u64);
            b.extend_from_slice(n);
            b.extend_from_slice(&[0, 0]);
            let b = v2(&b);
            assert_eq!(
                Document::decode(&b).unwrap_err().sqlstate(),
                "22P03",
                "{n:?}"
            );
            assert_eq!(Document::skim(&b).unwrap_err().sqlstate(), "22P03", "{n:?}");
        }
    }

    #[test]
    fn empty_document_round_trips() {
        let d = Document::default();
        assert_eq!(Document::decode(&d.encode()).unwrap(), d);
        assert_eq!(from_text(&to_text(&d)).unwrap(), d);
    }

    #[test]
    fn malformed_text_is_rejected() {
        for s in [
            "",
            "{",
            "[]",
            "{\"v\":2}",
            "{\"v\":1,\"x\":1}",
            "{\"v\":1,\"terms\":{\"a\":0}}",
            "{\"v\":1,\"terms\":{\"a\":-1}}",
            "{\"v\":1,\"terms\":{\"a\":2147483648}}",
            "{\"v\":1,\"numbers\":[\"1e5\"]}",
            "{\"v\":1,\"numbers\":[1e300]}",
            "{\"v\":1,\"numbers\":[1e-7]}",
            "{\"v\":1,\"numbers\":[100000000000000000000]}",
            "{\"v\":1,\"published_at\":\"+294278-01-01T00:00:00Z\"}",
            "{\"v\":1,\"sentences\":[{\"h\":\"1\",\"t\":[\"zz\"]}]}",
            "{\"v\":1,\"published_at\":\"yesterday\"}",
            "{\"v\":1,\"fingerprint\":\"xyz\"}",
            "{\"v\":1,\"terms\":{\"a\\u0000b\":1}}",
            "{\"v\":1,\"title\":{\"\\u0000\":1}}",
            "{\"v\":1,\"source\":\"\\u0000\"}",
        ] {
            let e = from_text(s).unwrap_err();
            assert_eq!(e.sqlstate(), "22P02", "{s}");
        }
        let at = format!(
            "{{\"v\":1,\"title\":{{\"{}\":1}}}}",
            "x".repeat(MAX_TERM_BYTES)
        );
        assert_eq!(
            from_text(&at).unwrap().title_terms[0].term.len(),
            MAX_TERM_BYTES
        );
        let over = format!(
            "{{\"v\":1,\"terms\":{{\"{}\":1}}}}",
            "x".repeat(MAX_TERM_BYTES + 1)
        );
        let e = from_text(&over).unwrap_err();
        assert_eq!(e.sqlstate(), "22P02");
        assert!(e.to_string().contains("longer than 128 bytes"), "{e}");
        let most = from_text("{\"v\":1,\"terms\":{\"a\":2147483647}}").unwrap();
        assert_eq!(most.terms[0].tf, MAX_TF);
    }

    #[test]
    fn time_round_trip() {
        for t in [
            0i64,
            1,
            -1,
            784_111_777_123_456,
            -946_684_800_000_000,
            86_399_999_999,
        ] {
            assert_eq!(parse_time(&format_time(t)), Some(t), "{t}");
        }
        assert_eq!(format_time(0), "2000-01-01T00:00:00Z");
    }

    /// xorshift64*: small, deterministic, no dependency.
    struct Rng(u64);

    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 >> 12;
            self.0 ^= self.0 << 25;
            self.0 ^= self.0 >> 27;
            self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
        }
        fn below(&mut self, n: u64) -> u64 {
            self.next() % n.max(1)
        }
        fn pick<T: Copy>(&mut self, xs: &[T]) -> T {
            xs[self.below(xs.len() as u64) as usize]
        }
        fn chance(&mut self, percent: u64) -> bool {
            self.below(100) < percent
        }
    }

    /// Timestamps at the edges: PostgreSQL's infinities, the ends of its finite
    /// range (4714-11-24 BC, astronomical year -4713, and 294276-12-31 AD), the ends of i64, the start of
    /// year 0 and of year 10000 (where the year's printed form changes).
    const EDGE_TIMES: [i64; 12] = [
        i64::MIN,
        i64::MIN + 1,
        i64::MAX,
        i64::MAX - 1,
        -211_813_488_000_000_000,
        9_223_371_331_199_999_999,
        -63_113_904_000_000_000,
        -63_113_904_000_000_001,
        252_455_615_999_999_999,
        252_455_616_000_000_000,
        0,
        -1,
    ];

    fn rand_time(r: &mut Rng) -> i64 {
        match r.below(4) {
            0 => r.pick(&EDGE_TIMES),
            1 => r.next() as i64,
            2 => (r.next() as i64) >> r.below(64),
            _ => (r.below(2_000_000_000) as i64 - 1_000_000_000) * 1_000_000,
        }
    }

    /// A term of 1..=MAX_TERM_BYTES bytes from a mix of scripts, quotes, escapes,
    /// control characters and 4-byte characters.
    fn rand_term(r: &mut Rng) -> String {
        const CHARS: [char; 16] = [
            'a', 'z', '0', 'к', 'ё', '"', '\\', '\u{1}', '\n', '\u{1f}', '\u{7f}', '€', '😀', ' ',
            '\u{fffd}', '東',
        ];
        let max = if r.chance(20) {
            MAX_TERM_BYTES as u64
        } else {
            12
        };
        let want = 1 + r.below(max) as usize;
        let mut t = String::new();
        while t.len() < want {
            let c = r.pick(&CHARS);
            if t.len() + c.len_utf8() > MAX_TERM_BYTES {
                break;
            }
            t.push(c);
        }
        if t.is_empty() {
            t.push('a');
        }
        t
    }

    fn rand_terms(r: &mut Rng) -> Vec<TermFreq> {
        let mut v: Vec<TermFreq> = (0..r.below(12))
            .map(|_| TermFreq {
                term: rand_term(r).into(),
                tf: if r.chance(10) {
                    MAX_TF
                } else {
                    1 + r.below(5) as u32
                },
            })
            .collect();
        v.sort_by(|a, b| a.term.cmp(&b.term));
        v.dedup_by(|a, b| a.term == b.term);
        v
    }

    fn rand_number(r: &mut Rng) -> String {
        let digits = |r: &mut Rng, n: u64| -> String {
            (0..n)
                .map(|_| char::from(b'0' + r.below(10) as u8))
                .collect()
        };
        let mut s = String::new();
        if r.chance(30) {
            s.push('-');
        }
        let max = if r.chance(10) { 60 } else { 6 };
        let n = 1 + r.below(max);
        s.push_str(&digits(r, n));
        if r.chance(40) {
            s.push('.');
            let n = 1 + r.below(8);
            s.push_str(&digits(r, n));
        }
        s
    }

    fn rand_segments(r: &mut Rng, n_terms: usize) -> Vec<Segment> {
        (0..r.below(5))
            .map(|_| Segment {
                hash: {
                    let x = r.next();
                    r.pick(&[0, u64::MAX, x])
                },
                terms: if n_terms == 0 {
                    Vec::new()
                } else {
                    (0..r.below(8))
                        .map(|_| r.below(n_terms as u64) as u32)
                        .collect()
                },
            })
            .collect()
    }

    fn rand_u32(r: &mut Rng) -> u32 {
        let (x, y) = (r.next() as u32, r.below(100) as u32);
        r.pick(&[0, 1, u32::MAX, x, y])
    }

    fn rand_document(r: &mut Rng) -> Document {
        let terms = rand_terms(r);
        let n = terms.len();
        Document {
            analyzer: 1 + r.below(3) as u16,
            title_terms: rand_terms(r),
            numbers: (0..r.below(5)).map(|_| rand_number(r)).collect(),
            sentences: rand_segments(r, n),
            paragraphs: rand_segments(r, n),
            terms,
            images: rand_u32(r),
            links: rand_u32(r),
            published_at: if r.chance(80) {
                Some(rand_time(r))
            } else {
                None
            },
            source: match r.below(4) {
                0 => None,
                1 => Some(String::new()),
                _ => Some(rand_term(r).repeat(1 + r.below(3) as usize)),
            },
            words: rand_u32(r),
            fingerprint: match r.below(3) {
                0 => 0,
                1 => u128::MAX,
                _ => (r.next() as u128) << 64 | r.next() as u128,
            },
            trigrams: match r.below(4) {
                0 => None,
                1 => Some(crate::trigrams::Trigrams::default()),
                _ => {
                    let mut t = crate::trigrams::Trigrams::default();
                    for _ in 0..r.below(6) {
                        let mut w: Vec<u16> = (0..1 + r.below(12))
                            .map(|_| {
                                let x = r.next() as u16;
                                r.pick(&[0, u16::MAX, x])
                            })
                            .collect();
                        w.sort_unstable();
                        w.dedup();
                        t.lens.push(w.len() as u8);
                        t.keys.extend(w);
                    }
                    Some(t)
                }
            },
        }
    }

    /// Both forms give back what they were given, and agree with each other.
    fn assert_round_trips(d: &Document) {
        let b = d.encode();
        assert_eq!(&Document::decode(&b).unwrap(), d, "binary");
        assert_eq!(
            Document::skim(&b).unwrap(),
            crate::document::Skim::of(d),
            "skim"
        );
        let t = to_text(d);
        assert_eq!(&from_text(&t).unwrap(), d, "text {t}");
        // The output is stable: printing what was read prints the same text.
        assert_eq!(to_text(&from_text(&t).unwrap()), t);
    }

    #[test]
    fn every_document_round_trips_through_both_forms() {
        let mut r = Rng(0x5eed_0000_d0c5_0001);
        assert_round_trips(&Document::default());
        assert_round_trips(&sample());
        for t in EDGE_TIMES {
            let d = Document {
                published_at: Some(t),
                ..sample()
            };
            assert_round_trips(&d);
        }
        for _ in 0..3000 {
            assert_round_trips(&rand_document(&mut r));
        }
        // Every analysed document, whatever the text.
        let opts = crate::text::AnalyzeOptions {
            lang: crate::text::Lang::Auto,
            min_word_length: 1,
        };
        for _ in 0..200 {
            let body: String = (0..r.below(60))
                .map(|_| match r.below(6) {
                    0 => ". ".to_string(),
                    1 => "\n\n".to_string(),
                    2 => rand_number(&mut r) + " ",
                    _ => rand_term(&mut r) + " ",
                })
                .collect();
            let t = r.pick(&EDGE_TIMES);
            let d = crate::text::analyze(&body, Some(&body), Some(t), Some("s"), &opts);
            assert_round_trips(&d);
        }
    }

    /// Edits of printed documents: whatever the parser accepts prints to a text it
    /// reads back as the same document, and encodes to bytes that decode to it.
    #[test]
    fn segments_of_the_wrong_shape_say_what_is_wrong() {
        let msg = |s: &str| {
            from_text(s)
                .err()
                .map(|e| e.to_string())
                .unwrap_or_default()
        };
        let terms = r#""terms":{"a":1}"#;
        for (seg, want) in [
            ("5", "\"sentences\" must be an array"),
            ("{}", "\"sentences\" must be an array"),
            ("null", "\"sentences\" must be an array"),
            ("[5]", "each of \"sentences\" must be an object"),
            ("[[]]", "each of \"sentences\" must be an object"),
            (r#"[{"t":[]}]"#, "sentences: \"h\" must be a hex string"),
            (r#"[{"h":"zz","t":[]}]"#, "sentences: bad hash \"zz\""),
            (r#"[{"h":"0"}]"#, "sentences: \"t\" must be an array"),
            (r#"[{"h":"0","t":{}}]"#, "sentences: \"t\" must be an array"),
            (r#"[{"h":"0","t":[5]}]"#, "sentences: terms must be strings"),
            (
                r#"[{"h":"0","t":["b"]}]"#,
                "sentences: term \"b\" is not among the document's terms",
            ),
        ] {
            let m = msg(&format!(r#"{{"v":1,{terms},"sentences":{seg}}}"#));
            assert!(m.ends_with(want), "{seg}: {m}");
        }
        let ok = from_text(&format!(
            r#"{{"v":1,{terms},"sentences":[{{"h":"ff","t":["a","a"],"x":[1]}}]}}"#
        ));
        assert_eq!(
            ok.ok().map(|d| d.sentences),
            Some(vec![Segment {
                hash: 255,
                terms: vec![0, 0]
            }])
        );
    }

    #[test]
    fn the_text_form_is_serde_jsons_own_compact_form() {
        // to_text writes the segments itself; the whole must read as serde_json
        // would write the same value (sorted keys, no spaces, its escapes).
        let mut r = Rng(0x5eed_0000_f0f0_0004);
        for _ in 0..2000 {
            let t = to_text(&rand_document(&mut r));
            let v: Value = serde_json::from_str(&t).unwrap_or_default();
            assert_eq!(v.to_string(), t);
        }
    }

    #[test]
    fn whatever_the_parser_accepts_round_trips() {
        let mut r = Rng(0x5eed_0000_7e47_0002);
        let mut accepted = 0;
        let hand = [
            r#"{"v":1}"#,
            r#"{"v":1,"numbers":[1e2, 3.50, -0, 12, "0.5", 18446744073709551615]}"#,
            r#"{"v":1,"published_at":"+2024-01-02T03:04:05.5Z"}"#,
            r#"{"v":1,"published_at":"-4713-11-24T00:00:00Z"}"#,
            r#"{"v":1,"published_at":"INFINITY"}"#,
            r#"{"v":1,"published_at":"+Infinity"}"#,
            r#"{"v":1,"published_at":-9223372036854775808}"#,
            r#"{"v":1,"published_at":null,"source":null}"#,
            r#"{"v":1,"fingerprint":"+0000000000000000000000000000001"}"#,
            r#"{"v":1,"terms":{"b":1,"a":2,"b":3},"sentences":[{"h":"+f","t":["a","b","a"]},{"h":"0","t":[]}]}"#,
            r#"{"paragraphs":[],"title":{"\u0001":1},"source":"","v":1,"words":0}"#,
        ];
        for s in hand {
            let d = from_text(s).unwrap_or_else(|e| panic!("{s}: {e}"));
            assert_round_trips(&d);
        }
        for _ in 0..3000 {
            let d = rand_document(&mut r);
            let mut chars: Vec<char> = to_text(&d).chars().collect();
            for _ in 0..1 + r.below(3) {
                if chars.is_empty() {
                    break;
                }
                let i = r.below(chars.len() as u64) as usize;
                const EDITS: [char; 14] = [
                    '0', '9', '-', '+', '.', 'e', '"', ',', '{', '}', '[', ']', ':', 'Z',
                ];
                match r.below(3) {
                    0 => {
                        chars.remove(i);
                    }
                    1 => chars[i] = r.pick(&EDITS),
                    _ => chars.insert(i, r.pick(&EDITS)),
                }
            }
            let s: String = chars.into_iter().collect();
            if let Ok(x) = from_text(&s) {
                accepted += 1;
                assert_round_trips(&x);
            }
        }
        // The edits keep a good share of the texts valid, so the check bites.
        assert!(accepted > 100, "{accepted}");
    }

    #[test]
    fn infinite_and_far_timestamps_print_and_parse() {
        assert_eq!(format_time(i64::MAX), "infinity");
        assert_eq!(format_time(i64::MIN), "-infinity");
        assert_eq!(
            format_time(-211_813_488_000_000_000),
            "-4713-11-24T00:00:00Z"
        );
        assert_eq!(
            format_time(9_223_371_331_199_999_999),
            "+294276-12-31T23:59:59.999999Z"
        );
        assert_eq!(
            format_time(252_455_616_000_000_000),
            "+10000-01-01T00:00:00Z"
        );
        assert_eq!(
            format_time(-63_113_904_000_000_001),
            "-0001-12-31T23:59:59.999999Z"
        );
        let mut r = Rng(0x5eed_0000_71e0_0003);
        for t in EDGE_TIMES
            .into_iter()
            .chain((0..20_000).map(|_| rand_time(&mut r)))
        {
            assert_eq!(
                parse_time(&format_time(t)),
                Some(t),
                "{t} {}",
                format_time(t)
            );
        }
        for bad in [
            "",
            "infinit",
            "2024-01-01",
            "24-01-01T00:00:00Z",
            "02024-01-01T00:00:00Z",
            "+1234567-01-01T00:00:00Z",
            "2024-13-01T00:00:00Z",
            "2024-01-01T00:00:00",
            "2024-01-01T00:00:00.1234567Z",
            "2024-01-01T00:00:00.Z",
            "2024-1-01T00:00:00Z",
            "+294278-01-01T00:00:00Z",
            "-292278-01-01T00:00:00Z",
            "2024-02-31T23:59:59Z",
            "2023-02-29T00:00:00Z",
            "2024-04-31T00:00:00Z",
            "2024-02-28T23:59:60Z",
        ] {
            assert_eq!(parse_time(bad), None, "{bad}");
        }
    }
}
