package io.betree.bench.workload;

import io.betree.bench.engine.EngineAdapter;
import io.betree.bench.engine.EngineAdapter.Table;
import io.betree.bench.engine.Updates;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.SplittableRandom;

/**
 * The messages of issue 11 that cover many keys at once, against doing the same row by row. Each
 * phase loads a fresh store of {@code rangeRows} rows first (8-byte keys, the row numbers
 * big-endian, and 100-byte values; capped at {@code updateMaxSeconds}) and scans them all once,
 * checking them, so that no measured scan is the JVM's first (the rewrite's scans would otherwise
 * compile the scan path for the scan after it); none of that is measured. Then, on one thread:
 *
 * <ul>
 *   <li>{@link #broadcast}: append {@value #COLUMN_BYTES} bytes to every row. Variant
 *       {@link UpdateWorkload#BLIND}: betree's {@code Index.updateAll} with an {@code add-column}
 *       function, one call, timed alone (phase {@code broadcast-update-all}). Variant
 *       {@link UpdateWorkload#GET_PUT}: scan the rows and put each back with the bytes appended, in
 *       batches of {@value #REWRITE_BATCH} (one transaction or write batch each), betree and
 *       RocksDB, timed to the last commit (phase {@code broadcast-rewrite}, latencies per batch).
 *       Then, right after either, with nothing flushed (the broadcast still pending in betree's
 *       buffers), a full scan that checks every row: its number in order, its loaded prefix, the
 *       appended bytes (phase {@code <write phase>-scan}). The row count must be the rows loaded.</li>
 *   <li>{@link #rangeDelete} (variant {@link UpdateWorkload#BLIND} only): delete the lower half of
 *       the key space, rows [0, R/2), in one call: betree's {@code Index.deleteRange}, RocksDB's
 *       {@code deleteRange} (phase {@code range-delete}). Then, right after, a full scan that must
 *       return exactly rows [R/2, R) in order (phase {@code range-delete-scan}), and
 *       {@code rangeGets} gets of random keys of the deleted half, all of which must be absent
 *       (phase {@code range-delete-gets}, latencies per get; as many gets of other random keys of
 *       that half, which must be present, warm the get path before the delete, not measured).</li>
 * </ul>
 *
 * <p>A wrong answer fails the run. Afterwards, not measured, about {@value #SAMPLES} rows are read
 * back by key and compared with what they must hold. An engine without the variant (RocksDB has no
 * broadcast; LMDB has no {@link EngineAdapter#updates()}) is skipped: no phase, no result.
 */
public final class RangeWorkload {
    /** Workload name of the broadcast phases. */
    public static final String BROADCAST = "broadcast";
    /** Workload name, and phase name of the call, of the range-delete phases. */
    public static final String RANGE_DELETE = "range-delete";
    /** The broadcast variant: one {@code updateAll} call. */
    public static final String UPDATE_ALL = "update-all";
    /** The broadcast's row-by-row variant: scan and put every row. */
    public static final String REWRITE = "rewrite";
    /** Suffix of the phase of a full scan after a write. */
    public static final String SCAN = "-scan";
    /** Bytes of a row's value as loaded. */
    public static final int VALUE_BYTES = 100;
    /** Bytes the broadcast appends to every value. */
    public static final int COLUMN_BYTES = 4;
    /** Rows per batch of the rewrite. */
    public static final int REWRITE_BATCH = 1_000;
    static final int SAMPLES = 1_000;
    private static final byte[] COLUMN = {(byte) 0xC0, 0x1D, (byte) 0xBE, 0x11};
    private static final byte[] DIGITS = "0123456789".getBytes(StandardCharsets.US_ASCII);
    private static final String TABLE = "rows";

    private RangeWorkload() {
    }

    /**
     * Runs a broadcast phase on a fresh store: {@code variant} {@link UpdateWorkload#BLIND}
     * ({@code updateAll}, betree only) or {@link UpdateWorkload#GET_PUT} (the rewrite).
     *
     * @return the write phase and the scan after it, or nothing when the engine lacks the variant
     */
    public static List<PhaseResult> broadcast(BenchContext ctx, String variant) {
        Updates u = ctx.adapter().updates();
        if (u == null || !variant.equals(UpdateWorkload.GET_PUT)
                && !(variant.equals(UpdateWorkload.BLIND) && u.hasBroadcast())) {
            return List.of();
        }
        return broadcastPhase(ctx, variant.equals(UpdateWorkload.BLIND) ? UPDATE_ALL : REWRITE);
    }

    /**
     * Runs a range-delete phase on a fresh store: {@code variant} {@link UpdateWorkload#BLIND} only
     * (one call; there is no read-modify-write of a delete).
     *
     * @return the call, the scan after it and the gets in the deleted half, or nothing when the
     *     engine has no range delete or the variant is not {@code blind}
     */
    public static List<PhaseResult> rangeDelete(BenchContext ctx, String variant) {
        if (ctx.adapter().updates() == null || !variant.equals(UpdateWorkload.BLIND)) {
            return List.of();
        }
        return rangeDeletePhase(ctx);
    }

    /** The variant of a broadcast phase: {@link #UPDATE_ALL} or {@link #REWRITE}. */
    public static String variant(PhaseResult r) {
        String p = r.phase().substring(BROADCAST.length() + 1);
        return p.endsWith(SCAN) ? p.substring(0, p.length() - SCAN.length()) : p;
    }

    /** The key of row {@code id}. */
    public static byte[] key(long id) {
        return UpdateWorkload.key(id);
    }

    /**
     * Loads the phase's rows into {@code t} (not measured, capped at {@code updateMaxSeconds}) and
     * scans them once, unmeasured, so that no measured scan is the first of its JVM; returns
     * {@link UpdateWorkload#load}'s answer: rows loaded, nanoseconds taken.
     */
    private static long[] loadRows(BenchContext ctx, EngineAdapter e, Table t) {
        Scale sc = ctx.scale();
        long[] load = UpdateWorkload.load(e, sc.rangeRows(), sc.updateMaxSeconds() * 1_000_000_000L,
                id -> t.put(key(id), row(id)));
        timedScan(ctx, e, t, "warm-up scan", 0, load[0], false, 1, "");
        return load;
    }

    private static List<PhaseResult> broadcastPhase(BenchContext ctx, String variant) {
        Scale sc = ctx.scale();
        Path dir = ctx.storeDir(BROADCAST);
        EngineAdapter e = ctx.openFresh(dir);
        List<PhaseResult> out = new ArrayList<>();
        try {
            Updates u = e.updates();
            Table t = e.table(TABLE);
            long[] load = loadRows(ctx, e, t);
            long rows = load[0];
            int rowBytes = UpdateWorkload.KEY_BYTES + VALUE_BYTES + COLUMN_BYTES;
            String phase = BROADCAST + "-" + variant;
            Latencies latencies = new Latencies(ctx.engine() + " " + phase);
            Probe probe = Probe.start();
            long requests;
            double seconds;
            String note;
            if (variant.equals(UPDATE_ALL)) {
                long t0 = System.nanoTime();
                u.appendToAll(t, COLUMN);
                long nanos = System.nanoTime() - t0;
                latencies.record(nanos);
                requests = 1;
                seconds = nanos / 1e9;
                note = "one updateAll call";
            } else {
                requests = rewrite(ctx, e, t, latencies);
                seconds = probe.seconds();
                note = String.format(Locale.ROOT, "scan and put in batches of %,d, timed to the last commit",
                        REWRITE_BATCH);
            }
            note += String.format(Locale.ROOT, "; %s rows of 8 + %d bytes loaded in %.1f s", count(rows), VALUE_BYTES,
                    load[1] / 1e9) + capped(rows, sc.rangeRows());
            // Logical bytes: the whole row each change leaves, whichever way it is written.
            out.add(new PhaseResult(sc.name(), BROADCAST, phase, ctx.engine(), ctx.codec().algorithm(), requests, rows,
                    seconds, rows * rowBytes, probe.bytesWritten(), e.diskBytes(), rows * rowBytes, probe.cpuSeconds(),
                    probe.peakHeapBytes(), latencies.micros(50), latencies.micros(99), latencies.micros(99.9),
                    latencies.maxMicros(), Double.NaN, note));
            out.add(timedScan(ctx, e, t, phase + SCAN, 0, rows, true, rows * rowBytes,
                    "full scan right after the " + (variant.equals(UPDATE_ALL)
                            ? "updateAll call, the broadcast still pending" : "last batch committed")
                            + "; every row checked"));
            for (long id = 0; id < rows; id += Math.max(1, rows / SAMPLES)) {
                byte[] v = t.get(key(id));
                if (!Arrays.equals(v, withColumn(row(id)))) {
                    throw new IllegalStateException(ctx.engine() + ": row " + id + " after the " + variant + " is "
                            + (v == null ? "absent" : "wrong (" + v.length + " bytes)"));
                }
            }
        } finally {
            e.close();
        }
        out.forEach(ctx.results()::record);
        BenchContext.deleteTree(dir);
        return out;
    }

    /**
     * Puts every row back with {@link #COLUMN} appended: each batch scans the next
     * {@value #REWRITE_BATCH} rows from just past the last key written, puts them and commits.
     * Returns the batches.
     */
    private static long rewrite(BenchContext ctx, EngineAdapter e, Table t, Latencies latencies) {
        byte[][] keys = new byte[REWRITE_BATCH][];
        byte[][] values = new byte[REWRITE_BATCH][];
        byte[] from = null;
        long batches = 0;
        while (true) {
            long t0 = System.nanoTime();
            int[] n = {0};
            t.scan(from, null, REWRITE_BATCH, (k, v) -> {
                keys[n[0]] = k;
                values[n[0]] = v;
                n[0]++;
            });
            if (n[0] == 0) {
                return batches;
            }
            for (int i = 0; i < n[0]; i++) {
                if (values[i].length != VALUE_BYTES) {
                    throw new IllegalStateException(ctx.engine() + ": the rewrite read row "
                            + ByteBuffer.wrap(keys[i]).getLong() + " with " + values[i].length + " bytes");
                }
                t.put(keys[i], withColumn(values[i]));
            }
            e.commit();
            latencies.record(System.nanoTime() - t0);
            batches++;
            // The key's immediate successor in unsigned byte order: the same bytes and a zero.
            from = Arrays.copyOf(keys[n[0] - 1], keys[n[0] - 1].length + 1);
            if (n[0] < REWRITE_BATCH) {
                return batches;
            }
        }
    }

    private static List<PhaseResult> rangeDeletePhase(BenchContext ctx) {
        Scale sc = ctx.scale();
        Path dir = ctx.storeDir(RANGE_DELETE);
        EngineAdapter e = ctx.openFresh(dir);
        List<PhaseResult> out = new ArrayList<>();
        try {
            Updates u = e.updates();
            Table t = e.table(TABLE);
            long[] load = loadRows(ctx, e, t);
            long rows = load[0];
            long half = rows / 2;
            if (half == 0) {
                throw new IllegalStateException(ctx.engine() + ": " + rows + " rows loaded, too few to delete half");
            }
            gets(ctx, t, 0, half, sc.rangeGets(), 18, true);
            int rowBytes = UpdateWorkload.KEY_BYTES + VALUE_BYTES;
            long live = (rows - half) * rowBytes;
            Latencies call = new Latencies(ctx.engine() + " " + RANGE_DELETE);
            Probe probe = Probe.start();
            long t0 = System.nanoTime();
            u.deleteRange(t, key(0), key(half));
            long nanos = System.nanoTime() - t0;
            call.record(nanos);
            // Logical bytes: a delete counts its key.
            out.add(new PhaseResult(sc.name(), RANGE_DELETE, RANGE_DELETE, ctx.engine(), ctx.codec().algorithm(), 1,
                    half, nanos / 1e9, half * UpdateWorkload.KEY_BYTES, probe.bytesWritten(), e.diskBytes(), live,
                    probe.cpuSeconds(), probe.peakHeapBytes(), call.micros(50), call.micros(99), call.micros(99.9),
                    call.maxMicros(), Double.NaN,
                    String.format(Locale.ROOT, "rows [0, %s) of %s in one deleteRange call; loaded in %.1f s",
                            count(half), count(rows), load[1] / 1e9) + capped(rows, sc.rangeRows())));
            out.add(timedScan(ctx, e, t, RANGE_DELETE + SCAN, half, rows, false, live,
                    "full scan right after the deleteRange call; " + count(rows - half) + " rows left, all checked"));
            out.add(deletedGets(ctx, e, t, half, live));
            for (long id = half; id < rows; id += Math.max(1, (rows - half) / SAMPLES)) {
                if (!Arrays.equals(t.get(key(id)), row(id))) {
                    throw new IllegalStateException(ctx.engine() + ": row " + id + " of the upper half is "
                            + "absent or wrong after the range delete");
                }
            }
        } finally {
            e.close();
        }
        out.forEach(ctx.results()::record);
        BenchContext.deleteTree(dir);
        return out;
    }

    /** Gets of random keys of the deleted half [0, half); any value found fails the run. */
    private static PhaseResult deletedGets(BenchContext ctx, EngineAdapter e, Table t, long half, long live) {
        Scale sc = ctx.scale();
        long gets = sc.rangeGets();
        Probe probe = Probe.start();
        Latencies latencies = gets(ctx, t, 0, half, gets, 17, false);
        double seconds = probe.seconds();
        return new PhaseResult(sc.name(), RANGE_DELETE, RANGE_DELETE + "-gets", ctx.engine(), ctx.codec().algorithm(),
                gets, gets, seconds, gets * UpdateWorkload.KEY_BYTES, -1, e.diskBytes(), live, probe.cpuSeconds(),
                probe.peakHeapBytes(), latencies.micros(50), latencies.micros(99), latencies.micros(99.9),
                latencies.maxMicros(), Double.NaN, count(gets) + " gets of random keys in the deleted half, right "
                        + "after the scan (as many gets of that half, before the delete, not measured); all absent");
    }

    /**
     * {@code n} gets of random rows of [from, to) (seed {@code seed}), each of which must hold its
     * loaded value ({@code present}) or be absent; returns their latencies.
     */
    private static Latencies gets(BenchContext ctx, Table t, long from, long to, long n, long seed, boolean present) {
        SplittableRandom random = new SplittableRandom(seed);
        Latencies latencies = new Latencies(ctx.engine() + (present ? " get" : " get in a deleted range"));
        for (long i = 0; i < n; i++) {
            long id = from + random.nextLong(to - from);
            byte[] k = key(id);
            long t0 = System.nanoTime();
            byte[] v = t.get(k);
            latencies.record(System.nanoTime() - t0);
            if (present ? !Arrays.equals(v, row(id)) : v != null) {
                throw new IllegalStateException(ctx.engine() + ": a get of row " + id + " found "
                        + (v == null ? "nothing" : v.length + " bytes") + (present ? "" : " after its range delete"));
            }
        }
        return latencies;
    }

    /**
     * A full scan, timed, that must return rows {@code first} to {@code end - 1} in order, each with
     * its loaded value, and {@link #COLUMN} appended when {@code appended}.
     */
    private static PhaseResult timedScan(BenchContext ctx, EngineAdapter e, Table t, String phase, long first, long end,
            boolean appended, long live, String note) {
        long[] next = {first};
        long[] bytes = {0};
        int length = VALUE_BYTES + (appended ? COLUMN_BYTES : 0);
        Latencies latencies = new Latencies(ctx.engine() + " " + phase);
        Probe probe = Probe.start();
        long t0 = System.nanoTime();
        long n = t.scan(null, null, Long.MAX_VALUE, (k, v) -> {
            long id = next[0]++;
            // Cheap checks, so the scan's rate stays the engine's: the key, the value's length, its
            // first 8 bytes (the row's own) and the appended bytes; the sample after checks all of it.
            if (k.length != UpdateWorkload.KEY_BYTES || ByteBuffer.wrap(k).getLong() != id || v.length != length
                    || ByteBuffer.wrap(v).getLong() != IiBench.mix(id)
                    || appended && !Arrays.equals(v, VALUE_BYTES, length, COLUMN, 0, COLUMN_BYTES)) {
                throw new IllegalStateException(ctx.engine() + ": " + phase + " expected row " + id + " of "
                        + length + " bytes, got key " + hex(k) + " with " + v.length + " bytes");
            }
            bytes[0] += k.length + v.length;
        });
        long nanos = System.nanoTime() - t0;
        latencies.record(nanos);
        if (n != end - first || next[0] != end) {
            throw new IllegalStateException(ctx.engine() + ": " + phase + " returned " + n + " rows, expected "
                    + (end - first));
        }
        return new PhaseResult(ctx.scale().name(), phase.startsWith(BROADCAST) ? BROADCAST : RANGE_DELETE, phase,
                ctx.engine(), ctx.codec().algorithm(), 1, n, nanos / 1e9, bytes[0], -1, e.diskBytes(), live,
                probe.cpuSeconds(), probe.peakHeapBytes(), latencies.micros(50), latencies.micros(99),
                latencies.micros(99.9), latencies.maxMicros(), Double.NaN, note);
    }

    /** A row as loaded: the mix of its number (8 bytes), then 92 random digits, all from its number. */
    static byte[] row(long id) {
        ByteBuffer b = ByteBuffer.allocate(VALUE_BYTES).putLong(IiBench.mix(id));
        long h = IiBench.mix(~id);
        while (b.hasRemaining()) {
            b.put(DIGITS[(int) Long.remainderUnsigned(h, 10)]);
            h = IiBench.mix(h);
        }
        return b.array();
    }

    private static byte[] withColumn(byte[] value) {
        byte[] out = Arrays.copyOf(value, value.length + COLUMN_BYTES);
        System.arraycopy(COLUMN, 0, out, value.length, COLUMN_BYTES);
        return out;
    }

    private static String capped(long rows, long planned) {
        return rows < planned ? "; load time cap reached at " + count(rows) + " of " + count(planned) + " rows" : "";
    }

    private static String hex(byte[] a) {
        StringBuilder s = new StringBuilder();
        for (byte x : a) {
            s.append(String.format("%02x", x & 0xff));
        }
        return s.toString();
    }

    private static String count(long n) {
        return String.format(Locale.ROOT, "%,d", n);
    }
}
