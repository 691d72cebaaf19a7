#!/usr/bin/env bash
# `cmake --install` of this build into a temporary prefix, then the installed
# pieces used as an admin and a user would: the binaries and systemd units
# are there, the installed master serves the installed web UI and the API,
# and a trial compiles and links against the installed headers and library.
#   tests/install/install_test.sh BUILD_DIR
set -euo pipefail
build=${1:?usage: install_test.sh BUILD_DIR}
prefix=$(mktemp -d "${TMPDIR:-/tmp}/ring-install.XXXXXX")
master_pid=
agent_pid=
cleanup() {
  [ -n "$agent_pid" ] && kill "$agent_pid" 2>/dev/null && wait "$agent_pid" 2>/dev/null || true
  [ -n "$master_pid" ] && kill "$master_pid" 2>/dev/null && wait "$master_pid" 2>/dev/null || true
  rm -rf "$prefix"
}
trap cleanup EXIT
fail() { echo "install_test: FAIL: $*" >&2; exit 1; }

cmake --install "$build" --prefix "$prefix" >/dev/null

for f in bin/ringmaster bin/ringagent bin/ring lib/libringtrial.so include/ring/trial/trial.h \
         lib/systemd/system/ringmaster.service lib/systemd/system/ringagent.service \
         share/ringmaster/webui/index.html share/ringmaster/examples/master.yaml \
         share/ringmaster/examples/agent.yaml share/doc/ringmaster/operations.md share/doc/ringmaster/security.md; do
  [ -e "$prefix/$f" ] || fail "$f is not installed"
done
grep -q "ExecStart=$prefix/bin/ringmaster " "$prefix/lib/systemd/system/ringmaster.service" \
  || fail "the master's unit does not start $prefix/bin/ringmaster"
grep -q "ExecStart=$prefix/bin/ringagent " "$prefix/lib/systemd/system/ringagent.service" \
  || fail "the agent's unit does not start $prefix/bin/ringagent"
if command -v systemd-analyze >/dev/null; then
  # Only the users and paths the units name may be missing on a build machine.
  out=$(systemd-analyze verify "$prefix"/lib/systemd/system/*.service 2>&1 || true)
  if echo "$out" | grep -v -e "not executable" -e "^$" | grep -q .; then fail "systemd-analyze: $out"; fi
fi

# The installed master, from the prefix alone: web UI and API.
data="$prefix/data"
mkdir -p "$data"
(umask 077; echo "install-test-password" >"$data/admin-password")
"$prefix/bin/ringmaster" --listen 127.0.0.1:0 --port-file "$data/port" --data-dir "$data" \
  --admin-password-file "$data/admin-password" >"$data/master.log" 2>&1 &
master_pid=$!
for _ in $(seq 1 100); do [ -s "$data/port" ] && break; sleep 0.1; done
[ -s "$data/port" ] || { cat "$data/master.log" >&2; fail "the installed master did not start"; }
url="http://127.0.0.1:$(cat "$data/port")"
curl -fsS "$url/" | grep -q '<div id="root"' || fail "the installed master does not serve the installed web UI"
curl -fsS "$url/api/v1/health" | grep -q '"status":"ok"' || fail "no health answer"
XDG_CONFIG_HOME="$data/config" "$prefix/bin/ring" -m "$url" user login admin --password-file "$data/admin-password" \
  >/dev/null || fail "cannot sign in with the installed CLI"
XDG_CONFIG_HOME="$data/config" "$prefix/bin/ring" -m "$url" master info | grep -q "schema version" \
  || fail "ring master info"

# A trial built against the installed headers and library.
cat >"$prefix/trial.cc" <<'CC'
#include <ring/trial/trial.h>
int main(int argc, char** argv) {
  auto ctx = ring::trial::Context::from_environment(argc, argv);
  ctx.report_training_metrics(1, {{"loss", 0.5}});
  return 0;
}
CC
g++ -std=c++20 -I"$prefix/include" "$prefix/trial.cc" -L"$prefix/lib" -lringtrial -Wl,-rpath,"$prefix/lib" \
  -o "$prefix/trial" || fail "a trial does not build against the installed runtime"
"$prefix/trial" >/dev/null || fail "the trial built against the installed runtime does not run"
# The trial runtime's Python folder, when the module was built: ringtrial
# and the determined package side by side, importable from the prefix
# alone, and found by the installed agent, which puts it first on trials'
# PYTHONPATH.
if ls "$build"/python/ringtrial.*.so >/dev/null 2>&1; then
  pydir=$(ls -d "$prefix"/lib/python3*/dist-packages 2>/dev/null | head -1)
  [ -n "$pydir" ] || fail "no lib/python3.X/dist-packages installed"
  for f in determined/__init__.py determined/core/__init__.py determined/launch/torch_distributed.py \
           determined/launch/wrap_rank.py; do
    [ -e "$pydir/$f" ] || fail "$pydir/$f is not installed"
  done
  ls "$pydir"/ringtrial.*.so >/dev/null 2>&1 || fail "ringtrial is not installed next to determined"
  where=$(cd / && PYTHONPATH="$pydir" /usr/bin/python3 -c \
    'import ringtrial, determined; print(ringtrial.__file__); print(determined.__file__)') \
    || fail "the installed ringtrial and determined do not import"
  [ "$(echo "$where" | grep -c "^$pydir/")" = 2 ] || fail "imported from elsewhere than $pydir: $where"
  "$prefix/bin/ringagent" --master "$url" --token-file "$data/cluster-token" --id install-agent \
    --state-dir "$data/agent-state" --work-dir "$data/agent-work" --single-user --cpu-slots 1 \
    >"$data/agent.log" 2>&1 &
  agent_pid=$!
  for _ in $(seq 1 100); do grep -q "PYTHONPATH starts with" "$data/agent.log" && break; sleep 0.1; done
  grep -q "PYTHONPATH starts with $pydir\$" "$data/agent.log" \
    || { cat "$data/agent.log" >&2; fail "the installed agent does not put $pydir first on PYTHONPATH"; }
fi
echo "install_test: ok ($prefix)"
