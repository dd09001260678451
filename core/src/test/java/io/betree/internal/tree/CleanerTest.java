package io.betree.internal.tree;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The {@link Cleaner} over a real tree ({@link TreeRig}: 64 KiB nodes, fanout 4, so a buffer of
 * 16 KiB is worth draining): a root buffer holding a flush's worth of messages, which no flush
 * would move while the root is within its size, is pushed down once writes stop for a second, and
 * not while they go on; every answer stays the model's, and the tree's invariants hold.
 */
class CleanerTest {
    @TempDir
    Path dir;

    private TreeRig rig;
    private long msn;
    private final TreeMap<byte[], byte[]> model = new TreeMap<>(Keys::compare);
    private final Random rnd = new Random(20261128);

    @BeforeEach
    void buildTree() throws IOException {
        rig = new TreeRig(dir, 64L << 20, () -> msn);
        Cleaner.watch(rig.tree);
        // Rising keys take the sequential path to the rightmost leaf: the root's buffers stay empty.
        for (int i = 0; i < 40_000; i++) {
            put(key(i));
        }
    }

    @AfterEach
    void release() throws IOException {
        rig.close();
    }

    private static byte[] key(int n) {
        return ByteBuffer.allocate(4).putInt(n).array();
    }

    private void put(byte[] key) {
        byte[] value = new byte[100];
        rnd.nextBytes(value);
        rig.tree.write(MessageType.PUT, key, value, ++msn);
        model.put(key, value);
    }

    /** Bytes the root buffers for the child whose keys include {@code key}. */
    private int rootBufferFor(byte[] key) {
        return BeTree.whileUnchanged(List.of(rig.tree), () -> {
            InternalNode root = rig.tree.store().pinRoot(rig.tree.rootBlock());
            try {
                return root.bufferBytes.get(root.childFor(key));
            } finally {
                rig.tree.store().unpin(root, false);
            }
        });
    }

    /**
     * Puts 300 keys from {@code first} on, over rows already there: all in one child's buffer of
     * the root, some 32 KB, half the root's size.
     */
    private void putRun(int first) {
        for (int i = 0; i < 300; i++) {
            put(key(first + i));
        }
    }

    @Test
    void aBufferWorthAFlushIsDrainedOnceWritesStopAndNotBefore() throws Exception {
        byte[] probe = key(20_000);
        putRun(20_000);
        assertTrue(rootBufferFor(probe) >= 16 << 10, "buffered: " + rootBufferFor(probe));
        // Writes every 10 ms for 1.5 s: the tree is never left alone for the second it takes.
        long until = System.nanoTime() + 1_500_000_000L;
        while (System.nanoTime() < until) {
            put(key(20_000 + rnd.nextInt(300)));
            Thread.sleep(10);
        }
        assertTrue(rootBufferFor(probe) >= 16 << 10, "drained while written: " + rootBufferFor(probe));
        long deadline = System.nanoTime() + 20_000_000_000L;
        while (rootBufferFor(probe) >= 16 << 10 && System.nanoTime() < deadline) {
            Thread.sleep(50);
        }
        assertTrue(rootBufferFor(probe) < 16 << 10, "not drained: " + rootBufferFor(probe));
        for (Map.Entry<byte[], byte[]> e : model.entrySet()) {
            assertArrayEquals(e.getValue(), rig.tree.get(e.getKey(), msn));
        }
        BeTree.whileUnchanged(List.of(rig.tree), () -> rig.tree.checkInvariants(rig.file.path()));
    }

    @Test
    void writesAfterADrainAreDrainedAgain() throws Exception {
        byte[] probe = key(5_000);
        putRun(5_000);
        long deadline = System.nanoTime() + 20_000_000_000L;
        while (rootBufferFor(probe) >= 16 << 10 && System.nanoTime() < deadline) {
            Thread.sleep(50);
        }
        assertTrue(rootBufferFor(probe) < 16 << 10, "not drained: " + rootBufferFor(probe));
        while (!rig.tree.drained() && System.nanoTime() < deadline) {
            Thread.sleep(50); // the quiet spell's last walks: none of its steps may take the next run
        }
        assertTrue(rig.tree.drained(), "draining did not end");
        byte[] second = key(35_000);
        putRun(35_000);
        assertTrue(rootBufferFor(second) >= 16 << 10, "buffered: " + rootBufferFor(second));
        deadline = System.nanoTime() + 20_000_000_000L;
        while (rootBufferFor(second) >= 16 << 10 && System.nanoTime() < deadline) {
            Thread.sleep(50);
        }
        assertTrue(rootBufferFor(second) < 16 << 10, "not drained again: " + rootBufferFor(second));
        for (Map.Entry<byte[], byte[]> e : model.entrySet()) {
            assertArrayEquals(e.getValue(), rig.tree.get(e.getKey(), msn));
        }
    }
}
