package io.betree.bench.workload;

import io.betree.bench.engine.EngineAdapter;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * iiBench insert: rows with ascending ids and random secondary columns go into the primary index
 * and the three secondary indexes, 1,000 rows (4,000 puts) per batch, until the scale's row count
 * or time cap. Records the insert rate over time ({@code series/insert-<engine>.csv}), the terminal
 * rate (last 10% of the rows), the latency of each 1,000-row batch and the figures every phase
 * has. The loaded store stays on disk for {@link ReadWorkload}, with a marker naming its row count.
 */
public final class InsertWorkload {
    /** Name of the data set directory under each engine's data directory. */
    public static final String DATASET = "iibench";
    private static final int SERIES_POINTS = 200;

    private InsertWorkload() {
    }

    /** {@code note} with the time the engine held writers back since open, where it says. */
    static String withWriterWait(String note, EngineAdapter engine) {
        long waited = engine.writerWaitNanos();
        if (waited < 0) {
            return note;
        }
        String wait = String.format(java.util.Locale.ROOT, "writers held back %.1f s", waited / 1e9);
        return note.isEmpty() ? wait : note + "; " + wait;
    }

    /** Loads a fresh iiBench data set and records its figures. */
    public static PhaseResult run(BenchContext ctx) {
        return load(ctx);
    }

    /** Rows of the loaded data set, or -1 when there is none for this scale and codec. */
    static long loadedRows(BenchContext ctx) {
        Path marker = marker(ctx);
        try {
            if (!Files.exists(marker) || !Files.isDirectory(ctx.storeDir(DATASET))) {
                return -1;
            }
            String[] f = Files.readString(marker, StandardCharsets.UTF_8).trim().split(" ");
            boolean same = f.length == 3 && f[1].equals(ctx.scale().name()) && f[2].equals(ctx.codec().algorithm());
            return same ? Long.parseLong(f[0]) : -1;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static Path marker(BenchContext ctx) {
        return ctx.storeDir(DATASET).resolveSibling(DATASET + ".rows");
    }

    static PhaseResult load(BenchContext ctx) {
        Path dir = ctx.storeDir(DATASET);
        Path marker = marker(ctx);
        try {
            Files.deleteIfExists(marker);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        BenchContext.deleteTree(dir);
        Scale sc = ctx.scale();
        long target = sc.insertRows();
        int batches = (int) ((target + IiBench.BATCH_ROWS - 1) / IiBench.BATCH_ROWS);
        long capNanos = sc.insertMaxSeconds() * 1_000_000_000L;
        long[] batchEnd = new long[batches];
        Latencies latencies = new Latencies("insert batch");
        EngineAdapter e = ctx.adapter();
        e.open(dir, ctx.settings());
        PhaseResult r;
        try {
            IiBench t = new IiBench(e);
            int every = Math.max(1, batches / SERIES_POINTS);
            Probe probe = Probe.start();
            long id = 1;
            int done = 0;
            try (Series s = new Series(ctx.results().series(ctx.seriesName("insert")), "elapsed_s", "rows",
                    "rows_per_s", "disk_mib", "written_mib")) {
                long lastNanos = 0;
                long lastRows = 0;
                while (done < batches) {
                    long t0 = System.nanoTime();
                    for (int i = 0; i < IiBench.BATCH_ROWS && id <= target; i++) {
                        t.insert(id++);
                    }
                    e.commit();
                    latencies.record(System.nanoTime() - t0);
                    long now = probe.elapsedNanos();
                    batchEnd[done++] = now;
                    if (done % every == 0 || done == batches || now > capNanos) {
                        long rows = id - 1;
                        s.add(now / 1e9, rows, (rows - lastRows) / ((now - lastNanos) / 1e9),
                                e.diskBytes() / 1048576.0, Math.max(0, probe.bytesWritten()) / 1048576.0);
                        lastNanos = now;
                        lastRows = rows;
                    }
                    if (now > capNanos) {
                        break;
                    }
                }
            }
            long rows = id - 1;
            e.flush();
            double seconds = probe.seconds();
            long disk = e.diskBytes();
            String note = withWriterWait(rows < target ? "time cap reached at " + rows + " of " + target + " rows" : "",
                    e);
            r = new PhaseResult(sc.name(), "insert", "insert", ctx.engine(), ctx.codec().algorithm(), done, rows,
                    seconds, rows * IiBench.ROW_BYTES, probe.bytesWritten(), disk, rows * IiBench.ROW_BYTES,
                    probe.cpuSeconds(), probe.peakHeapBytes(), latencies.micros(50), latencies.micros(99),
                    latencies.micros(99.9), latencies.maxMicros(),
                    terminalRate(batchEnd, done, rows, IiBench.BATCH_ROWS), note);
        } finally {
            e.close();
        }
        ctx.results().record(r);
        try {
            Files.writeString(marker, r.rows() + " " + sc.name() + " " + ctx.codec().algorithm(),
                    StandardCharsets.UTF_8);
        } catch (IOException ex) {
            throw new UncheckedIOException(ex);
        }
        return r;
    }

    /**
     * Rows per second over the last 10% of the batches, given each batch's end time (ascending);
     * every batch but the last holds {@code batchRows} rows.
     */
    static double terminalRate(long[] batchEnd, int done, long rows, int batchRows) {
        if (done == 0) {
            return Double.NaN;
        }
        int first = Math.min(done - 1, (int) Math.floor(done * 0.9));
        long before = first == 0 ? 0 : batchEnd[first - 1];
        long rowsBefore = (long) first * batchRows;
        return (rows - rowsBefore) / ((batchEnd[done - 1] - before) / 1e9);
    }
}
