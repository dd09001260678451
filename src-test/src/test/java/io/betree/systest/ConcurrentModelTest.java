package io.betree.systest;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.betree.CacheStats;
import io.betree.Cursor;
import io.betree.Durability;
import io.betree.Environment;
import io.betree.EnvironmentOptions;
import io.betree.Index;
import io.betree.IndexOptions;
import io.betree.Transaction;
import io.betree.TreeChecks;
import io.betree.WriteConflictException;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Iterator;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.NavigableMap;
import java.util.Random;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The model test with threads. Each of {@value #WRITERS} writers owns a key range and writes the
 * same puts and deletes to the indexes "a" and "b" in one transaction (several keys at a time,
 * some transactions aborted on purpose), keeping a {@link TreeMap} of its range; all writers also
 * increment a few shared counters, again in both indexes, by read-modify-write transactions that
 * retry on {@link WriteConflictException}, counting their successful increments. So in every
 * snapshot "a" and "b" hold the same entries: {@value #READERS} readers check that a scan (and
 * gets) of a writer's range or the counters agree between the two indexes within one transaction,
 * and that counters never go down from one snapshot to the next. Writers check that a new snapshot
 * sees their own last commits. Another thread checkpoints now and then; the cache is at its minimum
 * and nodes are small so that flushes, splits, merges and eviction happen while all this runs.
 * At the end the per-thread models are merged and compared with both indexes by gets and scans,
 * then again after a close, a reopen and the trees' invariant check ({@link TreeChecks}).
 *
 * <p>Reproduce the random choices with {@code -Dbetree.seed=N} (printed; thread timing still
 * varies); {@code -Dbetree.concurrentMillis=N} sets how long the threads run (default 5000).
 */
class ConcurrentModelTest {
    private static final int WRITERS = 4;
    private static final int READERS = 2;
    private static final int KEYS_PER_WRITER = 12_000;
    private static final int COUNTERS = 12;
    private static final long RUN_MILLIS = Long.getLong("betree.concurrentMillis", 5_000);
    private static final byte OWNED = 1;
    private static final byte COUNTER = 2;

    @TempDir
    Path dir;

    /** What one writer knows it committed: its range's entries and its increments per counter. */
    private static final class WriterModel {
        final NavigableMap<byte[], byte[]> owned = new TreeMap<>(Arrays::compareUnsigned);
        final long[] increments = new long[COUNTERS];
    }

    private static EnvironmentOptions options() {
        // No syncing: durability is the crash tests' subject; checkpoints come from a thread below.
        return EnvironmentOptions.defaults().cacheBytes(16L << 20)
                .durability(Durability.NONE).checkpointInterval(Duration.ZERO);
    }

    private static IndexOptions shape(int fanout) {
        return IndexOptions.defaults().nodeSize(64 << 10).basementSize(4 << 10).fanout(fanout);
    }

    @Test
    void writersAndSnapshotReadersAgreeWithPerThreadModels() throws Exception {
        long seed = Long.getLong("betree.seed", System.nanoTime());
        System.out.printf(Locale.ROOT, "ConcurrentModelTest: seed %d, %d ms%n", seed, RUN_MILLIS);
        try {
            run(seed);
        } catch (AssertionError | Exception e) {
            throw new AssertionError("concurrent model test failed; rerun with -Dbetree.seed=" + seed + ": "
                    + e.getMessage(), e);
        }
    }

    private void run(long seed) throws Exception {
        int fanout = 4 + new Random(seed).nextInt(8);
        IndexOptions shape = shape(fanout);
        WriterModel[] models = new WriterModel[WRITERS];
        AtomicReference<Throwable> failure = new AtomicReference<>();
        AtomicLong commits = new AtomicLong();
        AtomicLong conflicts = new AtomicLong();
        AtomicLong snapshots = new AtomicLong();
        AtomicLong checkpoints = new AtomicLong();
        try (Environment env = Environment.open(dir, options())) {
            Index a = env.openIndex("a", shape);
            Index b = env.openIndex("b", shape);
            try (Transaction txn = env.begin()) {
                for (int c = 0; c < COUNTERS; c++) {
                    a.put(txn, counterKey(c), num(0));
                    b.put(txn, counterKey(c), num(0));
                }
                txn.commit();
            }
            long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(RUN_MILLIS);
            List<Thread> threads = new ArrayList<>();
            for (int w = 0; w < WRITERS; w++) {
                int writer = w;
                models[w] = new WriterModel();
                threads.add(worker("writer-" + w, failure, () -> write(env, a, b, writer, models[writer],
                        new Random(seed * 31 + writer), deadline, failure, commits, conflicts)));
            }
            for (int r = 0; r < READERS; r++) {
                int reader = r;
                threads.add(worker("reader-" + r, failure, () -> read(env, a, b,
                        new Random(seed * 31 + 100 + reader), deadline, failure, snapshots)));
            }
            threads.add(worker("checkpointer", failure, () -> {
                Random rnd = new Random(seed * 31 + 200);
                while (System.nanoTime() < deadline && failure.get() == null) {
                    Thread.sleep(50 + rnd.nextInt(250));
                    env.checkpoint();
                    checkpoints.incrementAndGet();
                }
            }));
            long start = System.nanoTime();
            threads.forEach(Thread::start);
            for (Thread t : threads) {
                t.join(RUN_MILLIS + 120_000);
                assertFalse(t.isAlive(), t.getName() + " hangs");
            }
            if (failure.get() != null) {
                throw new AssertionError("a worker failed: " + failure.get(), failure.get());
            }
            CacheStats cache = env.cacheStats();
            System.out.printf(Locale.ROOT, "ConcurrentModelTest: fanout %d, %d commits, %d write conflicts retried, "
                    + "%d snapshots compared, %d checkpoints in %.1f s; cache: %d misses, %d evictions, "
                    + "%d write-backs%n", fanout, commits.get(), conflicts.get(), snapshots.get(), checkpoints.get(),
                    (System.nanoTime() - start) / 1e9, cache.misses(), cache.evictions(), cache.writeBacks());
            assertTrue(commits.get() > 100, "too few commits: " + commits.get());
            assertTrue(snapshots.get() > 0, "no snapshot was compared");
            NavigableMap<byte[], byte[]> expected = merge(models);
            compare(a, expected, "index a at the end");
            compare(b, expected, "index b at the end");
        }
        try (Environment env = Environment.open(dir, options())) {
            TreeChecks.verify(env);
            NavigableMap<byte[], byte[]> expected = merge(models);
            compare(env.openIndex("a", shape), expected, "index a after a reopen");
            compare(env.openIndex("b", shape), expected, "index b after a reopen");
        }
    }

    private interface Work {
        void run() throws Exception;
    }

    private static Thread worker(String name, AtomicReference<Throwable> failure, Work work) {
        return new Thread(() -> {
            try {
                work.run();
            } catch (Throwable t) {
                failure.compareAndSet(null, new AssertionError(name + ": " + t, t));
            }
        }, name);
    }

    // ---- writers ----

    private static void write(Environment env, Index a, Index b, int writer, WriterModel model, Random rnd,
            long deadline, AtomicReference<Throwable> failure, AtomicLong commits, AtomicLong conflicts) {
        long sequence = 0;
        while (System.nanoTime() < deadline && failure.get() == null) {
            if (rnd.nextInt(4) == 0) {
                incrementCounter(env, a, b, model, rnd, commits, conflicts);
                continue;
            }
            // A transaction over the writer's own keys: puts and deletes, the same in both indexes.
            NavigableMap<byte[], byte[]> writes = new TreeMap<>(Arrays::compareUnsigned);
            int n = 1 + rnd.nextInt(rnd.nextInt(10) == 0 ? 40 : 4);
            boolean deletes = rnd.nextInt(4) == 0;
            for (int i = 0; i < n; i++) {
                byte[] key = ownedKey(writer, rnd.nextInt(KEYS_PER_WRITER));
                writes.put(key, deletes && rnd.nextInt(3) != 0 ? null : value(writer, sequence++, rnd));
            }
            boolean abort = rnd.nextInt(20) == 0;
            try (Transaction txn = env.begin()) {
                // This writer is the only one writing its keys, so its snapshot holds its last commits.
                byte[] probe = rnd.nextBoolean() ? writes.firstKey() : ownedKey(writer, rnd.nextInt(KEYS_PER_WRITER));
                assertEqualValue(model.owned.get(probe), a.get(txn, probe), "writer " + writer
                        + " reads back its own commits from index a");
                assertEqualValue(model.owned.get(probe), b.get(txn, probe), "writer " + writer
                        + " reads back its own commits from index b");
                for (Map.Entry<byte[], byte[]> e : writes.entrySet()) {
                    if (e.getValue() == null) {
                        a.delete(txn, e.getKey());
                        b.delete(txn, e.getKey());
                    } else {
                        a.put(txn, e.getKey(), e.getValue());
                        b.put(txn, e.getKey(), e.getValue());
                    }
                }
                if (abort) {
                    continue; // close() aborts: nothing to record
                }
                txn.commit();
            } catch (WriteConflictException e) {
                // Keys are tracked by hash: another writer's key can collide with one of ours.
                conflicts.incrementAndGet();
                continue;
            }
            commits.incrementAndGet();
            for (Map.Entry<byte[], byte[]> e : writes.entrySet()) {
                if (e.getValue() == null) {
                    model.owned.remove(e.getKey());
                } else {
                    model.owned.put(e.getKey(), e.getValue());
                }
            }
        }
    }

    /** Adds one to a shared counter in both indexes, retrying on conflicts (or aborting on purpose). */
    private static void incrementCounter(Environment env, Index a, Index b, WriterModel model, Random rnd,
            AtomicLong commits, AtomicLong conflicts) {
        int c = rnd.nextInt(COUNTERS);
        byte[] key = counterKey(c);
        boolean abort = rnd.nextInt(20) == 0;
        for (int attempt = 0; attempt < 1_000; attempt++) {
            try (Transaction txn = env.begin()) {
                byte[] va = a.get(txn, key);
                byte[] vb = b.get(txn, key);
                assertNotNull(va, "counter " + c + " missing from index a");
                assertArrayEquals(va, vb, "counter " + c + " differs between the indexes in one snapshot");
                a.put(txn, key, num(num(va) + 1));
                b.put(txn, key, num(num(va) + 1));
                if (abort) {
                    return;
                }
                txn.commit();
                model.increments[c]++;
                commits.incrementAndGet();
                return;
            } catch (WriteConflictException e) {
                conflicts.incrementAndGet();
            }
        }
        throw new AssertionError("counter " + c + ": 1000 conflicts in a row");
    }

    // ---- readers ----

    private static void read(Environment env, Index a, Index b, Random rnd, long deadline,
            AtomicReference<Throwable> failure, AtomicLong snapshots) {
        long[] lastCounters = new long[COUNTERS];
        while (System.nanoTime() < deadline && failure.get() == null) {
            try (Transaction txn = env.begin()) {
                int range = rnd.nextInt(WRITERS + 1);
                byte[] from;
                byte[] to;
                if (range == WRITERS) {
                    from = new byte[] {COUNTER};
                    to = new byte[] {COUNTER + 1};
                } else if (rnd.nextInt(4) == 0) {
                    // Part of a writer's range, starting anywhere.
                    from = ownedKey(range, rnd.nextInt(KEYS_PER_WRITER));
                    to = new byte[] {OWNED, (byte) (range + 1)};
                } else {
                    from = new byte[] {OWNED, (byte) range};
                    to = new byte[] {OWNED, (byte) (range + 1)};
                }
                List<byte[][]> inA = scan(a, txn, from, to);
                List<byte[][]> inB = scan(b, txn, from, to);
                String what = "range " + range + " from " + Arrays.toString(from);
                assertEquals(inA.size(), inB.size(), "entries of a and b in one snapshot, " + what);
                for (int i = 0; i < inA.size(); i++) {
                    assertArrayEquals(inA.get(i)[0], inB.get(i)[0], "key " + i + " of a and b in one snapshot, "
                            + what);
                    assertArrayEquals(inA.get(i)[1], inB.get(i)[1], "value " + i + " of a and b in one snapshot, "
                            + what);
                }
                // Point reads within the same snapshot agree with the scans.
                for (int probe = 0; probe < 8 && !inA.isEmpty(); probe++) {
                    byte[][] e = inA.get(rnd.nextInt(inA.size()));
                    assertArrayEquals(e[1], a.get(txn, e[0]), "get of a and its scan in one snapshot");
                    assertArrayEquals(e[1], b.get(txn, e[0]), "get of b and a's scan in one snapshot");
                }
                if (range < WRITERS) {
                    byte[] key = ownedKey(range, rnd.nextInt(KEYS_PER_WRITER));
                    assertEqualValue(a.get(txn, key), b.get(txn, key), "get of one key in a and b in one snapshot");
                } else {
                    assertEquals(COUNTERS, inA.size(), "counters in one snapshot");
                    for (int c = 0; c < COUNTERS; c++) {
                        long now = num(inA.get(c)[1]);
                        assertTrue(now >= lastCounters[c], "counter " + c + " went down from " + lastCounters[c]
                                + " to " + now + " in a later snapshot");
                        lastCounters[c] = now;
                    }
                }
            }
            snapshots.incrementAndGet();
        }
    }

    private static List<byte[][]> scan(Index index, Transaction txn, byte[] from, byte[] to) {
        List<byte[][]> out = new ArrayList<>();
        try (Cursor c = index.scan(txn, from, to)) {
            while (c.next()) {
                out.add(new byte[][] {c.key(), c.value()});
            }
        }
        return out;
    }

    // ---- the final comparison ----

    private static NavigableMap<byte[], byte[]> merge(WriterModel[] models) {
        NavigableMap<byte[], byte[]> all = new TreeMap<>(Arrays::compareUnsigned);
        long[] counters = new long[COUNTERS];
        for (WriterModel m : models) {
            all.putAll(m.owned);
            for (int c = 0; c < COUNTERS; c++) {
                counters[c] += m.increments[c];
            }
        }
        for (int c = 0; c < COUNTERS; c++) {
            all.put(counterKey(c), num(counters[c]));
        }
        return all;
    }

    /** Every model key by get, every key of the writers' ranges absent from the model by get, then a full scan. */
    private static void compare(Index index, NavigableMap<byte[], byte[]> expected, String when) {
        for (Map.Entry<byte[], byte[]> e : expected.entrySet()) {
            assertArrayEquals(e.getValue(), index.get(e.getKey()), "get of " + Arrays.toString(e.getKey()) + ", "
                    + when);
        }
        for (int w = 0; w < WRITERS; w++) {
            for (int k = 0; k < KEYS_PER_WRITER; k++) {
                byte[] key = ownedKey(w, k);
                if (!expected.containsKey(key)) {
                    assertNull(index.get(key), "get of absent key " + Arrays.toString(key) + ", " + when);
                }
            }
        }
        Iterator<Map.Entry<byte[], byte[]>> it = expected.entrySet().iterator();
        int n = 0;
        try (Cursor c = index.scan()) {
            while (c.next()) {
                assertTrue(it.hasNext(), "scan returned more entries than the model (" + expected.size() + "), "
                        + when + ": " + Arrays.toString(c.key()));
                Map.Entry<byte[], byte[]> e = it.next();
                assertArrayEquals(e.getKey(), c.key(), "scan key " + n + ", " + when);
                assertArrayEquals(e.getValue(), c.value(), "scan value " + n + ", " + when);
                n++;
            }
        }
        assertFalse(it.hasNext(), "scan ended after " + n + " of " + expected.size() + " entries, " + when);
    }

    // ---- keys and values ----

    /** Key {@code k} of writer {@code w}: its range's prefix, k, and for some k a tail of k-derived bytes. */
    private static byte[] ownedKey(int w, int k) {
        int extra = k % 7 == 0 ? k % 13 : 0;
        ByteBuffer out = ByteBuffer.allocate(6 + extra).put(OWNED).put((byte) w).putInt(k);
        for (int i = 0; i < extra; i++) {
            out.put((byte) (k * 31 + i));
        }
        return out.array();
    }

    private static byte[] counterKey(int c) {
        return new byte[] {COUNTER, (byte) c};
    }

    private static byte[] value(int writer, long sequence, Random rnd) {
        int length = 12 + (rnd.nextInt(40) == 0 ? rnd.nextInt(3_000) : rnd.nextInt(200));
        ByteBuffer out = ByteBuffer.allocate(length).putInt(writer).putLong(sequence);
        while (out.hasRemaining()) {
            out.put((byte) ('a' + out.position() % 23));
        }
        return out.array();
    }

    private static byte[] num(long n) {
        return ByteBuffer.allocate(8).putLong(n).array();
    }

    private static long num(byte[] b) {
        return ByteBuffer.wrap(b).getLong();
    }

    private static void assertEqualValue(byte[] expected, byte[] actual, String message) {
        if (expected == null) {
            assertNull(actual, message);
        } else {
            assertArrayEquals(expected, actual, message);
        }
    }
}
