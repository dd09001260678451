package io.betree.internal.tree;

import static io.betree.internal.tree.TreeModel.key;
import static io.betree.internal.tree.TreeModel.value;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import io.betree.compression.Compressors;
import io.betree.internal.memory.NodeMemory;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Expiring values ({@link MessageType#PUT_EXPIRING}, {@link Expiry}) against a manual clock: a
 * whole tree of small nodes with expiring and lasting puts, deletes, updates of lasting values,
 * broadcasts (which keep the expiry of the values they change) and range deletes, read back by gets
 * and scans as the clock moves; and a basement that drops expired rows when it is rewritten and
 * keeps a value's expiry through an update.
 */
class ExpiryTest {
    @TempDir
    Path dir;

    /** {@link BasementApplyTest#APPEND} read against {@code clock}. */
    private static UpdateFunctions appendWithClock(AtomicLong clock) {
        return new UpdateFunctions() {
            @Override
            public byte[] apply(String name, byte[] key, byte[] old, byte[] argument) {
                return BasementApplyTest.APPEND.apply(name, key, old, argument);
            }

            @Override
            public boolean knows(String name) {
                return BasementApplyTest.APPEND.knows(name);
            }

            @Override
            public long nowMillis() {
                return clock.get();
            }
        };
    }

    /** A model row: its value and when it expires ({@link Long#MAX_VALUE}: never). */
    private record Row(byte[] value, long expiry) {
    }

    @Test
    void readsHideExpiredValuesWhereverTheyAreAndUpdatesKeepTheExpiry() throws Exception {
        Random rnd = new Random(7);
        AtomicLong clock = new AtomicLong(1_000_000);
        try (TreeRig rig = new TreeRig(dir, 4L << 20, () -> Long.MAX_VALUE, appendWithClock(clock))) {
            BeTree tree = rig.tree;
            TreeMap<byte[], Row> model = new TreeMap<>(Keys::compare);
            long msn = 0;
            for (int step = 0; step < 30_000; step++) {
                byte[] key = key(rnd.nextInt(2_000));
                msn++;
                int kind = rnd.nextInt(100);
                if (kind < 30) {
                    long expiry = clock.get() + 1 + rnd.nextInt(5_000);
                    byte[] value = value(rnd, 12);
                    tree.write(MessageType.PUT_EXPIRING, key, Expiry.wrap(expiry, value), msn);
                    model.put(key, new Row(value, expiry));
                } else if (kind < 50) {
                    byte[] value = value(rnd, 12);
                    tree.write(MessageType.PUT, key, value, msn);
                    model.put(key, new Row(value, Long.MAX_VALUE));
                } else if (kind < 60) {
                    tree.write(MessageType.DELETE, key, null, msn);
                    model.remove(key);
                } else if (kind < 95) {
                    // Not of a value that expires: the update would meet it before or after its
                    // expiry depending on when a flush takes it down (see Expiry).
                    Row before = model.get(key);
                    if (before != null && before.expiry() != Long.MAX_VALUE) {
                        continue;
                    }
                    byte[] list = UpdateList.of("append", value(rnd, 12));
                    tree.write(MessageType.UPDATE, key, list, msn);
                    byte[] after = UpdateList.apply(BasementApplyTest.APPEND, key, before == null ? null : before.value(), list);
                    model.put(key, new Row(after, Long.MAX_VALUE));
                } else if (kind < 96) {
                    int a = rnd.nextInt(2_000);
                    byte[] upper = key(a + 1 + rnd.nextInt(100));
                    tree.writeAll(List.of(new Write(MessageType.RANGE_DELETE, key(a), RangeMessage.encodeValue(upper, null))), msn);
                    model.subMap(key(a), true, upper, false).clear();
                } else if (kind < 97) {
                    // A broadcast leaves expired rows expired whenever it meets them, and keeps the
                    // expiry of those it changes.
                    byte[] list = UpdateList.of("append", value(rnd, 12));
                    tree.writeAll(List.of(new Write(MessageType.RANGE_UPDATE, new byte[0], RangeMessage.encodeValue(null, list))), msn);
                    for (Map.Entry<byte[], Row> e : new ArrayList<>(model.entrySet())) {
                        Row r = live(model, e.getKey(), clock.get());
                        if (r != null) {
                            model.put(e.getKey(), new Row(UpdateList.apply(BasementApplyTest.APPEND, e.getKey(), r.value(), list),
                                    r.expiry()));
                        }
                    }
                } else {
                    clock.addAndGet(rnd.nextInt(800));
                }
                if (step % 499 == 0) {
                    byte[] probe = key(rnd.nextInt(2_000));
                    Row r = live(model, probe, clock.get());
                    assertArrayEquals(r == null ? null : r.value(), tree.get(probe, msn), "get at step " + step);
                }
                if (step % 4_999 == 0) {
                    checkScan(tree, model, msn, clock.get(), "scan at step " + step);
                }
            }
            checkScan(tree, model, msn, clock.get(), "the end");
            clock.addAndGet(10_000);
            checkScan(tree, model, msn, clock.get(), "every expiring value past its expiry");
            tree.checkInvariants(dir.resolve("tree.data"));
        }
    }

    @Test
    void aRewriteDropsExpiredRowsAndABasementReadsThemAsAbsentBefore() {
        NodeMemory memory = new NodeMemory();
        AtomicLong clock = new AtomicLong(100);
        UpdateFunctions functions = appendWithClock(clock);
        Basement basement = Basement.empty(1, memory, new BasementChunks(Compressors.create("none"), new RecentChunkMaps()));
        try {
            MessageBuffer puts = new MessageBuffer(memory);
            for (int k = 0; k < 10; k++) {
                puts.append(k % 2 == 0 ? MessageType.PUT_EXPIRING : MessageType.PUT, 1, 0L, key(k),
                        k % 2 == 0 ? Expiry.wrap(200, new byte[] {(byte) k}) : new byte[] {(byte) k});
            }
            puts.consolidate();
            basement.apply(puts, 0, puts.count(), 1, functions);
            puts.release();
            assertEquals(10, basement.count());
            assertArrayEquals(new byte[] {2}, basement.get(key(2), 1, clock.get()));
            clock.set(200);
            assertNull(basement.get(key(2), 1, clock.get()), "expired at its instant");
            assertArrayEquals(new byte[] {3}, basement.get(key(3), 1, clock.get()));
            MessageBuffer other = new MessageBuffer(memory);
            other.append(MessageType.PUT, 2, 0L, key(99), new byte[] {1});
            other.consolidate();
            basement.apply(other, 0, 1, 2, functions);
            other.release();
            assertEquals(6, basement.count(), "the five expired rows went with the rewrite");
            // An update keeps the expiry of the value it changes.
            MessageBuffer update = new MessageBuffer(memory);
            update.append(MessageType.PUT_EXPIRING, 3, 0L, key(50), Expiry.wrap(300, new byte[] {5}));
            update.append(MessageType.UPDATE, 4, 0L, key(50), UpdateList.of("append", new byte[] {6}));
            update.consolidate();
            basement.apply(update, 0, 2, 4, functions);
            update.release();
            assertArrayEquals(new byte[] {5, 6}, basement.get(key(50), 4, clock.get()));
            clock.set(300);
            assertNull(basement.get(key(50), 4, clock.get()), "the updated value expires with the value it changed");
        } finally {
            basement.releaseMemory();
        }
    }

    private static Row live(TreeMap<byte[], Row> model, byte[] key, long now) {
        Row r = model.get(key);
        return r == null || r.value() == null || r.expiry() <= now ? null : r;
    }

    private static void checkScan(BeTree tree, TreeMap<byte[], Row> model, long snapshotTs, long now, String what) {
        TreeMap<byte[], byte[]> live = new TreeMap<>(Keys::compare);
        for (Map.Entry<byte[], Row> e : model.entrySet()) {
            if (live(model, e.getKey(), now) != null) {
                live.put(e.getKey(), e.getValue().value());
            }
        }
        TreeModel.checkScan(tree, live, snapshotTs, new byte[0], what);
    }



    private record Write(byte type, byte[] key, byte[] value) implements TreeWrite {
    }
}
