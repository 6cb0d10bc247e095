//! Built-in Russian and English stop words: function words that say nothing
//! about what a news text is about.
//!
//! Entries are lower-case with `ё` already folded to `е`, because the check runs on
//! the normalised word (see [`super::words::normalize_into`]). Lookups go through one
//! `HashSet` built on first use and shared by all callers.

use std::collections::HashSet;
use std::sync::OnceLock;

/// Russian function words: pronouns, prepositions, conjunctions, particles and the
/// forms of "быть", "этот", "который", "весь", "свой".
#[rustfmt::skip]
const RUSSIAN: &[&str] = &[
    "а", "без", "более", "бы", "был", "была", "были", "было", "быть", "в", "вам", "вас",
    "ведь", "весь", "во", "вот", "впрочем", "все", "всего", "всей", "всем", "всеми",
    "всех", "всю", "вы", "где", "да", "даже", "для", "до", "его", "ее", "ей", "ему",
    "если", "есть", "еще", "же", "за", "здесь", "и", "из", "или", "им", "ими", "их",
    "к", "как", "какая", "какие", "какой", "когда", "кого", "ком", "кому", "кто",
    "куда", "ли", "либо", "лишь", "между", "меня", "мне", "мной", "мною", "мог",
    "могут", "мой", "моя", "мы", "на", "над", "нам", "нами", "нас", "наш", "наша",
    "наше", "наши", "не", "него", "нее", "ней", "нельзя", "нем", "нет", "нею", "ни",
    "нибудь", "никто", "ним", "ними", "них", "ничего", "но", "ну", "о", "об", "однако",
    "он", "она", "они", "оно", "от", "очень", "по", "под", "после", "потом", "потому",
    "почти", "при", "про", "раз", "с", "сам", "сама", "сами", "само", "свое", "своего",
    "своей", "свои", "своих", "свой", "свою", "себе", "себя", "со", "так", "также",
    "такой", "там", "тебе", "тебя", "тем", "теми", "тех", "то", "тоже", "той", "только",
    "том", "тому", "тот", "ту", "тут", "ты", "у", "уж", "уже", "хоть", "чего", "чем",
    "чему", "через", "что", "чтобы", "чье", "чья", "эта", "эти", "этим", "этими",
    "этих", "это", "этого", "этой", "этом", "этому", "этот", "эту", "я", "который",
    "которая", "которое", "которые", "которого", "которой", "которому", "котором",
    "которую", "которых", "которым", "которыми",
];

/// English function words, including the common contractions (the word segmenter
/// keeps "don't" as one word; typographic apostrophes are folded to `'` first).
#[rustfmt::skip]
const ENGLISH: &[&str] = &[
    "a", "about", "above", "after", "again", "against", "all", "also", "am", "an",
    "and", "any", "are", "aren't", "as", "at", "be", "because", "been", "before",
    "being", "below", "between", "both", "but", "by", "can", "can't", "cannot", "could",
    "couldn't", "did", "didn't", "do", "does", "doesn't", "doing", "don't", "down",
    "during", "each", "either", "else", "ever", "few", "for", "from", "further", "had",
    "hadn't", "has", "hasn't", "have", "haven't", "having", "he", "he'd", "he'll",
    "he's", "her", "here", "here's", "hers", "herself", "him", "himself", "his", "how",
    "how's", "however", "i", "i'd", "i'll", "i'm", "i've", "if", "in", "into", "is",
    "isn't", "it", "it's", "its", "itself", "just", "let's", "may", "me", "might",
    "more", "most", "must", "mustn't", "my", "myself", "neither", "no", "nor", "not",
    "now", "of", "off", "on", "once", "only", "or", "other", "ought", "our", "ours",
    "ourselves", "out", "over", "own", "same", "shall", "shan't", "she", "she'd",
    "she'll", "she's", "should", "shouldn't", "so", "some", "such", "than", "that",
    "that's", "the", "their", "theirs", "them", "themselves", "then", "there",
    "there's", "these", "they", "they'd", "they'll", "they're", "they've", "this",
    "those", "though", "through", "thus", "to", "too", "under", "until", "up", "upon",
    "us", "very", "via", "was", "wasn't", "we", "we'd", "we'll", "we're", "we've",
    "were", "weren't", "what", "what's", "when", "when's", "where", "where's",
    "whether", "which", "while", "who", "who's", "whom", "whose", "why", "why's",
    "will", "with", "won't", "would", "wouldn't", "yet", "you", "you'd", "you'll",
    "you're", "you've", "your", "yours", "yourself", "yourselves",
];

/// foldhash: every token of every text is looked up here.
type StopSet = HashSet<&'static str, foldhash::fast::FixedState>;

fn set() -> &'static StopSet {
    static SET: OnceLock<StopSet> = OnceLock::new();
    SET.get_or_init(|| RUSSIAN.iter().chain(ENGLISH).copied().collect())
}

/// True if `word` (lower-case, `ё` folded to `е`) is a Russian or English stop word.
pub(crate) fn is_stop_word(word: &str) -> bool {
    set().contains(word)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lists_are_normalised_and_sized() {
        for w in RUSSIAN.iter().chain(ENGLISH) {
            assert!(!w.is_empty());
            assert_eq!(*w, w.to_lowercase(), "{w} is not lower-case");
            assert!(!w.contains('ё'), "{w} holds ё");
        }
        assert!(RUSSIAN.len() >= 150, "russian: {}", RUSSIAN.len());
        assert!(ENGLISH.len() >= 170, "english: {}", ENGLISH.len());
    }

    #[test]
    fn lookups() {
        assert!(is_stop_word("и"));
        assert!(is_stop_word("еще"));
        assert!(is_stop_word("the"));
        assert!(is_stop_word("don't"));
        assert!(!is_stop_word("книга"));
        assert!(!is_stop_word("news"));
        assert!(!is_stop_word("The"));
    }
}
