#!/usr/bin/env bash
# A master and N CPU agents on this machine, in the background, with all their
# data and logs in one directory. The agents run in single-user mode
# (--single-user): every trial runs as the user who ran this script, with that
# user's rights, which is what a laptop needs and what `ring agent list` shows;
# a shared cluster runs its agents as root or with CAP_SETUID/CAP_SETGID so
# each trial runs as its owner (docs/security.md).
#
#   deploy/local-cluster.sh start [--agents N] [--slots S] [--port P] [--dir DIR]
#   deploy/local-cluster.sh stop  [--dir DIR]
#   deploy/local-cluster.sh status [--dir DIR]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
bin=${RING_BIN_DIR:-$root/build/bin}
webui=${RING_WEBUI_DIR:-$bin/../webui}  # the web UI the build puts beside bin/

cmd=${1:-}
shift || true
agents=2 slots=2 port=${RING_PORT:-8080} dir=${RING_LOCAL_DIR:-$root/.ringdata}
while [ $# -gt 0 ]; do
  case $1 in
    --agents) agents=$2; shift 2 ;;
    --slots) slots=$2; shift 2 ;;
    --port) port=$2; shift 2 ;;
    --dir) dir=$2; shift 2 ;;
    *) echo "local-cluster: unknown option $1" >&2; exit 2 ;;
  esac
done

pids_file=$dir/pids

stop() {
  [ -f "$pids_file" ] || { echo "local-cluster: nothing running in $dir"; return 0; }
  # Agents first (they stop their trials), then the master.
  tac "$pids_file" | while read -r pid name; do
    if kill -0 "$pid" 2>/dev/null; then
      kill -TERM "$pid" 2>/dev/null || true
      for _ in $(seq 1 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
      kill -KILL "$pid" 2>/dev/null || true
      echo "stopped $name (pid $pid)"
    fi
  done
  rm -f "$pids_file"
}

# The admin's first password: random, in a file only this user may read.
admin_password_file() {
  local file=$dir/master/admin-password
  if [ ! -s "$file" ]; then
    mkdir -p "$dir/master"
    (umask 077; head -c 18 /dev/urandom | base64 | tr -d '/+=\n' >"$file")
  fi
  echo "$file"
}

start_master() {
  local listen=$1
  rm -f "$dir/master.port"
  "$bin/ringmaster" --listen "$listen" --data-dir "$dir/master" --port-file "$dir/master.port" \
    --webui-dir "$webui" --admin-password-file "$(admin_password_file)" >>"$dir/logs/master.log" 2>&1 &
  local pid=$!
  for _ in $(seq 1 100); do
    [ -s "$dir/master.port" ] && { echo "$pid ringmaster" >>"$pids_file"; return 0; }
    kill -0 "$pid" 2>/dev/null || return 1
    sleep 0.1
  done
  return 1
}

start() {
  if [ -f "$pids_file" ]; then
    echo "local-cluster: already running in $dir (stop it with: $0 stop --dir $dir)" >&2
    exit 1
  fi
  mkdir -p "$dir/logs"
  if ! start_master "127.0.0.1:$port"; then
    echo "local-cluster: port $port is busy; letting the master pick a free port" >&2
    start_master "127.0.0.1:0" || { echo "local-cluster: the master did not start; see $dir/logs/master.log" >&2; exit 1; }
  fi
  local url="http://127.0.0.1:$(cat "$dir/master.port")"
  echo "$url" >"$dir/master.url"
  for i in $(seq 1 "$agents"); do
    "$bin/ringagent" --master "$url" --id "agent-$i" --cpu-slots "$slots" --work-dir "$dir/agent-$i" \
      --state-dir "$dir/agent-$i-state" --token-file "$dir/master/cluster-token" --single-user \
      >>"$dir/logs/agent-$i.log" 2>&1 &
    echo "$! agent-$i" >>"$pids_file"
  done
  # Sign the CLI in as the admin (its token goes to ~/.config/ring/tokens.json).
  "$bin/ring" -m "$url" user login admin --password-file "$(admin_password_file)" >/dev/null
  # Wait until every agent is connected.
  for _ in $(seq 1 100); do
    n=$("$bin/ring" -m "$url" --json agent list 2>/dev/null | grep -o '"state": *"connected"' | wc -l || true)
    [ "$n" -ge "$agents" ] && break
    sleep 0.1
  done
  echo "master: $url (logs in $dir/logs)"
  echo "agents: $agents with $slots CPU slots each, single-user: trials run as $(id -un), not as their" \
    "owners (ring agent list shows the mode; docs/operations.md says what it gives up)"
  echo "signed in as admin; the password is in $(admin_password_file)"
}

case $cmd in
  start) start ;;
  stop) stop ;;
  status) [ -f "$pids_file" ] && cat "$pids_file" || echo "not running" ;;
  *) echo "usage: $0 start|stop|status [--agents N] [--slots S] [--port P] [--dir DIR]" >&2; exit 2 ;;
esac
