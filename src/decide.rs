//! Deciding about a new document against its candidates, and grouping duplicates.
//!
//! Pure Rust, no pgrx. The insert trigger, `is_duplicate`, `find_original`,
//! `pairs` and `groups` all decide through this module, so they agree.
//!
//! Without a trained model, a documented threshold rule stands in for the SVM
//! ([`threshold_rule`]). With one, the model's decision value is used
//! (`svm::Model::decision`).

use crate::features::N_FEATURES;

/// Index of each feature in ρ (see `features::FEATURE_NAMES`).
const TEXT: usize = 0;
const NUMBERS_INCLUSION: usize = 2;
const SENTENCES_INCLUSION: usize = 4;

/// The rule used when no model is named: D(ρ(a,b)) = 1 ("a adds nothing to b") when
///
/// - the bodies are close, 1 − cosine ≤ 0.2, and at most 20 % of a's numbers are
///   missing from b (a template with other numbers is a different notice); or
/// - at least 90 % of a's sentence weight occurs verbatim in b (a cut copy) and at
///   most 20 % of a's numbers are missing from b.
///
/// The score is positive for a duplicate and grows with the margin:
/// `max(0.2 − text, 0.1 − sentences_inclusion)`, or negative by the same margins
/// (and −1 when the numbers veto). Thresholds were picked by hand, not trained:
/// train a model for any domain that matters.
pub fn threshold_rule(rho: &[f64; N_FEATURES]) -> f64 {
    let text_margin = 0.2 - rho[TEXT];
    let sentence_margin = 0.1 - rho[SENTENCES_INCLUSION];
    let margin = text_margin.max(sentence_margin);
    if margin > 0.0 && rho[NUMBERS_INCLUSION] > 0.2 {
        return -1.0;
    }
    if margin.is_finite() {
        margin
    } else {
        -1.0
    }
}

/// The decision value an exact copy gets at least, whatever the model says.
///
/// Two bodies with the same fingerprint (the same words in the same order, numbers
/// included: see `text::fingerprint`) add nothing to each other, which is what
/// D(ρ(a,b)) = 1 means. A model may still score such a pair below zero through the
/// features that are not about the text (the time between the two, their sources'
/// authority): the built-in model, trained on news, does so for copies published
/// more than a day or two apart, and a re-posted advertisement or a re-uploaded
/// paper is a copy whenever it comes. So an exact copy is a duplicate in both
/// directions under every model and the threshold rule; among several candidates
/// it ranks at least as high as a near-copy scored up to this value.
pub const EXACT_COPY_SCORE: f64 = 1.0;

/// Whether two documents' bodies are exact copies: equal fingerprints, and not
/// the fingerprint of a body without words (0).
pub fn exact_copy(a_fingerprint: u128, b_fingerprint: u128) -> bool {
    a_fingerprint != 0 && a_fingerprint == b_fingerprint
}

/// `score` (a model's or the threshold rule's decision value), raised to
/// [`EXACT_COPY_SCORE`] for an exact copy.
pub fn with_exact_copy(score: f64, exact: bool) -> f64 {
    if exact {
        // A NaN score (a model gone wrong) counts too: max() returns the number.
        score.max(EXACT_COPY_SCORE)
    } else {
        score
    }
}

/// An upper bound of [`threshold_rule`] over every ρ within `ranges` (see
/// `features::bounds`): the rule never exceeds its best margin, and the margin is
/// monotone in the text and sentence distances.
pub fn threshold_rule_upper(ranges: &[crate::features::Range; N_FEATURES]) -> f64 {
    let margin = (0.2 - ranges[TEXT].lo).max(0.1 - ranges[SENTENCES_INCLUSION].lo);
    if margin.is_finite() {
        margin
    } else {
        f64::INFINITY
    }
}

/// One candidate as the decision sees it.
#[derive(Debug, Clone)]
pub struct Judged {
    /// The candidate's key (its primary key as text).
    pub key: String,
    /// The candidate's own `duplicate_of`, if it is itself a duplicate.
    pub duplicate_of: Option<String>,
    /// Decision value for "new duplicates candidate" (D(ρ(new, cand))).
    pub score_new_dup: f64,
    /// Decision value for "candidate duplicates new" (D(ρ(cand, new))).
    pub score_cand_dup: f64,
    /// Whether the candidate is an exact copy of the new document
    /// ([`exact_copy`]); its scores are already raised by [`with_exact_copy`].
    pub exact: bool,
}

/// Leaves out the candidates whose mark names `me` (the row being checked: an
/// updated row's key, or an inserted one's), and the candidates whose mark names
/// one of those, and so on: marks point at a group's first original, so that is
/// one step, except where a mark names a deleted original whose key a new row now
/// takes. Marking the new row as a copy of any of them would close a cycle of
/// marks, a group with no original.
pub fn without_copies_of(judged: &mut Vec<Judged>, me: &str) {
    let keep = kept(
        me,
        judged.iter().map(|j| j.key.as_str()).collect(),
        judged.iter().map(|j| j.duplicate_of.as_deref()).collect(),
    );
    retain_kept(judged, keep);
}

/// [`without_copies_of`] with keys compared through `same`, which maps a key's
/// text form to what equal keys share: where one key has several text forms (a
/// `numeric` 1 and 1.0, or text under a case-insensitive collation), equal texts
/// are not what makes two keys one.
pub fn without_copies_of_by<K: Eq + std::hash::Hash>(
    judged: &mut Vec<Judged>,
    me: &str,
    same: impl Fn(&str) -> K,
) {
    let keep = kept(
        same(me),
        judged.iter().map(|j| same(&j.key)).collect(),
        judged
            .iter()
            .map(|j| j.duplicate_of.as_deref().map(&same))
            .collect(),
    );
    retain_kept(judged, keep);
}

/// Which candidates (their `keys`, and the originals their marks name) are
/// neither `me` (the checked row itself: under another spelling, the lookup's
/// own exclusion misses it) nor a copy of it or of its copies.
fn kept<K: Eq + std::hash::Hash>(me: K, keys: Vec<K>, marks: Vec<Option<K>>) -> Vec<bool> {
    let mut gone: std::collections::HashSet<K> = std::collections::HashSet::from([me]);
    let mut keep: Vec<bool> = keys.iter().map(|k| !gone.contains(k)).collect();
    let mut keys: Vec<Option<K>> = keys.into_iter().map(Some).collect();
    loop {
        let mut grew = false;
        for ((key, mark), k) in keys.iter_mut().zip(&marks).zip(keep.iter_mut()) {
            if *k && mark.as_ref().is_some_and(|d| gone.contains(d)) {
                *k = false;
                gone.extend(key.take());
                grew = true;
            }
        }
        if !grew {
            break;
        }
    }
    keep
}

fn retain_kept(judged: &mut Vec<Judged>, keep: Vec<bool>) {
    let mut keep = keep.into_iter();
    judged.retain(|_| keep.next().unwrap_or(true));
}

/// Whether a candidate is left unweighed, from upper bounds of the decision value
/// in both directions ("new duplicates it", "it duplicates new"; None: the model
/// gives no bound): `Some(the first bound)` when neither can reach a duplicate. An
/// exact copy is a duplicate whatever the bounds say.
pub fn ruled_out(exact: bool, new_dup: Option<f64>, cand_dup: Option<f64>) -> Option<f64> {
    if exact {
        return None;
    }
    let (new_dup, cand_dup) = (new_dup?, cand_dup?);
    (new_dup <= 0.0 && cand_dup <= 0.0).then_some(new_dup)
}

/// The transaction to wait for before deciding: one that inserted, and has not
/// yet committed, a candidate that is a duplicate either way (each judged
/// candidate comes with its inserting transaction while that is in progress).
pub fn must_wait<X: Copy>(judged: &[(Judged, Option<X>)]) -> Option<X> {
    judged
        .iter()
        .find_map(|(j, xid)| xid.filter(|_| j.score_new_dup > 0.0 || j.score_cand_dup > 0.0))
}

/// The judged candidates that count: committed rows and this transaction's own
/// (rows still in progress that duplicate nothing either way are left out).
pub fn settled<X>(judged: Vec<(Judged, Option<X>)>) -> Vec<Judged> {
    judged
        .into_iter()
        .filter(|(_, xid)| xid.is_none())
        .map(|(j, _)| j)
        .collect()
}

/// Keeps the first of `rows` whose sizes fit in `budget` (at least one: the best
/// candidate is always examined).
pub fn keep_within_budget<T>(rows: &mut Vec<T>, size: impl Fn(&T) -> usize, budget: usize) {
    let mut total = 0usize;
    let n = rows
        .iter()
        .take_while(|r| {
            let first = total == 0;
            total = total.saturating_add(size(r).max(1));
            first || total <= budget
        })
        .count();
    rows.truncate(n);
}

/// Whether the originals that candidates name are still in the table, as found
/// for one new document. `duplicate_of` is a mark set at insert: a copy whose
/// original was deleted since (or had its key changed) still names it. A new
/// document that duplicates such a copy points at the copy instead, so that its
/// `duplicate_of` names a row that is there.
#[derive(Default)]
pub struct Roots {
    known: std::collections::HashMap<String, bool>,
}

impl Roots {
    /// Clears the `duplicate_of` of each judged candidate that the new document
    /// duplicates and whose original `present` says is gone: it then counts as its
    /// own original. `present` is asked at most once per original, and only for
    /// candidates that are duplicated.
    pub fn resolve(&mut self, judged: &mut [Judged], mut present: impl FnMut(&str) -> bool) {
        for j in judged.iter_mut().filter(|j| j.score_new_dup > 0.0) {
            let Some(root) = j.duplicate_of.as_deref() else {
                continue;
            };
            let there = match self.known.get(root) {
                Some(p) => *p,
                None => {
                    let p = present(root);
                    self.known.insert(root.to_owned(), p);
                    p
                }
            };
            if !there {
                j.duplicate_of = None;
            }
        }
    }
}

/// The outcome for a new document: the original it duplicates (the root, so a
/// duplicate of a duplicate points at the first original), the pair's verdict
/// as (new duplicates, candidate duplicates), and the score.
#[derive(Debug, Clone, PartialEq)]
pub struct Decision {
    pub original: Option<String>,
    pub new_dup: bool,
    pub cand_dup: bool,
    pub score: f64,
}

/// Picks the candidate the new document duplicates: an exact copy first, then the
/// highest score (ties: the smallest key, integer keys as numbers). When it duplicates none, reports the
/// closest candidate's verdict (possibly "candidate duplicates new") with no
/// original.
pub fn choose(judged: &[Judged]) -> Decision {
    let best_dup = judged
        .iter()
        .filter(|j| j.score_new_dup > 0.0)
        .max_by(|a, b| {
            a.exact
                .cmp(&b.exact)
                .then_with(|| a.score_new_dup.total_cmp(&b.score_new_dup))
                .then_with(|| key_order(&b.key, &a.key))
        });
    if let Some(j) = best_dup {
        return Decision {
            original: Some(j.duplicate_of.clone().unwrap_or_else(|| j.key.clone())),
            new_dup: true,
            cand_dup: j.score_cand_dup > 0.0,
            score: j.score_new_dup,
        };
    }
    match judged
        .iter()
        .max_by(|a, b| a.score_new_dup.total_cmp(&b.score_new_dup))
    {
        Some(j) => Decision {
            original: None,
            new_dup: false,
            cand_dup: j.score_cand_dup > 0.0,
            score: j.score_new_dup,
        },
        None => Decision {
            original: None,
            new_dup: false,
            cand_dup: false,
            score: f64::NEG_INFINITY,
        },
    }
}

/// One member of a duplicate group, for choosing its original.
#[derive(Debug, Clone)]
pub struct Member {
    pub key: String,
    /// The key's place among the members' keys in the key type's own order (SQL's
    /// `ORDER BY key`: a composite key field by field, a numeric one by value, a
    /// text one by its collation), which the text form alone does not give
    /// ("(10,1)" sorts before "(9,1)"). Members of equal rank (0 when unknown)
    /// fall back to [`key_order`] of the text.
    pub rank: u32,
    /// Microseconds since 2000-01-01; `None` sorts last.
    pub published_at: Option<i64>,
    pub authority: f64,
}

/// Members by key: their rank, then the text form's [`key_order`].
fn member_key_order(a: &Member, b: &Member) -> std::cmp::Ordering {
    a.rank.cmp(&b.rank).then_with(|| key_order(&a.key, &b.key))
}

/// Key order that reads integer keys as numbers ("9" before "10"), others as text
/// after them. A total order (which sorting needs) also on a text key that mixes
/// the two: reading "9" < "10" as numbers and "10" < "1a" < "9" as text would be a
/// cycle.
fn key_order(a: &str, b: &str) -> std::cmp::Ordering {
    use std::cmp::Ordering::{Greater, Less};
    match (a.parse::<i128>(), b.parse::<i128>()) {
        (Ok(x), Ok(y)) => x.cmp(&y).then_with(|| a.cmp(b)),
        (Ok(_), Err(_)) => Less,
        (Err(_), Ok(_)) => Greater,
        (Err(_), Err(_)) => a.cmp(b),
    }
}

/// How the trigger would have marked a row (see [`originals`]).
#[derive(Debug, Clone, PartialEq)]
pub struct Mark {
    pub member: usize,
    /// The original it points at, when it duplicates an earlier row.
    pub original: Option<usize>,
    /// The row duplicates the earlier row the trigger would have chosen.
    pub new_dup: bool,
    /// That earlier row duplicates this one.
    pub cand_dup: bool,
}

/// What the trigger would have marked had the rows arrived one by one, earliest
/// first (by publication time, then key; a document with no time comes after
/// those with one): a row is a copy when it duplicates an earlier row (`edges`:
/// `(copy, of, score, exact)`, "copy adds nothing to of", score > 0, `exact` when
/// the two are exact copies), and its original is the original of the such row
/// [`choose`] would pick (an exact copy first, then the best score), as a reprint
/// of a reprint points at the first original. Unlike [`groups`], two texts each contained in a third are
/// not thereby one another's duplicates. The verdict is [`choose`]'s: against the
/// row chosen, or for a row that is no copy, against the closest earlier row (the
/// highest "adds nothing to" score among its edges). Returns a [`Mark`] for every
/// member that is a copy or that an earlier row so chosen duplicates (the others
/// are `distinct`).
pub fn originals(members: &[Member], edges: &[(usize, usize, f64, bool)]) -> Vec<Mark> {
    let n = members.len();
    let mut order: Vec<usize> = (0..n).collect();
    let t = |m: &Member| m.published_at.unwrap_or(i64::MAX);
    order.sort_by(|&a, &b| {
        let (x, y) = (&members[a], &members[b]);
        t(x).cmp(&t(y)).then_with(|| member_key_order(x, y))
    });
    let mut rank = vec![0usize; n];
    for (r, &i) in order.iter().enumerate() {
        rank[i] = r;
    }
    let valid =
        |&&(a, b, s, _): &&(usize, usize, f64, bool)| a < n && b < n && a != b && !s.is_nan();
    let score: std::collections::HashMap<(usize, usize), f64> = edges
        .iter()
        .filter(valid)
        .map(|&(a, b, s, _)| ((a, b), s))
        .collect();
    let duplicates = |a: usize, b: usize| score.get(&(a, b)).is_some_and(|&s| s > 0.0);
    // For each member, the earlier row it duplicates that the trigger would pick
    // (ties: the first edge), and the closest earlier row.
    let mut best: Vec<Option<(usize, bool, f64)>> = vec![None; n];
    let mut closest: Vec<Option<(usize, f64)>> = vec![None; n];
    for &(copy, of, s, exact) in edges.iter().filter(valid) {
        if rank[of] >= rank[copy] {
            continue;
        }
        if s > 0.0 && best[copy].is_none_or(|(_, e, x)| (exact, s) > (e, x)) {
            best[copy] = Some((of, exact, s));
        }
        if closest[copy].is_none_or(|(_, x)| s > x) {
            closest[copy] = Some((of, s));
        }
    }
    let mut original: Vec<usize> = (0..n).collect();
    let mut out = Vec::new();
    for &i in &order {
        if let Some((of, _, _)) = best[i] {
            // `of` is earlier, so its original is settled.
            original[i] = original[of];
            out.push(Mark {
                member: i,
                original: Some(original[i]),
                new_dup: true,
                cand_dup: duplicates(of, i),
            });
        } else if closest[i].is_some_and(|(c, _)| duplicates(c, i)) {
            out.push(Mark {
                member: i,
                original: None,
                new_dup: false,
                cand_dup: true,
            });
        }
    }
    out
}

/// Connected groups over duplicate edges (undirected), each with its original: the
/// earliest document, then the most authoritative, then the smallest key. Returns
/// `(member index, group number, is_original)` for members of groups of two or more,
/// groups numbered from 1 in the order of their originals' keys (by rank, as in
/// [`originals`]).
pub fn groups(members: &[Member], edges: &[(usize, usize)]) -> Vec<(usize, i64, bool)> {
    let n = members.len();
    let mut parent: Vec<usize> = (0..n).collect();
    fn find(p: &mut [usize], mut x: usize) -> usize {
        while p[x] != x {
            p[x] = p[p[x]];
            x = p[x];
        }
        x
    }
    for &(a, b) in edges {
        if a >= n || b >= n {
            continue;
        }
        let (ra, rb) = (find(&mut parent, a), find(&mut parent, b));
        if ra != rb {
            parent[ra.max(rb)] = ra.min(rb);
        }
    }
    let mut by_root: std::collections::BTreeMap<usize, Vec<usize>> = Default::default();
    for i in 0..n {
        let r = find(&mut parent, i);
        by_root.entry(r).or_default().push(i);
    }
    let better = |a: &Member, b: &Member| -> std::cmp::Ordering {
        let t = |m: &Member| m.published_at.unwrap_or(i64::MAX);
        t(a).cmp(&t(b))
            .then_with(|| b.authority.total_cmp(&a.authority))
            .then_with(|| member_key_order(a, b))
    };
    let mut groups: Vec<(usize, Vec<usize>)> = by_root
        .into_values()
        .filter(|g| g.len() > 1)
        .map(|g| {
            let orig = *g
                .iter()
                .min_by(|&&a, &&b| better(&members[a], &members[b]))
                .unwrap_or(&g[0]);
            (orig, g)
        })
        .collect();
    groups.sort_by(|a, b| member_key_order(&members[a.0], &members[b.0]));
    let mut out = Vec::new();
    for (gid, (orig, g)) in groups.into_iter().enumerate() {
        for i in g {
            out.push((i, gid as i64 + 1, i == orig));
        }
    }
    out.sort_by_key(|&(i, g, _)| (g, i));
    out
}

#[cfg(test)]
mod tests {
    fn judged(k: &str, d: Option<&str>, new_dup: f64, cand_dup: f64) -> super::Judged {
        super::Judged {
            key: k.into(),
            duplicate_of: d.map(Into::into),
            score_new_dup: new_dup,
            score_cand_dup: cand_dup,
            exact: false,
        }
    }

    #[test]
    fn a_candidate_is_ruled_out_only_when_both_bounds_stay_at_zero_or_below() {
        use super::ruled_out;
        assert_eq!(ruled_out(false, Some(-0.5), Some(0.0)), Some(-0.5));
        assert_eq!(ruled_out(false, Some(-0.5), Some(0.1)), None);
        assert_eq!(ruled_out(false, Some(0.1), Some(-3.0)), None);
        assert_eq!(ruled_out(false, None, Some(-3.0)), None, "no bound (RBF)");
        assert_eq!(
            ruled_out(true, Some(-9.0), Some(-9.0)),
            None,
            "an exact copy"
        );
    }

    #[test]
    fn a_writer_waits_only_for_an_uncommitted_duplicate_either_way() {
        let v = vec![
            (judged("1", None, -1.0, -1.0), Some(7u32)),
            (judged("2", None, 0.5, -1.0), None),
            (judged("3", None, -1.0, 0.2), Some(9)),
            (judged("4", None, 1.0, 1.0), Some(11)),
        ];
        assert_eq!(
            super::must_wait(&v),
            Some(9),
            "the first in progress that duplicates"
        );
        let kept: Vec<String> = super::settled(v).into_iter().map(|j| j.key).collect();
        assert_eq!(kept, ["2"], "only committed (or own) rows count");
        assert_eq!(super::must_wait::<u32>(&[]), None);
    }

    #[test]
    fn the_candidate_budget_keeps_the_best_first_and_at_least_one() {
        let mut v = vec![10usize, 20, 30, 40];
        super::keep_within_budget(&mut v, |s| *s, 60);
        assert_eq!(v, [10, 20, 30], "10 + 20 + 30 fit in 60");
        let mut v = vec![100usize, 1];
        super::keep_within_budget(&mut v, |s| *s, 60);
        assert_eq!(v, [100], "the first always stays");
        let mut v = vec![0usize; 5];
        super::keep_within_budget(&mut v, |s| *s, 3);
        assert_eq!(v.len(), 3, "an empty document counts as one byte");
        let mut v: Vec<usize> = Vec::new();
        super::keep_within_budget(&mut v, |s| *s, 3);
        assert!(v.is_empty());
    }

    #[test]
    fn a_duplicated_copy_whose_original_is_gone_becomes_the_original() {
        let mut roots = super::Roots::default();
        let mut v = vec![
            judged("2", Some("1"), 1.0, 0.0),
            judged("3", Some("1"), 1.0, 0.0),
            judged("5", Some("4"), 1.0, 0.0),
            judged("7", Some("6"), -1.0, 0.0),
        ];
        let mut asked = Vec::new();
        roots.resolve(&mut v, |r| {
            asked.push(r.to_owned());
            r == "4"
        });
        assert_eq!(
            asked,
            ["1", "4"],
            "each original once, only for duplicated candidates"
        );
        let marks: Vec<Option<&str>> = v.iter().map(|j| j.duplicate_of.as_deref()).collect();
        assert_eq!(marks, [None, None, Some("4"), Some("6")]);
        // Remembered for the next decision of the same document.
        let mut again = vec![judged("8", Some("1"), 1.0, 0.0)];
        roots.resolve(&mut again, |_| panic!("looked up again"));
        assert_eq!(again[0].duplicate_of, None);
    }

    #[test]
    fn copies_of_the_checked_row_and_their_copies_are_left_out() {
        let j = |k: &str, d: Option<&str>| super::Judged {
            key: k.into(),
            duplicate_of: d.map(Into::into),
            score_new_dup: 1.0,
            score_cand_dup: 1.0,
            exact: true,
        };
        // 2 names the deleted original 1; 3 was marked a copy of 2 after the delete;
        // 4 is another group's; 5 names 4.
        let mut judged = vec![
            j("2", Some("1")),
            j("3", Some("2")),
            j("4", None),
            j("5", Some("4")),
        ];
        super::without_copies_of(&mut judged, "1");
        let keys: Vec<&str> = judged.iter().map(|j| j.key.as_str()).collect();
        assert_eq!(keys, ["4", "5"]);
        // Nothing names the row: nothing goes.
        let mut judged = vec![j("2", None), j("3", Some("2"))];
        super::without_copies_of(&mut judged, "9");
        assert_eq!(judged.len(), 2);
    }

    #[test]
    fn keys_with_several_spellings_are_compared_by_value() {
        let j = |k: &str, d: Option<&str>| judged(k, d, 1.0, 1.0);
        // As numeric keys: 1.0 is 1. The checked row 1.0 takes the deleted
        // original 1's place: 2 names it, 3 names 2.00; 4 is the row itself
        // under another spelling; 5 is another group's.
        let by_value = |k: &str| k.parse::<f64>().map(f64::to_bits).unwrap_or(0);
        let mut judged = vec![
            j("2", Some("1")),
            j("3", Some("2.00")),
            j("1.000", None),
            j("5", None),
        ];
        super::without_copies_of_by(&mut judged, "1.0", by_value);
        let keys: Vec<&str> = judged.iter().map(|j| j.key.as_str()).collect();
        assert_eq!(keys, ["5"]);
        // Compared as text, only the exact spellings count.
        let mut judged = vec![j("2", Some("1")), j("3", Some("2.00")), j("5", None)];
        super::without_copies_of(&mut judged, "1.0");
        assert_eq!(judged.len(), 3);
    }

    #[test]
    fn originals_follow_the_stream_not_the_component() {
        let m = |k: &str, t: Option<i64>| Member {
            key: k.into(),
            rank: 0,
            published_at: t,
            authority: 0.5,
        };
        // 0 and 1 are each contained in 2 (an anthology); 3 reprints 1; 4 reprints 3.
        let members = vec![
            m("9", None),
            m("10", None),
            m("11", None),
            m("12", None),
            m("13", None),
        ];
        let edges = vec![
            (0, 2, 1.0),
            (1, 2, 1.0),
            (3, 1, 2.0),
            (4, 3, 1.5),
            (4, 0, -1.0),
        ];
        let plain = |e: &[(usize, usize, f64)]| -> Vec<(usize, usize, f64, bool)> {
            e.iter().map(|&(a, b, s)| (a, b, s, false)).collect()
        };
        let copies = |marks: Vec<Mark>| -> Vec<(usize, usize)> {
            marks
                .into_iter()
                .filter_map(|m| Some((m.member, m.original?)))
                .collect()
        };
        let o = originals(&members, &plain(&edges));
        // 0 and 1 come before 2 ("9" < "10" < "11" as numbers): neither is a copy of
        // the later anthology, nor of each other.
        assert_eq!(copies(o.clone()), vec![(3, 1), (4, 1)]);
        // The anthology (2) is no copy; the closest earlier row by its own scores (0,
        // at -0.5) duplicates it: the trigger's verdict for it was b_duplicates_a.
        let mut both = edges.clone();
        both.extend([(2, 0, -0.5), (2, 1, -0.6)]);
        let o = originals(&members, &plain(&both));
        assert_eq!(copies(o.clone()), vec![(3, 1), (4, 1)]);
        assert!(o.contains(&Mark {
            member: 2,
            original: None,
            new_dup: false,
            cand_dup: true
        }));
        // Publication time comes first: with 2 published earliest, 0 and 1 are its copies.
        let mut timed = members.clone();
        timed[2].published_at = Some(0);
        let o = originals(&timed, &plain(&edges));
        assert_eq!(copies(o), vec![(0, 2), (1, 2), (3, 2), (4, 2)]);
        // The best-scoring earlier row wins; non-positive scores and self-edges are no edges.
        let o = originals(
            &members,
            &plain(&[(4, 1, 0.5), (4, 3, 0.9), (3, 3, 5.0), (2, 0, 0.0)]),
        );
        assert_eq!(copies(o), vec![(4, 3)]);
        // An exact copy is chosen over a better-scoring near copy, as the trigger does.
        let o = originals(&members, &[(4, 1, 0.5, true), (4, 3, 0.9, false)]);
        assert_eq!(copies(o), vec![(4, 1)]);
        assert!(originals(&[], &plain(&[(0, 1, 1.0)])).is_empty());
        // A copy that its original duplicates too is mutual.
        let o = originals(&members[..2], &plain(&[(1, 0, 1.0), (0, 1, 0.5)]));
        assert_eq!(
            o,
            vec![Mark {
                member: 1,
                original: Some(0),
                new_dup: true,
                cand_dup: true
            }]
        );
    }

    #[test]
    fn key_order_is_total_on_mixed_keys() {
        use std::cmp::Ordering;
        let keys = [
            "9",
            "10",
            "1a",
            "01",
            "1",
            "-3",
            "",
            "b",
            "99999999999999999999999999999999999999999",
        ];
        for a in keys {
            assert_eq!(key_order(a, a), Ordering::Equal);
            for b in keys {
                assert_eq!(key_order(a, b), key_order(b, a).reverse(), "{a} {b}");
                for c in keys {
                    if key_order(a, b) == Ordering::Less && key_order(b, c) == Ordering::Less {
                        assert_eq!(key_order(a, c), Ordering::Less, "{a} {b} {c}");
                    }
                }
            }
        }
        // Numbers first, as numbers; the rest as text.
        let mut sorted = keys.to_vec();
        sorted.sort_by(|a, b| key_order(a, b));
        assert_eq!(
            sorted,
            [
                "-3",
                "01",
                "1",
                "9",
                "10",
                "",
                "1a",
                "99999999999999999999999999999999999999999",
                "b"
            ]
        );
    }

    use super::*;

    fn rho(text: f64, numbers: f64, sentences: f64) -> [f64; N_FEATURES] {
        let mut r = [0.0; N_FEATURES];
        r[TEXT] = text;
        r[NUMBERS_INCLUSION] = numbers;
        r[SENTENCES_INCLUSION] = sentences;
        r
    }

    #[test]
    fn threshold_rule_upper_bounds_the_rule() {
        use crate::features::Range;
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        let mut next = || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            (seed >> 11) as f64 / (1u64 << 53) as f64
        };
        for _ in 0..5000 {
            let mut ranges = [Range { lo: 0.0, hi: 0.0 }; N_FEATURES];
            let mut rho = [0.0; N_FEATURES];
            for (r, v) in ranges.iter_mut().zip(rho.iter_mut()) {
                let (p, q) = (next() * 1.2, next() * 1.2);
                *r = Range {
                    lo: p.min(q),
                    hi: p.max(q),
                };
                *v = r.lo + (r.hi - r.lo) * next();
            }
            assert!(threshold_rule(&rho) <= threshold_rule_upper(&ranges));
        }
    }

    #[test]
    fn rule_accepts_close_texts_and_cut_copies() {
        assert!(threshold_rule(&rho(0.05, 0.0, 0.5)) > 0.0);
        assert!(threshold_rule(&rho(0.6, 0.0, 0.05)) > 0.0);
        assert!(threshold_rule(&rho(0.6, 0.0, 0.5)) < 0.0);
        // Same template, other numbers: not a duplicate.
        assert!(threshold_rule(&rho(0.01, 0.8, 0.9)) < 0.0);
        assert!(threshold_rule(&rho(f64::NAN, 0.0, f64::NAN)) < 0.0);
    }

    #[test]
    fn exact_copies_are_duplicates_whatever_the_score() {
        assert!(exact_copy(7, 7));
        assert!(!exact_copy(7, 8));
        // Two bodies without words are no copies of each other.
        assert!(!exact_copy(0, 0));
        assert_eq!(with_exact_copy(-3.5, true), EXACT_COPY_SCORE);
        assert_eq!(with_exact_copy(2.5, true), 2.5);
        assert_eq!(with_exact_copy(f64::NAN, true), EXACT_COPY_SCORE);
        assert_eq!(with_exact_copy(-3.5, false), -3.5);
        assert!(with_exact_copy(f64::NAN, false).is_nan());
    }

    #[test]
    fn choose_points_at_the_root_original() {
        let j = vec![
            Judged {
                key: "2".into(),
                duplicate_of: Some("1".into()),
                score_new_dup: 0.5,
                score_cand_dup: -0.1,
                exact: false,
            },
            Judged {
                key: "3".into(),
                duplicate_of: None,
                score_new_dup: 0.2,
                score_cand_dup: 0.3,
                exact: false,
            },
        ];
        let d = choose(&j);
        assert_eq!(d.original.as_deref(), Some("1"));
        assert!(d.new_dup && !d.cand_dup);
        let none = choose(&[Judged {
            key: "3".into(),
            duplicate_of: None,
            score_new_dup: -0.2,
            score_cand_dup: 0.3,
            exact: false,
        }]);
        assert_eq!(none.original, None);
        assert!(none.cand_dup && !none.new_dup);
        assert_eq!(choose(&[]).original, None);
    }

    #[test]
    fn choose_prefers_an_exact_copy_to_a_higher_score() {
        let j = |k: &str, s: f64, exact: bool| Judged {
            key: k.into(),
            duplicate_of: None,
            score_new_dup: s,
            score_cand_dup: s,
            exact,
        };
        let near = j("1", 2.5, false);
        let copy = j("2", with_exact_copy(0.3, true), true);
        assert_eq!(
            choose(&[near.clone(), copy.clone()]).original.as_deref(),
            Some("2")
        );
        assert_eq!(
            choose(&[copy.clone(), near.clone()]).original.as_deref(),
            Some("2")
        );
        // Among exact copies, the higher score; without one, the highest score.
        let copy2 = j("3", 1.7, true);
        assert_eq!(
            choose(&[copy, copy2, near.clone()]).original.as_deref(),
            Some("3")
        );
        assert_eq!(
            choose(&[near, j("4", 0.9, false)]).original.as_deref(),
            Some("1")
        );
    }

    #[test]
    fn groups_pick_the_earliest_then_most_authoritative() {
        let m = |k: &str, t: Option<i64>, a: f64| Member {
            key: k.into(),
            rank: 0,
            published_at: t,
            authority: a,
        };
        let members = vec![
            m("a", Some(5), 0.5),
            m("b", Some(3), 0.1),
            m("c", Some(3), 0.9),
            m("d", None, 1.0),
            m("e", None, 0.5),
        ];
        let g = groups(&members, &[(0, 1), (1, 2), (3, 4), (7, 1)]);
        // Group of a, b, c: c is earliest (tie with b) and more authoritative. Group of d, e: d.
        assert_eq!(
            g,
            vec![
                (0, 1, false),
                (1, 1, false),
                (2, 1, true),
                (3, 2, true),
                (4, 2, false)
            ]
        );
    }
}
