//! Numbers in visible text, normalised to plain decimal strings.
//!
//! Rules (one left-to-right pass, linear in the text length):
//! - a digit run directly after a letter or `_` is part of a word ("covid19",
//!   "mp3", "v1.2") and is not a number; a digit run followed by letters is
//!   ("2024г" → "2024", "5G" → "5"), since that is a quantity with a unit;
//! - thousands: groups of exactly three digits after a first group of 1–3 digits,
//!   joined by a space, NBSP, thin or narrow no-break space ("1 000 000"), by commas
//!   ("1,000,000"; an ambiguous "1,234" counts as thousands) or by dots when there
//!   are two or more ("1.000.000");
//! - decimals: `.` or `,` followed by digits ("3,5" = "3.5"), also after thousands;
//! - two or more dots between digit groups that are not thousands are separate
//!   numbers: dates "12.03.2024" → "12", "3", "2024", versions, IP addresses;
//! - anything else (`:`, `-`, `/`, `%`) ends a number: "09:45" → "9", "45",
//!   "5%" → "5", "10-15" → "10", "15";
//! - a leading `-` or `−` counts only when it is at the start or after whitespace;
//! - normal form: no leading zeros in the integer part (but "0"), no trailing zeros
//!   in the fraction, no trailing dot, no "-0".

/// Appends the numbers of `text` to `out`, in text order.
pub(crate) fn scan(text: &str, out: &mut Vec<String>) {
    let b = text.as_bytes();
    let mut i = 0;
    while i < b.len() {
        if !b[i].is_ascii_digit() {
            i += 1;
            continue;
        }
        // `i` is at an ASCII byte, so it is a char boundary.
        let prev = text[..i].chars().next_back();
        if prev.is_some_and(|p| p.is_alphabetic() || p == '_') {
            i = skip_glued(b, i);
            continue;
        }
        i = number_at(text, i, out);
    }
}

fn digits_end(b: &[u8], mut i: usize) -> usize {
    while i < b.len() && b[i].is_ascii_digit() {
        i += 1;
    }
    i
}

fn digit_at(b: &[u8], i: usize) -> bool {
    b.get(i).is_some_and(u8::is_ascii_digit)
}

/// Skips the rest of a word-internal digit run such as "19" in "covid19" or
/// "1.2.3" in "v1.2.3".
fn skip_glued(b: &[u8], mut i: usize) -> usize {
    loop {
        i = digits_end(b, i);
        if matches!(b.get(i), Some(b'.' | b',')) && digit_at(b, i + 1) {
            i += 1;
        } else {
            return i;
        }
    }
}

/// Length in bytes of a thousands separator (space, NBSP, thin space, narrow NBSP)
/// at `i`, or 0.
fn space_sep_len(b: &[u8], i: usize) -> usize {
    match b.get(i..) {
        Some([b' ', ..]) => 1,
        Some([0xC2, 0xA0, ..]) => 2,
        Some([0xE2, 0x80, 0x89 | 0xAF, ..]) => 3,
        _ => 0,
    }
}

/// True if exactly three digits start at `i` and no digit follows them.
fn group3_at(b: &[u8], i: usize) -> bool {
    digits_end(b, i) == i + 3
}

fn negative_before(text: &str, i: usize) -> bool {
    let before = &text[..i];
    let rest = if let Some(r) = before.strip_suffix('-') {
        r
    } else if let Some(r) = before.strip_suffix('\u{2212}') {
        r
    } else {
        return false;
    };
    rest.chars().next_back().is_none_or(char::is_whitespace)
}

/// Parses the number starting at digit `i`, pushes its normalised form(s) and
/// returns the index just after it.
fn number_at(text: &str, i: usize, out: &mut Vec<String>) -> usize {
    let b = text.as_bytes();
    let neg = negative_before(text, i);
    let int_end = digits_end(b, i);
    let first_len = int_end - i;
    let mut int = String::new();
    int.push_str(&text[i..int_end]);
    let mut j = int_end;
    let mut frac = "";

    if b.get(j) == Some(&b'.') && digit_at(b, j + 1) {
        // Collect dot-separated groups: one dot is a decimal, more are thousands or
        // a list (date, version, address).
        let mut groups = vec![(i, int_end)];
        let mut k = j;
        while b.get(k) == Some(&b'.') && digit_at(b, k + 1) {
            let e = digits_end(b, k + 1);
            groups.push((k + 1, e));
            k = e;
        }
        if groups.len() == 2 {
            frac = &text[groups[1].0..groups[1].1];
            j = k;
        } else if first_len <= 3 && groups[1..].iter().all(|(s, e)| e - s == 3) {
            for (s, e) in &groups[1..] {
                int.push_str(&text[*s..*e]);
            }
            j = k;
            if b.get(j) == Some(&b',') && digit_at(b, j + 1) {
                let e = digits_end(b, j + 1);
                frac = &text[j + 1..e];
                j = e;
            }
        } else {
            for (s, e) in groups {
                out.push(normalise(false, &text[s..e], ""));
            }
            return k;
        }
    } else if b.get(j) == Some(&b',') && digit_at(b, j + 1) {
        if first_len <= 3 && group3_at(b, j + 1) {
            while b.get(j) == Some(&b',') && group3_at(b, j + 1) {
                int.push_str(&text[j + 1..j + 4]);
                j += 4;
            }
            if b.get(j) == Some(&b'.') && digit_at(b, j + 1) {
                let e = digits_end(b, j + 1);
                frac = &text[j + 1..e];
                j = e;
            }
        } else {
            let e = digits_end(b, j + 1);
            frac = &text[j + 1..e];
            j = e;
        }
    } else if first_len <= 3 {
        let mut sep = space_sep_len(b, j);
        if sep > 0 && group3_at(b, j + sep) {
            while sep > 0 && group3_at(b, j + sep) {
                int.push_str(&text[j + sep..j + sep + 3]);
                j += sep + 3;
                sep = space_sep_len(b, j);
            }
            if matches!(b.get(j), Some(b'.' | b',')) && digit_at(b, j + 1) {
                let e = digits_end(b, j + 1);
                frac = &text[j + 1..e];
                j = e;
            }
        }
    }
    out.push(normalise(neg, &int, frac));
    j
}

/// Builds the normal form from ASCII digit strings.
fn normalise(neg: bool, int: &str, frac: &str) -> String {
    let int = int.trim_start_matches('0');
    let frac = frac.trim_end_matches('0');
    let mut s = String::with_capacity(int.len() + frac.len() + 3);
    if neg && !(int.is_empty() && frac.is_empty()) {
        s.push('-');
    }
    s.push_str(if int.is_empty() { "0" } else { int });
    if !frac.is_empty() {
        s.push('.');
        s.push_str(frac);
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn nums(s: &str) -> Vec<String> {
        let mut v = Vec::new();
        scan(s, &mut v);
        v
    }

    macro_rules! cases {
        ($($name:ident: $input:expr => [$($want:expr),*];)*) => {$(
            #[test]
            fn $name() {
                let want: Vec<String> = vec![$($want.to_string()),*];
                assert_eq!(nums($input), want, "input {:?}", $input);
            }
        )*};
    }

    cases! {
        integer: "в 2024 году" => ["2024"];
        leading_zeros: "007 и 0 и 000" => ["7", "0", "0"];
        decimal_dot: "курс 3.5 и 3.50 и 2.0" => ["3.5", "3.5", "2"];
        decimal_comma: "рост 3,5% и 3,50" => ["3.5", "3.5"];
        thousands_space: "1 000 000 рублей" => ["1000000"];
        thousands_nbsp: "1\u{a0}000 и 15\u{2009}500 и 7\u{202f}000" => ["1000", "15500", "7000"];
        thousands_comma: "1,000,000 people" => ["1000000"];
        thousands_comma_ambiguous: "1,234" => ["1234"];
        thousands_then_decimal: "1,234.50 и 1 000,25 и 1.000.000,5" => ["1234.5", "1000.25", "1000000.5"];
        big_first_group_is_decimal: "1234,567" => ["1234.567"];
        four_digits_not_grouped: "в 2024 100 человек" => ["2024", "100"];
        percent: "5% и 12.5 %" => ["5", "12.5"];
        date: "12.03.2024" => ["12", "3", "2024"];
        version_and_ip: "192.168.0.1" => ["192", "168", "0", "1"];
        time: "в 09:45:07" => ["9", "45", "7"];
        negative: "-5 и t -3,5 и −7" => ["-5", "-3.5", "-7"];
        not_negative: "10-15 и a-5 и (-2)" => ["10", "15", "5", "2"];
        minus_zero: "-0 и -0.00" => ["0", "0"];
        trailing_dot: "было 3. Потом" => ["3"];
        glued_to_word: "covid19 и mp3 и v1.2.3 и x_2" => [];
        covid_dash: "covid-19" => ["19"];
        unit_suffix: "2024г и 5G и 100км" => ["2024", "5", "100"];
        phone: "+7 (999) 123-45-67" => ["7", "999", "123", "45", "67"];
        enumeration: "1, 2, 3" => ["1", "2", "3"];
        none: "нет чисел, no numbers" => [];
    }

    #[test]
    fn huge_number_is_one_string() {
        let s = "9".repeat(100_000);
        let v = nums(&format!("x {s} y"));
        assert_eq!(v.len(), 1);
        assert_eq!(v[0], s);
        let zeros = format!("{}1", "0".repeat(100_000));
        assert_eq!(nums(&zeros), vec!["1".to_string()]);
    }

    #[test]
    fn long_group_chains_are_linear() {
        // 100k three-digit groups: each byte is looked at a bounded number of times.
        let s = format!("1{}", " 000".repeat(100_000));
        let v = nums(&s);
        assert_eq!(v.len(), 1);
        assert_eq!(v[0].len(), 300_001);
        let dots = "1.".repeat(100_000);
        assert_eq!(nums(&dots).len(), 100_000);
    }
}
