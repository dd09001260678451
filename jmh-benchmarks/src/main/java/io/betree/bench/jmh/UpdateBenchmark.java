package io.betree.bench.jmh;

import io.betree.bench.workload.BenchContext;
import io.betree.bench.workload.PhaseResult;
import io.betree.bench.workload.UpdateWorkload;
import java.util.Optional;
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
 * Messages beyond put and delete (issue 11, {@link UpdateWorkload}) as one JMH single shot per
 * phase, engine, variant and client thread count, each in a JVM of its own: the score is the
 * seconds of the shot (load and check included); the increments or updates per second, batch
 * latency and cores busy come as secondary metrics through {@link PhaseMetricsProfiler}. The client
 * threads are the workload's own, not JMH's. A variant the engine does not have (RocksDB has no
 * blind field write and no isolated get and put; LMDB has neither merge nor update) does nothing,
 * records nothing and says so.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.SingleShotTime)
@OutputTimeUnit(TimeUnit.SECONDS)
@Warmup(iterations = 0)
@Measurement(iterations = 1)
@Fork(value = 1, jvmArgsPrepend = {"--add-opens", "java.base/java.nio=ALL-UNNAMED", "--add-exports",
        "java.base/sun.nio.ch=ALL-UNNAMED"})
public class UpdateBenchmark {
    /** Engine: betree or rocksdb (lmdb is skipped). */
    @Param({"betree", "rocksdb", "lmdb"})
    public String engine;
    /** Scale preset: smoke or full. */
    @Param({"smoke"})
    public String scale;
    /** Codec of the engines that compress. */
    @Param({"lz4"})
    public String codec;
    /** Client threads, each committing batches of its own. */
    @Param({"16"})
    public int threads;
    /** {@code blind} (betree's update, RocksDB's merge) or {@code get-put} (read, then write). */
    @Param({UpdateWorkload.BLIND, UpdateWorkload.GET_PUT})
    public String variant;

    /** Increments random counters: betree update or get and put, RocksDB merge. */
    @Benchmark
    public long counters() {
        return rows(UpdateWorkload.counters(context(), threads, variant));
    }

    /** Sets a field of random rows: betree update or get and put, RocksDB get and put. */
    @Benchmark
    public long updateNonIndex() {
        return rows(UpdateWorkload.updateNonIndex(context(), threads, variant));
    }

    private BenchContext context() {
        return BenchContext.fromSystemProperties(engine, codec, scale);
    }

    private long rows(Optional<PhaseResult> r) {
        if (r.isEmpty()) {
            System.out.println(engine + " " + variant + ": not supported by the engine; nothing measured");
            return 0;
        }
        return r.get().rows();
    }
}
