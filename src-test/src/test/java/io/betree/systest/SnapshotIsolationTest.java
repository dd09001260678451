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
import io.betree.Transaction;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.Iterator;
import java.util.Locale;
import java.util.Map;
import java.util.NavigableMap;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Snapshot isolation: a transaction keeps reading the state as of its {@code begin()} (gets and
 * scans, in every index) while others update, delete and insert, flush, checkpoint and evict; old
 * versions are dropped once no snapshot needs them, so a key updated 100,000 times does not grow the
 * data file; and the life cycle of a transaction (commit, abort, close, use after either).
 *
 * <p>{@code -Dbetree.seed=N} fixes the random choices.
 */
class SnapshotIsolationTest {
    private static final long MAX_DATA_FILE = 5L << 20;

    @TempDir
    Path dir;

    private static EnvironmentOptions small() {
        // 48 MiB: the default 4 MiB nodes need a cache of 8 nodes at least.
        return EnvironmentOptions.defaults().cacheBytes(48L << 20).checkpointInterval(Duration.ZERO)
                .durability(Durability.NONE);
    }

    private static IndexOptions smallNodes() {
        return IndexOptions.defaults().nodeSize(64 << 10).basementSize(4 << 10).fanout(6);
    }

    private static byte[] key(int i) {
        return String.format("key-%06d", i).getBytes(StandardCharsets.US_ASCII);
    }

    private static byte[] value(int generation, int i, Random rnd) {
        byte[] v = new byte[12 + rnd.nextInt(150)];
        ByteBuffer.wrap(v).putInt(generation).putInt(i).putInt(v.length);
        for (int j = 12; j < v.length; j++) {
            v[j] = (byte) (generation * 31 + i + j);
        }
        return v;
    }

    private static NavigableMap<byte[], byte[]> newMap() {
        return new TreeMap<>(Arrays::compareUnsigned);
    }

    /** Checks {@code txn}'s view of {@code idx} (or the latest state when null) against {@code model}. */
    private static void checkView(Index idx, Transaction txn, NavigableMap<byte[], byte[]> model, String what) {
        Iterator<Map.Entry<byte[], byte[]>> it = model.entrySet().iterator();
        int n = 0;
        try (Cursor c = txn == null ? idx.scan() : idx.scan(txn, null, null)) {
            while (c.next()) {
                assertTrue(it.hasNext(), what + ": the scan returned an extra key "
                        + new String(c.key(), StandardCharsets.US_ASCII) + " after " + n + " entries");
                Map.Entry<byte[], byte[]> e = it.next();
                assertArrayEquals(e.getKey(), c.key(), what + ": key " + n + " of the scan");
                assertArrayEquals(e.getValue(), c.value(), what + ": value of "
                        + new String(e.getKey(), StandardCharsets.US_ASCII));
                n++;
            }
        }
        assertFalse(it.hasNext(), what + ": the scan ended after " + n + " of " + model.size() + " entries");
    }

    private static void checkGets(Index idx, Transaction txn, NavigableMap<byte[], byte[]> model, int keySpace,
            Random rnd, int samples, String what) {
        for (int s = 0; s < samples; s++) {
            byte[] k = key(rnd.nextInt(keySpace));
            byte[] expected = model.get(k);
            byte[] actual = txn == null ? idx.get(k) : idx.get(txn, k);
            if (expected == null) {
                assertNull(actual, what + ": get of " + new String(k, StandardCharsets.US_ASCII));
            } else {
                assertArrayEquals(expected, actual, what + ": get of " + new String(k, StandardCharsets.US_ASCII));
            }
        }
    }

    @Test
    void snapshotsKeepSeeingTheirStateWhileOthersCommit() {
        long seed = Long.getLong("betree.seed", System.nanoTime());
        System.out.println("SnapshotIsolationTest: seed " + seed);
        try {
            runSnapshots(seed);
        } catch (AssertionError | RuntimeException e) {
            throw new AssertionError("rerun with -Dbetree.seed=" + seed + ": " + e.getMessage(), e);
        }
    }

    private void runSnapshots(long seed) {
        Random rnd = new Random(seed);
        int keySpace = 4_000;
        try (Environment env = Environment.open(dir, small())) {
            Index idx = env.openIndex("kv", smallNodes());
            Index other = env.openIndex("other", smallNodes());
            NavigableMap<byte[], byte[]> model = newMap();
            NavigableMap<byte[], byte[]> otherModel = newMap();
            for (int i = 0; i < keySpace; i += 2) {
                byte[] v = value(0, i, rnd);
                idx.put(key(i), v);
                model.put(key(i), v);
            }
            other.put(key(1), value(0, 1, rnd));
            otherModel.put(key(1), other.get(key(1)));
            Transaction s0 = env.begin();
            NavigableMap<byte[], byte[]> model0 = newMap();
            model0.putAll(model);
            NavigableMap<byte[], byte[]> other0 = newMap();
            other0.putAll(otherModel);
            Transaction s5 = null;
            NavigableMap<byte[], byte[]> model5 = null;
            for (int gen = 1; gen <= 10; gen++) {
                // Update most keys, delete some, insert others: in transactions of up to 100 writes
                // and as single writes.
                int writes = 3_000 + rnd.nextInt(3_000);
                Transaction batch = null;
                NavigableMap<byte[], byte[]> pending = newMap();
                Set<byte[]> writtenOutside = new TreeSet<>(Arrays::compareUnsigned);
                for (int w = 0; w < writes; w++) {
                    int i = rnd.nextInt(keySpace);
                    byte[] k = key(i);
                    boolean delete = rnd.nextInt(5) == 0;
                    byte[] v = delete ? null : value(gen, i, rnd);
                    if (rnd.nextBoolean()) {
                        if (pending.containsKey(k)) {
                            continue; // would conflict with the open batch
                        }
                        if (batch != null) {
                            writtenOutside.add(k);
                        }
                        if (delete) {
                            idx.delete(k);
                            model.remove(k);
                        } else {
                            idx.put(k, v);
                            model.put(k, v);
                        }
                    } else {
                        if (writtenOutside.contains(k)) {
                            continue; // committed after the batch began: a write conflict
                        }
                        if (batch == null) {
                            batch = env.begin();
                        }
                        if (delete) {
                            idx.delete(batch, k);
                        } else {
                            idx.put(batch, k, v);
                        }
                        pending.put(k, v == null ? new byte[0] : v);
                        if (pending.size() >= 100) {
                            commitBatch(batch, pending, model);
                            batch = null;
                            writtenOutside.clear();
                        }
                    }
                }
                if (batch != null) {
                    commitBatch(batch, pending, model);
                }
                byte[] ov = value(gen, 1, rnd);
                other.put(key(1), ov);
                otherModel.put(key(1), ov);
                if (gen % 3 == 0) {
                    env.checkpoint();
                }
                checkGets(idx, s0, model0, keySpace, rnd, 500, "s0 after generation " + gen);
                checkView(other, s0, other0, "s0's view of the other index after generation " + gen);
                if (gen % 2 == 0) {
                    checkView(idx, s0, model0, "s0's scan after generation " + gen);
                }
                if (s5 != null) {
                    checkGets(idx, s5, model5, keySpace, rnd, 200, "s5 after generation " + gen);
                }
                if (gen == 5) {
                    s5 = env.begin();
                    model5 = newMap();
                    model5.putAll(model);
                }
                checkGets(idx, null, model, keySpace, rnd, 200, "latest after generation " + gen);
            }
            checkView(idx, s0, model0, "s0 at the end");
            checkView(idx, s5, model5, "s5 at the end");
            s0.close();
            s5.commit();
            checkView(idx, null, model, "the latest state");
            try (Transaction t = env.begin()) {
                checkView(idx, t, model, "a new snapshot");
            }
            env.checkpoint();
            // More writes once no snapshot is open: old versions may now go.
            for (int w = 0; w < 5_000; w++) {
                int i = rnd.nextInt(keySpace);
                byte[] v = value(11, i, rnd);
                idx.put(key(i), v);
                model.put(key(i), v);
            }
            checkView(idx, null, model, "the latest state after more writes");
        }
        try (Environment env = Environment.open(dir, small())) {
            Index idx = env.openIndex("kv", smallNodes());
            NavigableMap<byte[], byte[]> model = newMap();
            try (Cursor c = idx.scan()) {
                while (c.next()) {
                    model.put(c.key(), c.value());
                }
            }
            assertTrue(model.size() > 1_000, "rows after reopen: " + model.size());
        }
    }

    private static void commitBatch(Transaction batch, NavigableMap<byte[], byte[]> pending,
            NavigableMap<byte[], byte[]> model) {
        batch.commit();
        for (Map.Entry<byte[], byte[]> e : pending.entrySet()) {
            if (e.getValue().length == 0) {
                model.remove(e.getKey());
            } else {
                model.put(e.getKey(), e.getValue());
            }
        }
        pending.clear();
    }

    // ------------------------------------------------------------------ version garbage collection

    private static long dataFileBytes(Path dir) throws IOException {
        return Files.size(dir.resolve("betree.data"));
    }

    private static long logBytes(Path dir) throws IOException {
        try (Stream<Path> files = Files.list(dir)) {
            return files.filter(p -> p.getFileName().toString().startsWith("wal-")).mapToLong(p -> {
                try {
                    return Files.size(p);
                } catch (IOException e) {
                    throw new UncheckedIOException(e);
                }
            }).sum();
        }
    }

    private static byte[] version(int n) {
        byte[] v = new byte[100];
        ByteBuffer.wrap(v).putInt(n);
        Arrays.fill(v, 4, v.length, (byte) (n * 7));
        return v;
    }

    /** One key updated 100,000 times with no snapshot open: the data file stays small. */
    @Test
    void oldVersionsAreDroppedWhenNoSnapshotNeedsThem() throws Exception {
        for (IndexOptions shape : new IndexOptions[] {IndexOptions.defaults(), smallNodes()}) {
            Path d = dir.resolve("shape-" + shape.nodeSize());
            long start = System.nanoTime();
            try (Environment env = Environment.open(d, small())) {
                Index idx = env.openIndex("hot", shape);
                Index cold = env.openIndex("cold", shape);
                for (int i = 0; i < 2_000; i++) {
                    cold.put(key(i), version(i));
                }
                byte[] k = key(1);
                for (int n = 0; n < 100_000; n++) {
                    idx.put(k, version(n));
                    if (n % 25_000 == 0) {
                        env.checkpoint();
                    }
                }
                env.checkpoint();
                assertArrayEquals(version(99_999), idx.get(k));
                long data = dataFileBytes(d);
                System.out.printf(Locale.ROOT,
                        "SnapshotIsolationTest: 100,000 updates of one key (node size %d) in %.1f s: data file %,d "
                                + "bytes, log %,d bytes after a checkpoint%n",
                        shape.nodeSize(), (System.nanoTime() - start) / 1e9, data, logBytes(d));
                assertTrue(data < MAX_DATA_FILE, "data file of " + data + " bytes after 100,000 updates of one key");
                try (Cursor c = idx.scan()) {
                    assertTrue(c.next());
                    assertArrayEquals(version(99_999), c.value());
                    assertFalse(c.next());
                }
            }
            try (Environment env = Environment.open(d, small())) {
                assertArrayEquals(version(99_999), env.openIndex("hot", shape).get(key(1)));
                assertTrue(dataFileBytes(d) < MAX_DATA_FILE);
            }
        }
    }

    /**
     * A snapshot open across 100,000 updates of a key still reads the value from before them; once
     * it closes, later updates and a checkpoint bring the data file back to a bounded size.
     */
    @Test
    void aLongLivedSnapshotStillReadsTheOldValue() throws Exception {
        long start = System.nanoTime();
        try (Environment env = Environment.open(dir, small())) {
            Index idx = env.openIndex("hot", smallNodes());
            byte[] k = key(1);
            byte[] neighbour = key(2);
            idx.put(k, version(-1));
            idx.put(neighbour, version(-2));
            Transaction snapshot = env.begin();
            for (int n = 0; n < 100_000; n++) {
                idx.put(k, version(n));
                if (n % 20_000 == 0) {
                    env.checkpoint();
                    assertArrayEquals(version(-1), idx.get(snapshot, k), "the snapshot's value after " + n + " updates");
                }
                if (n == 50_000) {
                    idx.delete(neighbour);
                }
            }
            env.checkpoint();
            assertArrayEquals(version(-1), idx.get(snapshot, k), "the snapshot's value after 100,000 updates");
            assertArrayEquals(version(-2), idx.get(snapshot, neighbour), "a key deleted after the snapshot");
            try (Cursor c = idx.scan(snapshot, null, null)) {
                assertTrue(c.next());
                assertArrayEquals(k, c.key());
                assertArrayEquals(version(-1), c.value());
                assertTrue(c.next());
                assertArrayEquals(neighbour, c.key());
                assertFalse(c.next());
            }
            assertArrayEquals(version(99_999), idx.get(k));
            assertNull(idx.get(neighbour));
            long withSnapshot = dataFileBytes(dir);
            snapshot.close();
            for (int n = 100_000; n < 200_000; n++) {
                idx.put(k, version(n));
            }
            env.checkpoint();
            long after = dataFileBytes(dir);
            for (int n = 200_000; n < 300_000; n++) {
                idx.put(k, version(n));
            }
            env.checkpoint();
            long later = dataFileBytes(dir);
            System.out.printf(Locale.ROOT,
                    "SnapshotIsolationTest: data file %,d bytes with a snapshot open across 100,000 updates, %,d after "
                            + "it closed and 100,000 more, %,d after 100,000 more (%.1f s)%n",
                    withSnapshot, after, later, (System.nanoTime() - start) / 1e9);
            assertArrayEquals(version(299_999), idx.get(k));
            assertTrue(later <= Math.max(after, withSnapshot) + (1 << 20),
                    "the data file keeps growing once the snapshot closed: " + after + " then " + later);
        }
    }

    // ------------------------------------------------------------------ life cycle

    @Test
    void closingWithoutCommitAborts() {
        try (Environment env = Environment.open(dir, small())) {
            Index idx = env.openIndex("t");
            idx.put(key(1), version(1));
            try (Transaction t = env.begin()) {
                idx.put(t, key(1), version(2));
                idx.put(t, key(2), version(2));
                idx.delete(t, key(1));
                assertNull(idx.get(t, key(1)));
                assertArrayEquals(version(2), idx.get(t, key(2)));
                assertArrayEquals(version(1), idx.get(key(1)), "uncommitted writes are invisible to others");
                assertNull(idx.get(key(2)));
            }
            assertArrayEquals(version(1), idx.get(key(1)));
            assertNull(idx.get(key(2)));
            Transaction t = env.begin();
            idx.put(t, key(3), version(3));
            t.abort();
            assertFalse(t.isActive());
            assertNull(idx.get(key(3)));
            t.abort(); // no-op
            t.close(); // no-op
            // The aborted transaction's key is free for others.
            try (Transaction t2 = env.begin()) {
                idx.put(t2, key(3), version(4));
                t2.commit();
            }
            assertArrayEquals(version(4), idx.get(key(3)));
        }
        try (Environment env = Environment.open(dir, small())) {
            Index idx = env.openIndex("t");
            assertArrayEquals(version(1), idx.get(key(1)));
            assertNull(idx.get(key(2)));
            assertArrayEquals(version(4), idx.get(key(3)));
        }
    }

    @Test
    void aClosedOrAbortedTransactionCannotBeUsed() {
        try (Environment env = Environment.open(dir, small())) {
            Index idx = env.openIndex("t");
            Transaction closed = env.begin();
            idx.put(closed, key(1), version(1));
            closed.close();
            assertFalse(closed.isActive());
            assertThrows(IllegalStateException.class, closed::commit, "commit after close");
            assertThrows(IllegalStateException.class, () -> idx.get(closed, key(1)));
            assertThrows(IllegalStateException.class, () -> idx.put(closed, key(1), version(1)));
            assertThrows(IllegalStateException.class, () -> idx.delete(closed, key(1)));
            assertThrows(IllegalStateException.class, () -> idx.scan(closed, null, null));
            assertNull(idx.get(key(1)));

            Transaction aborted = env.begin();
            aborted.abort();
            assertThrows(IllegalStateException.class, aborted::commit, "commit after abort");
        }
    }

    @Test
    void aCommittedTransactionCannotBeUsed() {
        try (Environment env = Environment.open(dir, small())) {
            Index idx = env.openIndex("t");
            Transaction t = env.begin();
            idx.put(t, key(1), version(1));
            Cursor open = idx.scan(t, null, null);
            t.commit();
            assertFalse(t.isActive());
            assertThrows(IllegalStateException.class, t::commit, "a second commit");
            assertThrows(IllegalStateException.class, () -> idx.get(t, key(1)), "get after commit");
            assertThrows(IllegalStateException.class, () -> idx.put(t, key(2), version(2)), "put after commit");
            assertThrows(IllegalStateException.class, () -> idx.delete(t, key(1)), "delete after commit");
            assertThrows(IllegalStateException.class, () -> idx.scan(t, null, null), "scan after commit");
            assertThrows(IllegalStateException.class, open::next, "a cursor of the committed transaction");
            t.abort(); // no-op after commit
            t.close(); // no-op after commit
            assertArrayEquals(version(1), idx.get(key(1)), "abort/close after commit must not undo it");
            assertNull(idx.get(key(2)));

            Transaction empty = env.begin();
            empty.commit(); // nothing written
            assertThrows(IllegalStateException.class, empty::commit);
        }
    }

    @Test
    void transactionsOfAClosedEnvironmentCannotBeUsed() {
        Environment env = Environment.open(dir, small());
        Index idx = env.openIndex("t");
        Transaction t = env.begin();
        idx.put(t, key(1), version(1));
        env.close();
        assertThrows(IllegalStateException.class, t::commit);
        assertThrows(IllegalStateException.class, () -> idx.get(t, key(1)));
        assertThrows(IllegalStateException.class, env::begin);
        t.close();
        try (Environment again = Environment.open(dir, small())) {
            assertNull(again.openIndex("t").get(key(1)), "a transaction open at close is not committed");
        }
    }

    @Test
    void aTransactionSeesItsOwnWritesInScansOverItsSnapshot() {
        try (Environment env = Environment.open(dir, small())) {
            Index idx = env.openIndex("t", smallNodes());
            NavigableMap<byte[], byte[]> base = newMap();
            Random rnd = new Random(1);
            for (int i = 0; i < 3_000; i += 3) {
                byte[] v = value(0, i, rnd);
                idx.put(key(i), v);
                base.put(key(i), v);
            }
            NavigableMap<byte[], byte[]> latest = newMap();
            latest.putAll(base);
            try (Transaction t = env.begin()) {
                NavigableMap<byte[], byte[]> mine = newMap();
                mine.putAll(base);
                for (int i = 0; i < 3_000; i += 7) {
                    if (i % 2 == 0) {
                        idx.delete(t, key(i));
                        mine.remove(key(i));
                    } else {
                        byte[] v = value(1, i, rnd);
                        idx.put(t, key(i), v);
                        mine.put(key(i), v);
                    }
                }
                // Others commit meanwhile, to keys the transaction does not write: updates of
                // existing keys and new keys, all invisible to the transaction.
                for (int i = 0; i < 3_000; i++) {
                    if (i % 7 != 0 && (i % 3 == 1 || i % 11 == 0)) {
                        byte[] v = value(2, i, rnd);
                        idx.put(key(i), v);
                        latest.put(key(i), v);
                    }
                }
                checkView(idx, t, mine, "the transaction's scan");
                checkGets(idx, t, mine, 3_000, rnd, 1_000, "the transaction's gets");
                // A range scan starting and ending inside the write set.
                NavigableMap<byte[], byte[]> range = mine.subMap(key(700), true, key(1400), false);
                Iterator<Map.Entry<byte[], byte[]>> it = range.entrySet().iterator();
                try (Cursor c = idx.scan(t, key(700), key(1400))) {
                    while (c.next()) {
                        Map.Entry<byte[], byte[]> e = it.next();
                        assertArrayEquals(e.getKey(), c.key());
                        assertArrayEquals(e.getValue(), c.value());
                    }
                }
                assertFalse(it.hasNext(), "range scan ended early");
            }
            checkView(idx, null, latest, "after the transaction closed without commit");
        }
    }
}
