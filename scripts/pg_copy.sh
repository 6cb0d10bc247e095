#!/usr/bin/env bash
# A private copy of the system PostgreSQL 15 installation, for working on several
# checkouts at once: `cargo pgrx install` overwrites pg_dedup.so in the
# installation it targets, and a running server that loaded it dies (SIGBUS).
# PostgreSQL is relocatable, so a copy of its bin, lib, share and include
# directories under DIR finds its own files. Prints the two exports that point
# scripts/test.sh, the benches and cargo pgrx at the copy. Idempotent.
#   eval "$(bash scripts/pg_copy.sh /opt/pg_dedup_pg/mine)"
set -euo pipefail
dir=${1:?usage: scripts/pg_copy.sh DIR}
src=/usr/bin/pg_config
bindir=$($src --bindir)                 # /usr/lib/postgresql/15/bin
root=$(dirname "$(dirname "$bindir")")  # /usr/lib/postgresql
share=$($src --sharedir)                # /usr/share/postgresql/15
inc=$(dirname "$($src --includedir-server)")   # /usr/include/postgresql/15
if [ ! -x "$dir$bindir/pg_config" ]; then
  mkdir -p "$dir$root" "$dir$(dirname "$share")" "$dir$(dirname "$(dirname "$inc")")"
  cp -a "$(dirname "$bindir")" "$dir$root/"
  cp -a "$share" "$dir$(dirname "$share")/"
  cp -a "$(dirname "$inc")" "$dir$(dirname "$(dirname "$inc")")/"
fi
pgc="$dir$bindir/pg_config"
home="$dir/pgrx-home"
mkdir -p "$home"
printf '[configs]\npg15 = "%s"\n' "$pgc" > "$home/config.toml"
echo "export PG_CONFIG=$pgc PGRX_HOME=$home"
