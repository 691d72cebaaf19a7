#!/usr/bin/env bash
# Checks the systemd units (deploy/systemd/*.service.in) with
# `systemd-analyze verify`, rendered as the install does with the build's
# binaries as their programs. Works without systemd running (--man=no, a
# private unit folder); skipped, saying so, where systemd-analyze is missing.
#
#   deploy/verify-units.sh [BUILD_DIR]     (default: build)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "${1:-$root/build}" && pwd)
if ! command -v systemd-analyze >/dev/null 2>&1; then
  echo "verify-units: systemd-analyze is not installed; the units were not checked"
  exit 0
fi
out=$(mktemp -d "${TMPDIR:-/tmp}/ring-units.XXXXXX")
trap 'rm -rf "$out"' EXIT
for unit_in in "$root"/deploy/systemd/*.service.in; do
  unit=$(basename "$unit_in" .in)
  sed "s|@CMAKE_INSTALL_PREFIX@|$build|g" "$unit_in" >"$out/$unit"
done
# SYSTEMD_LOG_LEVEL=warning hides notices about this machine (no systemd as
# PID 1, no journal); what remains is about the units. systemd-analyze exits
# non-zero for an error in a unit, and warnings about a unit name it.
log="$out/verify.log"
status=0
SYSTEMD_LOG_LEVEL=warning systemd-analyze verify --man=no "$out"/*.service >"$log" 2>&1 || status=$?
if [ "$status" != 0 ] || grep -q "\.service:" "$log"; then
  cat "$log" >&2
  echo "verify-units: systemd-analyze verify found problems in deploy/systemd (above)" >&2
  exit 1
fi
echo "verify-units: $(ls "$out"/*.service | wc -l) units verified"
