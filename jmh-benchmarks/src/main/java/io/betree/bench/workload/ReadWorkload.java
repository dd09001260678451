package io.betree.bench.workload;

import io.betree.bench.engine.EngineAdapter;
import io.betree.bench.engine.EngineAdapter.Table;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;

/**
 * Reads on the loaded iiBench data set (loaded first when {@link InsertWorkload} has not left one):
 * point lookups that hit (a random row's primary key) and that miss (a key between two rows, so
 * the same leaf is searched), and primary-index range scans of 100 rows, 10,000 rows and the whole
 * index from random starts. Each kind runs warm (after a pass of the same kind that is not
 * measured) and cold (the store reopened with an empty cache after its files were dropped from the
 * OS page cache; the cold figure covers the same number of requests, starting cold). Wrong results
 * (a missing row, a found miss, a short scan) fail the run.
 */
public final class ReadWorkload {
    /** The kinds of reads, in the order run. */
    public static final List<String> KINDS = List.of("lookup-hit", "lookup-miss", "scan-100", "scan-10000",
            "scan-full");

    private ReadWorkload() {
    }

    /** Runs every kind warm, then cold, and records one phase each. */
    public static List<PhaseResult> run(BenchContext ctx) {
        long rows = InsertWorkload.loadedRows(ctx);
        if (rows < 0) {
            rows = InsertWorkload.load(ctx).rows();
        }
        Path dir = ctx.storeDir(InsertWorkload.DATASET);
        List<PhaseResult> out = new ArrayList<>();
        EngineAdapter e = ctx.adapter();
        boolean dropped = ctx.dropCache(dir);
        e.open(dir, ctx.settings());
        try {
            for (String kind : KINDS) {
                measure(ctx, e, kind, rows, 1, null);
                out.add(measure(ctx, e, kind, rows, 2, dropped ? "warm" : "warm; OS cache not dropped"));
            }
        } finally {
            e.close();
        }
        for (String kind : KINDS) {
            dropped = ctx.dropCache(dir);
            e.open(dir, ctx.settings());
            try {
                out.add(measure(ctx, e, kind, rows, 3, dropped ? "cold" : "cold engine cache; OS cache not dropped"));
            } finally {
                e.close();
            }
        }
        for (PhaseResult r : out) {
            ctx.results().record(r);
        }
        return out;
    }

    /** Runs one kind; {@code note == null} means an unmeasured warm-up pass. */
    private static PhaseResult measure(BenchContext ctx, EngineAdapter e, String kind, long rows, long seed,
            String note) {
        Scale sc = ctx.scale();
        Table pk = new IiBench(e).primary();
        SplittableRandom random = new SplittableRandom(seed * 1_000_003L + kind.hashCode());
        Latencies latencies = new Latencies(kind + (note == null ? " warm-up" : note.startsWith("cold") ? " cold" : " warm"));
        long[] bytes = new long[1];
        long[] seen = new long[1];
        long requests;
        long rowsRead = 0;
        Probe probe = Probe.start();
        switch (kind) {
            case "lookup-hit":
            case "lookup-miss":
                requests = sc.lookups();
                boolean hit = kind.equals("lookup-hit");
                for (long i = 0; i < requests; i++) {
                    long id = 1 + random.nextLong(rows);
                    byte[] key = hit ? IiBench.primaryKey(id) : IiBench.missKey(id);
                    long t0 = System.nanoTime();
                    byte[] v = pk.get(key);
                    latencies.record(System.nanoTime() - t0);
                    if (hit ? !Arrays.equals(v, IiBench.value(id)) : v != null) {
                        throw new IllegalStateException(ctx.engine() + ": " + kind + " of row " + id + " returned "
                                + (v == null ? "nothing" : v.length + " bytes"));
                    }
                    bytes[0] += key.length + (v == null ? 0 : v.length);
                }
                rowsRead = requests;
                break;
            default:
                boolean full = kind.equals("scan-full");
                long length = full ? rows : Long.parseLong(kind.substring(5));
                requests = full ? 1 : kind.equals("scan-100") ? sc.shortScans() : sc.mediumScans();
                for (long i = 0; i < requests; i++) {
                    long start = full ? 1 : 1 + random.nextLong(Math.max(1, rows - length + 1));
                    long expected = Math.min(length, rows - start + 1);
                    seen[0] = 0;
                    long t0 = System.nanoTime();
                    long n = pk.scan(full ? null : IiBench.primaryKey(start), null, length, (k, v) -> {
                        bytes[0] += k.length + v.length;
                        seen[0]++;
                    });
                    latencies.record(System.nanoTime() - t0);
                    if (n != expected || seen[0] != expected) {
                        throw new IllegalStateException(ctx.engine() + ": " + kind + " from row " + start + " saw "
                                + n + " rows, expected " + expected);
                    }
                    rowsRead += n;
                }
                break;
        }
        double seconds = probe.seconds();
        if (note == null) {
            return null;
        }
        String workload = kind.startsWith("lookup") ? "lookup" : "scan";
        String phase = kind + "-" + (note.startsWith("warm") ? "warm" : "cold");
        return new PhaseResult(sc.name(), workload, phase, ctx.engine(), ctx.codec().algorithm(), requests, rowsRead,
                seconds, bytes[0], -1, e.diskBytes(), rows * IiBench.ROW_BYTES, probe.cpuSeconds(),
                probe.peakHeapBytes(), latencies.micros(50), latencies.micros(99), latencies.micros(99.9),
                latencies.maxMicros(), Double.NaN, note);
    }
}
