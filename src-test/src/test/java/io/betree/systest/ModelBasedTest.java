package io.betree.systest;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.betree.Codec;
import io.betree.Cursor;
import io.betree.Durability;
import io.betree.Environment;
import io.betree.EnvironmentOptions;
import io.betree.Index;
import io.betree.IndexOptions;
import io.betree.Transaction;
import io.betree.UpdateFunction;
import io.betree.TreeChecks;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.NavigableMap;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.function.Consumer;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Drives an index with random puts, deletes, updates, range deletes, broadcasts, gets, scans and
 * transactions and compares every answer with a
 * {@link TreeMap}, closing and reopening the environment now and then and checking the trees'
 * invariants after every reopen ({@link TreeChecks}). Nodes are small and the cache is at its
 * minimum so that flushes, splits, merges and eviction all happen often.
 *
 * <p>Reproduce a failure with {@code -Dbetree.seed=N} (printed on failure); scale with
 * {@code -Dbetree.modelOps=N} (default 200,000 per codec).
 */
class ModelBasedTest {
    private static final int OPS = Integer.getInteger("betree.modelOps", 200_000);

    @TempDir
    Path dir;

    @ParameterizedTest
    @EnumSource(Codec.class)
    void matchesTreeMap(Codec codec) {
        long seed = Long.getLong("betree.seed", System.nanoTime());
        try {
            run(codec, seed);
        } catch (AssertionError | RuntimeException e) {
            throw new AssertionError("model test failed for " + codec + "; rerun with -Dbetree.seed=" + seed, e);
        }
    }

    /** Appends its argument to the value, keeping at most the last 200 bytes; "!" deletes the key. */
    static final UpdateFunction APPEND = (key, old, argument) -> {
        if (argument.length == 1 && argument[0] == '!') {
            return null;
        }
        int keep = old == null ? 0 : Math.min(old.length, Math.max(0, 200 - argument.length));
        byte[] joined = new byte[keep + argument.length];
        if (keep > 0) {
            System.arraycopy(old, old.length - keep, joined, 0, keep);
        }
        System.arraycopy(argument, 0, joined, keep, argument.length);
        return joined;
    };

    private void run(Codec codec, long seed) {
        Random rnd = new Random(seed);
        NavigableMap<byte[], byte[]> model = new TreeMap<>(Arrays::compareUnsigned);
        // When the model's rows with a TTL expire; a row expired is removed from both at once.
        NavigableMap<byte[], Long> expiresAt = new TreeMap<>(Arrays::compareUnsigned);
        ManualClock clock = new ManualClock();
        IndexOptions shape = IndexOptions.defaults().codec(codec).nodeSize(64 << 10).basementSize(4 << 10).fanout(4 + rnd.nextInt(8));
        // Syncing is the crash tests' subject; here it would only slow the run down.
        EnvironmentOptions envOptions = EnvironmentOptions.defaults().cacheBytes(16L << 20)
                .durability(Durability.NONE).updateFunction("append", APPEND).clock(clock);
        int keySpace = 2_000 + rnd.nextInt(30_000);
        Environment env = Environment.open(dir, envOptions);
        try {
            Index idx = env.openIndex("model", shape);
            for (int op = 0; op < OPS; op++) {
                int kind = rnd.nextInt(1000);
                if (kind < 80) {
                    // An update: blind, applied wherever it meets the key's value, maybe much later.
                    byte[] k = rnd.nextInt(3) == 0 || model.isEmpty() ? key(rnd, keySpace) : existingKey(model, rnd, keySpace);
                    if (expiresAt.containsKey(k)) {
                        // It would meet the value before or after its expiry, as flushes have it
                        // (Index.put with a TTL says so): not a question for the model.
                        continue;
                    }
                    byte[] argument = rnd.nextInt(10) == 0 ? new byte[] {'!'} : value(rnd);
                    idx.update(k, "append", argument);
                    byte[] after = APPEND.apply(k, model.get(k), argument);
                    if (after == null) {
                        model.remove(k);
                    } else {
                        model.put(k, after);
                    }
                } else if (kind < 400) {
                    byte[] k = key(rnd, keySpace);
                    byte[] v = value(rnd);
                    idx.put(k, v);
                    model.put(k, v);
                    expiresAt.remove(k);
                } else if (kind < 450) {
                    byte[] k = key(rnd, keySpace);
                    byte[] v = value(rnd);
                    long ttl = 1 + rnd.nextInt(5_000);
                    idx.put(k, v, Duration.ofMillis(ttl));
                    model.put(k, v);
                    expiresAt.put(k, clock.millis() + ttl);
                } else if (kind < 500) {
                    // Runs of ascending keys past the current maximum exercise the sequential path.
                    byte[] k = model.isEmpty() ? key(rnd, keySpace) : successor(model.lastKey(), rnd);
                    byte[] v = value(rnd);
                    idx.put(k, v);
                    model.put(k, v);
                    expiresAt.remove(k);
                } else if (kind < 700) {
                    byte[] k = rnd.nextInt(4) == 0 || model.isEmpty() ? key(rnd, keySpace) : existingKey(model, rnd, keySpace);
                    idx.delete(k);
                    model.remove(k);
                    expiresAt.remove(k);
                } else if (kind < 703) {
                    // A range delete, mostly narrow: a wide one now and then empties much of the model.
                    byte[] from = rnd.nextInt(20) == 0 ? null : key(rnd, keySpace);
                    byte[] to = rnd.nextInt(20) == 0 || from == null ? null : successor(from, rnd);
                    if (rnd.nextInt(3) == 0 && from != null) {
                        to = key(rnd, keySpace);
                    }
                    if (from != null && to != null && Arrays.compareUnsigned(from, to) > 0) {
                        continue;
                    }
                    idx.deleteRange(from, to);
                    deleteRange(model, from, to);
                    expiresAt.keySet().removeIf(k -> !model.containsKey(k));
                } else if (kind < 705) {
                    byte[] column = value(rnd, 4);
                    idx.updateAll("append", column);
                    broadcast(model, column);
                } else if (kind < 708) {
                    // Time passes: rows whose TTL ran out are gone for every reader.
                    clock.advance(Duration.ofMillis(rnd.nextInt(2_000)));
                    for (Iterator<Map.Entry<byte[], Long>> it = expiresAt.entrySet().iterator(); it.hasNext();) {
                        Map.Entry<byte[], Long> e = it.next();
                        if (e.getValue() <= clock.millis()) {
                            model.remove(e.getKey());
                            it.remove();
                        }
                    }
                } else if (kind < 960) {
                    byte[] k = rnd.nextBoolean() || model.isEmpty() ? key(rnd, keySpace) : existingKey(model, rnd, keySpace);
                    byte[] expected = model.get(k);
                    byte[] actual = idx.get(k);
                    if (expected == null) {
                        assertEquals(null, actual, "get of absent key at op " + op);
                    } else {
                        assertArrayEquals(expected, actual, "get at op " + op);
                    }
                } else if (kind < 995) {
                    byte[] from = rnd.nextInt(10) == 0 ? null : key(rnd, keySpace);
                    byte[] to = rnd.nextInt(10) == 0 ? null : key(rnd, keySpace);
                    checkScan(idx, model, from, to, rnd.nextInt(10) == 0 ? Integer.MAX_VALUE : 1 + rnd.nextInt(200), op);
                } else if (kind < 997) {
                    runTransaction(env, idx, model, rnd, keySpace, op);
                    // Its puts, those made outside it and range deletes replaced what had a TTL; its
                    // broadcasts kept it.
                    expiresAt.keySet().removeIf(k -> !model.containsKey(k) || lastRoundWrote.contains(k));
                } else if (kind < 998) {
                    env.checkpoint();
                } else {
                    env.close();
                    env = Environment.open(dir, envOptions);
                    TreeChecks.verify(env);
                    idx = env.openIndex("model", shape);
                }
            }
            checkScan(idx, model, null, null, Integer.MAX_VALUE, OPS);
            env.close();
            env = Environment.open(dir, envOptions);
            TreeChecks.verify(env);
            checkScan(env.openIndex("model", shape), model, null, null, Integer.MAX_VALUE, OPS);
        } finally {
            env.close();
        }
    }

    /** Removes the model's keys in {@code [from, to)} (null: open). */
    private static void deleteRange(NavigableMap<byte[], byte[]> model, byte[] from, byte[] to) {
        if (from == null && to == null) {
            model.clear();
        } else if (from == null) {
            model.headMap(to, false).clear();
        } else if (to == null) {
            model.tailMap(from, true).clear();
        } else {
            model.subMap(from, true, to, false).clear();
        }
    }

    /** Appends {@code column} to every value of the model (no key is deleted: it is never "!"). */
    private static void broadcast(NavigableMap<byte[], byte[]> model, byte[] column) {
        model.replaceAll((k, v) -> APPEND.apply(k, v, column));
    }

    /**
     * The keys the last transaction round gave a value without a TTL or deleted: the
     * transaction's own puts and deletes if it committed, and the puts made outside it meanwhile.
     */
    private final Set<byte[]> lastRoundWrote = new TreeSet<>(Arrays::compareUnsigned);

    /**
     * A transaction of a few writes, range deletes, broadcasts and reads that commits or aborts;
     * while it is open, writes made outside it must stay invisible to it, and its own writes
     * visible only to it. At commit its operations are replayed on the model in order: its range
     * deletes and broadcasts take what is committed by then, outside writes included.
     */

    private void runTransaction(Environment env, Index idx, NavigableMap<byte[], byte[]> model, Random rnd,
            int keySpace, int op) {
        lastRoundWrote.clear();
        NavigableMap<byte[], byte[]> view = new TreeMap<>(Arrays::compareUnsigned);
        view.putAll(model);
        NavigableMap<byte[], byte[]> own = new TreeMap<>(Arrays::compareUnsigned);
        NavigableMap<byte[], byte[]> outside = new TreeMap<>(Arrays::compareUnsigned);
        List<Consumer<NavigableMap<byte[], byte[]>>> replay = new ArrayList<>();
        try (Transaction txn = env.begin()) {
            int writes = 1 + rnd.nextInt(20);
            for (int w = 0; w < writes; w++) {
                byte[] k = key(rnd, keySpace);
                if (outside.containsKey(k)) {
                    continue; // Writing it would be a write conflict (tested elsewhere).
                }
                int what = rnd.nextInt(40);
                if (what == 0) {
                    byte[] from = key(rnd, keySpace);
                    byte[] to = successor(from, rnd);
                    if (Arrays.compareUnsigned(from, to) > 0) {
                        continue;
                    }
                    idx.deleteRange(txn, from, to);
                    deleteRange(view, from, to);
                    replay.add(m -> deleteRange(m, from, to));
                } else if (what == 1) {
                    byte[] column = value(rnd, 3);
                    idx.updateAll(txn, "append", column);
                    broadcast(view, column);
                    replay.add(m -> broadcast(m, column));
                } else if (what < 14) {
                    idx.delete(txn, k);
                    own.put(k, null);
                    view.remove(k);
                    replay.add(m -> m.remove(k));
                } else {
                    byte[] v = value(rnd);
                    idx.put(txn, k, v);
                    own.put(k, v);
                    view.put(k, v);
                    replay.add(m -> m.put(k, v));
                }
                if (rnd.nextInt(4) == 0) {
                    // A write outside the transaction, to a key it does not touch.
                    byte[] other = key(rnd, keySpace);
                    if (!own.containsKey(other)) {
                        byte[] v = value(rnd);
                        idx.put(other, v);
                        model.put(other, v);
                        outside.put(other, v);
                        lastRoundWrote.add(other);
                    }
                }
                byte[] probe = rnd.nextBoolean() ? k : key(rnd, keySpace);
                byte[] expected = view.get(probe);
                byte[] actual = idx.get(txn, probe);
                if (expected == null) {
                    assertEquals(null, actual, "transactional get of absent key at op " + op);
                } else {
                    assertArrayEquals(expected, actual, "transactional get at op " + op);
                }
            }
            Iterator<Map.Entry<byte[], byte[]>> it = view.entrySet().iterator();
            try (Cursor c = idx.scan(txn, null, null)) {
                for (int n = 0; n < 300 && it.hasNext(); n++) {
                    Map.Entry<byte[], byte[]> e = it.next();
                    assertTrue(c.next(), "transactional scan ended early at op " + op);
                    assertArrayEquals(e.getKey(), c.key(), "transactional scan key at op " + op);
                    assertArrayEquals(e.getValue(), c.value(), "transactional scan value at op " + op);
                }
            }
            if (rnd.nextInt(4) != 0) {
                txn.commit();
                for (Consumer<NavigableMap<byte[], byte[]>> r : replay) {
                    r.accept(model);
                }
                lastRoundWrote.addAll(own.keySet());
            }
        }
    }

    private static void checkScan(Index idx, NavigableMap<byte[], byte[]> model, byte[] from, byte[] to, int limit, int op) {
        Map<byte[], byte[]> expected;
        if (from != null && to != null && Arrays.compareUnsigned(from, to) > 0) {
            expected = new TreeMap<>();
        } else if (from == null && to == null) {
            expected = model;
        } else if (from == null) {
            expected = model.headMap(to, false);
        } else if (to == null) {
            expected = model.tailMap(from, true);
        } else {
            expected = model.subMap(from, true, to, false);
        }
        Iterator<Map.Entry<byte[], byte[]>> it = expected.entrySet().iterator();
        try (Cursor c = idx.scan(from, to)) {
            int n = 0;
            while (n < limit && it.hasNext()) {
                Map.Entry<byte[], byte[]> e = it.next();
                assertTrue(c.next(), "scan ended early at entry " + n + " at op " + op);
                assertArrayEquals(e.getKey(), c.key(), "scan key " + n + " at op " + op);
                assertArrayEquals(e.getValue(), c.value(), "scan value " + n + " at op " + op);
                n++;
            }
            if (n < limit) {
                assertFalse(c.next(), "scan returned more entries than the model at op " + op);
            }
        }
    }

    private static byte[] key(Random rnd, int keySpace) {
        int k = rnd.nextInt(keySpace);
        int extra = rnd.nextInt(8) == 0 ? rnd.nextInt(20) : 0;
        byte[] out = new byte[4 + extra];
        out[0] = (byte) (k >>> 24 ^ 0x80);
        out[1] = (byte) (k >>> 16);
        out[2] = (byte) (k >>> 8);
        out[3] = (byte) k;
        for (int i = 4; i < out.length; i++) {
            out[i] = (byte) (i * 31);
        }
        return out;
    }

    private static byte[] successor(byte[] last, Random rnd) {
        byte[] out = Arrays.copyOf(last, last.length + 1);
        out[last.length] = (byte) rnd.nextInt(256);
        return out.length > 64 ? key(rnd, Integer.MAX_VALUE) : out;
    }

    private static byte[] existingKey(NavigableMap<byte[], byte[]> model, Random rnd, int keySpace) {
        byte[] probe = key(rnd, keySpace);
        byte[] k = model.ceilingKey(probe);
        return k != null ? k : model.firstKey();
    }

    /** A value of {@code length} letters: never "!", which deletes. */
    private static byte[] value(Random rnd, int length) {
        byte[] v = new byte[length];
        for (int i = 0; i < length; i++) {
            v[i] = (byte) ('a' + rnd.nextInt(26));
        }
        return v;
    }

    private static byte[] value(Random rnd) {
        int len = rnd.nextInt(20) == 0 ? rnd.nextInt(3000) : rnd.nextInt(60);
        byte[] v = new byte[len];
        for (int i = 0; i < len; i++) {
            v[i] = (byte) (rnd.nextInt(4) == 0 ? rnd.nextInt() : 'a' + i % 7);
        }
        return v;
    }
}
