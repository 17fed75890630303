#!/usr/bin/env bash
# A chaos run (issue 31): bash qa/chaos.sh --minutes 30 --seed N [--profile opensearch]
# Brokers and the gateway each in a network namespace of their own (needs root, ip and nft), a seeded nemesis
# (partitions, one-way loss, gateway cuts, kill -9, SIGSTOP) against a recorded workload, and the checker of every
# promise. Writes qa/target/chaos/<seed>/report.json and timeline.svg; exit 0 only when every property holds.
# --profile opensearch adds an OpenSearch exporter into a node in the harness's JVM and judges its index too.
# The same seed replays the same fault schedule. SLUICE_CHAOS_BUILD=none skips the build.
set -euo pipefail

usage() { echo "usage: bash qa/chaos.sh (--minutes M | --seconds S) --seed N [--profile default|opensearch]" >&2; exit 2; }
args=()
seed=""
while [ $# -gt 0 ]; do
  case "$1" in
    --seed) [ $# -ge 2 ] || usage; seed="$2"; args+=("$1" "$2"); shift 2 ;;
    --minutes|--seconds) [ $# -ge 2 ] || usage; args+=("$1" "$2"); shift 2 ;;
    --profile)
      [ $# -ge 2 ] || usage
      case "$2" in default|opensearch) ;; *) echo "chaos.sh: unknown profile '$2' (default, opensearch)" >&2; exit 2 ;; esac
      args+=("$1" "$2"); shift 2 ;;
    *) echo "chaos.sh: unknown argument '$1'" >&2; usage ;;
  esac
done
case "$seed" in ''|*[!0-9]*) echo "chaos.sh: --seed needs a non-negative integer" >&2; usage ;; esac

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"

if [ "${SLUICE_CHAOS_BUILD:-all}" != "none" ]; then
  echo "chaos.sh: building the jar and qa ..."
  if ! mvn -B -q -o -DskipTests package -pl qa -am; then
    echo "chaos.sh: offline build failed, retrying online ..." >&2
    mvn -B -q -DskipTests package -pl qa -am
  fi
fi
# the children refuse unknown SLUICE_* settings in their environment
unset SLUICE_CHAOS_BUILD
classpath_file="qa/target/bench-classpath.txt"
[ -f "$classpath_file" ] || { echo "chaos.sh: $classpath_file missing: build qa first" >&2; exit 1; }

out="$root/qa/target/chaos/$seed"
mkdir -p "$out"
exec java --add-exports java.base/jdk.internal.misc=ALL-UNNAMED \
  -Dsluice.jar="$root/dist/target/sluice.jar" \
  -cp "qa/target/classes:$(cat "$classpath_file")" io.sluice.qa.chaos.ChaosRun "${args[@]}" --out "$out"
