//! `#[pg_test]`s for the glue: what crosses the Rust/PostgreSQL boundary.

#[cfg(any(test, feature = "pg_test"))]
#[pgrx::pg_schema]
mod tests {
    use crate::document::Document;
    use crate::pg::types::{DocumentDatum, SignatureDatum};
    use crate::text::{self, AnalyzeOptions, Lang};
    use pgrx::prelude::*;
    use pgrx::JsonB;

    const NEWS: &str =
        "Курс доллара вырос на 3,5%.\n\nОб этом сообщил ЦБ. Подробнее [здесь](https://x.ru).";

    #[pg_test]
    fn subxact_catches_listed_errors_and_rolls_back_the_others() {
        use pgrx::PgSqlErrorCode;
        Spi::run("CREATE TEMP TABLE sx (i int)").expect("create");
        // SAFETY: reads the backend's transaction nesting level.
        let level = || unsafe { pg_sys::GetCurrentTransactionNestLevel() };
        let before = level();
        // A listed error: caught, its work rolled back, the transaction goes on.
        let caught =
            crate::pg::subxact::catching(&[PgSqlErrorCode::ERRCODE_DIVISION_BY_ZERO], || {
                Spi::run("INSERT INTO sx VALUES (1)").expect("insert");
                Spi::run("SELECT 1 / 0")
            });
        assert!(caught.is_err_and(|m| m.contains("division by zero")));
        assert_eq!(level(), before);
        // Success: released into the transaction.
        let done = crate::pg::subxact::catching(&[], || Spi::run("INSERT INTO sx VALUES (2)"));
        assert!(done.is_ok());
        assert_eq!(level(), before);
        // Any other error is raised again after the subtransaction is rolled back,
        // so that whoever catches it is back at the transaction's own level.
        let other = pgrx::PgTryBuilder::new(|| {
            let _ =
                crate::pg::subxact::catching(&[PgSqlErrorCode::ERRCODE_DIVISION_BY_ZERO], || {
                    Spi::run("INSERT INTO sx VALUES (3)").expect("insert");
                    Spi::run("SELECT 'x'::int")
                });
            false
        })
        .catch_when(PgSqlErrorCode::ERRCODE_INVALID_TEXT_REPRESENTATION, |_| {
            true
        })
        .execute();
        assert!(other);
        assert_eq!(level(), before);
        let rows = Spi::get_one::<String>("SELECT string_agg(i::text, ',' ORDER BY i) FROM sx")
            .expect("read");
        assert_eq!(rows.as_deref(), Some("2"));
    }

    #[pg_test]
    fn to_document_equals_the_pure_analysis() -> Result<(), pgrx::spi::Error> {
        let d = Spi::get_one_with_args::<DocumentDatum>(
            "SELECT dedup.to_document($1)",
            &[NEWS.into()],
        )?
        .expect("a document");
        let opts = AnalyzeOptions {
            lang: Lang::Auto,
            min_word_length: 3,
        };
        assert_eq!(
            Document::decode(&d.0).expect("decodes"),
            text::analyze(NEWS, None, None, None, &opts)
        );
        Ok(())
    }

    /// Reading a document stored out of line or compressed frees the plain copy
    /// detoasting made: the pairs functions read one per row through one SPI
    /// connection, and kept copies grew it by the size of every pair's documents
    /// (6 GB over 100,000 pairs of one long document).
    #[pg_test]
    fn reading_a_toasted_document_leaves_no_copy_behind() -> Result<(), pgrx::spi::Error> {
        Spi::run("CREATE TABLE long_doc(doc dedup.document)")?;
        // One document of 600 distinct words (stored out of line), one of 3,000
        // words repeating (stored compressed).
        Spi::run(
            "INSERT INTO long_doc SELECT dedup.to_document(string_agg(md5(i::text), ' '), \
             lang => 'english') FROM generate_series(1, 600) i \
             UNION ALL SELECT dedup.to_document(string_agg('word' || i % 50, ' '), \
             lang => 'english') FROM generate_series(1, 3000) i",
        )?;
        Spi::connect(|c| {
            for row in 0..2 {
                let sql = format!("SELECT doc FROM long_doc OFFSET {row} LIMIT 1");
                let t = c.select(&sql, None, &[])?.first();
                let datum = t.get_datum_by_ordinal(1)?.expect("a document");
                let stored = datum.cast_mut_ptr::<pg_sys::varlena>();
                // SAFETY: a non-null varlena of the current tuple table.
                assert!(unsafe {
                    pgrx::varlena::varatt_is_1b_e(stored) || pgrx::varlena::varatt_is_4b_c(stored)
                });
                let mut cx = pgrx::PgMemoryContexts::new("reading documents");
                let ptr = cx.value();
                // SAFETY: a context just made, not deleted until `cx` drops.
                let allocated = || unsafe { pg_sys::MemoryContextMemAllocated(ptr, false) };
                // Fetching a value out of line leaves a block or two of its own
                // behind the first time; none grows with the rows read after it.
                let mut after_first = 0;
                for i in 0..50 {
                    if i == 1 {
                        after_first = allocated();
                    }
                    // SAFETY: a non-null dedup.document datum of the current tuple
                    // table, read in a context that outlives the call.
                    let d = unsafe {
                        cx.switch_to(|_| {
                            <DocumentDatum as pgrx::FromDatum>::from_polymorphic_datum(
                                datum,
                                false,
                                pg_sys::InvalidOid,
                            )
                        })
                    };
                    assert!(d.is_some_and(|d| d.0.len() > 2_000));
                }
                assert_eq!(allocated(), after_first);
            }
            Ok(())
        })
    }

    /// Rows of long documents are read a run of at most `chunks::RUN_BYTES` of
    /// documents at a time (64 kB in this build), not a batch at once: no row is
    /// lost or read twice where a run ends. Five documents of about 30 kB: runs of
    /// one pair, and of two rows.
    #[pg_test]
    fn runs_of_long_documents_read_every_row_once() -> Result<(), pgrx::spi::Error> {
        assert_eq!(crate::chunks::RUN_BYTES, 64 * 1024);
        Spi::run("SELECT dedup.create_collection('long')")?;
        Spi::run("CREATE TABLE long_docs (id int PRIMARY KEY, body text)")?;
        Spi::run("SELECT dedup.enable('long_docs', 'body', collection => 'long')")?;
        Spi::run(
            "INSERT INTO long_docs SELECT g, (SELECT string_agg(md5((i * g)::text), ' ') \
             FROM generate_series(1, 600) i) FROM generate_series(1, 5) g",
        )?;
        let long = Spi::get_one::<i64>(
            "SELECT count(*) FILTER (WHERE octet_length(dedup._document_send(dedup_doc)) \
             BETWEEN 25000 AND 40000) FROM long_docs",
        )?;
        assert_eq!(long, Some(5));
        let pairs = "SELECT a.dedup_doc, b.dedup_doc, a.id = 1, NULL::bool \
                     FROM long_docs a JOIN long_docs b ON b.id <> a.id";
        let fq = Spi::get_two::<i64, i64>(
            "SELECT total_pairs, duplicates FROM dedup.filter_quality($q$\
             SELECT a.dedup_doc, b.dedup_doc, 'long', a.id = 1 \
             FROM long_docs a JOIN long_docs b ON b.id <> a.id$q$)",
        )?;
        assert_eq!(fq, (Some(20), Some(4)));
        let ev = Spi::get_two::<i64, i64>(&format!(
            "SELECT tp + fp + fn_ + tn, tp + fn_ FROM dedup.evaluate('default', $q${pairs}$q$) \
             AS e(tp, fp, fn_, tn)"
        ))?;
        assert_eq!(ev, (Some(20), Some(4)));
        let trained = Spi::get_one::<JsonB>(&format!(
            "SELECT dedup.train('long_model', 'long', $q${pairs}$q$, '{{\"folds\": 2}}')"
        ))?
        .expect("a report");
        assert_eq!(trained.0["pairs"], 20);
        assert_eq!(trained.0["examples"], 20);
        assert_eq!(trained.0["positives"], 4);
        Spi::run("UPDATE long_docs SET dedup_sig = NULL")?;
        assert_eq!(
            Spi::get_one::<i64>("SELECT dedup.recompute('long')")?,
            Some(5)
        );
        assert_eq!(
            Spi::get_one::<i64>("SELECT count(dedup_sig) FROM long_docs")?,
            Some(5)
        );
        Ok(())
    }

    #[pg_test]
    fn min_word_length_guc_reaches_the_analysis() -> Result<(), pgrx::spi::Error> {
        Spi::run("SET dedup.min_word_length = 6")?;
        let t =
            Spi::get_one::<Vec<String>>("SELECT dedup.tokens('котик котенок')")?.expect("tokens");
        assert_eq!(t.len(), 1);
        Ok(())
    }

    #[pg_test]
    fn binary_send_is_the_stored_form() -> Result<(), pgrx::spi::Error> {
        let sent = Spi::get_one_with_args::<Vec<u8>>(
            "SELECT dedup._document_send(dedup.to_document($1))",
            &[NEWS.into()],
        )?
        .expect("bytes");
        let doc = Document::decode(&sent).expect("send output decodes");
        assert_eq!(doc.links, 1);
        Ok(())
    }

    #[pg_test]
    fn summary_has_exactly_the_documented_keys() -> Result<(), pgrx::spi::Error> {
        let JsonB(j) = Spi::get_one_with_args::<JsonB>(
            "SELECT dedup.summary(dedup.to_document($1))",
            &[NEWS.into()],
        )?
        .expect("json");
        let mut keys: Vec<&str> = j
            .as_object()
            .expect("object")
            .keys()
            .map(String::as_str)
            .collect();
        keys.sort();
        assert_eq!(
            keys,
            [
                "bytes",
                "images",
                "links",
                "numbers",
                "paragraphs",
                "published_at",
                "sentences",
                "source",
                "terms",
                "words"
            ]
        );
        Ok(())
    }

    #[pg_test(error = "invalid input syntax for type dedup.document: expected a JSON object")]
    fn malformed_literal_is_rejected() {
        let _ = Spi::get_one::<DocumentDatum>("SELECT '[1,2]'::dedup.document");
    }

    #[pg_test]
    fn aggregate_matches_the_accumulator() -> Result<(), pgrx::spi::Error> {
        Spi::run(
            "CREATE TEMP TABLE t AS SELECT dedup.to_document(x) AS d FROM \
             (VALUES ('Книги и книгами'), ('running runs книги'), ('')) v(x)",
        )?;
        let JsonB(j) =
            Spi::get_one::<JsonB>("SELECT dedup.term_stats_agg(d) FROM t")?.expect("json");
        assert_eq!(j["n_docs"], 3);
        assert_eq!(j["terms"]["книг"], serde_json::json!([2, 3]));
        assert_eq!(j["terms"]["run"], serde_json::json!([1, 2]));
        Ok(())
    }

    #[pg_test]
    fn stats_equal_recompute_after_adds_and_removes() -> Result<(), pgrx::spi::Error> {
        Spi::run("SELECT dedup.create_collection('t')")?;
        Spi::run(
            "CREATE TABLE docs AS SELECT i, dedup.to_document('слово' || (i % 7) || ' текст номер ' || i || ' word' || (i % 3)) AS d \
             FROM generate_series(1, 50) i",
        )?;
        Spi::run("SELECT dedup.add_document('t', d) FROM docs")?;
        Spi::run("SELECT dedup.remove_document('t', d) FROM docs WHERE i % 4 = 0")?;
        Spi::run("DELETE FROM docs WHERE i % 4 = 0")?;
        let before = Spi::get_one::<String>(
            "SELECT string_agg(term || ':' || df || ':' || cf, ',' ORDER BY term) FROM dedup.term_stats_by_name WHERE collection = 't'",
        )?;
        let n = Spi::get_one::<i64>("SELECT dedup.recompute('docs', 'd', 't')")?;
        assert_eq!(n, Some(38));
        let after = Spi::get_one::<String>(
            "SELECT string_agg(term || ':' || df || ':' || cf, ',' ORDER BY term) FROM dedup.term_stats_by_name WHERE collection = 't'",
        )?;
        assert_eq!(before, after);
        Ok(())
    }

    #[pg_test]
    fn signature_text_and_binary_round_trip() -> Result<(), pgrx::spi::Error> {
        let s = Spi::get_one::<SignatureDatum>("SELECT 'topwords:{3,1,2}'::dedup.signature")?
            .expect("sig");
        let sig = s.decode();
        assert_eq!(sig.keys, vec![1, 2, 3]);
        let text = Spi::get_one::<String>("SELECT 'topwords:{3,1,2}'::dedup.signature::text")?;
        assert_eq!(text.as_deref(), Some("topwords:{1,2,3}"));
        Ok(())
    }

    #[pg_test(error = "model \"missing\" does not exist")]
    fn unknown_model_is_42704() {
        let _ = Spi::get_one::<String>(
            "SELECT dedup.classify_pair('missing', '{\"v\":1}', '{\"v\":1}')::text",
        );
    }

    /// The backend cache of weighed documents changes no result: a pair compares the
    /// same cold, warm (from the cache) and with the cache off, and a version-1
    /// document (as written by the first release, keyed by all its bytes) compares
    /// like its version-2 form.
    #[pg_test]
    fn document_cache_and_format_1_change_no_result() -> Result<(), pgrx::spi::Error> {
        Spi::run("SELECT dedup.create_collection('cache_c')")?;
        Spi::run(
            "CREATE TEMP TABLE cd AS SELECT i, dedup.to_document(format('Новость %s о мосте. Мост построят к %s году. Жители рады.', i, 2020 + i)) AS d \
             FROM generate_series(1, 30) i",
        )?;
        Spi::run("SELECT dedup.recompute('cd', 'd', 'cache_c')")?;
        let a = Spi::get_one::<DocumentDatum>("SELECT d FROM cd WHERE i = 1")?.expect("a");
        let b = Spi::get_one::<DocumentDatum>("SELECT d FROM cd WHERE i = 2")?.expect("b");
        assert_eq!(a.0[0], crate::document::FORMAT_VERSION);
        let mut v1 = vec![crate::document::FORMAT_VERSION_1];
        v1.extend_from_slice(&a.0[crate::document::HEADER_LEN..]);
        let q = "SELECT dedup.compare($1, $2, 'cache_c')";
        let run = |x: &DocumentDatum| -> Result<Vec<f64>, pgrx::spi::Error> {
            Ok(
                Spi::get_one_with_args::<Vec<f64>>(q, &[x.clone().into(), b.clone().into()])?
                    .expect("features"),
            )
        };
        let cold = run(&a)?;
        let warm = run(&a)?;
        let old = run(&DocumentDatum(v1.clone()))?;
        let old_warm = run(&DocumentDatum(v1))?;
        Spi::run("SET dedup.document_cache_size = 0")?;
        let off = run(&a)?;
        Spi::run("RESET dedup.document_cache_size")?;
        // Bit for bit: the time features are NaN (unknown) here.
        let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<u64>>();
        assert_eq!(bits(&cold), bits(&warm));
        assert_eq!(bits(&cold), bits(&old));
        assert_eq!(bits(&cold), bits(&old_warm));
        assert_eq!(bits(&cold), bits(&off));
        // Same words, other numbers: text 0, numbers apart.
        assert_eq!(cold[0], 0.0);
        assert!(cold[2] > 0.0, "numbers_inclusion {}", cold[2]);
        Ok(())
    }

    #[pg_test]
    fn collection_row_read_directly_equals_the_query() -> Result<(), pgrx::spi::Error> {
        use crate::pg::stats_read::collection_state_both;
        Spi::run("SELECT dedup.create_collection('state_c')")?;
        let id = Spi::get_one::<i32>("SELECT id FROM dedup.collections WHERE name = 'state_c'")?
            .expect("collection id");
        let (direct, query) = collection_state_both(id);
        assert_eq!(direct, query);
        assert_eq!(direct.last_recompute, None);
        Spi::run(
            "CREATE TEMP TABLE sd AS SELECT dedup.to_document(format('Новость %s о мосте.', i)) AS d \
             FROM generate_series(1, 30) i",
        )?;
        Spi::run("SELECT dedup.recompute('sd', 'd', 'state_c')")?;
        Spi::run(
            "SELECT dedup.add_document('state_c', dedup.to_document('Ещё одна новость о мосте.'))",
        )?;
        let (direct, query) = collection_state_both(id);
        assert_eq!(direct, query);
        assert_eq!(direct.stats.n_docs, 31);
        assert_eq!(direct.changes, 1, "one document since the recompute");
        assert!(direct.last_recompute.is_some());
        // An unknown collection reads as empty both ways.
        let (direct, query) = collection_state_both(-5);
        assert_eq!(direct, query);
        assert_eq!(direct, Default::default());
        Ok(())
    }

    #[pg_test]
    fn whole_term_read_weighs_like_term_by_term() -> Result<(), pgrx::spi::Error> {
        use crate::pg::weigher::{clear_backend_cache, set_preload_limit};
        Spi::run("SELECT dedup.create_collection('preload_c')")?;
        Spi::run(
            "CREATE TEMP TABLE pd AS SELECT i, dedup.to_document(format('Новость %s о мосте через реку %s. Мост построят к %s году. Жители района %s рады.', i, i % 7, 2020 + i, i % 11)) AS d \
             FROM generate_series(1, 150) i",
        )?;
        Spi::run("SELECT dedup.recompute('pd', 'd', 'preload_c')")?;
        // "Вертолет" and "зоопарк" are in no document of the collection: df 0.
        let q = "SELECT array_agg(term || '=' || weight ORDER BY term) FROM dedup.weights(\
                 dedup.to_document('Мост и вертолет у зоопарка, 2021 год.'), 'preload_c')";
        let mut runs = Vec::new();
        for limit in [0, 300_000, 5] {
            clear_backend_cache();
            set_preload_limit(limit);
            runs.push(Spi::get_one::<Vec<String>>(q)?.expect("weights"));
            // And again from the backend cache.
            runs.push(Spi::get_one::<Vec<String>>(q)?.expect("weights"));
        }
        set_preload_limit(300_000);
        assert!(runs[0].iter().any(|w| w.starts_with("вертолет=")));
        // The whole read turns index scans off for its own query only.
        for setting in ["on", "off"] {
            Spi::run(&format!("SET enable_indexscan = {setting}"))?;
            clear_backend_cache();
            Spi::get_one::<Vec<String>>(q)?;
            assert_eq!(
                Spi::get_one::<String>("SELECT current_setting('enable_indexscan')")?.as_deref(),
                Some(setting)
            );
        }
        Spi::run("RESET enable_indexscan")?;
        for r in &runs[1..] {
            assert_eq!(r, &runs[0]);
        }
        Ok(())
    }

    #[pg_test]
    fn whole_term_read_of_a_term_with_a_newline_falls_back_to_term_by_term(
    ) -> Result<(), pgrx::spi::Error> {
        use crate::pg::weigher::{clear_backend_cache, set_preload_limit};
        // A hand-written document may hold a term with a newline, which the whole
        // read's newline-joined row cannot carry: the weights must still be right.
        Spi::run("SELECT dedup.create_collection('newline_c')")?;
        Spi::run(
            "SELECT dedup.add_document('newline_c', format('{\"v\":1,\"terms\":{\"мост\":1,\"река%s\":2}}', i)::dedup.document) \
             FROM generate_series(1, 120) i",
        )?;
        Spi::run(
            "SELECT dedup.add_document('newline_c', E'{\"v\":1,\"terms\":{\"a\\\\nb\":1,\"мост\":3}}'::dedup.document) \
             FROM generate_series(1, 3)",
        )?;
        let q = "SELECT array_agg(term || '=' || weight ORDER BY term) FROM dedup.weights(\
                 E'{\"v\":1,\"terms\":{\"a\\\\nb\":2,\"мост\":1,\"река7\":1}}'::dedup.document, 'newline_c')";
        let mut runs = Vec::new();
        for limit in [0, 300_000] {
            clear_backend_cache();
            set_preload_limit(limit);
            runs.push(Spi::get_one::<Vec<String>>(q)?.expect("weights"));
            runs.push(Spi::get_one::<Vec<String>>(q)?.expect("weights"));
        }
        set_preload_limit(300_000);
        assert_eq!(runs[0].len(), 3);
        for r in &runs[1..] {
            assert_eq!(r, &runs[0]);
        }
        Ok(())
    }
}
