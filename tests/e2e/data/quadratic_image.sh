#!/bin/sh
# Builds the image the container e2e test runs the quadratic example in: a
# root file system of exactly the files the example needs (its binary and
# libringtrial in /opt/quadratic, their shared libraries as ldd lists them,
# /bin/sh and dirname for run.sh), tarred and imported with `podman import`.
# The tag is the content hash of those files, so a second run finds the image
# in podman's store and builds nothing. Prints the image's name.
#   usage: quadratic_image.sh PODMAN QUADRATIC_TRIAL LIBRINGTRIAL
set -eu
podman=$1
trial=$2
lib=$3
# Each library's path, from "name => /path (addr)" and "/path (addr)" lines.
libs=$( (ldd "$trial"; ldd "$lib") | awk '$2 == "=>" && $3 ~ /^\// {print $3} $1 ~ /^\// {print $1}' |
  grep -v "/$(basename "$lib")\$" | sort -u)
files="/bin/sh $(command -v dirname) $libs"
hash=$( (for f in "$trial" "$lib" $files; do printf '%s ' "$f"; sha256sum <"$f"; done) | sha256sum | cut -c1-16)
image=localhost/ring-quadratic:$hash
if "$podman" image exists "$image"; then
  echo "$image"
  exit 0
fi
root=$(mktemp -d)
trap 'rm -rf "$root" "$root.tar"' EXIT
for f in $files; do
  mkdir -p "$root$(dirname "$f")"
  cp -L "$f" "$root$f"
done
mkdir -p "$root/opt/quadratic" "$root/tmp"
chmod 1777 "$root/tmp"
cp -L "$trial" "$lib" "$root/opt/quadratic/"
tar -C "$root" -cf "$root.tar" .
"$podman" import --quiet "$root.tar" "$image" >/dev/null
echo "$image"
