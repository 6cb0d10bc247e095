//! Numbers written as words: the stems the analyser makes of cardinal numerals.
//!
//! Pure Rust, no pgrx. News writes small counts in words ("сбиты ещё три
//! беспилотника", "three people were hurt"), and two reports of one event that
//! differ in such a count are different facts. The analyser keeps those words as
//! stems, not as numbers, so [`key`] maps a stored stem back to the number's
//! [`digits_key`]; the pair features `numbers_own` and
//! `numbers_clash` count them with the digits a text holds. It reads stems only,
//! so documents stored by any analyser version get the same keys.
//!
//! Left out on purpose: stems shared with other words (Russian "сем" is "семь"
//! and "семья", "сто" is "сто" and "стоит"), "один" / "one" (mostly "one of"),
//! and scale words ("тысяч", "million"), which go with a number written in digits
//! ("3 тысячи" is already the number 3).

/// (stem, value) for the Russian and English snowball stems of cardinal numerals,
/// sorted by the stems' bytes.
const STEMS: &[(&str, &str)] = &[
    ("eight", "8"),
    ("eighteen", "18"),
    ("eighti", "80"),
    ("eleven", "11"),
    ("fifteen", "15"),
    ("fifti", "50"),
    ("five", "5"),
    ("forti", "40"),
    ("four", "4"),
    ("fourteen", "14"),
    ("nine", "9"),
    ("nineteen", "19"),
    ("nineti", "90"),
    ("seven", "7"),
    ("seventeen", "17"),
    ("seventi", "70"),
    ("six", "6"),
    ("sixteen", "16"),
    ("sixti", "60"),
    ("ten", "10"),
    ("thirteen", "13"),
    ("thirti", "30"),
    ("three", "3"),
    ("twelv", "12"),
    ("twenti", "20"),
    ("two", "2"),
    ("восем", "8"),
    ("восемнадца", "18"),
    ("восемнадцат", "18"),
    ("восемьдес", "80"),
    ("восьм", "8"),
    ("восьмидесят", "80"),
    ("два", "2"),
    ("двадца", "20"),
    ("двадцат", "20"),
    ("две", "2"),
    ("двенадца", "12"),
    ("двенадцат", "12"),
    ("двест", "200"),
    ("двум", "2"),
    ("двух", "2"),
    ("двухсот", "200"),
    ("девя", "9"),
    ("девян", "90"),
    ("девят", "9"),
    ("девятнадца", "19"),
    ("девятнадцат", "19"),
    ("деся", "10"),
    ("десят", "10"),
    ("одиннадца", "11"),
    ("одиннадцат", "11"),
    ("пят", "5"),
    ("пятидесят", "50"),
    ("пятисот", "500"),
    ("пятнадца", "15"),
    ("пятнадцат", "15"),
    ("пятьдес", "50"),
    ("пятьсот", "500"),
    ("семидесят", "70"),
    ("семнадца", "17"),
    ("семнадцат", "17"),
    ("семьдес", "70"),
    ("сорок", "40"),
    ("трем", "3"),
    ("трех", "3"),
    ("трехсот", "300"),
    ("три", "3"),
    ("тридца", "30"),
    ("тридцат", "30"),
    ("тринадца", "13"),
    ("тринадцат", "13"),
    ("трист", "300"),
    ("четыр", "4"),
    ("четырест", "400"),
    ("четырех", "4"),
    ("четырехсот", "400"),
    ("четырнадца", "14"),
    ("четырнадцат", "14"),
    ("четырьм", "4"),
    ("шест", "6"),
    ("шестидесят", "60"),
    ("шестнадца", "16"),
    ("шестнадцат", "16"),
    ("шестьдес", "60"),
];

/// A number's significant digits, hashed: its digits without sign, decimal point,
/// leading or trailing zeros, so that the same amount written at another scale
/// ("3 000 ₽" and "3 тыс. рублей", "4 800" and "4,8 тысячи") has one key. Two texts
/// whose numbers differ even so report different facts.
pub fn digits_key(n: &str) -> u64 {
    let d: Vec<u8> = n.bytes().filter(u8::is_ascii_digit).collect();
    let start = d.iter().position(|&c| c != b'0').unwrap_or(d.len());
    let end = d.iter().rposition(|&c| c != b'0').map_or(start, |i| i + 1);
    xxhash_rust::xxh3::xxh3_64_with_seed(&d[start..end], 1)
}

/// The [`digits_key`] of the number a stored stem names, when it
/// is a cardinal numeral of [`STEMS`].
pub fn key(term: &[u8]) -> Option<u64> {
    key_of_hash(xxhash_rust::xxh3::xxh3_64(term))
}

/// [`key`] of the term whose xxh3-64 hash is `h` (the hash features and skims
/// already have): a binary search of 84 integers, about 5 ns. A looked-up
/// stem-by-bytes search took 67 ns a term (comparisons of byte strings), a fifth of
/// `features::Prepared::new` on a 500-word document.
pub fn key_of_hash(h: u64) -> Option<u64> {
    let table = TABLE.get_or_init(|| {
        let mut t: Vec<(u64, u64)> = STEMS
            .iter()
            .map(|(s, v)| (xxhash_rust::xxh3::xxh3_64(s.as_bytes()), digits_key(v)))
            .collect();
        t.sort_unstable();
        t
    });
    table
        .binary_search_by_key(&h, |&(k, _)| k)
        .ok()
        .map(|i| table[i].1)
}

/// (stem hash, digits key), sorted by hash: [`STEMS`] as [`key_of_hash`] reads it.
static TABLE: std::sync::OnceLock<Vec<(u64, u64)>> = std::sync::OnceLock::new();

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numerals_name_their_numbers() {
        assert_eq!(key("три".as_bytes()), Some(digits_key("3")));
        assert_eq!(key("восьм".as_bytes()), Some(digits_key("8")));
        assert_eq!(key(b"twenti"), Some(digits_key("20")));
        // "20" and "2" share their significant digits, as in `numbers_conflict`.
        assert_eq!(key("двадца".as_bytes()), key("два".as_bytes()));
        assert_ne!(key("три".as_bytes()), key("пят".as_bytes()));
    }

    #[test]
    fn other_terms_have_no_key() {
        for t in [
            "сем",
            "сто",
            "один",
            "одн",
            "тысяч",
            "семья",
            "пятниц",
            "",
            "a",
        ] {
            assert_eq!(key(t.as_bytes()), None, "{t}");
        }
        assert_eq!(key(b"one"), None);
        assert_eq!(key(&[0xff; 40]), None);
    }

    #[test]
    fn every_stem_is_found_and_distinct() {
        assert!(STEMS
            .windows(2)
            .all(|w| w[0].0.as_bytes() < w[1].0.as_bytes()));
        assert!(STEMS.iter().all(|(s, _)| key(s.as_bytes()).is_some()));
        let t = TABLE.get().expect("built by the lookups above");
        assert!(
            t.windows(2).all(|w| w[0].0 < w[1].0),
            "two stems share a hash"
        );
    }
}
