package io.betree.bench.jmh;

import io.betree.bench.workload.BenchContext;
import io.betree.bench.workload.TimeSeriesWorkload;
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
 * The multi-threaded time-series insert ({@link TimeSeriesWorkload}) as one JMH single shot per
 * engine and writer thread count: the score is the seconds of the load (the check scan included);
 * rows/s, the terminal rate, per-transaction latency and cores busy come as secondary metrics
 * through {@link PhaseMetricsProfiler}. The writer threads are the workload's own, not JMH's.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.SingleShotTime)
@OutputTimeUnit(TimeUnit.SECONDS)
@Warmup(iterations = 0)
@Measurement(iterations = 1)
@Fork(value = 1, jvmArgsPrepend = {"--add-opens", "java.base/java.nio=ALL-UNNAMED", "--add-exports",
        "java.base/sun.nio.ch=ALL-UNNAMED"})
public class TimeSeriesBenchmark {
    /** Engine: betree, rocksdb or lmdb. */
    @Param({"betree", "rocksdb", "lmdb"})
    public String engine;
    /** Scale preset: smoke or full. */
    @Param({"smoke"})
    public String scale;
    /** Codec of the engines that compress (LMDB takes none). */
    @Param({"lz4"})
    public String codec;
    /** Writer threads, each committing whole time steps of 1,000 sensors. */
    @Param({"1", "2", "4", "16"})
    public int threads;

    /** Loads the time series. */
    @Benchmark
    public long insert() {
        return TimeSeriesWorkload.run(BenchContext.fromSystemProperties(engine, codec, scale), threads).rows();
    }
}
