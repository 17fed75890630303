#!/usr/bin/env bash
# Runs one benchmark: bash qa/bench.sh NAME [--quick] [--tls]   (see CONTRACT.md §5; --tls: cluster TLS on, for transport and writes)
# NAME maps to the class io.sluice.qa.bench.<CamelName>Benchmark (pause-fanout -> PauseFanoutBenchmark),
# so a benchmark is added by adding that one class. The report lands in qa/target/bench/NAME.json.
# SLUICE_BENCH_BUILD=none skips the build (when it is known to be current); BENCH_JAVA_OPTS adds JVM options.
set -euo pipefail

usage() { echo "usage: bash qa/bench.sh NAME [--quick] [--tls]" >&2; exit 2; }
[ $# -ge 1 ] || usage
name="$1"; shift
case "$name" in
  ''|-*|*[!a-z0-9-]*) echo "bench.sh: '$name' is not a benchmark name (lower-case words joined by '-')" >&2; usage ;;
esac

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"

class="$(echo "$name" | awk -F- '{ for (i = 1; i <= NF; i++) printf "%s", toupper(substr($i, 1, 1)) substr($i, 2) }')Benchmark"

if [ "${SLUICE_BENCH_BUILD:-all}" != "none" ]; then
  echo "bench.sh: building qa and what it needs ..."
  # package, not install: in one reactor build the classpath names the modules' own jars, and nothing lands in ~/.m2
  if ! mvn -B -q -o -DskipTests package -pl qa -am; then
    echo "bench.sh: offline build failed, retrying online ..." >&2
    mvn -B -q -DskipTests package -pl qa -am
  fi
fi

# the cluster benchmarks' children refuse unknown SLUICE_* settings in their environment
unset SLUICE_BENCH_BUILD
classpath_file="qa/target/bench-classpath.txt"
[ -f "$classpath_file" ] || { echo "bench.sh: $classpath_file missing: build qa first" >&2; exit 1; }
if [ ! -f "qa/target/classes/io/sluice/qa/bench/${class}.class" ]; then
  echo "bench.sh: no benchmark '$name' (class io.sluice.qa.bench.${class} not found); known:" >&2
  ls qa/target/classes/io/sluice/qa/bench/ 2>/dev/null | sed -n 's/^\([A-Za-z]*\)Benchmark\.class$/  \1/p' \
    | sed 's/\([a-z0-9]\)\([A-Z]\)/\1-\2/g' | tr 'A-Z' 'a-z' >&2
  exit 2
fi

mkdir -p qa/target/bench
# shellcheck disable=SC2086
# A fixed starting heap: without it G1 resizes the young generation for the first minute and the
# allocation-heavier side of a comparison pays for it.
# The common pool's two threads: on 2 CPUs it would have one, and CompletableFuture would start a thread per async
# task in every broker the benchmark embeds (sluice.jar sets the same itself: CommonPool).
exec java --add-exports java.base/jdk.internal.misc=ALL-UNNAMED -Xms2g \
  -Djava.util.concurrent.ForkJoinPool.common.parallelism=2 ${BENCH_JAVA_OPTS:-} \
  -Dsluice.bench.dir="$root/qa/target/bench" \
  -cp "qa/target/classes:$(cat "$classpath_file")" "io.sluice.qa.bench.${class}" "$@"
