#!/usr/bin/env bash
# Installs every system package Ringmaster needs to build, test and run.
# Debian 12 packages only; idempotent and quick when everything is present.
#   deploy/install-deps.sh             everything
#   deploy/install-deps.sh --system    the Debian packages only
#   deploy/install-deps.sh --node      Node.js and the npm packages only
set -euo pipefail

part=all
case "${1:-}" in
  '') ;;
  --system) part=system ;;
  --node) part=node ;;
  *) echo "install-deps: unknown argument $1 (use --system or --node)" >&2; exit 2 ;;
esac

packages=(
  build-essential cmake ninja-build ccache pkg-config git curl ca-certificates
  mold  # the linker (cmake/build_tools.cmake): relinking is most of an incremental build
  libboost-dev nlohmann-json3-dev libyaml-cpp-dev libsqlite3-dev sqlite3
  libspdlog-dev libfmt-dev libcli11-dev libgtest-dev libgmock-dev
  libarchive-dev libssl-dev libsodium-dev prometheus-cpp-dev zlib1g-dev
  libre2-dev  # log_policies: regular expressions in linear time, the syntax Determined's use
  wrk  # bench/rest.sh
  slurm-wlm munge  # bench/launch.sh: Slurm on this host as the launch-latency peer
  slurmrestd slurm-wlm-jwt-plugin  # Slurm pools through slurmrestd with per-user JWTs
  # Distributed trials: Gloo collectives, libtorch (CPU) for the C++ model
  # examples, and Debian's torch and scikit-learn for torchrun-style scripts
  # and the handwritten digits data set the examples train on.
  libgloo-dev libtorch-dev python3-torch python3-sklearn
  # The trial runtime's Python bindings (pybind11, for Debian's python3).
  pybind11-dev python3-dev
  # Multi-host tests in network namespaces (ip netns, veth, bridge, tc), and
  # OpenMPI as a peer in the collectives benchmark.
  iproute2 openmpi-bin libopenmpi-dev
  # The web UI's end-to-end test drives Debian's chromium, headless.
  chromium
  # Trials in containers (environment.image, docs/containers.md): podman with
  # runc, as the container e2e test runs it; podman's default crun cannot set
  # a container's rlimits where root lacks CAP_SYS_RESOURCE.
  podman runc
  # Notebooks on the pool (docs/interactive.md): Jupyter Notebook and its
  # Python kernel, run by notebook tasks and by the tests.
  jupyter-notebook python3-ipykernel
  # The fuzz targets (deploy/fuzz.sh): clang with libFuzzer and the sanitizers.
  clang libclang-rt-14-dev
)

missing=()
[ "$part" = node ] && packages=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -gt 0 ]; then
  echo "install-deps: installing ${missing[*]}"
  sudo_cmd=()
  [ "$(id -u)" -eq 0 ] || sudo_cmd=(sudo)
  export DEBIAN_FRONTEND=noninteractive
  "${sudo_cmd[@]}" apt-get update -qq
  "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

# Node.js 20.19 or newer (Vite 8), then the npm packages of the web UI
# (webui/) and of the OpenAPI checks in the tests (tests/openapi/), each from
# its package-lock.json, reinstalled (npm ci) whenever the lock file changes.
[ "$part" = system ] && exit 0

root=$(cd "$(dirname "$0")/.." && pwd)
if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
  echo "install-deps: installing nodejs and npm"
  sudo_cmd=()
  [ "$(id -u)" -eq 0 ] || sudo_cmd=(sudo)
  DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends nodejs npm
fi
node_version=$(node -p 'process.versions.node')
if ! node -e 'const [a, b] = process.versions.node.split(".").map(Number); process.exit(a > 20 || (a === 20 && b >= 19) ? 0 : 1)'; then
  echo "install-deps: the web UI needs Node.js 20.19 or newer, this machine has $node_version" >&2
  echo "install-deps: install Node.js 20 or 22 (e.g. from https://deb.nodesource.com) and run this again" >&2
  exit 1
fi
for dir in webui tests/openapi; do
  lock_sum=$(sha256sum "$root/$dir/package-lock.json" | cut -d' ' -f1)
  stamp=$root/$dir/node_modules/.ring-package-lock.sha256
  if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$lock_sum" ]; then
    echo "install-deps: installing the npm packages of $dir (npm ci)"
    (cd "$root/$dir" && npm ci --no-audit --no-fund --loglevel=error)
    echo "$lock_sum" >"$stamp"
  fi
done
