package io.betree.bench.workload;

import io.betree.bench.engine.EngineAdapter;
import io.betree.bench.engine.EngineAdapter.Table;
import io.betree.bench.engine.Updates;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Locale;
import java.util.Optional;
import java.util.SplittableRandom;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.function.LongConsumer;

/**
 * Messages beyond put and delete (issue 11): what a write that does not read costs against the
 * read-modify-write it replaces. One public method per phase, run for one variant at a time, blind
 * or get and put (the JMH benchmark gives each a JVM of its own, so that neither runs warmed up by
 * the other), on a fresh store loaded first (not measured), by N client threads in batches of
 * {@code updateBatch} (one transaction or write batch each):
 *
 * <ul>
 *   <li>{@link #counters}: increment random counters among {@code counters} 8-byte counters, all
 *       loaded at 0, by 1: betree's {@code update} with an add function, betree's get and put in a
 *       transaction (retried on a write conflict), RocksDB's merge with {@code uint64add}. The sum
 *       of all counters must equal the increments committed, and a sample of about
 *       {@value #COUNTER_SAMPLES} counters must each hold exactly its own increments.</li>
 *   <li>{@link #updateNonIndex} (sysbench's {@code update_non_index}): set a 4-byte field at a fixed
 *       offset of random rows among {@code updateRows} rows of 120-byte values: betree's
 *       {@code update} with a set-field function, betree's get and put in a transaction, RocksDB's
 *       get and put. Afterwards every row must have its loaded bytes outside the field, and the field
 *       must say whether the row was updated, exactly for the rows updated.</li>
 * </ul>
 *
 * <p>A wrong answer fails the run. A variant an engine does not have (any on LMDB, which has no
 * {@link EngineAdapter#updates()}) is skipped: no phase, no result.
 *
 * <p>The broadcast update ({@code Index.updateAll}) and the range delete ({@code Index.deleteRange})
 * of the same issue are in {@link RangeWorkload}, loaded by the same {@link #load}.
 */
public final class UpdateWorkload {
    /** Workload name of the counters phases. */
    public static final String COUNTERS = "counters";
    /** Workload name of the update_non_index phases. */
    public static final String NON_INDEX = "update-non-index";
    /** The variant that writes without reading: betree's update, RocksDB's merge. */
    public static final String BLIND = "blind";
    /** The read-modify-write variant of either phase. */
    public static final String GET_PUT = "get-put";
    /** Bytes of a key (a counter's or a row's number, big-endian). */
    public static final int KEY_BYTES = 8;
    /** Bytes of a row's value. */
    public static final int VALUE_BYTES = 120;
    /** Where the 4-byte field an update sets starts in a row's value. */
    public static final int FIELD_OFFSET = 4;
    /** Bytes of that field. */
    public static final int FIELD_BYTES = 4;
    static final int COUNTER_SAMPLES = 1_000;
    private static final int LOAD_BATCH = 1_000;
    private static final byte[] DIGITS = "0123456789".getBytes(StandardCharsets.US_ASCII);

    private UpdateWorkload() {
    }

    /**
     * Runs a counters phase on a fresh store: {@code variant} {@link #BLIND} (betree's update,
     * RocksDB's merge) or {@link #GET_PUT} (betree only: without isolation a read-modify-write loses
     * increments, which the check would fail).
     *
     * @return the phase, or empty when the engine does not have the variant
     */
    public static Optional<PhaseResult> counters(BenchContext ctx, int threads, String variant) {
        Updates u = ctx.adapter().updates();
        if (u == null || !variant.equals(BLIND) && !(variant.equals(GET_PUT) && u.isolatedReadModifyWrite())) {
            return Optional.empty();
        }
        return Optional.of(countersPhase(ctx, threads, variant.equals(BLIND) ? u.blindAddName() : GET_PUT));
    }

    /**
     * Runs an update_non_index phase on a fresh store: {@code variant} {@link #BLIND} (betree's
     * update; RocksDB has none) or {@link #GET_PUT}.
     *
     * @return the phase, or empty when the engine does not have the variant
     */
    public static Optional<PhaseResult> updateNonIndex(BenchContext ctx, int threads, String variant) {
        Updates u = ctx.adapter().updates();
        if (u == null || !variant.equals(GET_PUT) && !(variant.equals(BLIND) && u.hasBlindFieldWrite())) {
            return Optional.empty();
        }
        return Optional.of(nonIndexPhase(ctx, threads, variant.equals(BLIND) ? "update" : GET_PUT));
    }

    /** The variant of a phase of this workload: {@code update}, {@code merge} or {@code get-put}. */
    public static String variant(PhaseResult r) {
        String p = r.phase();
        return p.substring(r.workload().length() + 1, p.lastIndexOf('-'));
    }

    /** The client threads of a phase of this workload. */
    public static int threads(PhaseResult r) {
        return Integer.parseInt(r.phase().substring(r.phase().lastIndexOf('-') + 1));
    }

    /** The key of counter or row {@code id}. */
    public static byte[] key(long id) {
        return ByteBuffer.allocate(KEY_BYTES).putLong(id).array();
    }

    private static PhaseResult countersPhase(BenchContext ctx, int threads, String variant) {
        Scale sc = ctx.scale();
        int batch = (int) sc.updateBatch();
        long capNanos = sc.updateMaxSeconds() * 1_000_000_000L;
        Path dir = ctx.storeDir(COUNTERS);
        EngineAdapter e = ctx.openFresh(dir);
        PhaseResult r;
        try {
            Updates u = e.updates();
            Table t = e.table(COUNTERS);
            byte[] zero = u.encodeCounter(0);
            long[] load = load(e, sc.counters(), capNanos, id -> t.put(key(id), zero));
            long counters = load[0];
            long sampleEvery = Math.max(1, counters / COUNTER_SAMPLES);
            AtomicLongArray expected = new AtomicLongArray((int) ((counters + sampleEvery - 1) / sampleEvery));
            boolean blind = !variant.equals(GET_PUT);
            Probe probe = Probe.start();
            BatchClients.Outcome o = BatchClients.run(ctx.engine() + " counters " + variant, threads,
                    planned(sc.counterIncrements(), batch), capNanos, 11, probe, random -> {
                        long[] ids = new long[batch];
                        for (int i = 0; i < batch; i++) {
                            ids[i] = random.nextLong(counters);
                        }
                        int retries = 0;
                        if (blind) {
                            for (long id : ids) {
                                u.addToCounter(t, key(id), 1);
                            }
                            e.commit();
                        } else {
                            retries = u.inBatch(() -> {
                                for (long id : ids) {
                                    byte[] k = key(id);
                                    t.put(k, u.encodeCounter(u.decodeCounter(u.readInBatch(t, k)) + 1));
                                }
                            });
                        }
                        // Counted once committed, so a retried batch counts once.
                        for (long id : ids) {
                            if (id % sampleEvery == 0) {
                                expected.incrementAndGet((int) (id / sampleEvery));
                            }
                        }
                        return retries;
                    });
            e.flush();
            double seconds = probe.seconds();
            long increments = (long) o.batches() * batch;
            int rowBytes = KEY_BYTES + Updates.COUNTER_BYTES;
            String note = String.format(Locale.ROOT, "%d threads, %d increments a batch; %s counters loaded in %.1f s",
                    threads, batch, count(counters), load[1] / 1e9);
            note = withOutcome(note, o, variant, increments, sc.counterIncrements(), e);
            r = new PhaseResult(sc.name(), COUNTERS, COUNTERS + "-" + variant + "-" + threads, ctx.engine(),
                    ctx.codec().algorithm(), o.batches(), increments, seconds, increments * rowBytes,
                    probe.bytesWritten(), e.diskBytes(), counters * rowBytes, probe.cpuSeconds(),
                    probe.peakHeapBytes(), o.latencies().micros(50), o.latencies().micros(99),
                    o.latencies().micros(99.9), o.latencies().maxMicros(),
                    InsertWorkload.terminalRate(o.batchEnd(), o.batches(), increments, batch), note);
            checkCounters(ctx, u, t, counters, increments, sampleEvery, expected);
        } finally {
            e.close();
        }
        ctx.results().record(r);
        BenchContext.deleteTree(dir);
        return r;
    }

    /**
     * Every counter is there, their sum is the increments committed, and each sampled counter
     * holds exactly the increments made to it.
     */
    private static void checkCounters(BenchContext ctx, Updates u, Table t, long counters, long increments,
            long sampleEvery, AtomicLongArray expected) {
        long[] seen = {0, 0};
        t.scan(null, null, Long.MAX_VALUE, (k, v) -> {
            if (v.length != Updates.COUNTER_BYTES) {
                throw new IllegalStateException(ctx.engine() + ": counter " + ByteBuffer.wrap(k).getLong() + " has "
                        + v.length + " bytes");
            }
            seen[0]++;
            seen[1] += u.decodeCounter(v);
        });
        if (seen[0] != counters || seen[1] != increments) {
            throw new IllegalStateException(ctx.engine() + ": " + seen[0] + " counters summing to " + seen[1]
                    + ", expected " + counters + " summing to " + increments);
        }
        for (int i = 0; i < expected.length(); i++) {
            long id = i * sampleEvery;
            long got = u.decodeCounter(t.get(key(id)));
            if (got != expected.get(i)) {
                throw new IllegalStateException(ctx.engine() + ": counter " + id + " holds " + got + ", expected "
                        + expected.get(i));
            }
        }
    }

    private static PhaseResult nonIndexPhase(BenchContext ctx, int threads, String variant) {
        Scale sc = ctx.scale();
        int batch = (int) sc.updateBatch();
        long capNanos = sc.updateMaxSeconds() * 1_000_000_000L;
        Path dir = ctx.storeDir(NON_INDEX);
        EngineAdapter e = ctx.openFresh(dir);
        PhaseResult r;
        try {
            Updates u = e.updates();
            Table t = e.table("sbtest");
            long[] load = load(e, sc.updateRows(), capNanos, id -> t.put(key(id), row(id)));
            long rows = load[0];
            // Rows updated so far, a bit each, set once the batch committed.
            AtomicLongArray updated = new AtomicLongArray((int) ((rows + 63) / 64));
            boolean blind = !variant.equals(GET_PUT);
            Probe probe = Probe.start();
            BatchClients.Outcome o = BatchClients.run(ctx.engine() + " update_non_index " + variant, threads,
                    planned(sc.updates(), batch), capNanos, 13, probe, random -> {
                        long[] ids = new long[batch];
                        byte[][] fields = new byte[batch][];
                        for (int i = 0; i < batch; i++) {
                            ids[i] = random.nextLong(rows);
                            fields[i] = field(ids[i], 1 + random.nextInt(0xFFFF));
                        }
                        int retries = 0;
                        if (blind) {
                            for (int i = 0; i < batch; i++) {
                                u.setField(t, key(ids[i]), FIELD_OFFSET, fields[i]);
                            }
                            e.commit();
                        } else {
                            retries = u.inBatch(() -> {
                                for (int i = 0; i < batch; i++) {
                                    byte[] k = key(ids[i]);
                                    byte[] v = u.readInBatch(t, k);
                                    if (v == null || v.length != VALUE_BYTES) {
                                        throw new IllegalStateException(ctx.engine() + ": row " + ids[i] + " read as "
                                                + (v == null ? "absent" : v.length + " bytes"));
                                    }
                                    v = v.clone();
                                    System.arraycopy(fields[i], 0, v, FIELD_OFFSET, FIELD_BYTES);
                                    t.put(k, v);
                                }
                            });
                        }
                        for (long id : ids) {
                            updated.accumulateAndGet((int) (id >>> 6), 1L << id, (a, b) -> a | b);
                        }
                        return retries;
                    });
            e.flush();
            double seconds = probe.seconds();
            long updates = (long) o.batches() * batch;
            int rowBytes = KEY_BYTES + VALUE_BYTES;
            String note = String.format(Locale.ROOT, "%d threads, %d updates a batch; %s rows loaded in %.1f s",
                    threads, batch, count(rows), load[1] / 1e9);
            note = withOutcome(note, o, variant, updates, sc.updates(), e);
            // Logical bytes: the whole row each update leaves, whichever way it is written.
            r = new PhaseResult(sc.name(), NON_INDEX, NON_INDEX + "-" + variant + "-" + threads, ctx.engine(),
                    ctx.codec().algorithm(), o.batches(), updates, seconds, updates * rowBytes, probe.bytesWritten(),
                    e.diskBytes(), rows * rowBytes, probe.cpuSeconds(), probe.peakHeapBytes(),
                    o.latencies().micros(50), o.latencies().micros(99), o.latencies().micros(99.9),
                    o.latencies().maxMicros(), InsertWorkload.terminalRate(o.batchEnd(), o.batches(), updates, batch),
                    note);
            checkRows(ctx, t, rows, updated);
        } finally {
            e.close();
        }
        ctx.results().record(r);
        BenchContext.deleteTree(dir);
        return r;
    }

    /**
     * Every row is there with its loaded bytes outside the field, the field's low half is the row's
     * tag, and its high half, the version, is not 0 exactly for the rows updated.
     */
    private static void checkRows(BenchContext ctx, Table t, long rows, AtomicLongArray updated) {
        long[] seen = {0};
        t.scan(null, null, Long.MAX_VALUE, (k, v) -> {
            long id = ByteBuffer.wrap(k).getLong();
            byte[] loaded = row(id);
            boolean intact = id == seen[0] && v.length == VALUE_BYTES
                    && Arrays.equals(v, 0, FIELD_OFFSET, loaded, 0, FIELD_OFFSET)
                    && Arrays.equals(v, FIELD_OFFSET + FIELD_BYTES, VALUE_BYTES, loaded, FIELD_OFFSET + FIELD_BYTES,
                            VALUE_BYTES);
            int f = ByteBuffer.wrap(v, FIELD_OFFSET, FIELD_BYTES).getInt();
            boolean wasUpdated = (updated.get((int) (id >>> 6)) & 1L << id) != 0;
            if (!intact || (f & 0xFFFF) != tag(id) || (f >>> 16 != 0) != wasUpdated) {
                throw new IllegalStateException(ctx.engine() + ": row " + id + " (the " + seen[0] + "th) is wrong: "
                        + (intact ? "field " + Integer.toHexString(f) + ", updated " + wasUpdated : "damaged"));
            }
            seen[0]++;
        });
        if (seen[0] != rows) {
            throw new IllegalStateException(ctx.engine() + ": " + seen[0] + " rows, expected " + rows);
        }
    }

    /** A row as loaded: a 4-byte number, the field (version 0), then 112 digits, all from its id. */
    static byte[] row(long id) {
        ByteBuffer b = ByteBuffer.allocate(VALUE_BYTES).putInt((int) IiBench.mix(id)).put(field(id, 0));
        long h = IiBench.mix(~id);
        while (b.hasRemaining()) {
            // Random digits, as sysbench's c column: not compressible much beyond their entropy.
            b.put(DIGITS[(int) Long.remainderUnsigned(h, 10)]);
            h = IiBench.mix(h);
        }
        return b.array();
    }

    /** The field: {@code version} (0 as loaded) in the high half, the row's tag in the low half. */
    static byte[] field(long id, int version) {
        return ByteBuffer.allocate(FIELD_BYTES).putInt(version << 16 | tag(id)).array();
    }

    private static int tag(long id) {
        return (int) (IiBench.mix(id + 0x5bd1e995L) & 0xFFFF);
    }

    private static int planned(long operations, int batch) {
        return (int) Math.max(1, operations / batch);
    }

    /**
     * Puts {@code n} keys (0 to n-1) through {@code put} in batches of {@value #LOAD_BATCH}, stopping
     * at the time cap, then flushes; returns the keys loaded and the nanoseconds taken.
     */
    static long[] load(EngineAdapter e, long n, long capNanos, LongConsumer put) {
        long t0 = System.nanoTime();
        long id = 0;
        while (id < n && System.nanoTime() - t0 <= capNanos) {
            long end = Math.min(n, id + LOAD_BATCH);
            for (; id < end; id++) {
                put.accept(id);
            }
            e.commit();
        }
        e.flush();
        return new long[] {id, System.nanoTime() - t0};
    }

    /** The note's end: how a read-modify-write was isolated, the time cap, betree's back-pressure. */
    private static String withOutcome(String note, BatchClients.Outcome o, String variant, long done, long planned,
            EngineAdapter e) {
        if (variant.equals(GET_PUT)) {
            note += e.updates().isolatedReadModifyWrite()
                    ? "; " + count(o.retries()) + " batches retried after a write conflict"
                    : "; not isolated: a get, then a put into the batch";
        }
        if (o.capped()) {
            note += "; time cap reached at " + count(done) + " of " + count(planned);
        }
        return InsertWorkload.withWriterWait(note, e);
    }

    private static String count(long n) {
        return String.format(Locale.ROOT, "%,d", n);
    }
}
