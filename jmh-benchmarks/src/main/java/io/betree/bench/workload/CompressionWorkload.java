package io.betree.bench.workload;

import io.betree.bench.engine.EngineAdapter;
import io.betree.bench.engine.EngineAdapter.Table;
import java.nio.file.Path;

/**
 * Compression: loads deterministic log-style rows ({@link LogRows}) with ascending keys into one
 * table, 1,000 rows per batch, until the scale's logical byte count (or its time cap), with the
 * context's codec. Records the on-disk bytes per logical byte (space amplification: below 1 means
 * the codec wins) and the load rate. The store is deleted afterwards.
 */
public final class CompressionWorkload {
    private CompressionWorkload() {
    }

    /** Loads the rows into a fresh store and records phase {@code load-<codec>}. */
    public static PhaseResult run(BenchContext ctx) {
        Path dir = ctx.storeDir("log-" + ctx.codec().algorithm());
        Scale sc = ctx.scale();
        EngineAdapter e = ctx.openFresh(dir);
        PhaseResult r;
        try {
            Table log = e.table("log");
            LogRows rows = new LogRows(42);
            Latencies latencies = new Latencies("log-rows batch");
            long capNanos = sc.compressMaxSeconds() * 1_000_000_000L;
            long logical = 0;
            long count = 0;
            long batches = 0;
            Probe probe = Probe.start();
            while (logical < sc.compressBytes() && probe.elapsedNanos() < capNanos) {
                long t0 = System.nanoTime();
                for (int i = 0; i < 1_000; i++) {
                    byte[] k = rows.key();
                    byte[] v = rows.value();
                    log.put(k, v);
                    logical += k.length + v.length;
                }
                e.commit();
                latencies.record(System.nanoTime() - t0);
                count += 1_000;
                batches++;
            }
            e.flush();
            double seconds = probe.seconds();
            long disk = e.diskBytes();
            String note = logical < sc.compressBytes() ? "time cap reached at " + logical + " bytes" : "";
            r = new PhaseResult(sc.name(), "compression", "load-" + ctx.codec().algorithm(), ctx.engine(),
                    ctx.codec().algorithm(), batches, count, seconds, logical, probe.bytesWritten(), disk, logical,
                    probe.cpuSeconds(), probe.peakHeapBytes(), latencies.micros(50), latencies.micros(99),
                    latencies.micros(99.9), latencies.maxMicros(), Double.NaN, note);
        } finally {
            e.close();
        }
        ctx.results().record(r);
        BenchContext.deleteTree(dir);
        return r;
    }
}
