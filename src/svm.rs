//! SVM pair classification: is document `a` a near-duplicate of document `b`?
//!
//! Andreev, Berezkin, Kozlov, Simakov §6.1: two documents are compared criterion by
//! criterion into a vector ρ(a,b), and an SVM decides the class of ρ. The similarity
//! measures are not symmetric, so ρ(a,b) and ρ(b,a) are classified separately and the
//! two answers give four outcomes ([`PairOutcome`]).
//!
//! This module is pure Rust (no pgrx). It trains with linfa-svm's SMO solver on
//! standardised features, then keeps only a compact [`Model`] (scaler, weights or
//! support vectors, bias) that evaluates without linfa. [`crate::codec`] stores it.
//!
//! Speed and memory are linfa's (0.8.1), measured on the 2-core dev box, release
//! build, 4,000 examples × 9 features with 6 % label noise (`bench_train_4000`):
//! one linear fit takes 3–5 s, of which ~1.4 s builds the dense kernel matrix and
//! the rest is ~9,000 SMO iterations at ~0.4 ms each (every iteration copies
//! kernel columns out of a row-major n×n matrix, a cache miss per element). With
//! 5-fold CV that is 18–23 s linear, 7–8 s rbf (fewer iterations). The matrix takes
//! 8·n² bytes (128 MB at n = 4,000, outside PostgreSQL's memory contexts), hence
//! [`MAX_TRAIN_EXAMPLES`]. Evaluating a trained [`Model`] needs no linfa: linear
//! `decision` ≈ 25 ns, rbf ≈ 15 µs with ~800 support vectors.

use crate::error::{DedupError, Result};
use crate::interrupt::Check;
use linfa::prelude::Fit;
use linfa::DatasetBase;
use linfa_svm::Svm;
use ndarray::{Array1, Array2};

/// Fewer examples than this cannot train a meaningful model.
pub const MIN_TRAIN_EXAMPLES: usize = 10;
/// linfa's dense kernel matrix needs 8·n² bytes: 6,000 examples → 288 MB, and
/// a linear fit there takes ~10 s. The paper saturates at 400 pairs.
pub const MAX_TRAIN_EXAMPLES: usize = 6_000;
/// Labelled pairs a training accepts: each gives two examples, ρ(a,b) and ρ(b,a).
pub const MAX_TRAIN_PAIRS: usize = MAX_TRAIN_EXAMPLES / 2;
/// Stored models may use feature indices below this (a sanity bound for
/// decoding: [`Model::contributions`] allocates up to the largest index).
pub const MAX_FEATURE_INDEX: usize = 4096;
/// Upper bound for cross-validation folds.
pub const MAX_FOLDS: usize = 20;
/// SMO stopping tolerance (libsvm's default). On 4,000 noisy examples linfa's
/// default 1e-7 needs 17,900 iterations (9.7 s) for the same predictions as 1e-3
/// with 9,150 (5.2 s); 1e-1 still needs 4,750 (4.8 s, the kernel build
/// dominates), so looser is not worth it. Shrinking stays off: in linfa 0.8.1 it
/// changes rho and can panic (index out of bounds in `SolverState::solve`).
const SMO_EPS: f64 = 1e-3;
/// linfa drops multipliers at or below this magnitude (`Svm::nsupport`); we match it.
const ALPHA_EPS: f64 = 100.0 * f64::EPSILON;

/// Kernel of the SVM. `Rbf` is K(x, y) = exp(−γ‖x − y‖²) on standardised features.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub enum Kernel {
    Linear,
    Rbf { gamma: f64 },
}

/// Training options. Build with [`TrainOptions::default`] or [`TrainOptions::from_json`].
#[derive(Clone, Debug)]
pub struct TrainOptions {
    pub kernel: Kernel,
    /// Soft-margin penalty C (> 0).
    pub c: f64,
    /// Indices into the full feature vector to train on; empty = all.
    pub features: Vec<usize>,
    /// Multiplies C for duplicate (positive) examples.
    pub class_weight_pos: f64,
    /// Multiplies C for non-duplicate (negative) examples.
    pub class_weight_neg: f64,
    /// Cross-validation folds: 2..=20, or 0 for none (1 is refused).
    pub folds: usize,
    /// Seed of the fold shuffle.
    pub seed: u64,
}

impl Default for TrainOptions {
    fn default() -> Self {
        TrainOptions {
            kernel: Kernel::Linear,
            c: 1.0,
            features: Vec::new(),
            class_weight_pos: 1.0,
            class_weight_neg: 1.0,
            folds: 5,
            seed: 42,
        }
    }
}

const OPTION_KEYS: &str = "kernel, C, gamma, features, class_weights, folds, seed";

fn bad_option(key: &str, why: impl std::fmt::Display) -> DedupError {
    DedupError::InvalidParameter {
        msg: format!(
            "invalid training option \"{}\": {why}",
            crate::error::excerpt(key)
        ),
        hint: None,
    }
}

fn positive_number(key: &str, v: &serde_json::Value) -> Result<f64> {
    match v.as_f64() {
        Some(x) if x.is_finite() && x > 0.0 => Ok(x),
        _ => Err(bad_option(
            key,
            format!(
                "must be a positive number, got {}",
                crate::error::json_excerpt(v)
            ),
        )),
    }
}

impl TrainOptions {
    /// Parses options from a JSON object (JSON `null` = all defaults).
    ///
    /// Keys: `kernel` (`"linear"` | `"rbf"`), `C`, `gamma` (rbf only; default
    /// 1 / number of features used), `features` (array of indices into the full
    /// vector of `n_features`, or of names from `names`), `class_weights`
    /// (`{"pos": x, "neg": y}` or `[pos, neg]`), `folds` (2..=20, or 0 for no
    /// cross-validation), `seed` (non-negative integer). `names` may be empty,
    /// then only indices are accepted. Unknown keys and bad values are
    /// [`DedupError::InvalidParameter`].
    pub fn from_json(
        v: &serde_json::Value,
        n_features: usize,
        names: &[&str],
    ) -> Result<TrainOptions> {
        let mut opts = TrainOptions::default();
        if n_features == 0 {
            return Err(DedupError::invalid_parameter(
                "the feature vector is empty: nothing to train on",
            ));
        }
        let obj = match v {
            serde_json::Value::Null => return Ok(opts),
            serde_json::Value::Object(m) => m,
            other => {
                return Err(DedupError::invalid_parameter(format!(
                    "training options must be a JSON object, got {}",
                    crate::error::json_excerpt(other)
                )))
            }
        };
        let mut want_rbf = false;
        let mut gamma = None;
        for (key, val) in obj {
            match key.as_str() {
                "kernel" => match val.as_str().map(str::to_ascii_lowercase).as_deref() {
                    Some("linear") => want_rbf = false,
                    Some("rbf") => want_rbf = true,
                    _ => {
                        return Err(bad_option(
                            key,
                            format!("must be \"linear\" or \"rbf\", got {}", crate::error::json_excerpt(val)),
                        ))
                    }
                },
                "C" | "c" => {
                    opts.c = positive_number("C", val)?;
                    if opts.c > MAX_PENALTY {
                        return Err(bad_option(
                            "C",
                            format!("must be a positive number up to {MAX_PENALTY:e}, got {}", crate::error::json_excerpt(val)),
                        ));
                    }
                }
                "gamma" => gamma = Some(positive_number(key, val)?),
                "features" => opts.features = parse_features(val, n_features, names)?,
                "class_weights" => {
                    let (pos, neg) = parse_class_weights(val)?;
                    opts.class_weight_pos = pos;
                    opts.class_weight_neg = neg;
                }
                "folds" => match val.as_u64() {
                    Some(k) if k != 1 && k <= MAX_FOLDS as u64 => opts.folds = k as usize,
                    _ => {
                        return Err(bad_option(
                            key,
                            format!(
                                "must be an integer from 2 to {MAX_FOLDS}, or 0 for no cross-validation, got {}",
                                crate::error::json_excerpt(val)
                            ),
                        ))
                    }
                },
                "seed" => match val.as_u64() {
                    Some(s) => opts.seed = s,
                    None => {
                        return Err(bad_option(
                            key,
                            format!("must be a non-negative integer, got {}", crate::error::json_excerpt(val)),
                        ))
                    }
                },
                _ => {
                    return Err(DedupError::InvalidParameter {
                        msg: format!("unknown training option \"{}\"", crate::error::excerpt(key)),
                        hint: Some(format!("valid options are: {OPTION_KEYS}")),
                    })
                }
            }
        }
        opts.kernel = if want_rbf {
            let used = if opts.features.is_empty() {
                n_features
            } else {
                opts.features.len()
            };
            Kernel::Rbf {
                gamma: gamma.unwrap_or(1.0 / used as f64),
            }
        } else if gamma.is_some() {
            return Err(bad_option(
                "gamma",
                "applies only to kernel \"rbf\" (the kernel is \"linear\")",
            ));
        } else {
            Kernel::Linear
        };
        // The numbers' ranges too, before any pair is read.
        check_numbers(&opts)?;
        Ok(opts)
    }
}

fn parse_features(v: &serde_json::Value, n_features: usize, names: &[&str]) -> Result<Vec<usize>> {
    let arr = v.as_array().ok_or_else(|| {
        bad_option(
            "features",
            format!(
                "must be an array of feature indices or names, got {}",
                crate::error::json_excerpt(v)
            ),
        )
    })?;
    if arr.is_empty() {
        return Err(bad_option(
            "features",
            "must not be empty (omit the key to use all features)",
        ));
    }
    let mut out = Vec::with_capacity(arr.len());
    for item in arr {
        let idx = if let Some(i) = item.as_u64() {
            if i >= n_features as u64 {
                return Err(bad_option(
                    "features",
                    format!("index {i} is out of range 0..{}", n_features - 1),
                ));
            }
            i as usize
        } else if let Some(name) = item.as_str() {
            match names.iter().position(|n| *n == name) {
                Some(i) if i < n_features => i,
                _ if names.is_empty() => {
                    return Err(bad_option(
                        "features",
                        format!(
                            "expects indices here, got name \"{}\"",
                            crate::error::excerpt(name)
                        ),
                    ))
                }
                _ => {
                    return Err(bad_option(
                        "features",
                        format!(
                            "unknown feature \"{}\" (known: {})",
                            crate::error::excerpt(name),
                            names.join(", ")
                        ),
                    ))
                }
            }
        } else {
            return Err(bad_option(
                "features",
                format!(
                    "each entry must be an index or a name, got {}",
                    crate::error::json_excerpt(item)
                ),
            ));
        };
        if out.contains(&idx) {
            return Err(bad_option("features", format!("{item} is listed twice")));
        }
        out.push(idx);
    }
    Ok(out)
}

fn parse_class_weights(v: &serde_json::Value) -> Result<(f64, f64)> {
    const KEY: &str = "class_weights";
    match v {
        serde_json::Value::Array(a) if a.len() == 2 => {
            Ok((positive_number(KEY, &a[0])?, positive_number(KEY, &a[1])?))
        }
        serde_json::Value::Object(m) => {
            let (mut pos, mut neg) = (1.0, 1.0);
            for (k, x) in m {
                match k.as_str() {
                    "pos" => pos = positive_number(KEY, x)?,
                    "neg" => neg = positive_number(KEY, x)?,
                    _ => {
                        return Err(bad_option(
                            KEY,
                            format!(
                                "unknown key \"{}\" (expected \"pos\" and \"neg\")",
                                crate::error::excerpt(k)
                            ),
                        ))
                    }
                }
            }
            Ok((pos, neg))
        }
        _ => Err(bad_option(
            KEY,
            format!(
                "must be {{\"pos\": x, \"neg\": y}} or [pos, neg], got {}",
                crate::error::json_excerpt(v)
            ),
        )),
    }
}

/// One training example: a feature vector ρ(a,b) and whether "a duplicates b".
#[derive(Clone, Debug, PartialEq)]
pub struct Example {
    pub x: Vec<f64>,
    pub y: bool,
}

/// How far from its training mean a standardised feature counts, in standard
/// deviations: a linear model's slope holds within the values it was trained on,
/// and a value far past them (a `time` of two years, when the labelled pairs were
/// published days apart) would otherwise outweigh every other feature.
pub const Z_LIMIT: f64 = 5.0;

/// `(v − mean) / std`, limited to ±[`Z_LIMIT`] (monotone in `v`, so a bound
/// over a range of `v` is still the bound at the range's end).
fn standardise(v: f64, mean: f64, std: f64) -> f64 {
    ((v - mean) / std).clamp(-Z_LIMIT, Z_LIMIT)
}

/// Standardisation z = (x − mean) / std, per used feature, limited to ±[`Z_LIMIT`];
/// a zero std is stored as 1.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Scaler {
    pub mean: Vec<f64>,
    pub std: Vec<f64>,
}

impl Scaler {
    /// Fits on the rows of `x` (already feature-selected and sanitised), over the
    /// known values of each column (NaN is "does not apply", see [`crate::features::UNKNOWN`]).
    fn fit(x: &Array2<f64>) -> Scaler {
        let mut mean = Vec::with_capacity(x.ncols());
        let mut std = Vec::with_capacity(x.ncols());
        for col in x.columns() {
            let known = || col.iter().filter(|v| !v.is_nan());
            let n = known().count().max(1) as f64;
            let m = known().sum::<f64>() / n;
            let var = known().map(|v| (v - m) * (v - m)).sum::<f64>() / n;
            let s = var.sqrt();
            mean.push(if m.is_finite() { m } else { 0.0 });
            std.push(if s.is_finite() && s > 1e-12 { s } else { 1.0 });
        }
        Scaler { mean, std }
    }

    /// Standardises `x` in place; an unknown value becomes the mean (0).
    fn apply(&self, x: &mut Array2<f64>) {
        for mut row in x.rows_mut() {
            for ((v, m), s) in row.iter_mut().zip(&self.mean).zip(&self.std) {
                *v = if v.is_nan() {
                    0.0
                } else {
                    standardise(*v, *m, *s)
                };
            }
        }
    }
}

/// A trained classifier: everything needed to evaluate ρ without linfa.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Model {
    /// Indices into the full feature vector, in training column order.
    pub features: Vec<usize>,
    pub scaler: Scaler,
    pub kernel: Kernel,
    pub bias: f64,
    /// Linear: w in scaled feature space (len = features.len()); empty for rbf
    pub weights: Vec<f64>,
    /// Rbf: support vectors (scaled)…
    pub support_vectors: Vec<Vec<f64>>,
    /// …and their α·y coefficients
    pub coefficients: Vec<f64>,
}

/// Confusion counts (positive = duplicate) and the derived scores; a score whose
/// denominator is 0 is 0.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize)]
pub struct CvMetrics {
    pub tp: i64,
    pub fp: i64,
    pub fn_: i64,
    pub tn: i64,
    pub precision: f64,
    pub recall: f64,
    pub f1: f64,
}

impl CvMetrics {
    fn from_counts(tp: i64, fp: i64, fn_: i64, tn: i64) -> CvMetrics {
        let ratio = |a: i64, b: i64| if b > 0 { a as f64 / b as f64 } else { 0.0 };
        let precision = ratio(tp, tp + fp);
        let recall = ratio(tp, tp + fn_);
        let f1 = if precision + recall > 0.0 {
            2.0 * precision * recall / (precision + recall)
        } else {
            0.0
        };
        CvMetrics {
            tp,
            fp,
            fn_,
            tn,
            precision,
            recall,
            f1,
        }
    }

    /// Counts `model`'s predictions on the given rows of `examples`.
    fn evaluate<'a>(model: &Model, examples: impl Iterator<Item = &'a Example>) -> [i64; 4] {
        let mut c = [0i64; 4];
        for e in examples {
            match (model.predict(&e.x), e.y) {
                (true, true) => c[0] += 1,
                (true, false) => c[1] += 1,
                (false, true) => c[2] += 1,
                (false, false) => c[3] += 1,
            }
        }
        c
    }
}

/// What [`train`] returns.
#[derive(Clone, Debug)]
pub struct TrainReport {
    pub model: Model,
    /// Pooled out-of-fold confusion counts; `None` when folds < 2.
    pub cv: Option<CvMetrics>,
    pub n_examples: usize,
    pub n_positive: usize,
    /// The final model on its own training data (optimistic).
    pub train_metrics: CvMetrics,
}

/// Trains on all `examples`, and first cross-validates with `opts.folds`
/// stratified folds (shuffled by `opts.seed`), each fold fitting its own scaler.
///
/// Non-finite feature values are treated as 0, as [`Model::decision`] does.
/// Cannot be cancelled; see [`train_checked`].
pub fn train(examples: &[Example], opts: &TrainOptions) -> Result<TrainReport> {
    train_checked(examples, opts, &mut crate::interrupt::never())
}

/// [`train`], calling `check` on the calling thread (and only there) while it
/// works: an `Err` from it stops the training, which returns that error.
///
/// Where it checks: once before any fitting; while the fits (one per fold and
/// the final one, or the single one without cross-validation) run on worker
/// threads, every [`crate::workers::CHECK_EVERY`] as the calling thread waits for them; once
/// after the last fit. One fit is a single linfa call (kernel matrix, then SMO)
/// that nothing can interrupt: on a stop this returns at once, the workers take
/// no new fit, and the fits under way end in the background on threads that own
/// their data ([`crate::workers::live_workers`] counts them; see [`crate::workers::parallel_map`]).
pub fn train_checked(
    examples: &[Example],
    opts: &TrainOptions,
    check: &mut Check<'_>,
) -> Result<TrainReport> {
    let n = examples.len();
    if n < MIN_TRAIN_EXAMPLES {
        return Err(DedupError::invalid_parameter(format!(
            "training needs at least {MIN_TRAIN_EXAMPLES} pairs, got {n}"
        )));
    }
    if n > MAX_TRAIN_EXAMPLES {
        return Err(DedupError::TooLarge {
            msg: format!("training accepts at most {MAX_TRAIN_EXAMPLES} pairs, got {n}"),
            hint: Some(
                "the SVM solver keeps an n×n kernel matrix in memory; train on a sample".into(),
            ),
        });
    }
    let dim = examples[0].x.len();
    if let Some((i, e)) = examples.iter().enumerate().find(|(_, e)| e.x.len() != dim) {
        return Err(DedupError::invalid_input(format!(
            "training pair {} has {} features, the first has {dim}",
            i + 1,
            e.x.len()
        )));
    }
    if dim == 0 {
        return Err(DedupError::invalid_parameter(
            "the feature vector is empty: nothing to train on",
        ));
    }
    let n_positive = examples.iter().filter(|e| e.y).count();
    if n_positive == 0 {
        return Err(DedupError::invalid_parameter(
            "training pairs are all one class: no duplicate pair among them",
        ));
    }
    if n_positive == n {
        return Err(DedupError::invalid_parameter(
            "training pairs are all one class: every pair is a duplicate",
        ));
    }
    let features: Vec<usize> = if opts.features.is_empty() {
        (0..dim).collect()
    } else {
        opts.features.clone()
    };
    if let Some(&i) = features.iter().find(|&&i| i >= dim) {
        return Err(bad_option(
            "features",
            format!("index {i} is out of range 0..{}", dim - 1),
        ));
    }
    check_numbers(opts)?;
    if opts.folds > MAX_FOLDS {
        return Err(bad_option(
            "folds",
            format!("must be at most {MAX_FOLDS}, got {}", opts.folds),
        ));
    }

    check()?;
    // The fits run on worker threads that own what they read (see `crate::workers::parallel_map`:
    // a stop leaves a fit under way to end in the background).
    let owned: std::sync::Arc<Vec<Example>> = std::sync::Arc::new(examples.to_vec());
    let cv = if opts.folds >= 2 {
        let smaller = n_positive.min(n - n_positive);
        if smaller < opts.folds {
            return Err(DedupError::InvalidParameter {
                msg: format!(
                    "cross-validation with {} folds needs at least {} pairs of each class, got {} {}",
                    opts.folds,
                    opts.folds,
                    smaller,
                    if n_positive < n - n_positive { "duplicates" } else { "non-duplicates" }
                ),
                hint: Some("lower \"folds\", or set it to 0 to skip cross-validation".into()),
            });
        }
        let fold_of = stratified_folds(examples, opts.folds, opts.seed);
        // The folds and the final fit are independent: they run on worker threads.
        let mut jobs: Vec<Option<usize>> = (0..opts.folds).map(Some).collect();
        jobs.push(None);
        let fits = {
            let (all, folds, features, opts) = (
                owned.clone(),
                fold_of.clone(),
                features.clone(),
                opts.clone(),
            );
            crate::workers::parallel_map(
                std::sync::Arc::new(jobs.clone()),
                std::sync::Arc::new(move |job: &Option<usize>| {
                    let rows: Vec<&Example> = match job {
                        Some(k) => all
                            .iter()
                            .zip(&folds)
                            .filter(|(_, &f)| f != *k)
                            .map(|(e, _)| e)
                            .collect(),
                        None => all.iter().collect(),
                    };
                    fit_model(&rows, &features, &opts)
                }),
                check,
            )?
        };
        let mut counts = [0i64; 4];
        let mut last = None;
        for (job, fit) in jobs.iter().zip(fits) {
            let model = fit?;
            match job {
                Some(k) => {
                    let test = examples.iter().zip(&fold_of).filter(|(_, &f)| f == *k);
                    let c = CvMetrics::evaluate(&model, test.map(|(e, _)| e));
                    for (total, add) in counts.iter_mut().zip(c) {
                        *total += add;
                    }
                }
                None => last = Some(model),
            }
        }
        let cv = CvMetrics::from_counts(counts[0], counts[1], counts[2], counts[3]);
        (Some(cv), last)
    } else {
        (None, None)
    };
    let (cv, model) = cv;
    let model = match model {
        Some(m) => m,
        None => {
            // One fit, on a worker thread too, so that the calling thread can
            // stop waiting for it.
            let (all, features, opts) = (owned.clone(), features.clone(), opts.clone());
            let fit = crate::workers::parallel_map(
                std::sync::Arc::new(vec![()]),
                std::sync::Arc::new(move |_: &()| {
                    let rows: Vec<&Example> = all.iter().collect();
                    fit_model(&rows, &features, &opts)
                }),
                check,
            )?;
            fit.into_iter().next().unwrap_or_else(|| {
                Err(DedupError::invalid_input("svm training returned no model"))
            })?
        }
    };
    check()?;
    let [tp, fp, fn_, tn] = CvMetrics::evaluate(&model, examples.iter());
    Ok(TrainReport {
        model,
        cv,
        n_examples: n,
        n_positive,
        train_metrics: CvMetrics::from_counts(tp, fp, fn_, tn),
    })
}

/// The largest penalty (C times a class weight) a fit takes. linfa's solver takes
/// time in proportion to it on labels it cannot separate (`bench_train_penalty`:
/// 400 examples of half noise fit in 10 ms at C 1, 0.7 s at C 100, 6.9 s at
/// C 1000; it grows with the square of the examples), fits no better past it, and
/// cannot be interrupted: a stopped training's fit ends in the background.
pub const MAX_PENALTY: f64 = 1e3;

/// The largest RBF `gamma` a fit takes: the features are standardised, so past it
/// every pair is its own neighbourhood and the model only recalls its training
/// pairs.
pub const MAX_GAMMA: f64 = 1e3;

/// The smallest penalty a fit takes: below it nothing is learnt (every pair on
/// the margin's one side), and subnormal weights would make the solver's sums
/// meaningless.
pub const MIN_PENALTY: f64 = 1e-6;

fn check_numbers(opts: &TrainOptions) -> Result<()> {
    let ok = |x: f64| x.is_finite() && x > 0.0;
    if !ok(opts.c) || opts.c > MAX_PENALTY {
        return Err(bad_option(
            "C",
            format!(
                "must be a positive number up to {MAX_PENALTY:e}, got {}",
                crate::error::number(opts.c)
            ),
        ));
    }
    if !ok(opts.class_weight_pos) || !ok(opts.class_weight_neg) {
        return Err(bad_option(
            "class_weights",
            format!(
                "must be positive numbers, got pos {} and neg {}",
                crate::error::number(opts.class_weight_pos),
                crate::error::number(opts.class_weight_neg)
            ),
        ));
    }
    let penalty = |w: f64| opts.c * w;
    if !ok(penalty(opts.class_weight_pos))
        || !ok(penalty(opts.class_weight_neg))
        || !(MIN_PENALTY..=MAX_PENALTY).contains(&penalty(opts.class_weight_pos))
        || !(MIN_PENALTY..=MAX_PENALTY).contains(&penalty(opts.class_weight_neg))
    {
        return Err(bad_option(
            "C",
            format!("C times a class weight must be between {MIN_PENALTY:e} and {MAX_PENALTY:e}"),
        ));
    }
    if let Kernel::Rbf { gamma } = opts.kernel {
        if !ok(gamma) || !ok(1.0 / gamma) || gamma > MAX_GAMMA {
            return Err(bad_option(
                "gamma",
                format!(
                    "must be a positive number up to {MAX_GAMMA:e}, got {}",
                    crate::error::number(gamma)
                ),
            ));
        }
    }
    Ok(())
}

/// Assigns every example a fold in 0..k: each class is shuffled separately and
/// dealt round-robin, so every fold gets ⌊m/k⌋ or ⌈m/k⌉ of each class.
fn stratified_folds(examples: &[Example], k: usize, seed: u64) -> Vec<usize> {
    let mut rng = SplitMix64(seed);
    let mut fold_of = vec![0usize; examples.len()];
    let mut next = 0usize;
    for class in [true, false] {
        let mut idx: Vec<usize> = (0..examples.len())
            .filter(|&i| examples[i].y == class)
            .collect();
        for i in (1..idx.len()).rev() {
            idx.swap(i, rng.below(i as u64 + 1) as usize);
        }
        for i in idx {
            fold_of[i] = next % k;
            next += 1;
        }
    }
    fold_of
}

/// SplitMix64 (Steele, Lea, Flood 2014): tiny, seedable, good enough for shuffling.
struct SplitMix64(u64);

impl SplitMix64 {
    fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in 0..n (n > 0), by Lemire's multiply-shift; the bias is < n/2⁶⁴.
    fn below(&mut self, n: u64) -> u64 {
        ((self.next_u64() as u128 * n as u128) >> 64) as u64
    }
}

/// ±∞ counts as 0; NaN stays: it is [`crate::features::UNKNOWN`] (the scaler fits on known values
/// only, and an unknown value counts as the feature's training mean).
#[inline]
fn sanitise(v: f64) -> f64 {
    if v.is_infinite() {
        0.0
    } else {
        v
    }
}

/// Selected, sanitised, standardised design matrix and targets, plus the scaler.
fn design(rows: &[&Example], features: &[usize]) -> Result<(Array2<f64>, Array1<bool>, Scaler)> {
    let mut x = Array2::<f64>::zeros((rows.len(), features.len()));
    for (mut row, e) in x.rows_mut().into_iter().zip(rows) {
        for (v, &f) in row.iter_mut().zip(features) {
            *v = sanitise(e.x[f]);
        }
    }
    let scaler = Scaler::fit(&x);
    scaler.apply(&mut x);
    if x.iter().any(|v| !v.is_finite()) {
        return Err(DedupError::invalid_input(
            "training feature values are too large to standardise",
        ));
    }
    let y = rows.iter().map(|e| e.y).collect();
    Ok((x, y, scaler))
}

/// Runs linfa's SMO on the standardised data.
fn fit_linfa(x: &Array2<f64>, y: &Array1<bool>, opts: &TrainOptions) -> Result<Svm<f64, bool>> {
    let params = Svm::<f64, bool>::params().eps(SMO_EPS).pos_neg_weights(
        opts.c * opts.class_weight_pos,
        opts.c * opts.class_weight_neg,
    );
    // linfa's Gaussian kernel is exp(−‖x − y‖² / eps), so eps = 1/γ.
    let params = match opts.kernel {
        Kernel::Linear => params.linear_kernel(),
        Kernel::Rbf { gamma } => params.gaussian_kernel(1.0 / gamma),
    };
    let dataset = DatasetBase::new(x.clone(), y.clone());
    params
        .fit(&dataset)
        .map_err(|e| DedupError::invalid_parameter(format!("svm training failed: {e}")))
}

/// Copies linfa's solution into a [`Model`]. linfa decides by
/// `weighted_sum(z) − rho ≥ 0`, so bias = −rho. Linear: `weighted_sum(e_j)` is
/// exactly linfa's stored w_j. Rbf: linfa keeps the training rows whose
/// |α·y| > 100·ε, in row order, and `alpha` already holds α·y.
fn extract(
    svm: &Svm<f64, bool>,
    x: &Array2<f64>,
    kernel: Kernel,
    features: Vec<usize>,
    scaler: Scaler,
) -> Result<Model> {
    let d = x.ncols();
    let mut model = Model {
        features,
        scaler,
        kernel,
        bias: -svm.rho,
        weights: Vec::new(),
        support_vectors: Vec::new(),
        coefficients: Vec::new(),
    };
    match kernel {
        Kernel::Linear => {
            let mut unit = Array1::<f64>::zeros(d);
            for j in 0..d {
                unit[j] = 1.0;
                model.weights.push(svm.weighted_sum(&unit));
                unit[j] = 0.0;
            }
        }
        Kernel::Rbf { .. } => {
            for (row, &a) in x.rows().into_iter().zip(&svm.alpha) {
                if a.abs() > ALPHA_EPS {
                    model.support_vectors.push(row.to_vec());
                    model.coefficients.push(a);
                }
            }
        }
    }
    let finite = model.bias.is_finite()
        && model.weights.iter().all(|w| w.is_finite())
        && model.coefficients.iter().all(|w| w.is_finite());
    if !finite {
        return Err(DedupError::InvalidParameter {
            msg: "svm training did not reach a finite solution".into(),
            hint: Some("try a smaller C or gamma".into()),
        });
    }
    Ok(model)
}

fn fit_model(rows: &[&Example], features: &[usize], opts: &TrainOptions) -> Result<Model> {
    let (x, y, scaler) = design(rows, features)?;
    let svm = fit_linfa(&x, &y, opts)?;
    extract(&svm, &x, opts.kernel, features.to_vec(), scaler)
}

impl Model {
    /// Decision value for a full-length feature vector (selects `self.features`,
    /// scales, evaluates). Positive = duplicate. ±∞ and missing (vector too short)
    /// values count as 0, [`crate::features::UNKNOWN`] ones as the training mean, as in training.
    /// Linear allocates nothing.
    pub fn decision(&self, x_full: &[f64]) -> f64 {
        match self.kernel {
            Kernel::Linear => self
                .linear(|f, _, m| {
                    let v = sanitise(x_full.get(f).copied().unwrap_or(0.0));
                    Some(if v.is_nan() { m } else { v })
                })
                .unwrap_or(0.0),
            Kernel::Rbf { .. } => self.decision_scaled(&self.scale(x_full)),
        }
    }

    /// An upper bound of [`Model::decision`] over every feature vector within
    /// `ranges` (full-length, as [`crate::features::bounds`] gives them), or `None`
    /// when the kernel gives no cheap one (RBF). Linear: each term takes its range
    /// end on the side of its weight's sign, summed by the same loop as `decision`.
    /// Rounding is monotone in every step, so no vector in the ranges evaluates
    /// higher.
    pub fn decision_upper(&self, ranges: &[crate::features::Range]) -> Option<f64> {
        // Scaling by a positive std keeps the order; stored models have one (see
        // `check_consistent`), anything else gets no bound.
        if !self.scaler.std.iter().all(|&s| s > 0.0 && s.is_finite()) {
            return None;
        }
        match self.kernel {
            Kernel::Linear => self.linear(|f, w, m| {
                let r = ranges
                    .get(f)
                    .copied()
                    .unwrap_or(crate::features::Range { lo: 0.0, hi: 0.0 });
                // An unknown value (both ends NaN) is the mean, as in `decision`.
                if r.lo.is_nan() && r.hi.is_nan() {
                    return Some(m);
                }
                // `sanitise` maps ±∞ to 0 and is not monotone there: only finite
                // ends are bounds.
                (r.lo.is_finite() && r.hi.is_finite()).then_some(if w >= 0.0 { r.hi } else { r.lo })
            }),
            Kernel::Rbf { .. } => None,
        }
    }

    /// bias + Σ w·z(v) over the used features (`standardise`), `v = value(feature, w,
    /// mean)` (None from `value` is None). Linear models only.
    fn linear(&self, mut value: impl FnMut(usize, f64, f64) -> Option<f64>) -> Option<f64> {
        let mut acc = self.bias;
        for ((&f, &w), (m, s)) in self
            .features
            .iter()
            .zip(&self.weights)
            .zip(self.scaler.mean.iter().zip(&self.scaler.std))
        {
            acc += w * standardise(value(f, w, *m)?, *m, *s);
        }
        Some(acc)
    }

    /// True when [`Model::decision`] is positive: "a duplicates b".
    pub fn predict(&self, x_full: &[f64]) -> bool {
        self.decision(x_full) > 0.0
    }

    /// Per-feature contribution to the decision value, aligned with the FULL
    /// vector (0 for unused features; needs `x_full.len()` slots, more if the
    /// model uses higher indices).
    ///
    /// Linear: exact, w_i·z_i, summing to `decision − bias`.
    /// Rbf: occlusion, `decision(z) − decision(z with z_i = 0)`, i.e. how much
    /// the decision moves when feature i is replaced by its training mean. These
    /// do not sum to `decision − bias` in general.
    pub fn contributions(&self, x_full: &[f64]) -> Vec<f64> {
        let len = self
            .features
            .iter()
            .map(|&f| f + 1)
            .max()
            .unwrap_or(0)
            .max(x_full.len());
        let mut out = vec![0.0; len];
        let z = self.scale(x_full);
        match self.kernel {
            Kernel::Linear => {
                for ((&f, w), zi) in self.features.iter().zip(&self.weights).zip(&z) {
                    out[f] += w * zi;
                }
            }
            Kernel::Rbf { .. } => {
                let full = self.decision_scaled(&z);
                let mut occluded = z.clone();
                for (k, &f) in self.features.iter().enumerate() {
                    occluded[k] = 0.0;
                    out[f] += full - self.decision_scaled(&occluded);
                    occluded[k] = z[k];
                }
            }
        }
        out
    }

    /// Selected, sanitised, standardised features.
    fn scale(&self, x_full: &[f64]) -> Vec<f64> {
        self.features
            .iter()
            .zip(self.scaler.mean.iter().zip(&self.scaler.std))
            .map(|(&f, (m, s))| {
                let v = sanitise(x_full.get(f).copied().unwrap_or(0.0));
                if v.is_nan() {
                    0.0
                } else {
                    standardise(v, *m, *s)
                }
            })
            .collect()
    }

    /// Decision value in the scaled feature space.
    fn decision_scaled(&self, z: &[f64]) -> f64 {
        match self.kernel {
            Kernel::Linear => {
                self.bias + self.weights.iter().zip(z).map(|(w, v)| w * v).sum::<f64>()
            }
            Kernel::Rbf { gamma } => {
                let mut acc = self.bias;
                for (sv, c) in self.support_vectors.iter().zip(&self.coefficients) {
                    let d2: f64 = sv.iter().zip(z).map(|(a, b)| (a - b) * (a - b)).sum();
                    acc += c * (-d2 * gamma).exp();
                }
                acc
            }
        }
    }

    /// Structural check for a model read from storage: lengths agree, numbers are
    /// finite, stds positive, gamma positive. Failure is
    /// [`DedupError::InvalidBinary`], as for bytes that do not decode at all.
    pub fn check_consistent(&self) -> Result<()> {
        let d = self.features.len();
        let bad = |why: &str| {
            Err(DedupError::invalid_binary(format!(
                "svm model is inconsistent: {why}"
            )))
        };
        if d == 0 {
            return bad("no features");
        }
        if self.features.iter().any(|&f| f >= MAX_FEATURE_INDEX) {
            return bad("a feature index is out of range");
        }
        if self.scaler.mean.len() != d || self.scaler.std.len() != d {
            return bad("scaler length differs from the feature count");
        }
        let finite = |v: &[f64]| v.iter().all(|x| x.is_finite());
        if !finite(&self.scaler.mean) || !self.scaler.std.iter().all(|s| s.is_finite() && *s > 0.0)
        {
            return bad("scaler holds a non-finite or non-positive value");
        }
        if !self.bias.is_finite() {
            return bad("bias is not finite");
        }
        match self.kernel {
            Kernel::Linear => {
                if self.weights.len() != d || !finite(&self.weights) {
                    return bad("linear weights do not match the features");
                }
                if !self.support_vectors.is_empty() || !self.coefficients.is_empty() {
                    return bad("a linear model carries support vectors");
                }
            }
            Kernel::Rbf { gamma } => {
                if !(gamma.is_finite() && gamma > 0.0) {
                    return bad("gamma is not a positive number");
                }
                if !self.weights.is_empty()
                    || self.coefficients.len() != self.support_vectors.len()
                    || !finite(&self.coefficients)
                    || self
                        .support_vectors
                        .iter()
                        .any(|sv| sv.len() != d || !finite(sv))
                {
                    return bad("support vectors do not match the features");
                }
            }
        }
        Ok(())
    }
}

/// The four readings of a pair from both directions (paper §6.1).
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub enum PairOutcome {
    /// D(ρ(a,b)) = D(ρ(b,a)) = 0: both are originals.
    Distinct,
    /// Only D(ρ(a,b)) = 1: a duplicates b (b is the original).
    ADuplicatesB,
    /// Only D(ρ(b,a)) = 1: b duplicates a (a is the original).
    BDuplicatesA,
    /// Both 1: each is a duplicate of the other; neither adds anything.
    Mutual,
}

impl Model {
    /// Classifies ρ(a,b) and ρ(b,a) into one of the four outcomes.
    pub fn outcome(&self, rho_ab: &[f64], rho_ba: &[f64]) -> PairOutcome {
        match (self.predict(rho_ab), self.predict(rho_ba)) {
            (false, false) => PairOutcome::Distinct,
            (true, false) => PairOutcome::ADuplicatesB,
            (false, true) => PairOutcome::BDuplicatesA,
            (true, true) => PairOutcome::Mutual,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use linfa::prelude::Predict;
    use serde_json::json;

    /// Synthetic pair features: 9 columns in [0,1]-ish, duplicates score high on
    /// the first five, column 5 is pure noise, the rest weakly informative.
    /// `flip` is the fraction of labels flipped (overlap between classes).
    fn synthetic(n: usize, seed: u64, flip: f64) -> Vec<Example> {
        let mut rng = SplitMix64(seed);
        let mut unif = move || (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64;
        (0..n)
            .map(|i| {
                let y = i % 2 == 0;
                let base = if y { 0.75 } else { 0.35 };
                let mut x = Vec::with_capacity(9);
                for j in 0..9 {
                    let spread = if j < 5 { 0.5 } else { 1.0 };
                    let centre = if j == 5 {
                        0.5
                    } else if j < 5 {
                        base
                    } else {
                        0.5 + (base - 0.55) * 0.3
                    };
                    x.push(centre + (unif() - 0.5) * spread);
                }
                let flipped = unif() < flip;
                Example { x, y: y != flipped }
            })
            .collect()
    }

    fn xor_data(n: usize, seed: u64) -> Vec<Example> {
        let mut rng = SplitMix64(seed);
        let mut unif = move || (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64 * 2.0 - 1.0;
        (0..n)
            .map(|_| {
                let (a, b) = (unif(), unif());
                Example {
                    x: vec![a, b, 0.0],
                    y: (a > 0.0) != (b > 0.0),
                }
            })
            .collect()
    }

    fn assert_invalid_param(r: Result<impl std::fmt::Debug>, needle: &str) {
        match r {
            Err(e @ DedupError::InvalidParameter { .. }) => {
                assert_eq!(e.sqlstate(), "22023");
                assert!(
                    e.to_string().contains(needle),
                    "{e} should mention {needle}"
                );
            }
            other => panic!("expected InvalidParameter({needle}), got {other:?}"),
        }
    }

    #[test]
    fn separable_data_trains_to_high_f1() {
        let data = synthetic(400, 7, 0.0);
        let rep = train(&data, &TrainOptions::default()).unwrap();
        let cv = rep.cv.unwrap();
        assert!(cv.f1 > 0.95, "{cv:?}");
        assert!(rep.train_metrics.f1 > 0.97, "{:?}", rep.train_metrics);
        assert_eq!(cv.tp + cv.fp + cv.fn_ + cv.tn, 400);
        assert_eq!(rep.n_examples, 400);
        assert_eq!(rep.n_positive, 200);
        assert_eq!(rep.model.features, (0..9).collect::<Vec<_>>());
        // the pure-noise column gets a small weight, the informative ones large
        let w = &rep.model.weights;
        assert!(w[5].abs() < w[0].abs() / 3.0, "{w:?}");
        // deterministic for a seed
        let again = train(&data, &TrainOptions::default()).unwrap();
        assert_eq!(again.model, rep.model);
        assert_eq!(again.cv.unwrap(), cv);
    }

    fn check_agrees_with_linfa(data: &[Example], opts: &TrainOptions) {
        let features: Vec<usize> = (0..data[0].x.len()).collect();
        let rows: Vec<&Example> = data.iter().collect();
        let (x, y, scaler) = design(&rows, &features).unwrap();
        let svm = fit_linfa(&x, &y, opts).unwrap();
        let model = extract(&svm, &x, opts.kernel, features, scaler).unwrap();
        for (e, z) in data.iter().zip(x.rows()) {
            let theirs = svm.weighted_sum(&z) - svm.rho;
            let ours = model.decision(&e.x);
            assert!((theirs - ours).abs() < 1e-6, "{theirs} vs {ours}");
            if theirs.abs() > 1e-9 {
                let linfa_says: bool = svm.predict(z);
                assert_eq!(linfa_says, model.predict(&e.x));
            }
        }
    }

    #[test]
    fn a_value_far_past_the_training_values_counts_at_most_z_limit_deviations() {
        // `time` in seconds, trained on pairs days apart: two years later must not
        // outweigh the other features (a built-in model gave it +13).
        let model = Model {
            features: vec![0, 8],
            scaler: Scaler {
                mean: vec![0.3, 0.0],
                std: vec![0.28, 271_336.7],
            },
            kernel: Kernel::Linear,
            bias: -0.5,
            weights: vec![1.0, 0.062],
            support_vectors: vec![],
            coefficients: vec![],
        };
        let mut x = [0.0; crate::features::N_FEATURES];
        x[0] = 0.3;
        x[8] = 700.0 * 86_400.0;
        let c = model.contributions(&x);
        assert!((c[8] - 0.062 * Z_LIMIT).abs() < 1e-12, "{}", c[8]);
        assert!((model.decision(&x) - (-0.5 + 0.062 * Z_LIMIT)).abs() < 1e-12);
        x[8] = -x[8];
        assert!((model.contributions(&x)[8] + 0.062 * Z_LIMIT).abs() < 1e-12);
        // Within the limit nothing changes.
        x[8] = 86_400.0;
        assert!((model.contributions(&x)[8] - 0.062 * 86_400.0 / 271_336.7).abs() < 1e-12);
    }

    #[test]
    fn decision_upper_bounds_every_vector_in_the_ranges() {
        use crate::features::Range;
        let model = Model {
            features: vec![0, 2, 4, 5, 8, 10],
            scaler: Scaler {
                mean: vec![0.5, 0.1, 0.7, 0.8, 3.0, 0.4],
                std: vec![0.3, 0.2, 0.25, 1.0, 100.0, 0.1],
            },
            kernel: Kernel::Linear,
            bias: 0.7,
            weights: vec![-3.0, -1.5, -2.0, 0.0, 0.01, 0.4],
            support_vectors: vec![],
            coefficients: vec![],
        };
        let mut seed = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            (seed >> 11) as f64 / (1u64 << 53) as f64
        };
        for _ in 0..2000 {
            let mut ranges = [Range { lo: 0.0, hi: 0.0 }; crate::features::N_FEATURES];
            let mut x = [0.0; crate::features::N_FEATURES];
            for (r, v) in ranges.iter_mut().zip(x.iter_mut()) {
                let (p, q) = (next() * 4.0 - 2.0, next() * 4.0 - 2.0);
                *r = Range {
                    lo: p.min(q),
                    hi: p.max(q),
                };
                *v = r.lo + (r.hi - r.lo) * next();
            }
            let upper = model.decision_upper(&ranges).expect("linear");
            assert!(model.decision(&x) <= upper);
            // At the ends it picks, the bound is attained.
            let worst: Vec<f64> = (0..x.len())
                .map(|f| {
                    let k = model.features.iter().position(|&g| g == f);
                    match k {
                        Some(k) if model.weights[k] < 0.0 => ranges[f].lo,
                        _ => ranges[f].hi,
                    }
                })
                .collect();
            assert_eq!(model.decision(&worst), upper);
        }
        let rbf = Model {
            kernel: Kernel::Rbf { gamma: 0.5 },
            ..model
        };
        assert_eq!(rbf.decision_upper(&[]), None);
    }

    #[test]
    fn decision_matches_linfa_linear_and_rbf() {
        let data = synthetic(300, 11, 0.1);
        check_agrees_with_linfa(&data, &TrainOptions::default());
        let rbf = TrainOptions {
            kernel: Kernel::Rbf { gamma: 0.3 },
            c: 2.0,
            class_weight_pos: 2.0,
            ..TrainOptions::default()
        };
        check_agrees_with_linfa(&data, &rbf);
        check_agrees_with_linfa(&xor_data(200, 3), &rbf);
    }

    #[test]
    fn train_checked_returns_the_checks_error() {
        let data = synthetic(200, 5, 0.05);
        for folds in [0, 5] {
            let opts = TrainOptions {
                folds,
                ..TrainOptions::default()
            };
            let mut calls = 0;
            let mut check = || {
                calls += 1;
                Ok(())
            };
            train_checked(&data, &opts, &mut check).unwrap();
            assert!(calls >= 2, "folds {folds}: {calls} checks");
            let mut stop = || Err(DedupError::invalid_input("cancelled"));
            let e = train_checked(&data, &opts, &mut stop).unwrap_err();
            assert_eq!(e.to_string(), "cancelled");
        }
    }

    #[test]
    fn rbf_learns_xor_linear_cannot() {
        let data = xor_data(400, 5);
        let opts = TrainOptions::from_json(&json!({"kernel": "rbf", "C": 10}), 3, &[]).unwrap();
        assert_eq!(opts.kernel, Kernel::Rbf { gamma: 1.0 / 3.0 });
        let rbf = train(&data, &opts).unwrap();
        assert!(rbf.cv.unwrap().f1 > 0.9, "{:?}", rbf.cv);
        assert!(rbf.model.weights.is_empty());
        assert_eq!(
            rbf.model.support_vectors.len(),
            rbf.model.coefficients.len()
        );
        let lin = train(&data, &TrainOptions::default()).unwrap();
        assert!(lin.cv.unwrap().f1 < 0.75, "{:?}", lin.cv);
        // occlusion contributions: the constant third column contributes nothing
        let c = rbf.model.contributions(&[0.5, 0.5, 0.0]);
        assert_eq!(c.len(), 3);
        assert_eq!(c[2], 0.0);
        assert!(c[0].abs() > 0.0 && c[1].abs() > 0.0);
    }

    #[test]
    fn linear_contributions_sum_to_decision_minus_bias() {
        let data = synthetic(200, 13, 0.05);
        let opts = TrainOptions {
            features: vec![4, 0, 2],
            ..TrainOptions::default()
        };
        let m = train(&data, &opts).unwrap().model;
        assert_eq!(m.features, vec![4, 0, 2]);
        for e in data.iter().take(20) {
            let c = m.contributions(&e.x);
            assert_eq!(c.len(), 9);
            for unused in [1, 3, 5, 6, 7, 8] {
                assert_eq!(c[unused], 0.0);
            }
            let sum: f64 = c.iter().sum();
            assert!((sum - (m.decision(&e.x) - m.bias)).abs() < 1e-12);
        }
    }

    #[test]
    fn decision_sanitises_input() {
        let data = synthetic(100, 17, 0.0);
        let m = train(
            &data,
            &TrainOptions {
                folds: 0,
                ..Default::default()
            },
        )
        .unwrap()
        .model;
        let mut x = data[0].x.clone();
        x[1] = f64::NAN;
        x[2] = f64::INFINITY;
        // NaN is unknown: the feature's training mean; ±∞ is 0.
        let k = m.features.iter().position(|&f| f == 1).unwrap();
        let mut known = data[0].x.clone();
        known[1] = m.scaler.mean[k];
        known[2] = 0.0;
        assert!(m.decision(&x).is_finite());
        assert_eq!(m.decision(&x), m.decision(&known));
        assert_eq!(m.contributions(&x)[1], 0.0);
        let mut r: Vec<crate::features::Range> = data[0]
            .x
            .iter()
            .map(|&v| crate::features::Range { lo: v, hi: v })
            .collect();
        r[1] = crate::features::Range {
            lo: f64::NAN,
            hi: f64::NAN,
        };
        r[2] = crate::features::Range { lo: 0.0, hi: 0.0 };
        assert_eq!(m.decision_upper(&r), Some(m.decision(&x)));
        assert!(m.decision(&[]).is_finite()); // too short: missing = 0
                                              // Unknown training values are left out of the scaler and imputed; ±∞ is 0.
        let mut dirty = data.clone();
        dirty[0].x[0] = f64::NAN;
        dirty[1].x[3] = f64::NEG_INFINITY;
        assert!(train(&dirty, &TrainOptions::default()).is_ok());
    }

    #[test]
    fn validation_errors() {
        let data = synthetic(40, 19, 0.0);
        assert_invalid_param(
            train(&data[..4], &TrainOptions::default()),
            "training needs at least 10 pairs, got 4",
        );
        let neg: Vec<Example> = data.iter().filter(|e| !e.y).cloned().collect();
        assert_invalid_param(train(&neg, &TrainOptions::default()), "no duplicate pair");
        let pos: Vec<Example> = data.iter().filter(|e| e.y).cloned().collect();
        assert_invalid_param(
            train(&pos, &TrainOptions::default()),
            "every pair is a duplicate",
        );
        // 3 duplicates cannot fill 5 folds
        let mut few = neg.clone();
        few.extend(pos.iter().take(3).cloned());
        assert_invalid_param(
            train(&few, &TrainOptions::default()),
            "needs at least 5 pairs of each class",
        );
        assert!(train(
            &few,
            &TrainOptions {
                folds: 0,
                ..Default::default()
            }
        )
        .unwrap()
        .cv
        .is_none());
        assert_invalid_param(
            train(
                &data,
                &TrainOptions {
                    c: 0.0,
                    ..Default::default()
                },
            ),
            "\"C\"",
        );
        assert_invalid_param(
            train(
                &data,
                &TrainOptions {
                    features: vec![9],
                    ..Default::default()
                },
            ),
            "out of range",
        );
        let mut ragged = data.clone();
        ragged[3].x.pop();
        assert_eq!(
            train(&ragged, &TrainOptions::default())
                .unwrap_err()
                .sqlstate(),
            "22P02"
        );
        let many = vec![
            Example {
                x: vec![0.0],
                y: true
            };
            MAX_TRAIN_EXAMPLES + 1
        ];
        assert_eq!(
            train(&many, &TrainOptions::default())
                .unwrap_err()
                .sqlstate(),
            "54000"
        );
    }

    #[test]
    fn degenerate_constant_features_do_not_panic() {
        let data: Vec<Example> = (0..20)
            .map(|i| Example {
                x: vec![0.5; 3],
                y: i % 3 == 0,
            })
            .collect();
        if let Ok(rep) = train(&data, &TrainOptions::default()) {
            assert!(rep.model.decision(&[0.5; 3]).is_finite());
        }
    }

    #[test]
    fn from_json_parses_everything() {
        let names = ["words", "title", "numbers"];
        let o = TrainOptions::from_json(
            &json!({"kernel": "rbf", "C": 3.5, "gamma": 0.25, "features": ["title", 0],
                    "class_weights": {"pos": 4, "neg": 0.5}, "folds": 10, "seed": 7}),
            3,
            &names,
        )
        .unwrap();
        assert_eq!(o.kernel, Kernel::Rbf { gamma: 0.25 });
        assert_eq!(o.c, 3.5);
        assert_eq!(o.features, vec![1, 0]);
        assert_eq!((o.class_weight_pos, o.class_weight_neg), (4.0, 0.5));
        assert_eq!((o.folds, o.seed), (10, 7));
        let o = TrainOptions::from_json(
            &json!({"kernel": "rbf", "features": [2, 1], "class_weights": [2, 1]}),
            3,
            &names,
        )
        .unwrap();
        assert_eq!(o.kernel, Kernel::Rbf { gamma: 0.5 });
        assert_eq!(o.class_weight_pos, 2.0);
        let d = TrainOptions::from_json(&serde_json::Value::Null, 3, &names).unwrap();
        assert_eq!(
            (d.kernel, d.c, d.folds, d.seed),
            (Kernel::Linear, 1.0, 5, 42)
        );
        assert!(TrainOptions::from_json(&json!({"folds": 0}), 3, &names).is_ok());
    }

    #[test]
    fn from_json_errors() {
        let names = ["words", "title", "numbers"];
        let cases = [
            (
                json!({"kernal": "rbf"}),
                "unknown training option \"kernal\"",
            ),
            (
                json!({"kernel": "poly"}),
                "\"kernel\": must be \"linear\" or \"rbf\"",
            ),
            (json!({"C": -1}), "\"C\": must be a positive number, got -1"),
            (
                json!({"C": 1e7}),
                "\"C\": must be a positive number up to 1e3",
            ),
            (json!({"C": "big"}), "\"C\""),
            (json!({"gamma": 0.5}), "applies only to kernel \"rbf\""),
            (json!({"kernel": "rbf", "gamma": 0}), "\"gamma\""),
            (json!({"features": []}), "must not be empty"),
            (json!({"features": [3]}), "index 3 is out of range"),
            (
                json!({"features": ["bogus"]}),
                "unknown feature \"bogus\" (known: words, title, numbers)",
            ),
            (json!({"features": [1, "title"]}), "listed twice"),
            (json!({"features": [1.5]}), "index or a name"),
            (json!({"features": "words"}), "must be an array"),
            (json!({"class_weights": [1]}), "\"class_weights\""),
            (
                json!({"class_weights": {"pos": 1, "nag": 2}}),
                "unknown key \"nag\"",
            ),
            (json!({"class_weights": {"pos": 0}}), "positive number"),
            (
                json!({"folds": 21}),
                "\"folds\": must be an integer from 2 to 20",
            ),
            (json!({"folds": -1}), "\"folds\""),
            (json!({"folds": 1}), "or 0 for no cross-validation, got 1"),
            (json!({"seed": -3}), "\"seed\""),
            (json!([1, 2]), "must be a JSON object"),
        ];
        for (v, needle) in cases {
            assert_invalid_param(TrainOptions::from_json(&v, 3, &names), needle);
        }
        assert_invalid_param(
            TrainOptions::from_json(&json!({"features": ["words"]}), 3, &[]),
            "expects indices",
        );
    }

    #[test]
    fn outcomes_from_both_directions() {
        let m = Model {
            features: vec![0],
            scaler: Scaler {
                mean: vec![0.0],
                std: vec![1.0],
            },
            kernel: Kernel::Linear,
            bias: -0.5,
            weights: vec![1.0],
            support_vectors: vec![],
            coefficients: vec![],
        };
        assert_eq!(m.outcome(&[0.0], &[0.0]), PairOutcome::Distinct);
        assert_eq!(m.outcome(&[1.0], &[0.0]), PairOutcome::ADuplicatesB);
        assert_eq!(m.outcome(&[0.0], &[1.0]), PairOutcome::BDuplicatesA);
        assert_eq!(m.outcome(&[1.0], &[1.0]), PairOutcome::Mutual);
    }

    #[test]
    fn stratified_folds_are_balanced() {
        let data = synthetic(103, 23, 0.0);
        let folds = stratified_folds(&data, 5, 1);
        for k in 0..5 {
            let pos = data
                .iter()
                .zip(&folds)
                .filter(|(e, &f)| f == k && e.y)
                .count();
            let all = folds.iter().filter(|&&f| f == k).count();
            assert!((10..=11).contains(&pos), "fold {k}: {pos} positives");
            assert!((20..=21).contains(&all), "fold {k}: {all} rows");
        }
        assert_ne!(folds, stratified_folds(&data, 5, 2));
        assert_eq!(folds, stratified_folds(&data, 5, 1));
    }

    /// How long one linear fit takes as C grows, on labels half of which are
    /// noise (the solver's slowest case):
    /// `cargo test --release -- --ignored --nocapture bench_train_penalty`
    #[test]
    #[ignore]
    fn bench_train_penalty() {
        use std::time::Instant;
        let n: usize = std::env::var("N")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(1000);
        let flip: f64 = std::env::var("FLIP")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(0.5);
        {
            let data = synthetic(n, 7, flip);
            for c in [1.0, 10.0, 100.0, 1000.0] {
                let opts = TrainOptions {
                    c,
                    folds: 0,
                    ..Default::default()
                };
                let t = Instant::now();
                let rep = train(&data, &opts).unwrap();
                println!(
                    "{n} examples, C {c}: single fit {:?} (train f1 {:.3})",
                    t.elapsed(),
                    rep.train_metrics.f1
                );
            }
        }
    }

    /// `cargo test --release -- --ignored --nocapture bench_train_4000`
    #[test]
    #[ignore]
    fn bench_train_4000() {
        use std::time::Instant;
        let data = synthetic(4000, 29, 0.06);
        for (name, opts) in [
            ("linear", TrainOptions::default()),
            (
                "rbf",
                TrainOptions {
                    kernel: Kernel::Rbf { gamma: 1.0 / 9.0 },
                    ..Default::default()
                },
            ),
        ] {
            let t = Instant::now();
            let rep = train(&data, &opts).unwrap();
            let total = t.elapsed();
            let t = Instant::now();
            let no_cv = train(
                &data,
                &TrainOptions {
                    folds: 0,
                    ..opts.clone()
                },
            )
            .unwrap();
            let single = t.elapsed();
            let m = &no_cv.model;
            let iters = 1_000_000 / if m.support_vectors.is_empty() { 1 } else { 100 };
            let xs: Vec<Vec<f64>> = data.iter().take(1000).map(|e| e.x.clone()).collect();
            let t = Instant::now();
            let mut acc = 0.0;
            for i in 0..iters {
                acc += m.decision(std::hint::black_box(&xs[i % xs.len()]));
            }
            let ns = t.elapsed().as_nanos() as f64 / iters as f64;
            println!(
                "{name}: 4000 examples, 5-fold CV + final fit {total:?}, single fit {single:?}, \
                 cv f1 {:.3}, {} SVs, decision {ns:.1} ns (acc {acc:.1})",
                rep.cv.unwrap().f1,
                m.support_vectors.len()
            );
        }
    }
}
