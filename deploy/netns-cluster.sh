#!/usr/bin/env bash
# Several "machines" on one host: a network namespace per node, each with its
# own address on a bridge, optionally behind a bandwidth limit and a delay.
# Master, agents and trial processes started with `exec` see only their own
# namespace's interfaces, so ranks on different nodes talk over the bridge as
# they would over a real network, and ranks on one node share it.
#
#   netns-cluster.sh check
#       exit 0 when namespaces can be created here (root, ip, a bridge);
#       otherwise exit 3 and say why
#   netns-cluster.sh up NAME NODES [--subnet 10.213.7] [--rate 1gbit] [--delay 1ms]
#       creates nodes NAME-0 .. NAME-(NODES-1) at SUBNET.2, SUBNET.3, ...;
#       the bridge NAME-br (SUBNET.1) stays in this namespace, so processes
#       here reach every node; --rate and --delay shape what each node sends
#   netns-cluster.sh addr NAME K        prints node K's address
#   netns-cluster.sh exec NAME K CMD... runs CMD inside node K
#   netns-cluster.sh down NAME          removes the nodes and the bridge
#
# NAME is at most 8 characters (interface names are limited to 15). Nothing
# is routed beyond the bridge: the nodes reach each other and this host only.
set -euo pipefail

die() {
  echo "netns-cluster: $*" >&2
  exit "${code:-1}"
}

usage() {
  sed -n '2,/^set -euo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//' >&2
  exit 2
}

state_dir() { echo "/run/ring-netns/$1"; }

check() {
  code=3
  [ "$(id -u)" -eq 0 ] || die "network namespaces need root (this is uid $(id -u))"
  command -v ip >/dev/null || die "the ip command is missing (Debian: iproute2)"
  local probe="ringprobe$$"
  ip netns add "$probe" 2>/dev/null || die "cannot create a network namespace here (ip netns add failed)"
  ip netns del "$probe"
  ip link add "rp$$-br" type bridge 2>/dev/null || die "cannot create a bridge here (ip link add type bridge failed)"
  ip link del "rp$$-br"
}

valid_name() {
  [[ "$1" =~ ^[a-z][a-z0-9]{0,7}$ ]] || die "NAME must be 1-8 lowercase letters and digits, starting with a letter: '$1'"
}

up() {
  [ $# -ge 2 ] || usage
  local name=$1 nodes=$2 subnet="10.213.7" rate="" delay=""
  shift 2
  while [ $# -gt 0 ]; do
    case $1 in
      --subnet) subnet=$2; shift 2 ;;
      --rate) rate=$2; shift 2 ;;
      --delay) delay=$2; shift 2 ;;
      *) die "unknown option '$1'" ;;
    esac
  done
  valid_name "$name"
  [[ "$nodes" =~ ^[1-9][0-9]?$ ]] || die "NODES must be 1-99: '$nodes'"
  [[ "$subnet" =~ ^[0-9]{1,3}\.[0-9]{1,3}\.[0-9]{1,3}$ ]] || die "--subnet takes three octets, e.g. 10.213.7: '$subnet'"
  check
  code=1
  [ ! -e "$(state_dir "$name")" ] || die "a cluster named $name is up already (netns-cluster.sh down $name)"
  mkdir -p "$(state_dir "$name")"
  echo "$subnet" >"$(state_dir "$name")/subnet"
  echo "$nodes" >"$(state_dir "$name")/nodes"
  # Whatever fails from here on leaves nothing behind.
  trap 'down "$name" >/dev/null 2>&1 || true' EXIT

  ip link add "$name-br" type bridge
  ip addr add "$subnet.1/24" dev "$name-br"
  ip link set "$name-br" up
  local k
  for ((k = 0; k < nodes; k++)); do
    local ns="$name-$k" host_end="$name-v$k"
    ip netns add "$ns"
    ip link add "$host_end" type veth peer name eth0 netns "$ns"
    ip link set "$host_end" master "$name-br" up
    ip -n "$ns" link set lo up
    ip -n "$ns" addr add "$subnet.$((k + 2))/24" dev eth0
    ip -n "$ns" link set eth0 up
    shape_node "$ns" "$rate" "$delay"
  done
  trap - EXIT
  for ((k = 0; k < nodes; k++)); do echo "$name-$k $subnet.$((k + 2))"; done
}

# What node `ns` sends goes through a token bucket of `rate` (one full-duplex
# link of that rate per node; the bucket holds a few 64 KiB segments, which
# is what veth hands over with segmentation offload) after a netem delay.
shape_node() {
  local ns=$1 rate=$2 delay=$3 parent=root
  if [ -n "$delay" ]; then
    ip netns exec "$ns" tc qdisc add dev eth0 root handle 1: netem delay "$delay" limit 100000 2>/dev/null ||
      die "--delay needs the kernel's netem queueing discipline (sch_netem), which this kernel does not have"
    parent="parent 1:1"
  fi
  if [ -n "$rate" ]; then
    # shellcheck disable=SC2086 # parent is one or two words
    ip netns exec "$ns" tc qdisc add dev eth0 $parent handle 10: tbf rate "$rate" burst 512kb latency 200ms ||
      die "cannot limit $ns to --rate $rate (tc tbf)"
  fi
}

addr() {
  [ $# -eq 2 ] || usage
  local dir
  dir=$(state_dir "$1")
  [ -f "$dir/subnet" ] || die "no cluster named $1 is up"
  [ "$2" -lt "$(cat "$dir/nodes")" ] || die "cluster $1 has no node $2"
  echo "$(cat "$dir/subnet").$(($2 + 2))"
}

run_in() {
  [ $# -ge 3 ] || usage
  local name=$1 k=$2
  shift 2
  exec ip netns exec "$name-$k" "$@"
}

down() {
  [ $# -eq 1 ] || usage
  local name=$1 dir
  valid_name "$name"
  dir=$(state_dir "$name")
  local ns
  for ns in $(ip netns list | awk '{print $1}' | grep -E "^$name-[0-9]+$" || true); do
    # Processes still inside would keep the namespace's sockets alive.
    ip netns pids "$ns" 2>/dev/null | xargs -r kill -KILL 2>/dev/null || true
    ip netns del "$ns"
  done
  ip link del "$name-br" 2>/dev/null || true
  rm -rf "$dir"
}

[ $# -ge 1 ] || usage
command=$1
shift
case $command in
  check) check ;;
  up) up "$@" ;;
  addr) addr "$@" ;;
  exec) run_in "$@" ;;
  down) down "$@" ;;
  -h | --help | help) usage ;;
  *) die "unknown command '$command' (check, up, addr, exec, down)" ;;
esac
