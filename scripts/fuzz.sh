#!/usr/bin/env bash
# Runs one cargo-fuzz target (fuzz/fuzz_targets) for a given time under an RSS limit.
#   scripts/fuzz.sh TARGET SECONDS
# Targets: document_decode document_skim signature_decode model_decode
#          document_text text_analyze
# Needs cargo-fuzz (`cargo install cargo-fuzz --locked`). cargo-fuzz passes nightly
# flags; on a stable toolchain RUSTC_BOOTSTRAP=1 (set here) lets them through.
# Environment:
#   FUZZ_RSS_MB     libFuzzer -rss_limit_mb (default 2048): an input that makes the
#                   process grow past it is reported as a crash (out-of-memory)
#   FUZZ_TIMEOUT    seconds one input may take before it counts as a crash (10)
#   FUZZ_MAX_LEN    longest input tried, in bytes (65536)
#   FUZZ_SANITIZER  address, leak, memory, thread or none (default none: the code
#                   fuzzed is safe Rust, and the crate's global allocator, mimalloc,
#                   is not one the sanitizers watch)
# New inputs go to fuzz/work/TARGET, findings to fuzz/artifacts/TARGET (both
# ignored by git); the committed seeds in fuzz/corpus/TARGET are only read.
set -euo pipefail
usage="usage: scripts/fuzz.sh TARGET SECONDS"
target=${1:?$usage}
seconds=${2:?$usage}
cd "$(dirname "$0")/../fuzz"
if [[ ! -f fuzz_targets/$target.rs ]]; then
  echo "no fuzz target '$target'; targets: $(cd fuzz_targets && ls | sed 's/\.rs$//' | tr '\n' ' ')" >&2
  exit 2
fi
mkdir -p "work/$target" "corpus/$target"
export RUSTC_BOOTSTRAP=1
exec cargo fuzz run --sanitizer "${FUZZ_SANITIZER:-none}" --debug-assertions "$target" \
  "work/$target" "corpus/$target" -- \
  -max_total_time="$seconds" \
  -rss_limit_mb="${FUZZ_RSS_MB:-2048}" \
  -timeout="${FUZZ_TIMEOUT:-10}" \
  -max_len="${FUZZ_MAX_LEN:-65536}" \
  -print_final_stats=1
