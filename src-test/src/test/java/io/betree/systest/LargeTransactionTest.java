package io.betree.systest;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.betree.Cursor;
import io.betree.Durability;
import io.betree.Environment;
import io.betree.EnvironmentOptions;
import io.betree.Index;
import io.betree.IndexOptions;
import io.betree.StorageSeam;
import io.betree.Transaction;
import io.betree.TreeChecks;
import io.betree.WriteConflictException;
import io.betree.internal.storage.FaultInjectingStorageEnv;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Transactions larger than their heap share ({@link EnvironmentOptions#transactionMemoryBytes}) move
 * their writes to a spill file and commit through parts logged ahead of the commit. Here the share
 * is 4 KiB, so a few hundred writes spill many times: the transaction must read its own writes and
 * scan exactly as a model says, commit atomically, conflict as any transaction does, leave no files
 * behind, and come back after a crash that races with checkpoints. {@code -Dbetree.seed=N}.
 */
class LargeTransactionTest {
    private static final long SEED = Long.getLong("betree.seed", System.nanoTime());

    @TempDir
    Path work;

    private static EnvironmentOptions options() {
        return EnvironmentOptions.defaults().cacheBytes(16L << 20)
                .durability(Durability.NONE).transactionMemoryBytes(4096);
    }

    private static IndexOptions shape() {
        return IndexOptions.defaults().nodeSize(64 << 10).basementSize(4 << 10).fanout(6);
    }

    private static byte[] key(int n) {
        return ByteBuffer.allocate(4).putInt(n).array();
    }

    private static List<String> spillFiles(Path dir) throws IOException {
        try (Stream<Path> files = Files.list(dir)) {
            return files.map(p -> p.getFileName().toString()).filter(n -> n.startsWith("betree-txn-")).toList();
        }
    }

    private static void assertScan(TreeMap<byte[], byte[]> model, Cursor c, String what) {
        List<Map.Entry<byte[], byte[]>> expected = new ArrayList<>(model.entrySet());
        int i = 0;
        while (c.next()) {
            assertTrue(i < expected.size(), what + ": more rows than the model's " + expected.size());
            assertArrayEquals(expected.get(i).getKey(), c.key(), what + ": key of row " + i);
            assertArrayEquals(expected.get(i).getValue(), c.value(), what + ": value of row " + i);
            i++;
        }
        assertEquals(expected.size(), i, what + ": rows");
    }

    @Test
    void spilledTransactionMatchesAModelThroughReadsScansCommitAndReopen() throws Exception {
        Random rnd = new Random(SEED);
        Path dir = work.resolve("env");
        TreeMap<byte[], byte[]> modelA = new TreeMap<>(Arrays::compareUnsigned);
        TreeMap<byte[], byte[]> modelB = new TreeMap<>(Arrays::compareUnsigned);
        try (Environment env = Environment.open(dir, options())) {
            Index a = env.openIndex("a", shape());
            Index b = env.openIndex("b", shape());
            for (int i = 0; i < 2000; i += 3) { // committed rows the transaction overwrites and deletes
                a.put(key(i), ("old" + i).getBytes());
                modelA.put(key(i), ("old" + i).getBytes());
            }
            try (Transaction txn = env.begin()) {
                for (int step = 0; step < 20_000; step++) {
                    int k = rnd.nextInt(4000);
                    boolean toA = rnd.nextBoolean();
                    Index ix = toA ? a : b;
                    TreeMap<byte[], byte[]> model = toA ? modelA : modelB;
                    if (rnd.nextInt(5) == 0) {
                        ix.delete(txn, key(k));
                        model.remove(key(k));
                    } else {
                        byte[] v = ("v" + step + "-" + k).getBytes();
                        ix.put(txn, key(k), v);
                        model.put(key(k), v);
                    }
                    if (step % 97 == 0) {
                        int probe = rnd.nextInt(4000);
                        assertArrayEquals(model.get(key(probe)), ix.get(txn, key(probe)), "own read at step " + step);
                    }
                    if (step % 5000 == 4999) {
                        try (Cursor c = a.scan(txn, null, null)) {
                            assertScan(modelA, c, "scan of a in the transaction at step " + step);
                        }
                    }
                }
                assertFalse(spillFiles(dir).isEmpty(), "a transaction of 20,000 writes over a 4 KiB share spills");
                // Others do not see it before the commit.
                assertNull(b.get(key(modelB.isEmpty() ? 0 : java.nio.ByteBuffer.wrap(modelB.firstKey()).getInt())));
                try (Cursor c = b.scan(txn, null, null)) {
                    assertScan(modelB, c, "scan of b in the transaction");
                }
                txn.commit();
            }
            assertEquals(List.of(), spillFiles(dir), "the commit deletes the spill file");
            try (Cursor c = a.scan()) {
                assertScan(modelA, c, "a after the commit");
            }
            try (Cursor c = b.scan()) {
                assertScan(modelB, c, "b after the commit");
            }
        }
        try (Environment env = Environment.open(dir, options())) {
            try (Cursor c = env.openIndex("a", shape()).scan()) {
                assertScan(modelA, c, "a after reopening");
            }
            try (Cursor c = env.openIndex("b", shape()).scan()) {
                assertScan(modelB, c, "b after reopening");
            }
            TreeChecks.verify(env);
        }
    }

    /**
     * Ten thousand new rows in one basement's range (an empty index, default shape): a scan of the
     * transaction takes them a bounded batch at a time, not all onto the heap at once.
     */
    @Test
    void scanOfManySpilledWritesInOneBasementRange() throws Exception {
        try (Environment env = Environment.open(work.resolve("env"), options().cacheBytes(32L << 20))) {
            Index a = env.openIndex("a");
            try (Transaction txn = env.begin()) {
                for (int i = 0; i < 10_000; i++) {
                    a.put(txn, key(i), key(i));
                }
                a.delete(txn, key(5000));
                int seen = 0;
                try (Cursor c = a.scan(txn, null, null)) {
                    while (c.next()) {
                        int expected = seen < 5000 ? seen : seen + 1;
                        assertArrayEquals(key(expected), c.key(), "row " + seen);
                        seen++;
                    }
                }
                assertEquals(9_999, seen);
                txn.commit();
            }
            assertNull(a.get(key(5000)));
            assertArrayEquals(key(9_999), a.get(key(9_999)));
        }
    }

    @Test
    void abortedSpilledTransactionLeavesNothing() throws Exception {
        Path dir = work.resolve("env");
        try (Environment env = Environment.open(dir, options())) {
            Index a = env.openIndex("a", shape());
            a.put(key(1), "kept".getBytes());
            try (Transaction txn = env.begin()) {
                for (int i = 0; i < 5000; i++) {
                    a.put(txn, key(i), "gone".getBytes());
                }
                assertFalse(spillFiles(dir).isEmpty());
            } // closed without commit: aborted
            assertEquals(List.of(), spillFiles(dir), "an abort deletes the spill file");
            assertArrayEquals("kept".getBytes(), a.get(key(1)));
            assertNull(a.get(key(2)));
        }
    }

    @Test
    void spilledTransactionsConflictLikeAnyOther() throws Exception {
        try (Environment env = Environment.open(work.resolve("env"), options())) {
            Index a = env.openIndex("a", shape());
            // A small transaction commits a key the large one wrote before: the large one loses.
            Transaction large = env.begin();
            for (int i = 0; i < 3000; i++) {
                a.put(large, key(i), "large".getBytes());
            }
            try (Transaction small = env.begin()) {
                a.put(small, key(1234), "small".getBytes());
                small.commit();
            }
            assertThrows(WriteConflictException.class, large::commit);
            assertArrayEquals("small".getBytes(), a.get(key(1234)));
            assertNull(a.get(key(1)), "nothing of the losing transaction is visible");

            // The large one commits first: a transaction that began before it loses on any of its keys.
            Transaction early = env.begin();
            Transaction disjoint = env.begin();
            try (Transaction winner = env.begin()) {
                for (int i = 0; i < 3000; i++) {
                    a.put(winner, key(10_000 + i), "winner".getBytes());
                }
                winner.commit();
            }
            assertThrows(WriteConflictException.class, () -> a.put(early, key(12_345), "early".getBytes()));
            a.put(disjoint, key(20_000), "disjoint".getBytes());
            disjoint.commit();
            assertArrayEquals("winner".getBytes(), a.get(key(12_345)));
            assertArrayEquals("disjoint".getBytes(), a.get(key(20_000)));

            // Two large ones that share one key: the second to commit loses, the whole of it.
            Transaction first = env.begin();
            Transaction second = env.begin();
            for (int i = 0; i < 3000; i++) {
                a.put(first, key(30_000 + 2 * i), "first".getBytes());
                a.put(second, key(30_001 + 2 * i), "second".getBytes());
            }
            a.put(second, key(35_000), "second".getBytes()); // written by first too (30,000 + 2 * 2,500)
            first.commit();
            assertThrows(WriteConflictException.class, second::commit);
            assertArrayEquals("first".getBytes(), a.get(key(35_000)));
            assertNull(a.get(key(30_001)), "nothing of the losing large transaction is visible");
        }
    }

    /**
     * Large commits racing with checkpoints, small log segments, then a power cut: parts logged before
     * a checkpoint's position are kept for the commit logged after it. Every acknowledged (SYNC)
     * transaction must come back whole.
     */
    @Test
    void largeCommitsRacingCheckpointsSurviveACrash() throws Exception {
        Random rnd = new Random(SEED);
        System.out.println("LargeTransactionTest: seed " + SEED);
        Path dir = work.resolve("env");
        FaultInjectingStorageEnv fi = new FaultInjectingStorageEnv();
        FencedStorageEnv fenced = new FencedStorageEnv(fi);
        EnvironmentOptions opts = StorageSeam.withStorage(options().durability(Durability.SYNC)
                .logSegmentBytes(1 << 20).checkpointInterval(Duration.ZERO).transactionMemoryBytes(64 << 10), fenced);
        Environment env = Environment.open(dir, opts);
        Index a = env.openIndex("a", shape());
        AtomicBoolean stop = new AtomicBoolean();
        AtomicReference<Throwable> failure = new AtomicReference<>();
        Thread checkpointer = new Thread(() -> {
            while (!stop.get()) {
                try {
                    env.checkpoint();
                } catch (RuntimeException e) {
                    if (!stop.get()) {
                        failure.compareAndSet(null, e);
                    }
                    return;
                }
            }
        }, "checkpointer");
        Thread indexCreator = new Thread(() -> {
            // Index creation takes its own quiet point, holding the commit gate while it waits.
            for (int n = 0; !stop.get(); n++) {
                try {
                    env.openIndex("extra-" + n, shape());
                    Thread.sleep(20);
                } catch (InterruptedException e) {
                    return;
                } catch (RuntimeException e) {
                    if (!stop.get()) {
                        failure.compareAndSet(null, e);
                    }
                    return;
                }
            }
        }, "index-creator");
        checkpointer.start();
        indexCreator.start();
        int acknowledged = 0;
        byte[] value = new byte[200];
        for (int t = 0; t < 12 && failure.get() == null; t++) {
            try (Transaction txn = env.begin()) {
                for (int i = 0; i < 8000; i++) {
                    rnd.nextBytes(value);
                    ByteBuffer.wrap(value).putInt(0, t);
                    a.put(txn, key(t * 10_000 + i), value);
                }
                txn.commit();
                acknowledged++;
            }
        }
        stop.set(true);
        fenced.fenceAndThen(() -> fi.crash(rnd));
        checkpointer.join(30_000);
        indexCreator.join(30_000);
        assertFalse(checkpointer.isAlive(), "the checkpointer hangs after the crash");
        assertFalse(indexCreator.isAlive(), "the index creator hangs after the crash");
        try {
            env.close();
        } catch (RuntimeException ignored) {
            // The files died under it.
        }
        if (failure.get() != null) {
            throw new AssertionError("before the crash (-Dbetree.seed=" + SEED + "): " + failure.get(), failure.get());
        }
        try (Environment again = Environment.open(dir, StorageSeam.withStorage(options(), fi))) {
            Index ix = again.openIndex("a", shape());
            for (int t = 0; t < acknowledged; t++) {
                int rows = 0;
                try (Cursor c = ix.scan(key(t * 10_000), key(t * 10_000 + 8000))) {
                    while (c.next()) {
                        assertEquals(t, ByteBuffer.wrap(c.value()).getInt(0), "row of transaction " + t);
                        rows++;
                    }
                }
                assertEquals(8000, rows, "rows of acknowledged transaction " + t + " after the crash (-Dbetree.seed="
                        + SEED + ")");
            }
        }
    }

    /**
     * The bar: a transaction of 5 M writes commits in a JVM with a 64 MiB heap, and a crash
     * right after the commit returns loses none of it (the parent reopens and recovers it from the
     * log). {@code -Dbetree.largeTxnWrites=N} changes the size.
     */
    @Test
    void fiveMillionWritesCommitInASixtyFourMegabyteHeap() throws Exception {
        long rows = Long.getLong("betree.largeTxnWrites", 5_000_000);
        Path dir = work.resolve("env");
        ChildJvm.Result r = ChildJvm.run(LargeTransactionWorkload.class,
                List.of("-Xmx64m", "-XX:MaxDirectMemorySize=160m"), List.of(dir.toString(), Long.toString(rows)), work,
                Duration.ofMinutes(5));
        System.out.printf("LargeTransactionTest: %,d writes in one transaction under -Xmx64m: committed after %s s "
                + "(commit %s s), heap pools' peaks summed %s MiB%n", rows, r.field("COMMITTED"), r.field("COMMIT_SECONDS"),
                r.field("PEAK_HEAP_BYTES") == null ? "?" : Long.parseLong(r.field("PEAK_HEAP_BYTES")) >> 20);
        assertFalse(r.timedOut(), r.describe());
        assertEquals(0, r.exitCode(), r.describe());
        assertEquals("1000", r.field("SAMPLE_OK"), "the transaction's reads of its own writes\n" + r.describe());
        long recoveryStart = System.nanoTime();
        try (Environment env = Environment.open(dir, EnvironmentOptions.defaults().cacheBytes(64L << 20))) {
            System.out.printf("LargeTransactionTest: recovered in %.1f s%n", (System.nanoTime() - recoveryStart) / 1e9);
            Index index = env.openIndex("rows");
            long count = 0;
            try (Cursor c = index.scan()) {
                while (c.next()) {
                    count++;
                }
            }
            assertEquals(rows, count, "rows after recovering the commit");
            for (long row = 0; row < rows; row += rows / 1000) {
                assertArrayEquals(LargeTransactionWorkload.value(row), index.get(LargeTransactionWorkload.key(row)),
                        "row " + row);
            }
        }
        assertEquals(List.of(), spillFiles(dir), "no spill file survives the crash's recovery");
    }
}
