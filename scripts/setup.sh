#!/usr/bin/env bash
# Installs what pg_dedup needs to build and test, skipping what is already there.
# Runs as root on Debian 12, never prompts. Safe to run again.
set -euo pipefail

PGRX_VERSION=0.18.0
PG_CONFIG=${PG_CONFIG:-/usr/bin/pg_config}
APT_PACKAGES=(postgresql-15 postgresql-server-dev-15 postgresql-contrib-15 clang libclang-dev sudo
              pkg-config libssl-dev fortunes-ru fortunes-min)

log() { printf '\033[1m[setup]\033[0m %s\n' "$*"; }

missing=()
for p in "${APT_PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  log "apt: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
else
  log "apt: all packages present"
fi

# Debian starts a system cluster on install; we never use it, and leave it alone.

if cargo pgrx --version 2>/dev/null | grep -q " ${PGRX_VERSION}\$"; then
  log "cargo-pgrx ${PGRX_VERSION} present"
else
  log "installing cargo-pgrx ${PGRX_VERSION} (about 4 minutes)"
  cargo install cargo-pgrx --version "=${PGRX_VERSION}" --locked --quiet
fi

if [ -f "${PGRX_HOME:-$HOME/.pgrx}/config.toml" ] && grep -q "pg15" "${PGRX_HOME:-$HOME/.pgrx}/config.toml"; then
  log "cargo pgrx already initialised for pg15"
else
  log "cargo pgrx init --pg15 ${PG_CONFIG}"
  cargo pgrx init --pg15 "${PG_CONFIG}" </dev/null
fi
