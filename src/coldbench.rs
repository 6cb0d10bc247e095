//! Micro-benchmark of the trigger's cold path in pure Rust: analysing a document,
//! decoding a stored one, weighing it and preparing it for comparison. It prints
//! per-document times and asserts nothing about them; run it with
//! `cargo test --release --lib coldbench -- --ignored --nocapture`.

#[cfg(test)]
mod tests {
    use std::time::Instant;

    use crate::document::Document;
    use crate::features::{Prepared, Side};
    use crate::text::{analyze, AnalyzeOptions, Lang};
    use crate::weights::{term_weights, CollectionStats, Params, TermStat, Weighting};

    /// ~850-word texts of Cyrillic and Latin pseudo-words with a Zipf-like spread.
    fn texts(n: usize) -> Vec<String> {
        let mut seed = 0x2545f4914f6cdd1du64;
        let mut next = move |m: u64| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed % m.max(1)
        };
        let cyr: Vec<char> = "абвгдежзиклмнопрстуфхцчшщыэюя".chars().collect();
        let lat: Vec<char> = "abcdefghiklmnoprstuvwxyz".chars().collect();
        let vocab: Vec<String> = (0..20_000)
            .map(|i| {
                let abc = if i % 4 == 0 { &lat } else { &cyr };
                let len = 3 + next(10) as usize;
                (0..len)
                    .map(|_| abc[next(abc.len() as u64) as usize])
                    .collect()
            })
            .collect();
        (0..n)
            .map(|_| {
                let mut s = String::new();
                for p in 0..8 {
                    for w in 0..106 {
                        // Zipf-ish: small indices far more often.
                        let r = next(1 << 20) as f64 / (1u64 << 20) as f64;
                        let idx = ((vocab.len() as f64).powf(r) as usize).min(vocab.len() - 1);
                        s.push_str(&vocab[idx]);
                        if w % 13 == 12 {
                            s.push_str(". ");
                        } else if w % 29 == 3 {
                            s.push_str(&format!(" {} ", next(5000)));
                        } else {
                            s.push(' ');
                        }
                    }
                    if p < 7 {
                        s.push_str("\n\n");
                    }
                }
                s
            })
            .collect()
    }

    fn per_doc(label: &str, n: usize, t: Instant) {
        println!(
            "{label:<28} {:>8.1} us/doc",
            t.elapsed().as_secs_f64() * 1e6 / n as f64
        );
    }

    #[test]
    #[ignore]
    fn coldbench() {
        // COLDBENCH_TEXTS names a file of texts separated by ASCII record separators
        // (0x1E), to measure real documents instead of the synthetic ones.
        let texts = match std::env::var("COLDBENCH_TEXTS") {
            Ok(path) => std::fs::read_to_string(path)
                .expect("COLDBENCH_TEXTS is readable")
                .split('\u{1e}')
                .filter(|t| !t.trim().is_empty())
                .map(str::to_owned)
                .collect(),
            Err(_) => texts(400),
        };
        let opts = AnalyzeOptions {
            lang: Lang::Auto,
            min_word_length: 2,
        };
        // Warm the stem memo, as a long-running backend has it.
        for t in &texts {
            analyze(t, None, None, None, &opts);
        }
        let t = Instant::now();
        let docs: Vec<Document> = texts
            .iter()
            .map(|x| analyze(x, None, None, None, &opts))
            .collect();
        per_doc("analyze (memo warm)", docs.len(), t);
        let terms: usize = docs.iter().map(|d| d.terms.len()).sum();
        println!("mean distinct terms: {}", terms / docs.len());

        let t = Instant::now();
        let bytes: Vec<Vec<u8>> = docs.iter().map(Document::encode).collect();
        per_doc("encode", docs.len(), t);

        let t = Instant::now();
        let decoded: Vec<Document> = bytes.iter().map(|b| Document::decode(b).unwrap()).collect();
        per_doc("decode", docs.len(), t);

        let mut map: std::collections::HashMap<String, TermStat, foldhash::fast::RandomState> =
            Default::default();
        for d in &docs {
            for x in &d.terms {
                let e = map.entry(x.term.to_string()).or_default();
                e.df += 1;
                e.cf += x.tf as i64;
            }
        }
        let coll = CollectionStats {
            n_docs: 100_000,
            total_len: 100_000 * 700,
        };
        let params = Params::new(Weighting::Bm25, 1.2, 0.75).unwrap();
        let t = Instant::now();
        let weights: Vec<Vec<f64>> = decoded
            .iter()
            .map(|d| {
                let stats: Vec<TermStat> = d
                    .terms
                    .iter()
                    .map(|x| map.get(x.term.as_str()).copied().unwrap_or_default())
                    .collect();
                term_weights(&d.terms, d.length() as i64, &coll, &stats, &params)
            })
            .collect();
        per_doc("lookup + weights", docs.len(), t);

        let t = Instant::now();
        let preps: Vec<Prepared> = decoded
            .iter()
            .zip(&weights)
            .map(|(d, w)| {
                Prepared::new(&Side {
                    doc: d,
                    weights: w,
                    title_weights: &[],
                    authority: 0.0,
                })
            })
            .collect();
        per_doc("Prepared::new", docs.len(), t);

        let t = Instant::now();
        drop(preps);
        drop(weights);
        drop(decoded);
        per_doc("drop", docs.len(), t);
    }
}
