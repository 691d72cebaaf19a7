#!/usr/bin/env bash
# Installs every system package Ringmaster needs to build, test and run.
# Debian 12 packages only; idempotent and quick when everything is present.
set -euo pipefail

packages=(
  build-essential cmake ninja-build ccache pkg-config git curl ca-certificates
  libboost-dev nlohmann-json3-dev libyaml-cpp-dev libsqlite3-dev sqlite3
  libspdlog-dev libfmt-dev libcli11-dev libgtest-dev libgmock-dev
  libarchive-dev libssl-dev
  # Distributed trials: Gloo collectives, libtorch (CPU) for the C++ model
  # examples, and Debian's torch and scikit-learn for torchrun-style scripts
  # and the handwritten digits data set the examples train on.
  libgloo-dev libtorch-dev python3-torch python3-sklearn
)

missing=()
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
