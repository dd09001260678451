#!/usr/bin/env bash
# Runs the betree / RocksDB / LMDB benchmark suite through JMH and writes, under the output
# directory: jmh.json (JMH results; each phase's figures are secondary metrics), jmh.log,
# summary.tsv, series/*.csv, results.md and charts/*.png. See docs/benchmarks.md.
#
#   jmh-benchmarks/run.sh smoke            # seconds per engine; what CI runs (via mvn verify)
#   jmh-benchmarks/run.sh full             # 10x+ the cache per engine, minutes per engine
#
# Two JMH runs write into the same results: the default one (every benchmark at scale SCALE), then
# the small-cache variant (InsertBenchmark, FifoBenchmark and ReadBenchmark at scale SCALE-small,
# e.g. full-small: 64 MiB per engine, 28 M rows) with a memory cap of its own.
#
# Options: --no-build (use target/benchmarks.jar as it is), --out DIR (default results/SCALE),
#          --engines "betree rocksdb lmdb", --only REGEX (JMH benchmark filter, e.g. Insert|Read),
#          --variants "default small" (which of the two runs to make).
# Environment: MEM_CAP (full: 512m; "none" to run uncapped), SMALL_MEM_CAP (the small-cache run's
#          cap; full: 640m, none when MEM_CAP is none), BENCH_OPTS (extra -D options for the
#          benchmark JVMs, e.g. "-Dbench.insertRows=50000000 -Dbench.sync=true"),
#          JAVA (java binary), MEMBOUND and DROPCACHE (paths of the shared tools), CODEC (the codec
#          of iiBench, FIFO, reads and the time series, both engines alike: lz4, the default and the
#          codec issue 9's figures are taken with, or zstd).
#
# A full run caps every benchmark JVM (heap, off-heap and the page cache of its files) at
# MEM_CAP (SMALL_MEM_CAP) with the membound tool, and drops the store's files from the page cache
# with the dropcache tool before each cold read. Take full figures on a quiet machine.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
scale=${1:-}
case "$scale" in
  smoke|full) shift ;;
  *) echo "usage: $0 smoke|full [--no-build] [--out DIR] [--engines LIST] [--only REGEX] [--variants LIST]" >&2
     exit 2 ;;
esac
build=1
out="$here/results/$scale"
engines="betree rocksdb lmdb"
only="InsertBenchmark|ReadBenchmark|FifoBenchmark|CompressionBenchmark|TimeSeriesBenchmark"
variants="default small"
while [ $# -gt 0 ]; do
  case "$1" in
    --no-build) build=0 ;;
    --out) out=$2; shift ;;
    --engines) engines=$2; shift ;;
    --only) only=$2; shift ;;
    --variants) variants=$2; shift ;;
    *) echo "unknown option $1" >&2; exit 2 ;;
  esac
  shift
done
for v in $variants; do
  case "$v" in default|small) ;; *) echo "unknown variant $v" >&2; exit 2 ;; esac
done
# The small-cache run covers the benchmarks of --only that have a small-cache variant.
small_only=""
for b in InsertBenchmark FifoBenchmark ReadBenchmark; do
  case "$only" in *"${b%Benchmark}"*) small_only="$small_only|$b" ;; esac
done
small_only=${small_only#|}
run_default=0
run_small=0
case " $variants " in *" default "*) run_default=1 ;; esac
case " $variants " in *" small "*) [ -n "$small_only" ] && run_small=1 ;; esac

java=${JAVA:-java}
if [ -n "${JAVA_HOME:-}" ] && [ -z "${JAVA:-}" ]; then java="$JAVA_HOME/bin/java"; fi
shared="$root/../shared/tools"
membound=${MEMBOUND:-$shared/membound}
dropcache=${DROPCACHE:-$shared/dropcache}
jar="$here/target/benchmarks.jar"

if [ "$build" = 1 ]; then
  (cd "$root" && mvn -B -ntp -q -pl jmh-benchmarks -am -DskipTests package)
fi
[ -f "$jar" ] || { echo "run.sh: $jar is missing; build without --no-build" >&2; exit 1; }

mkdir -p "$out"
out=$(cd "$out" && pwd)
data="$here/results/tmp/$scale-data"
rm -rf "$out/summary.tsv" "$out/series" "$out/charts" "$out/jmh.json" "$out/jmh.log" "$out/jmh-small.json" \
  "$out/jmh-small.log" "$out/results.md" "$data"
mkdir -p "$data"

# JVM of every benchmark fork. The direct-memory limit leaves room for the cache plus Netty's
# and the codecs' buffers; the --add-opens flags lmdbjava needs come from the @Fork annotations.
if [ "$scale" = full ]; then
  fork_jvm_args="-Xms160m -Xmx160m -XX:MaxDirectMemorySize=320m"
  cap=${MEM_CAP:-512m}
  if [ "$cap" = none ]; then small_cap=${SMALL_MEM_CAP:-none}; else small_cap=${SMALL_MEM_CAP:-640m}; fi
else
  fork_jvm_args="-Xmx512m -XX:MaxDirectMemorySize=256m"
  cap=${MEM_CAP:-none}
  small_cap=${SMALL_MEM_CAP:-$cap}
fi
# The java of the benchmark forks under the memory cap $1 ("none": java itself).
capped_jvm() {
  if [ "$1" = none ]; then echo "$java"; return; fi
  [ -x "$membound" ] || { echo "run.sh: $membound not found; set MEMBOUND or MEM_CAP=none" >&2; exit 1; }
  local wrapper="$data/java-capped-$1"
  printf '#!/bin/sh\nexec "%s" "%s" "%s" "$@"\n' "$membound" "$1" "$(command -v "$java")" > "$wrapper"
  chmod +x "$wrapper"
  echo "$wrapper"
}
[ "$run_default" = 0 ] || jvm=$(capped_jvm "$cap")
[ "$run_small" = 0 ] || small_jvm=$(capped_jvm "$small_cap")
drop_opt=""
if [ -x "$dropcache" ]; then
  drop_opt="-Dbench.dropcache=$dropcache"
else
  echo "run.sh: no dropcache tool at $dropcache: cold reads will find the OS page cache warm" >&2
fi

engine_list=$(echo "$engines" | tr ' ' ',')
codec_list=""
for e in $engines; do
  case "$e" in
    betree) codec_list="$codec_list,betree:lz4,betree:zstd,betree:xz" ;;
    rocksdb) codec_list="$codec_list,rocksdb:lz4,rocksdb:zstd" ;;
    lmdb) codec_list="$codec_list,lmdb:none" ;;
    *) echo "unknown engine $e" >&2; exit 2 ;;
  esac
done
codec_list=${codec_list#,}

echo "run.sh: scale=$scale engines=[$engines] variants=[$variants] cap=$cap small-cache cap=$small_cap out=$out"
start=$(date +%s)
# Runs JMH: benchmarks matching $1 at scale $2 with the fork java $3, results to $out/$4.json and .log.
# -foe: a workload that returns a wrong answer (or crashes) fails the run. -to: a full-scale phase
# plus its setup runs past JMH's 10-minute default, and JMH interrupts a benchmark at its timeout
# (an interrupt closes the engines' file channels).
jmh() {
  "$java" -Xmx128m -jar "$jar" "$1" -foe true -to 40min -jvm "$3" -jvmArgs "$fork_jvm_args" \
    -jvmArgsAppend "-Dbench.results=$out -Dbench.data=$data $drop_opt ${BENCH_OPTS:-}" \
    -p scale="$2" -p engine="$engine_list" -p engineCodec="$codec_list" -p codec="${CODEC:-lz4}" \
    -prof io.betree.bench.jmh.PhaseMetricsProfiler -rf json -rff "$out/$4.json" 2>&1 | tee "$out/$4.log"
  local status=${PIPESTATUS[0]}
  [ "$status" = 0 ] || { echo "run.sh: JMH ($2) failed with status $status" >&2; exit "$status"; }
}
[ "$run_default" = 0 ] || jmh "$only" "$scale" "$jvm" jmh
[ "$run_small" = 0 ] || jmh "$small_only" "$scale-small" "$small_jvm" jmh-small

"$java" -cp "$jar" io.betree.bench.report.Report "$out" "betree benchmarks ($scale scale)"

# The run must have produced every engine's figures for every workload it ran (scale:workload:benchmark).
missing=0
checks=""
[ "$run_default" = 0 ] || checks="$scale:insert:Insert $scale:lookup:Read $scale:scan:Read $scale:fifo:Fifo
  $scale:compression:Compression $scale:timeseries:TimeSeries"
[ "$run_small" = 0 ] || checks="$checks $scale-small:insert:Insert $scale-small:fifo:Fifo $scale-small:lookup:Read
  $scale-small:scan:Read"
for c in $checks; do
  IFS=: read -r s w b <<< "$c"
  case "$only" in *"$b"*) ;; *) continue ;; esac
  for e in $engines; do
    if ! awk -F'\t' -v e="$e" -v w="$w" -v s="$s" '$4 == e && $2 == w && $1 == s { f = 1 } END { exit !f }' \
        "$out/summary.tsv"; then
      echo "run.sh: no $s $w results for $e" >&2; missing=1
    fi
  done
done
files="results.md charts/insert-rate.png"
[ "$run_default" = 0 ] || files="$files jmh.json"
[ "$run_small" = 0 ] || files="$files jmh-small.json"
for f in $files; do
  [ -s "$out/$f" ] || { echo "run.sh: $out/$f is missing" >&2; missing=1; }
done
[ "$missing" = 0 ] || exit 1
echo "run.sh: $scale run finished in $(( $(date +%s) - start )) s; report: $out/results.md"
