package io.betree.internal.tree;

import static io.betree.internal.tree.TreeModel.checkScan;
import static io.betree.internal.tree.TreeModel.key;
import static io.betree.internal.tree.TreeModel.value;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.betree.internal.memory.NodeMemory;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.TreeMap;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Range deletes and broadcasts (range updates) in a whole tree, mixed with puts, deletes and keyed
 * updates over small nodes and a small cache: range messages sit in buffers at every level, are
 * clipped as they are flushed and split, are written out and read back with evicted buffers, and
 * meet the rows in basements. Point reads and scans, at the newest snapshot and at one a held
 * horizon keeps alive, must match a model that applies every message at once.
 */
class RangeMessageTest {
    private static final int KEYS = 3_000;

    @TempDir
    Path dir;

    @Test
    void readsSeeWhatTheModelSaysWhereverTheRangeMessagesAre() throws Exception {
        Random rnd = new Random(20261128);
        AtomicLong horizon = new AtomicLong();
        try (TreeRig rig = new TreeRig(dir, 4L << 20, horizon::get, BasementApplyTest.APPEND)) {
            BeTree tree = rig.tree;
            TreeMap<byte[], byte[]> model = new TreeMap<>(Keys::compare);
            TreeMap<byte[], byte[]> held = null;
            long heldTs = 0;
            long msn = 0;
            for (int step = 0; step < 40_000; step++) {
                byte[] key = key(rnd.nextInt(KEYS));
                msn++;
                int kind = rnd.nextInt(200);
                if (kind < 80) {
                    byte[] value = value(rnd, 16);
                    tree.write(MessageType.PUT, key, value, msn);
                    model.put(key, value);
                } else if (kind < 100) {
                    tree.write(MessageType.DELETE, key, null, msn);
                    model.remove(key);
                } else if (kind < 197) {
                    byte[] list = UpdateList.of("append", rnd.nextInt(20) == 0 ? new byte[] {0} : value(rnd, 16));
                    tree.write(MessageType.UPDATE, key, list, msn);
                    apply(model, key, list);
                } else {
                    byte[] lower = rnd.nextInt(6) == 0 ? new byte[0] : key(rnd.nextInt(KEYS));
                    byte[] upper = rnd.nextInt(6) == 0 ? null : key(rnd.nextInt(KEYS));
                    if (upper != null && Keys.compare(lower, upper) >= 0) {
                        continue;
                    }
                    if (kind == 197) {
                        tree.writeAll(List.of(new Range(MessageType.RANGE_DELETE, lower, upper, null)), msn);
                        model.subMap(lower, true, upper == null ? key(KEYS) : upper, false).clear();
                    } else {
                        byte[] list = UpdateList.of("append", rnd.nextInt(10) == 0 ? new byte[] {0} : value(rnd, 16));
                        tree.writeAll(List.of(new Range(MessageType.RANGE_UPDATE, lower, upper, list)), msn);
                        for (byte[] k : new ArrayList<>(model.subMap(lower, true, upper == null ? key(KEYS) : upper,
                                false).keySet())) {
                            apply(model, k, list);
                        }
                    }
                }
                if (step % 5_000 == 2_500) {
                    held = new TreeMap<>(model);
                    heldTs = msn;
                    horizon.set(msn);
                }
                if (step % 997 == 0) {
                    byte[] probe = key(rnd.nextInt(KEYS));
                    assertArrayEquals(model.get(probe), tree.get(probe, msn), "get at step " + step);
                    checkScan(tree, model, msn, key(rnd.nextInt(KEYS)), "scan at step " + step);
                    if (held != null) {
                        assertArrayEquals(held.get(probe), tree.get(probe, heldTs), "held snapshot at step " + step);
                    }
                }
            }
            for (int k = 0; k < KEYS; k++) {
                assertArrayEquals(model.get(key(k)), tree.get(key(k), msn), "key " + k);
            }
            checkScan(tree, model, msn, new byte[0], "full scan");
            checkScan(tree, held, heldTs, new byte[0], "full scan of the held snapshot");
            tree.checkInvariants(dir.resolve("tree.data"));
        }
    }

    @Test
    void aPutAfterAnOpenEndedRangeDeleteSurvivesItsFlush() throws Exception {
        try (TreeRig rig = new TreeRig(dir, 4L << 20, () -> Long.MAX_VALUE, BasementApplyTest.APPEND)) {
            BeTree tree = rig.tree;
            long msn = 0;
            for (int k = 0; k < 2_000; k++) {
                tree.write(MessageType.PUT, key(k), value(new Random(k), 16), ++msn);
            }
            tree.writeAll(List.of(new Range(MessageType.RANGE_DELETE, key(1_000), null, null)), ++msn);
            // Keys beyond every key so far: on the sequential path they would go below the range
            // delete, which would then delete them as it reached the leaf.
            for (int k = 2_000; k < 6_000; k++) {
                tree.write(MessageType.PUT, key(k), new byte[] {1}, ++msn);
            }
            for (int k = 0; k < 6_000; k += 7) {
                byte[] expected = k < 1_000 ? value(new Random(k), 16) : k >= 2_000 ? new byte[] {1} : null;
                assertArrayEquals(expected, tree.get(key(k), msn), "key " + k);
            }
            tree.checkInvariants(dir.resolve("tree.data"));
        }
    }

    @Test
    void aBroadcastLeavesAbsentKeysAbsentAndOfOneCommitComesBeforeItsKeyedWrites() throws Exception {
        try (TreeRig rig = new TreeRig(dir, 4L << 20, () -> 0, BasementApplyTest.APPEND)) {
            BeTree tree = rig.tree;
            tree.write(MessageType.PUT, key(1), new byte[] {1}, 1);
            tree.write(MessageType.PUT, key(2), new byte[] {2}, 2);
            tree.writeAll(List.of(new Range(MessageType.RANGE_UPDATE, new byte[0], null, UpdateList.of("append",
                    new byte[] {9})), new Keyed(MessageType.UPDATE, key(2), UpdateList.of("append", new byte[] {7})),
                    new Keyed(MessageType.PUT, key(3), new byte[] {3})), 3);
            assertArrayEquals(new byte[] {1, 9}, tree.get(key(1), 3));
            assertArrayEquals(new byte[] {2, 9, 7}, tree.get(key(2), 3), "the broadcast first, then the key's update");
            assertArrayEquals(new byte[] {3}, tree.get(key(3), 3), "a put of the same commit is not broadcast to");
            assertNull(tree.get(key(4), 3), "an absent key stays absent");
            assertArrayEquals(new byte[] {2}, tree.get(key(2), 2), "an older snapshot does not see it");
        }
    }

    /**
     * A commit's range message and its keyed write of a key the range meets reach the leaf in one
     * flush while a snapshot older than the commit is alive (the commit's own transaction, before
     * its snapshot ends): the range gives the key a version at the commit's timestamp, and the
     * keyed write another. Only the keyed write's may stay: two versions of one timestamp break
     * the newest-first order the tree checker asks for ("versions of a key are not newest
     * first"), and no snapshot could see the older one.
     */
    @Test
    void aKeyedWriteAndARangeOfOneCommitLeaveOneVersionOfTheKeyInItsLeaf() throws Exception {
        try (TreeRig rig = new TreeRig(dir, 4L << 20, () -> 0, BasementApplyTest.APPEND)) {
            BeTree tree = rig.tree;
            long msn = 0;
            for (int k = 0; k < 100; k++) {
                tree.write(MessageType.PUT, key(k), new byte[] {1}, ++msn); // rising: straight to the leaf
            }
            long commit = ++msn;
            tree.writeAll(List.of(new Range(MessageType.RANGE_UPDATE, new byte[0], null, UpdateList.of("append",
                    new byte[] {9})), new Keyed(MessageType.PUT, key(2), new byte[] {2}),
                    new Keyed(MessageType.DELETE, key(3), null)), commit);
            // Down to the leaf: the root's children are leaves. A snapshot at 0 keeps every version.
            tree.flushPathTo(key(2));
            assertArrayEquals(new byte[] {2}, tree.get(key(2), commit));
            assertNull(tree.get(key(3), commit));
            assertArrayEquals(new byte[] {1, 9}, tree.get(key(4), commit));
            assertArrayEquals(new byte[] {1}, tree.get(key(2), commit - 1), "an older snapshot sees the older row");
            BeTree.whileUnchanged(List.of(tree), () -> tree.checkInvariants(rig.file.path()));
        }
    }

    @Test
    void rangeMessagesSurviveTheStoredFormAndMalformedOnesAreRefused() {
        NodeMemory memory = new NodeMemory();
        MessageBuffer buffer = new MessageBuffer(memory);
        ByteBuf image = Unpooled.buffer();
        try {
            buffer.append(MessageType.PUT, 1, 0L, key(5), new byte[] {1});
            buffer.appendRange(new RangeMessage(MessageType.RANGE_DELETE, 2, 0L, key(1), key(9), null));
            buffer.appendRange(new RangeMessage(MessageType.RANGE_UPDATE, 3, 0L, new byte[0], null,
                    UpdateList.of("append", new byte[] {4})));
            buffer.serialize(image);
            assertEquals(buffer.bytes(), image.readableBytes());
            MessageBuffer back = MessageBuffer.read(memory, image.duplicate(), image.readableBytes());
            try {
                assertEquals(1, back.count());
                assertEquals(2, back.ranges().size());
                assertEquals(buffer.bytes(), back.bytes());
                RangeMessage r = back.newestRangeCovering(key(5), 3);
                assertEquals(MessageType.RANGE_UPDATE, r.type(), "the newest covering message");
                assertEquals(MessageType.RANGE_DELETE, back.newestRangeCovering(key(5), 2).type());
                assertNull(back.newestRangeCovering(key(9), 2), "the upper bound is exclusive");
            } finally {
                back.release();
            }
            // The range delete's flag byte (after the put, its own header and its 7-byte lower bound) set to 2.
            int flag = MessageBuffer.HEADER + 7 + 1 + MessageBuffer.HEADER + 7;
            ByteBuf bad = image.copy();
            bad.setByte(flag, 2);
            assertThrows(IllegalArgumentException.class, () -> MessageBuffer.read(memory, bad, bad.readableBytes()));
            bad.release();
            // A value length near the int limit must not wrap the bounds check around.
            ByteBuf huge = image.copy();
            huge.setInt(MessageBuffer.HEADER + 7 + 1 + 19, 0x7FFFFFF0);
            assertThrows(IllegalArgumentException.class, () -> MessageBuffer.read(memory, huge, huge.readableBytes()));
            huge.release();
        } finally {
            image.release();
            buffer.release();
        }
    }

    private static void apply(TreeMap<byte[], byte[]> model, byte[] key, byte[] list) {
        byte[] after = UpdateList.apply(BasementApplyTest.APPEND, key, model.get(key), list);
        if (after == null) {
            model.remove(key);
        } else {
            model.put(key, after);
        }
    }




    /** A keyed write. */
    private record Keyed(byte type, byte[] key, byte[] value) implements TreeWrite {
    }

    /** A range message's write. */
    private record Range(byte type, byte[] key, byte[] value) implements TreeWrite {
        Range(byte type, byte[] lower, byte[] upper, byte[] updates) {
            this(type, lower, RangeMessage.encodeValue(upper, updates));
        }
    }
}
