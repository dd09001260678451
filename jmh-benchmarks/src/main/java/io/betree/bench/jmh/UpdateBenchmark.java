package io.betree.bench.jmh;

import io.betree.bench.workload.BenchContext;
import io.betree.bench.workload.PhaseResult;
import io.betree.bench.workload.RangeWorkload;
import io.betree.bench.workload.UpdateWorkload;
import java.util.List;
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
 *
 * <p>The broadcast and range-delete phases ({@link RangeWorkload}) run on one thread whatever
 * {@link #threads} says; there {@code blind} is the one message ({@code updateAll},
 * {@code deleteRange}) and {@code get-put} the broadcast's row-by-row rewrite (the range delete has
 * no such variant, and RocksDB no broadcast).
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
    /**
     * {@code blind} (betree's update, RocksDB's merge, a broadcast or range delete) or {@code get-put}
     * (read, then write; for the broadcast, scan and put every row).
     */
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

    /**
     * Appends 4 bytes to every row, then scans them all: betree's updateAll ({@code blind}), or
     * every row scanned and put back (betree and RocksDB, {@code get-put}).
     */
    @Benchmark
    public long broadcast() {
        return rows(RangeWorkload.broadcast(context(), variant));
    }

    /**
     * Deletes the lower half of the rows in one call (betree's and RocksDB's deleteRange;
     * {@code blind} only), then scans what is left and gets keys of the deleted half.
     */
    @Benchmark
    public long rangeDelete() {
        return rows(RangeWorkload.rangeDelete(context(), variant));
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

    private long rows(List<PhaseResult> r) {
        if (r.isEmpty()) {
            System.out.println(engine + " " + variant + ": not a variant the engine or the phase has; nothing measured");
            return 0;
        }
        return r.get(0).rows();
    }
}
