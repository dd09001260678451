package io.betree.systest;

import static io.betree.systest.UpdateFunctionTest.key;
import static io.betree.systest.UpdateFunctionTest.shape;
import static io.betree.systest.UpdateFunctionTest.text;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.betree.BetreeException;
import io.betree.Cursor;
import io.betree.Durability;
import io.betree.Environment;
import io.betree.EnvironmentOptions;
import io.betree.Index;
import io.betree.Transaction;
import io.betree.TreeChecks;
import io.betree.WriteConflictException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Range deletes and broadcasts ({@link Index#deleteRange}, {@link Index#updateAll}) through the
 * public API: against a model over many rows in small nodes, with and without transactions, with
 * a snapshot taken before them, across reopen from a checkpoint and from the log alone; the
 * conflicts they cause; and misuse.
 */
class RangeOperationsTest {
    @TempDir
    Path dir;

    private static EnvironmentOptions options() {
        return EnvironmentOptions.defaults().cacheBytes(16L << 20).durability(Durability.NONE)
                .updateFunction("add-column", UpdateFunctionTest.APPEND);
    }

    @Test
    void rangeDeletesAndBroadcastsMatchTheModelAcrossReopen() {
        Random rnd = new Random(11);
        TreeMap<byte[], byte[]> model = new TreeMap<>(java.util.Arrays::compareUnsigned);
        try (Environment env = Environment.open(dir, options())) {
            Index idx = env.openIndex("t", shape());
            for (int step = 0; step < 30_000; step++) {
                int kind = rnd.nextInt(1_000);
                if (kind < 990) {
                    byte[] k = key(rnd.nextInt(20_000));
                    byte[] v = text("v" + step);
                    idx.put(k, v);
                    model.put(k, v);
                } else if (kind < 996) {
                    int a = rnd.nextInt(20_000);
                    byte[] from = rnd.nextInt(8) == 0 ? null : key(a);
                    byte[] to = rnd.nextInt(8) == 0 ? null : key(a + rnd.nextInt(3_000));
                    idx.deleteRange(from, to);
                    model.subMap(from == null ? new byte[0] : from, true, to == null ? key(99_999_999) : to, false).clear();
                } else {
                    byte[] column = text("+" + step % 10);
                    idx.updateAll("add-column", column);
                    model.replaceAll((k, v) -> UpdateFunctionTest.APPEND.apply(k, v, column));
                }
                if (step % 5_000 == 4_999) {
                    check(idx, model, "step " + step);
                }
            }
            check(idx, model, "the end");
            TreeChecks.verify(env);
        }
        try (Environment env = Environment.open(dir, options())) {
            check(env.openIndex("t", shape()), model, "after reopening");
        }
    }

    @Test
    void aSnapshotBeforeARangeDeleteStillSeesTheRows() {
        try (Environment env = Environment.open(dir, options())) {
            Index idx = env.openIndex("t", shape());
            for (int i = 0; i < 5_000; i++) {
                idx.put(key(i), text("v"));
            }
            try (Transaction before = env.begin()) {
                idx.deleteRange(key(1_000), key(4_000));
                idx.updateAll("add-column", text("c"));
                assertArrayEquals(text("v"), idx.get(before, key(2_000)), "the old snapshot sees the row");
                assertEquals(5_000, count(idx.scan(before, null, null)));
                assertNull(idx.get(key(2_000)));
                assertArrayEquals(text("vc"), idx.get(key(4_000)));
                assertEquals(2_000, count(idx.scan()));
            }
            idx.put(key(2_000), text("new"));
            assertArrayEquals(text("new"), idx.get(key(2_000)), "a row written after the range delete stays");
        }
    }

    @Test
    void aTransactionSeesItsOwnRangeOperationsBeforeItsLaterWrites() {
        try (Environment env = Environment.open(dir, options())) {
            Index idx = env.openIndex("t", shape());
            for (int i = 0; i < 100; i++) {
                idx.put(key(i), text("v"));
            }
            try (Transaction txn = env.begin()) {
                idx.put(txn, key(10), text("mine"));
                idx.update(txn, key(60), "add-column", text("u"));
                idx.deleteRange(txn, key(5), key(20));
                assertNull(idx.get(txn, key(10)), "an earlier own write in the range is deleted");
                idx.put(txn, key(12), text("later"));
                idx.updateAll(txn, "add-column", text("c"));
                idx.put(txn, key(13), text("after"));
                assertArrayEquals(text("laterc"), idx.get(txn, key(12)), "an earlier own put takes the broadcast");
                assertArrayEquals(text("after"), idx.get(txn, key(13)), "a later put does not");
                assertArrayEquals(text("vuc"), idx.get(txn, key(60)), "the own update, then the broadcast");
                assertArrayEquals(text("vc"), idx.get(txn, key(30)));
                assertNull(idx.get(txn, key(15)));
                Map<String, String> seen = contents(idx.scan(txn, key(0), key(40)));
                assertEquals(27, seen.size(), seen.toString());
                assertEquals("laterc", seen.get("key-000012"));
                assertEquals("vc", seen.get("key-000004"));
                assertArrayEquals(text("v"), idx.get(key(30)), "nothing is visible outside before commit");
                txn.commit();
            }
            assertArrayEquals(text("laterc"), idx.get(key(12)));
            assertArrayEquals(text("after"), idx.get(key(13)));
            assertArrayEquals(text("vuc"), idx.get(key(60)));
            assertArrayEquals(text("vc"), idx.get(key(99)));
            assertNull(idx.get(key(10)));
            assertEquals(100 - 15 + 2, count(idx.scan()));
        }
    }

    @Test
    void aPutConflictsWithANewerRangeDeleteOrBroadcastCoveringItsKey() {
        try (Environment env = Environment.open(dir, options())) {
            Index idx = env.openIndex("t", shape());
            idx.put(key(1), text("v"));
            Transaction a = env.begin();
            Transaction b = env.begin();
            Transaction c = env.begin();
            idx.deleteRange(key(0), key(5));
            assertThrows(WriteConflictException.class, () -> {
                idx.put(a, key(1), text("x"));
                a.commit();
            });
            idx.put(b, key(7), text("outside the range"));
            b.commit();
            idx.updateAll("add-column", text("c"));
            assertThrows(WriteConflictException.class, () -> {
                idx.delete(c, key(9));
                c.commit();
            });
            try (Transaction blind = env.begin()) {
                idx.deleteRange(key(0), null);
                idx.deleteRange(blind, key(0), key(3));
                idx.updateAll(blind, "add-column", text("d"));
                blind.commit(); // blind: no conflict with the newer range delete
            }
            assertEquals(0, count(idx.scan()));
        }
    }

    @Test
    void aBroadcastOfATransactionNeverBringsBackARowAnEarlierOneDeleted() {
        try (Environment env = Environment.open(dir, options())) {
            Index idx = env.openIndex("t", shape());
            for (int i = 0; i < 500; i++) {
                idx.put(key(i), text("v"));
            }
            try (Transaction txn = env.begin()) {
                idx.updateAll(txn, "add-column", text("!")); // deletes every row
                idx.updateAll(txn, "add-column", text("x"));
                assertEquals(0, count(idx.scan(txn, null, null)));
                txn.commit();
            }
            assertEquals(0, count(idx.scan()), "the second call of the broadcast's list met no row");
            assertNull(idx.get(key(7)));
            TreeChecks.verify(env);
        }
    }

    @Test
    void misuseIsRefusedAndWritesNothing() {
        try (Environment env = Environment.open(dir, options())) {
            Index idx = env.openIndex("t", shape());
            idx.put(key(1), text("v"));
            assertThrows(IllegalArgumentException.class, () -> idx.deleteRange(key(2), key(1)));
            assertThrows(IllegalArgumentException.class, () -> idx.deleteRange(new byte[70_000], null));
            assertThrows(IllegalArgumentException.class, () -> idx.updateAll("nobody", text("x")));
            assertThrows(NullPointerException.class, () -> idx.updateAll(null, text("x")));
            assertThrows(NullPointerException.class, () -> idx.updateAll("add-column", null));
            idx.deleteRange(key(1), key(1)); // empty: removes nothing
            idx.deleteRange(null, new byte[0]); // empty too: nothing sorts below the empty key
            try (Transaction txn = env.begin()) {
                idx.deleteRange(txn, null, new byte[0]);
                txn.commit();
            }
            idx.put(key(2), text("w")); // and commits go on
            assertArrayEquals(text("v"), idx.get(key(1)));
            assertArrayEquals(text("w"), idx.get(key(2)));
            EnvironmentOptions small = options().transactionMemoryBytes(1024).updateFunction("fussy", (k, old, arg) -> {
                if (old != null && old.length > 50) {
                    throw new IllegalStateException("values past 50 bytes are not for this function");
                }
                return old;
            });
            try (Environment other = Environment.open(dir.resolve("other"), small)) {
                Index o = other.openIndex("t", shape());
                try (Transaction txn = other.begin()) {
                    for (int i = 0; i < 100; i++) {
                        o.put(txn, key(i), new byte[100]);
                    }
                    assertThrows(IllegalStateException.class, () -> o.deleteRange(txn, null, null),
                            "writes moved to a temporary file");
                    assertTrue(txn.isActive());
                }
                try (Transaction txn = other.begin()) {
                    o.updateAll(txn, "add-column", text("c"));
                    assertThrows(IllegalStateException.class, () -> {
                        for (int i = 0; i < 100; i++) {
                            o.put(txn, key(i), new byte[100]);
                        }
                    });
                    assertFalse(txn.isActive(), "a transaction with range operations that outgrows the heap is aborted");
                }
                try (Transaction txn = other.begin()) {
                    o.put(txn, key(0), new byte[100]);
                    assertThrows(IllegalStateException.class, () -> o.updateAll(txn, "fussy", text("x")));
                    for (int i = 1; i < 100; i++) {
                        o.put(txn, key(i), new byte[100]); // a failed updateAll left it free to spill
                    }
                    txn.commit();
                }
                try (Transaction txn = other.begin()) {
                    for (int i = 0; i < 5; i++) {
                        o.put(txn, key(i), new byte[100]);
                    }
                    // Within the heap share until the broadcast's call grows every value it holds.
                    assertThrows(IllegalStateException.class, () -> o.updateAll(txn, "add-column", new byte[300]));
                    assertFalse(txn.isActive(), "aborted at the call, not at commit");
                }
            }
        }
        assertThrows(IllegalStateException.class, () -> {
            Environment env = Environment.open(dir, options());
            Index idx = env.openIndex("t", shape());
            env.close();
            idx.deleteRange(null, null);
        });
    }

    @Test
    void aLogWithABroadcastOfAnUnregisteredFunctionRefusesToOpenAndNamesIt() throws Exception {
        Path live = dir.resolve("live");
        Path image = dir.resolve("image");
        try (Environment env = Environment.open(live, options().durability(Durability.SYNC)
                .checkpointInterval(java.time.Duration.ZERO))) {
            Index idx = env.openIndex("t", shape());
            for (int i = 0; i < 10; i++) {
                idx.put(key(i), text("v"));
            }
            idx.deleteRange(key(0), key(3));
            idx.updateAll("add-column", text("x"));
            // What a crash now leaves: everything is synced in the log, and no checkpoint has it.
            CrashImage.copy(live, image);
        }
        BetreeException e = assertThrows(BetreeException.class, () -> Environment.open(image,
                EnvironmentOptions.defaults().cacheBytes(16L << 20)));
        assertTrue(e.getMessage().contains("\"add-column\""), e.getMessage());
        try (Environment again = Environment.open(image, options())) {
            Index idx = again.openIndex("t", shape());
            assertNull(idx.get(key(2)), "the range delete replayed from the log");
            assertArrayEquals(text("vx"), idx.get(key(3)), "the broadcast replayed from the log");
            assertEquals(7, count(idx.scan()));
        }
    }

    private static void check(Index idx, TreeMap<byte[], byte[]> model, String when) {
        for (int i = 0; i < 20_000; i += 97) {
            assertArrayEquals(model.get(key(i)), idx.get(key(i)), when + ": key " + i);
        }
        List<Map.Entry<byte[], byte[]>> expected = new ArrayList<>(model.entrySet());
        int n = 0;
        try (Cursor c = idx.scan()) {
            while (c.next()) {
                assertTrue(n < expected.size(), when + ": more rows than the model");
                assertArrayEquals(expected.get(n).getKey(), c.key(), when + ": key of row " + n);
                assertArrayEquals(expected.get(n).getValue(), c.value(), when + ": value of row " + n);
                n++;
            }
        }
        assertEquals(expected.size(), n, when + ": rows");
    }

    private static int count(Cursor c) {
        try (c) {
            int n = 0;
            while (c.next()) {
                n++;
            }
            return n;
        }
    }

    private static Map<String, String> contents(Cursor c) {
        Map<String, String> m = new TreeMap<>();
        try (c) {
            while (c.next()) {
                m.put(new String(c.key(), StandardCharsets.US_ASCII), new String(c.value(), StandardCharsets.US_ASCII));
            }
        }
        return m;
    }
}
