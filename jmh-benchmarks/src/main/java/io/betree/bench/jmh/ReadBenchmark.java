package io.betree.bench.jmh;

import io.betree.bench.workload.BenchContext;
import io.betree.bench.workload.ReadWorkload;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;

/**
 * Point lookups and range scans, warm and cold ({@link ReadWorkload}), on the store
 * {@link InsertBenchmark} left (loaded first when absent), as one JMH single shot per engine: the
 * score is the seconds of all read phases; each phase's figures come as secondary metrics through
 * {@link PhaseMetricsProfiler}.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.SingleShotTime)
@OutputTimeUnit(TimeUnit.SECONDS)
@Warmup(iterations = 0)
@Measurement(iterations = 1)
@Fork(value = 1, jvmArgsPrepend = {"--add-opens", "java.base/java.nio=ALL-UNNAMED", "--add-exports",
        "java.base/sun.nio.ch=ALL-UNNAMED"})
public class ReadBenchmark {
    /** Engine: betree, rocksdb or lmdb. */
    @Param({"betree", "rocksdb", "lmdb"})
    public String engine;
    /** Scale preset: smoke or full. */
    @Param({"smoke"})
    public String scale;
    /** Codec of the engines that compress (LMDB takes none). */
    @Param({"lz4"})
    public String codec;

    /** Runs every read phase. */
    @Benchmark
    public int reads() {
        return ReadWorkload.run(BenchContext.fromSystemProperties(engine, codec, scale)).size();
    }
}
