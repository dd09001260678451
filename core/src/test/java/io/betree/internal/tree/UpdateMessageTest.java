package io.betree.internal.tree;

import static io.betree.internal.tree.TreeModel.checkScan;
import static io.betree.internal.tree.TreeModel.key;
import static io.betree.internal.tree.TreeModel.value;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.betree.internal.fault.BetreeException;
import java.nio.file.Path;
import java.util.List;
import java.util.Random;
import java.util.TreeMap;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Update messages in a whole tree: random puts, deletes and updates ({@link BasementApplyTest#APPEND})
 * over small nodes and a small cache, so that updates sit in buffers at every level, meet their
 * keys' values in basements through flushes, and are read back both ways. Point reads and scans,
 * at the newest snapshot and at one a held horizon keeps alive, must match a model that applies
 * every update at once.
 */
class UpdateMessageTest {
    @TempDir
    Path dir;

    @Test
    void readsSeeWhatTheModelSaysWhereverTheUpdatesAre() throws Exception {
        Random rnd = new Random(20261128);
        AtomicLong horizon = new AtomicLong();
        try (TreeRig rig = new TreeRig(dir, 4L << 20, horizon::get, BasementApplyTest.APPEND)) {
            BeTree tree = rig.tree;
            TreeMap<byte[], byte[]> model = new TreeMap<>(Keys::compare);
            TreeMap<byte[], byte[]> held = null;
            long heldTs = 0;
            long msn = 0;
            for (int step = 0; step < 40_000; step++) {
                byte[] key = key(rnd.nextInt(3_000));
                msn++;
                int kind = rnd.nextInt(10);
                if (kind < 3) {
                    byte[] value = value(rnd, 16);
                    tree.write(MessageType.PUT, key, value, msn);
                    model.put(key, value);
                } else if (kind < 4) {
                    tree.write(MessageType.DELETE, key, null, msn);
                    model.remove(key);
                } else {
                    byte[] argument = rnd.nextInt(20) == 0 ? new byte[] {0} : value(rnd, 16);
                    byte[] list = UpdateList.of("append", argument);
                    if (rnd.nextInt(4) == 0) {
                        list = UpdateList.append(list, "append", value(rnd, 16));
                    }
                    tree.write(MessageType.UPDATE, key, list, msn);
                    byte[] after = UpdateList.apply(BasementApplyTest.APPEND, key, model.get(key), list);
                    if (after == null) {
                        model.remove(key);
                    } else {
                        model.put(key, after);
                    }
                }
                if (step % 5_000 == 2_500) {
                    held = new TreeMap<>(model);
                    heldTs = msn;
                    horizon.set(msn);
                }
                if (step % 997 == 0) {
                    byte[] probe = key(rnd.nextInt(3_000));
                    assertArrayEquals(model.get(probe), tree.get(probe, msn), "get at step " + step);
                    checkScan(tree, model, msn, key(rnd.nextInt(3_000)), "scan at step " + step);
                    if (held != null) {
                        assertArrayEquals(held.get(probe), tree.get(probe, heldTs), "held snapshot at step " + step);
                    }
                }
            }
            for (int k = 0; k < 3_000; k++) {
                assertArrayEquals(model.get(key(k)), tree.get(key(k), msn), "key " + k);
            }
            checkScan(tree, model, msn, new byte[0], "full scan");
            checkScan(tree, held, heldTs, new byte[0], "full scan of the held snapshot");
            tree.checkInvariants(dir.resolve("tree.data"));
        }
    }

    @Test
    void anUpdateOfAnAbsentKeyMeetsNull() throws Exception {
        try (TreeRig rig = new TreeRig(dir, 4L << 20, () -> 0, BasementApplyTest.APPEND)) {
            rig.tree.write(MessageType.UPDATE, key(1), UpdateList.of("append", new byte[] {7}), 1);
            assertArrayEquals(new byte[] {7}, rig.tree.get(key(1), 1));
            assertEquals(null, rig.tree.get(key(1), 0), "an older snapshot does not see it");
            // A key beyond every key does not take the sequential path: its update still meets null.
            rig.tree.write(MessageType.UPDATE, key(9), UpdateList.of("append", new byte[] {8}), 2);
            assertArrayEquals(new byte[] {8}, rig.tree.get(key(9), 2));
        }
    }

    @Test
    void aMessageNamingNoRegisteredFunctionFailsTheReadThatMeetsIt() throws Exception {
        try (TreeRig rig = new TreeRig(dir, 4L << 20, () -> 0, BasementApplyTest.APPEND)) {
            rig.tree.write(MessageType.UPDATE, key(1), UpdateList.of("nobody", new byte[] {7}), 1);
            BetreeException e = assertThrows(BetreeException.class, () -> rig.tree.get(key(1), 1));
            assertTrue(e.getMessage().contains("\"nobody\""), e.getMessage());
        }
    }

    @Test
    void aStoredUpdateWithAMalformedListIsRefusedWhenItsBufferIsRead() {
        io.betree.internal.memory.NodeMemory memory = new io.betree.internal.memory.NodeMemory();
        byte[] wellFormed = UpdateList.of("append", new byte[] {1});
        for (byte[] value : new byte[][] {wellFormed, {0, 1, 5}, {0, 0}}) {
            MessageBuffer buffer = new MessageBuffer(memory);
            io.netty.buffer.ByteBuf image = io.netty.buffer.Unpooled.buffer();
            try {
                buffer.append(MessageType.UPDATE, 1, 0L, key(1), value);
                buffer.serialize(image);
                if (value == wellFormed) {
                    MessageBuffer.read(memory, image, image.readableBytes()).release();
                } else {
                    assertThrows(IllegalArgumentException.class,
                            () -> MessageBuffer.read(memory, image, image.readableBytes()), "a list of " + value.length);
                }
            } finally {
                image.release();
                buffer.release();
            }
        }
    }

    @Test
    void aListIsCheckedAndCounted() {
        byte[] list = UpdateList.append(UpdateList.of("a", new byte[] {1, 2}), "bé", new byte[0]);
        assertEquals(2, UpdateList.count(list));
        assertEquals(List.of("a", "bé"), UpdateList.names(list));
        assertTrue(UpdateList.wellFormed(java.nio.ByteBuffer.wrap(list), 0, list.length));
        assertFalse(UpdateList.wellFormed(java.nio.ByteBuffer.wrap(list), 0, list.length - 1), "cut short");
        assertFalse(UpdateList.wellFormed(java.nio.ByteBuffer.wrap(new byte[] {0, 0}), 0, 2), "no call");
        assertThrows(IllegalArgumentException.class, () -> UpdateList.of("", new byte[0]));
        assertThrows(IllegalArgumentException.class, () -> UpdateList.of("x".repeat(256), new byte[0]));
    }



}
