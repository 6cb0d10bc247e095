//! A row's primary key as text, the form `duplicate_of`, `find_original`, `pairs`,
//! `groups` and `dedup.rejected` give it.
//!
//! A single-column key is its column's text form (what `::text` gives). A key of
//! several columns (a partitioned table's key must hold the partition column) is
//! stored in `duplicate_of` as a value of a composite type `dedup.enable` creates,
//! whose fields are the key columns; its text is that composite value's text form,
//! `(5,2024-01-31)`, which [`composite`] builds from the fields' text forms exactly as
//! PostgreSQL's `record_out` does, so a key found by the trigger compares equal, as
//! text, to `duplicate_of::text`.

/// The text form of a composite value whose fields have the text forms `fields`
/// (none NULL: key columns are NOT NULL): `record_out`'s quoting, a field in double
/// quotes when it is empty or holds a double quote, a backslash, a parenthesis, a
/// comma or white space, with quotes and backslashes doubled inside.
pub fn composite(fields: &[&str]) -> String {
    let mut out = String::with_capacity(2 + fields.iter().map(|f| f.len() + 3).sum::<usize>());
    out.push('(');
    for (i, f) in fields.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        let quote = f.is_empty()
            || f.bytes().any(|b| {
                matches!(b, b'"' | b'\\' | b'(' | b')' | b',')
                    // isspace() in the C locale record_out runs under.
                    || matches!(b, b' ' | b'\t' | b'\n' | b'\r' | 0x0b | 0x0c)
            });
        if quote {
            out.push('"');
        }
        for c in f.chars() {
            if c == '"' || c == '\\' {
                out.push(c);
            }
            out.push(c);
        }
        if quote {
            out.push('"');
        }
    }
    out.push(')');
    out
}

/// The text form of a key with the text forms `fields`: the column's own for one
/// column, [`composite`] for several.
pub fn key_text(fields: &[&str]) -> String {
    match fields {
        [one] => (*one).to_owned(),
        _ => composite(fields),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_fields_are_not_quoted() {
        assert_eq!(composite(&["5", "2024-01-31"]), "(5,2024-01-31)");
        assert_eq!(key_text(&["5", "2024-01-31"]), "(5,2024-01-31)");
    }

    #[test]
    fn one_column_is_its_own_text() {
        assert_eq!(key_text(&["a b"]), "a b");
    }

    #[test]
    fn quoting_follows_record_out() {
        // SELECT ROW('a b', '', 'x,y', 'q"r', 'b\s', '(p)')::text in PostgreSQL 15.
        assert_eq!(
            composite(&["a b", "", "x,y", "q\"r", "b\\s", "(p)"]),
            r#"("a b","","x,y","q""r","b\\s","(p)")"#
        );
        assert_eq!(
            composite(&["2024-01-31 10:00:00+00", "7"]),
            "(\"2024-01-31 10:00:00+00\",7)"
        );
        assert_eq!(composite(&["ёж", "tab\there"]), "(ёж,\"tab\there\")");
    }
}
