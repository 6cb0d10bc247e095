//! The exact-duplicate key: a 128-bit hash of a text's normalised word sequence.
//!
//! Words come from Unicode word segmentation ([`super::wordsplit`]), are lower-cased with `ё` folded to
//! `е` (see [`super::words::normalize_into`]) and are neither stemmed nor filtered:
//! stop words and numbers stay, so "цена 5 рублей" and "цена 7 рублей" differ.
//! The hash is xxh3-128 of the words joined by single spaces, fed in streaming
//! form so no joined copy of the text is built.

use std::ops::ControlFlow;

use xxhash_rust::xxh3::Xxh3Default;

use super::lookalike::Majority;
use super::words::normalize_into;
use super::wordsplit::for_each_word;
use crate::interrupt::Pacer;

/// Fingerprint of already visible text (markup removed). A text without words
/// has fingerprint 0, so an empty body gives an all-default document.
pub(crate) fn of_visible(text: &str, majority: Majority) -> u128 {
    use crate::interrupt::{finished, unstoppable};
    finished(of_visible_checked(
        text,
        majority,
        &mut Pacer::new(&mut unstoppable(), u64::MAX),
    ))
}

/// [`of_visible`], ticking `pacer` once per word; stops at its first error.
pub(crate) fn of_visible_checked<E>(
    text: &str,
    majority: Majority,
    pacer: &mut Pacer<'_, '_, E>,
) -> Result<u128, E> {
    let mut h = Xxh3Default::new();
    let mut word = String::new();
    let mut any = false;
    let mut stopped = None;
    let _ = for_each_word(text, |w| {
        if let Err(e) = pacer.tick(1) {
            stopped = Some(e);
            return ControlFlow::Break(());
        }
        normalize_into(w, majority, &mut word);
        if word.is_empty() {
            return ControlFlow::Continue(());
        }
        if any {
            h.update(b" ");
        }
        any = true;
        h.update(word.as_bytes());
        ControlFlow::Continue(())
    });
    if let Some(e) = stopped {
        return Err(e);
    }
    Ok(if any { h.digest128() } else { 0 })
}

#[cfg(test)]
mod tests {
    use super::*;
    use xxhash_rust::xxh3::xxh3_128;

    #[test]
    fn equals_hash_of_joined_words() {
        assert_eq!(of_visible("  Ёлка,  СТОИТ!\n\nдом 5 ", Majority::Neither), xxh3_128(b"\xd0\xb5\xd0\xbb\xd0\xba\xd0\xb0 \xd1\x81\xd1\x82\xd0\xbe\xd0\xb8\xd1\x82 \xd0\xb4\xd0\xbe\xd0\xbc 5"));
        assert_eq!(
            of_visible("Hello, world", Majority::Neither),
            xxh3_128(b"hello world")
        );
        assert_eq!(of_visible("", Majority::Neither), 0);
        assert_eq!(of_visible(" ,.!? 🙂 ", Majority::Neither), 0);
    }
}
