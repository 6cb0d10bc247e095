//! End-to-end tests of the public text API: tokens, analyze, fingerprint, numbers.

use super::*;

fn opts(lang: Lang, min: usize) -> AnalyzeOptions {
    AnalyzeOptions {
        lang,
        min_word_length: min,
    }
}

const AUTO: AnalyzeOptions = AnalyzeOptions {
    lang: Lang::Auto,
    min_word_length: 1,
};

fn doc(body: &str) -> Document {
    analyze(body, None, None, None, &AUTO)
}

/// Checks the invariants `document.rs` states.
fn check_invariants(d: &Document) {
    for list in [&d.terms, &d.title_terms] {
        for w in list.windows(2) {
            assert!(
                w[0].term.as_bytes() < w[1].term.as_bytes(),
                "unsorted: {w:?}"
            );
        }
        assert!(list.iter().all(|t| t.tf >= 1 && !t.term.is_empty()));
        assert!(list
            .iter()
            .all(|t| t.term.len() <= crate::document::MAX_TERM_BYTES));
    }
    for s in d.sentences.iter().chain(&d.paragraphs) {
        assert!(!s.terms.is_empty());
        assert!(s.terms.iter().all(|&i| (i as usize) < d.terms.len()));
    }
    let in_sentences: usize = d.sentences.iter().map(|s| s.terms.len()).sum();
    let in_paragraphs: usize = d.paragraphs.iter().map(|s| s.terms.len()).sum();
    assert_eq!(in_sentences as u64, d.length());
    assert_eq!(in_paragraphs as u64, d.length());
    assert!(d.length() <= u64::from(d.words));
}

#[test]
fn required_example() {
    let t = tokens("Книги и книгами, running runs", &opts(Lang::Auto, 3));
    assert_eq!(t, ["книг", "книг", "run", "run"]);
}

#[test]
fn zero_width_spaces_inside_words_are_not_breaks() {
    let o = opts(Lang::Auto, 3);
    let plain = "Курс доллара вырос до 92 рублей";
    let sprinkled = "Ку\u{200B}рс до\u{200B}ллара выр\u{200B}ос до 9\u{200B}2 рублей\u{200B}";
    assert_eq!(tokens(sprinkled, &o), tokens(plain, &o));
    assert_eq!(fingerprint(sprinkled), fingerprint(plain));
    assert_eq!(numbers(sprinkled), numbers(plain));
    assert_eq!(doc(sprinkled).terms, doc(plain).terms);
}

/// The same visible text written with other bytes: decomposed letters (PDF
/// extraction, macOS), "fancy text" and full-width letters, Latin look-alikes in
/// Cyrillic words and Cyrillic ones in Latin words.
#[test]
fn one_visible_text_is_one_document() {
    let plain = "Пётр Иванович купил новый Cybertruck за 92 тысячи: мой день, PHOTO";
    let variants = [
        // NFD: й and ё decomposed.
        "Пе\u{308}тр Иванович купил новыи\u{306} Cybertruck за 92 тысячи: мои\u{306} день, PHOTO",
        // Homoglyphs both ways.
        "Пётр Ивaнoвич купил нoвый Сybertruck зa 92 тысячи: мoй дeнь, PHOTO",
        // Mathematical bold and full-width letters.
        "Пётр Иванович купил новый 𝐂𝐲𝐛𝐞𝐫𝐭𝐫𝐮𝐜𝐤 за ９２ тысячи: мой день, ＰＨＯＴＯ",
        // Direction marks, variation selectors and other invisible characters.
        "Пё\u{200E}тр Ива\u{FE0F}нович ку\u{2063}пил но\u{34F}вый Cybertruck за 92 тысячи: мой де\u{180E}нь, PHOTO",
    ];
    let o = opts(Lang::Auto, 3);
    for v in variants {
        assert_eq!(tokens(v, &o), tokens(plain, &o), "{v}");
        assert_eq!(fingerprint(v), fingerprint(plain), "{v}");
        assert_eq!(numbers(v), numbers(plain), "{v}");
        let (a, b) = (doc(v), doc(plain));
        assert_eq!(a.terms, b.terms, "{v}");
        assert_eq!(a.trigrams, b.trigrams, "{v}");
        assert_eq!(a.sentences, b.sentences, "{v}");
    }
    // Every Cyrillic letter that has a Latin look-alike replaced by it, one-letter
    // words ("а", "у", "с") included: the same words, the same exact-copy key (a
    // word made only of such letters, "Курс" or "ОС", would be Latin throughout,
    // and is not caught).
    let plain = "Цена доллара выросла, а у нас с вами опять новые расходы: ПО";
    let swapped: String = plain
        .chars()
        .map(|c| match c {
            'а' => 'a',
            'с' => 'c',
            'е' => 'e',
            'о' => 'o',
            'р' => 'p',
            'х' => 'x',
            'у' => 'y',
            'О' => 'O',
            'С' => 'C',
            'Р' => 'P',
            _ => c,
        })
        .collect();
    assert_eq!(tokens(&swapped, &o), tokens(plain, &o));
    assert_eq!(fingerprint(&swapped), fingerprint(plain));
    // A link whose scheme holds a zero-width space is still a link.
    assert_eq!(doc("Читать ht\u{200B}tps://example.com/novosti").links, 1);
    // A word that mixes scripts with letters of no look-alike stays as it is.
    assert_eq!(tokens("Яndex", &opts(Lang::Simple, 1)), ["яndex"]);
}

#[test]
fn yo_folds_to_ye() {
    let o = opts(Lang::Auto, 1);
    assert_eq!(tokens("Ёлка ЁЖИК всё", &o), tokens("елка ежик все", &o));
    assert_eq!(tokens("ёжик", &opts(Lang::Simple, 1)), ["ежик"]);
    assert_eq!(fingerprint("Ёж"), fingerprint("еж"));
}

#[test]
fn stop_words() {
    let o = opts(Lang::Auto, 1);
    assert_eq!(tokens("The cat and the dog", &o), ["cat", "dog"]);
    assert_eq!(tokens("Он и она не в доме", &o), ["дом"]);
    // both lists apply whatever the language
    assert_eq!(tokens("the и дом", &opts(Lang::English, 1)), ["дом"]);
    assert_eq!(tokens("the и дом", &opts(Lang::Russian, 1)), ["дом"]);
    // simple keeps them
    assert_eq!(
        tokens("The cat и", &opts(Lang::Simple, 1)),
        ["the", "cat", "и"]
    );
}

#[test]
fn min_word_length_counts_chars_before_stemming() {
    let t = tokens("ab abc runs running ёж", &opts(Lang::Auto, 3));
    assert_eq!(t, ["abc", "run", "run"]);
    // "running" (7 chars) passes a limit of 5 even though its stem "run" is shorter
    assert_eq!(tokens("runs running", &opts(Lang::Auto, 5)), ["run"]);
    assert_eq!(tokens("a b", &opts(Lang::Simple, 0)), ["a", "b"]);
}

#[test]
fn each_language() {
    let text = "книгами running λόγος";
    assert_eq!(tokens(text, &opts(Lang::Auto, 1)), ["книг", "run", "λόγος"]);
    assert_eq!(
        tokens(text, &opts(Lang::Russian, 1)),
        ["книг", "running", "λόγος"]
    );
    assert_eq!(
        tokens(text, &opts(Lang::English, 1)),
        ["книгами", "run", "λόγος"]
    );
    assert_eq!(
        tokens(text, &opts(Lang::Simple, 1)),
        ["книгами", "running", "λόγος"]
    );
}

#[test]
fn lang_parse() {
    assert_eq!(Lang::parse("AUTO"), Ok(Lang::Auto));
    assert_eq!(Lang::parse("Russian"), Ok(Lang::Russian));
    assert_eq!(Lang::parse("english"), Ok(Lang::English));
    assert_eq!(Lang::parse("simple"), Ok(Lang::Simple));
    let e = Lang::parse("xx").unwrap_err();
    assert_eq!(e.to_string(), "unknown language \"xx\"");
    assert_eq!(e.sqlstate(), "22023");
    assert!(e.hint().is_some_and(|h| h.contains("russian")));
}

#[test]
fn mixed_tokens_and_numbers() {
    let o = opts(Lang::Auto, 1);
    assert_eq!(tokens("COVID-19 и 5G в 2024", &o), ["covid", "5g"]);
    assert_eq!(numbers("COVID-19 и 5G в 2024"), ["19", "5", "2024"]);
    let d = doc("COVID-19 и 5G в 2024");
    assert_eq!(d.words, 4); // covid, и, 5g, в: pure numbers are not words
}

#[test]
fn html_body() {
    let body = "<html><head><style>p { color: red }</style><script>alert('x')</script></head>\
        <body><h1>Заголовок новости</h1><p>Первый абзац &laquo;текста&raquo;.\n Второе предложение.</p>\
        <!-- комментарий --><p><img src=a.jpg> <a href=\"https://x.ru\">ссылка</a> <a href='y'>ещё</a></p>\
        <div>Третий&nbsp;абзац</div></body></html>";
    let d = doc(body);
    check_invariants(&d);
    assert_eq!((d.images, d.links), (1, 2));
    assert_eq!(d.paragraphs.len(), 4);
    assert_eq!(d.sentences.len(), 5);
    let terms: Vec<&str> = d.terms.iter().map(|t| t.term.as_str()).collect();
    for gone in ["color", "alert", "комментар", "red"] {
        assert!(!terms.contains(&gone), "{gone} leaked: {terms:?}");
    }
    assert!(terms.contains(&"абзац") && terms.contains(&"ссылк"));
    assert_eq!(
        d.terms.iter().find(|t| t.term == "абзац").map(|t| t.tf),
        Some(2)
    );
}

#[test]
fn broken_html_never_panics() {
    for body in [
        "<p>текст<script>unterminated",
        "<p>a<b",
        "<p>x</p><",
        "<p>&#xZZ; &#; &; &#99999999; &",
        "<div><p><li>unclosed",
        "<p>ok</p><!--",
        "<p><a href=\"unterminated>x",
        "</p></div>",
        "<p>\u{0}\u{FFFF}</p>",
    ] {
        check_invariants(&doc(body));
    }
    let d = doc("<p>Видно</p><script>var hidden = 1;");
    assert_eq!(d.terms.len(), 1);
}

#[test]
fn telegram_markdown() {
    let body = "**Срочно:** [Reuters](https://reuters.com/a) сообщает https://t.me/x. \
        __Подробности__ ~~позже~~ ||спойлер|| `код`";
    let d = doc(body);
    check_invariants(&d);
    assert_eq!(d.links, 2);
    let t = tokens(body, &AUTO);
    assert_eq!(
        t,
        [
            "срочн",
            "reuter",
            "сообща",
            "подробн",
            "позж",
            "спойлер",
            "код"
        ]
    );
    assert_eq!(
        fingerprint(body),
        fingerprint("Срочно: Reuters сообщает. Подробности позже спойлер код")
    );
}

#[test]
fn sentences_and_paragraphs() {
    let body = "А. С. Пушкин родился в 1799 г. в Москве. Курс 3.5 рубля, т.е. дёшево!\n\
        Новая строка\n\nВторой абзац. Mr. Smith met Dr. Jones in the U.S. Today. Done";
    let d = doc(body);
    check_invariants(&d);
    assert_eq!(d.paragraphs.len(), 2);
    assert_eq!(d.sentences.len(), 6, "{:?}", d.sentences);
}

#[test]
fn equal_sentences_hash_equal_across_documents() {
    let a = doc("Совсем другое начало. Президент подписал новый закон о связи! Конец");
    let b = doc("<p>Иной текст здесь</p><p>ПРЕЗИДЕНТ ПОДПИСАЛ НОВЫЙ ЗАКОН О СВЯЗИ.</p>");
    check_invariants(&a);
    check_invariants(&b);
    assert_eq!(a.sentences[1].hash, b.sentences[1].hash);
    assert_eq!(b.paragraphs[1].hash, b.sentences[1].hash);
    assert_ne!(a.sentences[0].hash, b.sentences[0].hash);
    // the same stems, so the same term strings behind the indices
    let terms = |d: &Document, s: &Segment| -> Vec<String> {
        s.terms
            .iter()
            .map(|&i| d.terms[i as usize].term.to_string())
            .collect()
    };
    assert_eq!(terms(&a, &a.sentences[1]), terms(&b, &b.sentences[1]));
}

#[test]
fn segment_hash_is_of_joined_stems() {
    let d = doc("Книги и книгами!");
    assert_eq!(d.sentences.len(), 1);
    assert_eq!(d.sentences[0].hash, xxh3_64("книг книг".as_bytes()));
    assert_eq!(d.sentences[0].terms, [0, 0]);
    assert_eq!(
        d.terms,
        [TermFreq {
            term: "книг".into(),
            tf: 2
        }]
    );
}

#[test]
fn fingerprint_ignores_form_not_words() {
    let base = fingerprint("Президент подписал закон. Он вступит в силу 1 мая.");
    for same in [
        "президент   ПОДПИСАЛ закон\n\nон вступит в силу 1 мая",
        "<p>Президент <b>подписал</b> закон!</p><p>Он вступит — в силу — 1 мая…</p>",
        "**Президент** подписал [закон](https://x.ru). Он вступит в силу 1 мая https://y.ru",
    ] {
        assert_eq!(fingerprint(same), base, "{same}");
    }
    assert_ne!(
        fingerprint("Президент подписал закон. Он вступит в силу 2 мая."),
        base
    );
    assert_ne!(
        fingerprint("Президент подписал законы. Он вступит в силу 1 мая."),
        base
    );
    assert_ne!(
        fingerprint("подписал Президент закон. Он вступит в силу 1 мая."),
        base
    );
    let body = "<p>Текст <i>с</i> разметкой</p>";
    assert_eq!(doc(body).fingerprint, fingerprint(body));
}

#[test]
fn analyze_copies_metadata_and_title() {
    let d = analyze(
        "Тело новости",
        Some("Заголовок &amp; книги, книгами"),
        Some(123),
        Some("tass"),
        &opts(Lang::Auto, 3),
    );
    assert_eq!(d.published_at, Some(123));
    assert_eq!(d.source.as_deref(), Some("tass"));
    assert_eq!(
        d.title_terms,
        [
            TermFreq {
                term: "заголовок".into(),
                tf: 1
            },
            TermFreq {
                term: "книг".into(),
                tf: 2
            }
        ]
    );
    check_invariants(&d);
}

#[test]
fn tokens_agree_with_analyze() {
    let body = "<p>Книги, книгами. The running man runs!</p>Ещё [ссылка](x) и 3,5 %";
    let d = doc(body);
    let mut t = tokens(body, &AUTO);
    t.sort();
    let mut from_doc: Vec<String> = Vec::new();
    for tf in &d.terms {
        for _ in 0..tf.tf {
            from_doc.push(tf.term.to_string());
        }
    }
    assert_eq!(t, from_doc);
    assert_eq!(numbers(body), d.numbers);
    assert_eq!(d.numbers, ["3.5"]);
}

#[test]
fn empty_and_junk_inputs() {
    // An empty text records an empty trigram set (not an absent one).
    let empty = Document {
        trigrams: Some(Default::default()),
        ..Document::default()
    };
    assert_eq!(doc(""), empty);
    assert_eq!(doc("   \n\n \t "), empty);
    let d = doc("?!... ,,, — «» 🙂🙂 👨‍👩‍👧");
    assert_eq!(d.terms.len(), 0);
    assert_eq!(d.words, 0);
    assert_eq!(d.fingerprint, 0);
    let d = doc("Mixed 東京 λόγος Москва mоscow ١٢٣ 🙂");
    check_invariants(&d);
    // the segmenter gives each ideograph its own word: Mixed 東 京 λόγος Москва mоscow
    assert_eq!(d.words, 6);

    // Random bytes, deterministic xorshift so failures reproduce.
    let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
    for round in 0..100 {
        let len = (round * 37) % 2000;
        let bytes: Vec<u8> = (0..len)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                // bias towards the bytes the parsers care about
                const SPECIAL: &[u8] = b"<>/&#;.,!?[]()*_~|`\\ \n-:0123456789pa";
                if x.is_multiple_of(3) {
                    SPECIAL[(x >> 8) as usize % SPECIAL.len()]
                } else {
                    (x >> 16) as u8
                }
            })
            .collect();
        let s = String::from_utf8_lossy(&bytes);
        for lang in [Lang::Auto, Lang::Russian, Lang::English, Lang::Simple] {
            let d = analyze(&s, Some(&s), None, None, &opts(lang, 2));
            check_invariants(&d);
            assert_eq!(d.fingerprint, fingerprint(&s), "{s:?}");
        }
        let _ = numbers(&s);
        let _ = fingerprint(&s);
    }
}

#[test]
fn words_with_stems_over_the_term_bound_are_dropped() {
    use crate::document::MAX_TERM_BYTES;
    // 64 Cyrillic letters are 128 bytes: kept whole under `simple` (no stemming).
    let at = "я".repeat(MAX_TERM_BYTES / 2);
    let over = format!("{at}я");
    let latin_over = "x".repeat(MAX_TERM_BYTES + 1);
    let o = opts(Lang::Simple, 1);
    assert_eq!(tokens(&at, &o), [at.as_str()]);
    assert!(tokens(&over, &o).is_empty());
    assert!(tokens(&latin_over, &o).is_empty());
    let body = format!("{over} cat {latin_over} dog {at}");
    for lang in [Lang::Auto, Lang::Russian, Lang::English, Lang::Simple] {
        let d = analyze(&body, Some(&body), None, None, &opts(lang, 1));
        check_invariants(&d);
        // Dropped words still count as words, like stop words.
        assert_eq!(d.words, 5, "{lang:?}");
        assert!(d.terms.iter().all(|t| t.term.len() <= MAX_TERM_BYTES));
        assert_eq!(tokens(&body, &opts(lang, 1)).len() as u64, d.length());
        // Every analysed document decodes.
        assert_eq!(Document::decode(&d.encode()).unwrap(), d);
    }
    // A word that only stems to within the bound is kept.
    let long_stemmed = format!("{}ing", "a".repeat(MAX_TERM_BYTES - 1));
    assert_eq!(
        tokens(&long_stemmed, &opts(Lang::English, 1)),
        ["a".repeat(MAX_TERM_BYTES - 1)]
    );
    assert!(tokens(&long_stemmed, &opts(Lang::Simple, 1)).is_empty());
}

/// ~1 MB of Russian+English news prose; every tenth word is made unique so the
/// stem cache does not see a trivially small vocabulary.
fn sample_text(target: usize) -> String {
    const PROSE: &str = "Президент России Владимир Путин подписал закон о внесении изменений \
        в Налоговый кодекс, сообщает пресс-служба Кремля. Документ опубликован на \
        официальном портале правовой информации 12.03.2024. По данным Минфина, \
        поступления в бюджет вырастут на 1 500 млрд рублей, или на 3,5%.\n\n\
        The Central Bank kept its key rate unchanged at 16%, citing persistent \
        inflationary pressure. Analysts polled by Reuters had expected the decision; \
        markets barely moved. \"We will watch the data closely,\" the governor said.\n\n";
    let mut s = String::with_capacity(target + PROSE.len());
    let mut n: u32 = 0;
    while s.len() < target {
        for (i, w) in PROSE.split(' ').enumerate() {
            s.push_str(w);
            if i % 10 == 0 {
                n = n.wrapping_add(1);
                s.push_str(&format!(" слово{} word{}", n % 50_000, n % 30_000));
            }
            s.push(' ');
        }
    }
    s
}

#[test]
fn large_document_invariants() {
    let text = sample_text(200_000);
    let d = doc(&text);
    check_invariants(&d);
    assert!(d.sentences.len() > 500);
}

/// Throughput check: `cargo test --release -- --ignored --nocapture bench`.
#[test]
#[ignore]
fn bench_analyze_throughput() {
    let text = sample_text(1 << 20);
    let o = opts(Lang::Auto, 2);
    let _ = analyze(&text, None, None, None, &o); // warm the stemmers
    let runs = 5;
    let t = std::time::Instant::now();
    let mut terms = 0;
    for _ in 0..runs {
        terms += analyze(&text, None, None, None, &o).terms.len();
    }
    let secs = t.elapsed().as_secs_f64();
    let mbs = (text.len() * runs) as f64 / secs / 1e6;
    println!(
        "analyze: {} bytes, {terms} terms, {mbs:.1} MB/s",
        text.len()
    );
    let html = format!("<p>{}</p>", text.replace("\n\n", "</p><p>"));
    let t = std::time::Instant::now();
    let _ = analyze(&html, None, None, None, &o);
    println!(
        "analyze html: {:.1} MB/s",
        html.len() as f64 / t.elapsed().as_secs_f64() / 1e6
    );
}

/// The `_checked` forms give what the plain ones give, call their check about once
/// per `WORDS_PER_CHECK` words, and stop at the first error without calling it
/// again.
#[test]
fn checked_forms_call_their_check_and_stop_at_its_error() {
    use crate::error::DedupError;
    let text = sample_text(400_000);
    let html = format!("<p>{}</p>", text.replace("\n\n", "</p><p>"));
    let o = opts(Lang::Auto, 2);
    for body in [&text, &html] {
        let words = analyze(body, None, None, None, &o).length();
        let mut calls = 0u64;
        let mut count = || {
            calls += 1;
            Ok::<(), DedupError>(())
        };
        let d = analyze_checked(
            body,
            Some(&text[..5000]),
            Some(7),
            Some("s"),
            &o,
            &mut count,
        );
        assert_eq!(
            d.unwrap(),
            analyze(body, Some(&text[..5000]), Some(7), Some("s"), &o)
        );
        assert!(
            calls > words / WORDS_PER_CHECK,
            "{calls} calls, {words} words"
        );
        let mut calls = 0u64;
        let mut count = || {
            calls += 1;
            Ok::<(), DedupError>(())
        };
        assert_eq!(
            tokens_checked(body, &o, &mut count).unwrap(),
            tokens(body, &o)
        );
        assert!(calls > words / WORDS_PER_CHECK);
        let mut calls = 0u64;
        let mut count = || {
            calls += 1;
            Ok::<(), DedupError>(())
        };
        assert_eq!(
            fingerprint_checked(body, &mut count).unwrap(),
            fingerprint(body)
        );
        assert!(calls > words / WORDS_PER_CHECK);

        // An error at the n-th call is returned, and the check is not called again.
        for n in [1u64, 2, 5] {
            let mut calls = 0u64;
            let mut stop_at_n = || {
                calls += 1;
                assert!(calls <= n, "called after it failed");
                if calls == n {
                    Err(DedupError::invalid_input("cancelled"))
                } else {
                    Ok(())
                }
            };
            let e = analyze_checked(body, None, None, None, &o, &mut stop_at_n).unwrap_err();
            assert_eq!(e.to_string(), "cancelled");
            assert_eq!(calls, n);
            let mut calls = 0u64;
            let mut stop_at_n = || {
                calls += 1;
                assert!(calls <= n, "called after it failed");
                if calls == n {
                    Err("cancelled")
                } else {
                    Ok(())
                }
            };
            assert_eq!(tokens_checked(body, &o, &mut stop_at_n), Err("cancelled"));
            let mut calls = 0u64;
            let mut stop_at_n = || {
                calls += 1;
                assert!(calls <= n, "called after it failed");
                if calls == n {
                    Err("cancelled")
                } else {
                    Ok(())
                }
            };
            assert_eq!(fingerprint_checked(body, &mut stop_at_n), Err("cancelled"));
        }
    }
}
