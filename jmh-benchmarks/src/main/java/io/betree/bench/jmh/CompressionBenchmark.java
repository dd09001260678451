package io.betree.bench.jmh;

import io.betree.bench.workload.BenchContext;
import io.betree.bench.workload.CompressionWorkload;
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
 * Log-row compression ({@link CompressionWorkload}) as one JMH single shot per engine and codec:
 * the score is the seconds of the load; the bytes on disk per logical byte and the load rate come
 * as secondary metrics through {@link PhaseMetricsProfiler}. RocksDB has no XZ; LMDB does not
 * compress, so it runs once, without a codec, as the baseline.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.SingleShotTime)
@OutputTimeUnit(TimeUnit.SECONDS)
@Warmup(iterations = 0)
@Measurement(iterations = 1)
@Fork(value = 1, jvmArgsPrepend = {"--add-opens", "java.base/java.nio=ALL-UNNAMED", "--add-exports",
        "java.base/sun.nio.ch=ALL-UNNAMED"})
public class CompressionBenchmark {
    /** {@code engine:codec}. */
    @Param({"betree:lz4", "betree:zstd", "betree:xz", "rocksdb:lz4", "rocksdb:zstd", "lmdb:none"})
    public String engineCodec;
    /** Scale preset: smoke or full. */
    @Param({"smoke"})
    public String scale;

    /** Loads the log rows. */
    @Benchmark
    public long load() {
        String[] ec = engineCodec.split(":");
        return CompressionWorkload.run(BenchContext.fromSystemProperties(ec[0], ec[1], scale)).rows();
    }
}
