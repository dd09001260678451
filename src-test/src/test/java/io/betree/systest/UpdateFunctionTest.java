package io.betree.systest;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.betree.BetreeException;
import io.betree.Cursor;
import io.betree.Durability;
import io.betree.Environment;
import io.betree.EnvironmentOptions;
import io.betree.Index;
import io.betree.IndexOptions;
import io.betree.Transaction;
import io.betree.TreeChecks;
import io.betree.UpdateFunction;
import io.betree.WriteConflictException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Update functions through the public API: counters that many threads increment at once and none
 * of whose increments is lost, a transaction's reads, scans and spills of its own updates, the
 * conflicts updates take part in and those they do not, errors for misuse, and updates that come
 * back after a reopen from the log alone and from a checkpoint, all against a model.
 */
class UpdateFunctionTest {
    @TempDir
    Path dir;

    /** Adds its 8-byte argument to the 8-byte value; an absent value counts as 0. Refuses other lengths. */
    static final UpdateFunction ADD = (key, old, argument) -> {
        if (argument.length != 8) {
            throw new IllegalArgumentException("add takes 8 bytes, not " + argument.length);
        }
        long before = old == null ? 0 : ByteBuffer.wrap(old).getLong();
        return ByteBuffer.allocate(8).putLong(before + ByteBuffer.wrap(argument).getLong()).array();
    };

    /** Appends its argument to the value; an argument "!" deletes the key. */
    static final UpdateFunction APPEND = (key, old, argument) -> {
        if (argument.length == 1 && argument[0] == '!') {
            return null;
        }
        byte[] joined = new byte[(old == null ? 0 : old.length) + argument.length];
        if (old != null) {
            System.arraycopy(old, 0, joined, 0, old.length);
        }
        System.arraycopy(argument, 0, joined, joined.length - argument.length, argument.length);
        return joined;
    };

    private static EnvironmentOptions options() {
        return EnvironmentOptions.defaults().cacheBytes(16L << 20).durability(Durability.NONE)
                .updateFunction("add", ADD).updateFunction("append", APPEND);
    }

    /** Small nodes and basements, so that a few thousand rows make a tree of several levels. */
    static IndexOptions shape() {
        return IndexOptions.defaults().nodeSize(64 << 10).basementSize(4 << 10).fanout(6);
    }

    static byte[] key(int n) {
        return String.format("key-%06d", n).getBytes(StandardCharsets.US_ASCII);
    }

    private static byte[] count(long n) {
        return ByteBuffer.allocate(8).putLong(n).array();
    }

    static byte[] text(String s) {
        return s.getBytes(StandardCharsets.US_ASCII);
    }

    @Test
    void concurrentIncrementsAllCountAndSurviveReopen() throws Exception {
        int threads = 8;
        int keys = 50;
        int perThread = 2_000;
        try (Environment env = Environment.open(dir, options())) {
            Index counters = env.openIndex("counters", shape());
            ExecutorService pool = Executors.newFixedThreadPool(threads);
            try {
                List<Future<?>> done = new ArrayList<>();
                for (int t = 0; t < threads; t++) {
                    int seed = t;
                    done.add(pool.submit(() -> {
                        Random rnd = new Random(seed);
                        for (int i = 0; i < perThread; i++) {
                            if (i % 2 == 0) {
                                counters.update(key(i % keys), "add", count(1));
                            } else {
                                // In a transaction begun before others' increments commit: never a conflict.
                                try (Transaction txn = env.begin()) {
                                    counters.update(txn, key(rnd.nextInt(keys)), "add", count(0));
                                    counters.update(txn, key(i % keys), "add", count(1));
                                    txn.commit();
                                }
                            }
                        }
                        return null;
                    }));
                }
                for (Future<?> f : done) {
                    f.get(2, TimeUnit.MINUTES);
                }
            } finally {
                pool.shutdownNow();
            }
            assertEquals((long) threads * perThread, sum(counters, keys), "every increment counted");
        }
        // Reopened from the checkpoint close made.
        try (Environment env = Environment.open(dir, options())) {
            assertEquals((long) threads * perThread, sum(env.openIndex("counters", shape()), keys));
            TreeChecks.verify(env);
        }
    }

    private static long sum(Index counters, int keys) {
        long total = 0;
        for (int k = 0; k < keys; k++) {
            byte[] v = counters.get(key(k));
            total += v == null ? 0 : ByteBuffer.wrap(v).getLong();
        }
        long scanned = 0;
        try (Cursor c = counters.scan()) {
            while (c.next()) {
                scanned += ByteBuffer.wrap(c.value()).getLong();
            }
        }
        assertEquals(total, scanned, "a scan sums what gets do");
        return total;
    }

    @Test
    void aTransactionSeesItsOwnUpdatesAndFoldsThemIntoItsWrites() {
        try (Environment env = Environment.open(dir, options())) {
            Index idx = env.openIndex("t", shape());
            idx.put(key(1), text("a"));
            idx.put(key(2), text("b"));
            try (Transaction txn = env.begin()) {
                idx.update(txn, key(1), "append", text("1"));
                idx.update(txn, key(1), "append", text("2"));
                assertArrayEquals(text("a12"), idx.get(txn, key(1)), "updates over the snapshot's value");
                idx.put(txn, key(3), text("c"));
                idx.update(txn, key(3), "append", text("3"));
                assertArrayEquals(text("c3"), idx.get(txn, key(3)), "an update of its own put");
                idx.update(txn, key(4), "append", text("4"));
                idx.update(txn, key(2), "append", text("!"));
                assertNull(idx.get(txn, key(2)), "a function that returns null deletes");
                assertEquals(Map.of("key-000001", "a12", "key-000003", "c3", "key-000004", "4"), scan(idx, txn));
                assertArrayEquals(text("a"), idx.get(key(1)), "others do not see it before commit");
                idx.put(key(1), text("z")); // committed by another writer meanwhile: the update is blind
                txn.commit();
            }
            assertEquals(Map.of("key-000001", "z12", "key-000003", "c3", "key-000004", "4"), scan(idx, null),
                    "the update applied to the value committed before it, not to the snapshot's");
        }
    }

    private static Map<String, String> scan(Index idx, Transaction txn) {
        Map<String, String> out = new TreeMap<>();
        try (Cursor c = txn == null ? idx.scan() : idx.scan(txn, null, null)) {
            while (c.next()) {
                out.put(new String(c.key(), StandardCharsets.US_ASCII), new String(c.value(), StandardCharsets.US_ASCII));
            }
        }
        return out;
    }

    @Test
    void updatesAreBlindButPutsConflictWithThem() {
        try (Environment env = Environment.open(dir, options())) {
            Index idx = env.openIndex("t", shape());
            try (Transaction older = env.begin()) {
                idx.update(key(1), "add", count(5));
                idx.update(older, key(1), "add", count(1)); // no conflict: blind
                older.commit();
            }
            assertArrayEquals(count(6), idx.get(key(1)));
            try (Transaction older = env.begin()) {
                idx.update(key(1), "add", count(1));
                assertThrows(WriteConflictException.class, () -> idx.put(older, key(1), count(0)),
                        "a put of a key updated since the snapshot");
            }
            try (Transaction older = env.begin()) {
                idx.put(older, key(2), count(1));
                try (Transaction other = env.begin()) {
                    idx.update(other, key(2), "add", count(1));
                    other.commit();
                }
                assertThrows(WriteConflictException.class, older::commit, "checked again at commit");
            }
        }
    }

    @Test
    void misuseIsRefusedAndWritesNothing() {
        try (Environment env = Environment.open(dir, options())) {
            Index idx = env.openIndex("t", shape());
            assertThrows(IllegalArgumentException.class, () -> idx.update(key(1), "nobody", count(1)));
            assertThrows(NullPointerException.class, () -> idx.update(key(1), null, count(1)));
            assertThrows(NullPointerException.class, () -> idx.update(key(1), "add", null));
            assertThrows(NullPointerException.class, () -> idx.update(null, "add", count(1)));
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                    () -> idx.update(key(1), "add", new byte[3]));
            assertTrue(e.getMessage().contains("add takes 8 bytes"), e.getMessage());
            try (Transaction txn = env.begin()) {
                assertThrows(IllegalArgumentException.class, () -> idx.update(txn, key(1), "add", new byte[3]));
                assertTrue(txn.isActive(), "a refused update leaves the transaction usable");
                idx.update(txn, key(1), "add", count(2));
                txn.commit();
            }
            assertArrayEquals(count(2), idx.get(key(1)), "only the accepted update");
            assertThrows(IllegalArgumentException.class, () -> EnvironmentOptions.defaults().updateFunction("", ADD));
            assertThrows(NullPointerException.class, () -> EnvironmentOptions.defaults().updateFunction("x", null));
        }
    }

    @Test
    void aCheckpointedTreeThatMayHoldUpdatesOfAnUnregisteredFunctionRefusesToOpen() {
        try (Environment env = Environment.open(dir, options())) {
            Index idx = env.openIndex("t", shape());
            idx.update(key(1), "append", text("x"));
            env.openIndex("other", shape()).updateAll("add", count(1));
            env.checkpoint(); // the log no longer holds them: the catalog must
        }
        BetreeException e = assertThrows(BetreeException.class, () -> Environment.open(dir,
                EnvironmentOptions.defaults().cacheBytes(16L << 20).updateFunction("add", ADD)));
        assertTrue(e.getMessage().contains("\"append\"") && e.getMessage().contains("\"t\""), e.getMessage());
        e = assertThrows(BetreeException.class, () -> Environment.open(dir,
                EnvironmentOptions.defaults().cacheBytes(16L << 20).updateFunction("append", APPEND)));
        assertTrue(e.getMessage().contains("\"add\"") && e.getMessage().contains("\"other\""), e.getMessage());
        try (Environment again = Environment.open(dir, options())) {
            assertArrayEquals(text("x"), again.openIndex("t", shape()).get(key(1)));
        }
    }

    @Test
    void aLogWithAnUnregisteredFunctionRefusesToOpenAndNamesIt() throws Exception {
        Path live = dir.resolve("live");
        Path image = dir.resolve("image");
        try (Environment env = Environment.open(live, options().durability(Durability.SYNC)
                .checkpointInterval(java.time.Duration.ZERO))) {
            env.openIndex("t", shape()).update(key(1), "append", text("x"));
            // What a crash now leaves: the update is synced in the log, and no checkpoint has it.
            CrashImage.copy(live, image);
        }
        BetreeException e = assertThrows(BetreeException.class, () -> Environment.open(image,
                EnvironmentOptions.defaults().cacheBytes(16L << 20).updateFunction("add", ADD)));
        assertTrue(e.getMessage().contains("\"append\""), e.getMessage());
        try (Environment again = Environment.open(image, options())) {
            assertArrayEquals(text("x"), again.openIndex("t", shape()).get(key(1)), "replayed from the log");
        }
    }

    @Test
    void manyUpdatesThroughASmallCacheAndASpillingTransactionMatchTheModel() {
        Random rnd = new Random(20261128);
        TreeMap<String, String> model = new TreeMap<>();
        EnvironmentOptions small = options().transactionMemoryBytes(4096);
        try (Environment env = Environment.open(dir, small)) {
            Index idx = env.openIndex("t", shape());
            for (int round = 0; round < 20; round++) {
                try (Transaction txn = env.begin()) {
                    TreeMap<String, String> mine = new TreeMap<>(model);
                    for (int i = 0; i < 400; i++) {
                        int k = rnd.nextInt(2_000);
                        String name = new String(key(k), StandardCharsets.US_ASCII);
                        int kind = rnd.nextInt(10);
                        if (kind == 0) {
                            idx.delete(txn, key(k));
                            mine.remove(name);
                        } else if (kind == 1) {
                            idx.put(txn, key(k), text("p"));
                            mine.put(name, "p");
                        } else {
                            String arg = rnd.nextInt(15) == 0 ? "!" : Integer.toString(rnd.nextInt(10));
                            idx.update(txn, key(k), "append", text(arg));
                            String before = mine.get(name);
                            if (arg.equals("!")) {
                                mine.remove(name);
                            } else {
                                mine.put(name, (before == null ? "" : before) + arg);
                            }
                        }
                        if (i % 97 == 0) {
                            int probe = rnd.nextInt(2_000);
                            String p = new String(key(probe), StandardCharsets.US_ASCII);
                            byte[] got = idx.get(txn, key(probe));
                            assertEquals(mine.get(p), got == null ? null : new String(got, StandardCharsets.US_ASCII),
                                    "own read in round " + round);
                        }
                    }
                    assertEquals(mine, scan(idx, txn), "own scan in round " + round);
                    txn.commit();
                    model = mine;
                }
                for (int k = 0; k < 2_000; k += 7) {
                    byte[] got = idx.get(key(k));
                    assertEquals(model.get(new String(key(k), StandardCharsets.US_ASCII)),
                            got == null ? null : new String(got, StandardCharsets.US_ASCII), "after round " + round);
                }
            }
            assertEquals(model, scan(idx, null));
        }
        try (Environment env = Environment.open(dir, small)) {
            assertEquals(model, scan(env.openIndex("t", shape()), null), "after reopen");
            TreeChecks.verify(env);
        }
    }

    @Test
    void readsDuringFlushesNeverSeeAnUpdateTwice() throws Exception {
        java.util.concurrent.atomic.AtomicLong started = new java.util.concurrent.atomic.AtomicLong();
        java.util.concurrent.atomic.AtomicLong completed = new java.util.concurrent.atomic.AtomicLong();
        java.util.concurrent.atomic.AtomicBoolean stop = new java.util.concurrent.atomic.AtomicBoolean();
        try (Environment env = Environment.open(dir, options())) {
            Index idx = env.openIndex("t", shape());
            for (int k = 0; k < 500; k++) {
                idx.put(key(k), new byte[100]); // other rows, so that the tree has levels to flush into
            }
            ExecutorService pool = Executors.newFixedThreadPool(4);
            try {
                List<Future<?>> done = new ArrayList<>();
                for (int w = 0; w < 2; w++) {
                    done.add(pool.submit(() -> {
                        for (int i = 0; i < 20_000; i++) {
                            started.incrementAndGet();
                            idx.update(key(1_000), "add", count(1));
                            completed.incrementAndGet();
                        }
                        return null;
                    }));
                }
                for (int r = 0; r < 2; r++) {
                    done.add(pool.submit(() -> {
                        long last = 0;
                        while (!stop.get()) {
                            long before = completed.get();
                            byte[] v = idx.get(key(1_000));
                            long after = started.get();
                            long seen = v == null ? 0 : ByteBuffer.wrap(v).getLong();
                            assertTrue(seen >= before && seen <= after && seen >= last,
                                    "read " + seen + " with " + before + " to " + after + " increments, after " + last);
                            last = seen;
                        }
                        return null;
                    }));
                }
                done.get(0).get(2, TimeUnit.MINUTES);
                done.get(1).get(2, TimeUnit.MINUTES);
                stop.set(true);
                for (Future<?> f : done) {
                    f.get(2, TimeUnit.MINUTES);
                }
            } finally {
                stop.set(true);
                pool.shutdownNow();
            }
            assertArrayEquals(count(40_000), idx.get(key(1_000)));
        }
    }

    @Test
    void aFunctionThatThrowsOnAStoredValueChangesNothingAndIsCounted() {
        try (Environment env = Environment.open(dir, options())) {
            Index idx = env.openIndex("t", shape());
            idx.put(key(1), new byte[] {1, 2, 3, 4}); // not a counter: "add" cannot read it
            idx.update(key(1), "add", count(1)); // its check, on no value, passes
            assertArrayEquals(new byte[] {1, 2, 3, 4}, idx.get(key(1)), "the call changed nothing");
            assertTrue(env.failedUpdateCalls() > 0);
            try (Transaction txn = env.begin()) {
                idx.put(txn, key(3), new byte[] {9});
                assertThrows(java.nio.BufferUnderflowException.class, () -> idx.update(txn, key(3), "add", count(1)),
                        "applied at once to the transaction's own value: the caller hears of it");
                assertArrayEquals(new byte[] {9}, idx.get(txn, key(3)), "and the transaction is unchanged");
                txn.commit();
            }
            env.checkpoint(); // flushes meet it too; the environment stays usable
            idx.update(key(2), "add", count(7));
            assertArrayEquals(count(7), idx.get(key(2)));
        }
        try (Environment env = Environment.open(dir, options())) {
            assertArrayEquals(new byte[] {1, 2, 3, 4}, env.openIndex("t", shape()).get(key(1)));
        }
    }

    @Test
    void readersGetTheirOwnCopyOfWhatAFunctionReturns() {
        byte[] constant = text("same");
        EnvironmentOptions o = options().updateFunction("constant", (key, old, argument) -> constant);
        try (Environment env = Environment.open(dir, o)) {
            Index idx = env.openIndex("t", shape());
            idx.update(key(1), "constant", new byte[0]);
            byte[] first = idx.get(key(1));
            first[0] = 'X';
            assertArrayEquals(text("same"), idx.get(key(1)));
            assertArrayEquals(text("same"), constant, "the function's array is untouched");
        }
        assertThrows(IllegalArgumentException.class,
                () -> EnvironmentOptions.defaults().updateFunction("f\uD800", ADD), "a lone surrogate");
    }

    @Test
    void spilledTransactionsUpdateBlindlyButTheirUpdatesConflictWithOlderPuts() {
        EnvironmentOptions small = options().transactionMemoryBytes(1024);
        try (Environment env = Environment.open(dir, small)) {
            Index idx = env.openIndex("t", shape());
            try (Transaction a = env.begin(); Transaction b = env.begin(); Transaction older = env.begin()) {
                idx.put(older, key(5), count(100));
                for (int k = 0; k < 300; k++) {
                    idx.update(a, key(k), "add", count(1));
                    idx.update(b, key(k), "add", count(2));
                }
                a.commit();
                b.commit(); // the same keys, after a's commit: blind, no conflict
                assertThrows(WriteConflictException.class, older::commit, "a put of a key updated since");
            }
            for (int k = 0; k < 300; k++) {
                assertArrayEquals(count(3), idx.get(key(k)), "key " + k);
            }
        }
    }
}
