package io.betree.internal.tree;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.betree.internal.cache.CacheEntry;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Commits whose writes are runs of rising keys beyond every key of the tree, given to
 * {@link BeTree#writeAll} whole: the sequential path takes each run a part at a time, down the
 * rightmost path once per part (until a basement fills), splitting basements, leaves and the root
 * as the parts fill them. Commits of rising puts alone must go that way entirely (nothing in the
 * root's buffers) and leave no leaf more than a basement past its size. Deletes in a run have
 * nothing to delete and must not stop it; a key at or below the largest so far ends the run and
 * goes to the root's buffers, and a later rising key starts a new run. Every row must then read
 * back (from the nodes as written, and after flushes), and the tree's invariants hold.
 */
class SequentialRunTest {
    private static final int NODE_SIZE = 64 << 10;
    private static final int BASEMENT_SIZE = 4 << 10;

    @TempDir
    Path dir;

    private record Write(byte type, byte[] key, byte[] value) implements TreeWrite {
    }

    @Test
    void runsOfRisingKeysInOneCommitLandWholeAndInOrder() throws Exception {
        try (TreeRig rig = new TreeRig(dir, 32L << 20, () -> 0)) {
            Random rnd = new Random(20261127);
            TreeMap<Long, byte[]> model = new TreeMap<>();
            long msn = 0;
            // Puts go to multiples of 4, rising; a delete beyond every key goes to one more than
            // the largest put so far, a key no put ever takes (a commit writes a key once).
            long top = 0;
            for (int commit = 0; commit < 30; commit++) {
                List<Write> writes = new ArrayList<>();
                int size = 1 + rnd.nextInt(3_000);
                for (int i = 0; i < size; i++) {
                    top += 4 * (1 + rnd.nextInt(3));
                    // Small rows: a part measured by key and value bytes alone spanned several
                    // basements, and left leaves that far past their size.
                    byte[] value = new byte[rnd.nextInt(8)];
                    rnd.nextBytes(value);
                    writes.add(new Write(MessageType.PUT, key(top), value));
                    model.put(top, value);
                }
                rig.tree.writeAll(writes, ++msn);
            }
            assertTrue(rootHeight(rig) >= 2, "the runs should have grown the tree to height 2 at least");
            assertEquals(0, rootBuffered(rig), "commits of rising puts alone go down the sequential path whole");
            assertLeavesWithinSize(rig, rig.tree.rootBlock());
            for (int commit = 0; commit < 40; commit++) {
                List<Write> writes = new ArrayList<>();
                Set<Long> overwritten = new HashSet<>();
                long writtenBefore = top;
                long lastDeleted = -1;
                int size = 1 + rnd.nextInt(3_000);
                for (int i = 0; i < size; i++) {
                    int kind = rnd.nextInt(100);
                    if (kind < 5) {
                        // Nothing to delete, and the run goes on (each such key once a commit).
                        if (top + 1 != lastDeleted) {
                            lastDeleted = top + 1;
                            writes.add(new Write(MessageType.DELETE, key(lastDeleted), null));
                        }
                    } else if (kind < 7) {
                        // A key at or below those of earlier commits (put or not): ends the run,
                        // goes to the root's buffers.
                        long k = 4 * rnd.nextLong(writtenBefore / 4);
                        if (!overwritten.add(k)) {
                            continue;
                        }
                        byte[] value = value(rnd);
                        writes.add(new Write(MessageType.PUT, key(k), value));
                        model.put(k, value);
                    } else {
                        top += 4 * (1 + rnd.nextInt(3));
                        byte[] value = value(rnd);
                        writes.add(new Write(MessageType.PUT, key(top), value));
                        model.put(top, value);
                    }
                }
                rig.tree.writeAll(writes, ++msn);
            }
            checkAll(rig, model, top);
            while (rig.tree.flushStep()) {
                // Flushes until the root is within its size, so that more rows are read from below it.
            }
            checkAll(rig, model, top);
        }
    }

    private static void checkAll(TreeRig rig, TreeMap<Long, byte[]> model, long top) {
        rig.tree.checkInvariants(rig.file.path());
        for (long k = 0; k <= top + 4; k++) {
            byte[] expected = model.get(k);
            byte[] actual = rig.tree.get(key(k), Long.MAX_VALUE);
            if (expected == null) {
                assertNull(actual, "key " + k + " was never put");
            } else {
                assertArrayEquals(expected, actual, "key " + k);
            }
        }
    }

    /**
     * Every leaf under {@code block} holds at most a node's size and a basement (which may pass
     * its size by a row before it splits).
     */
    private static void assertLeavesWithinSize(TreeRig rig, long block) {
        NodeStore store = rig.tree.store();
        CacheEntry e = store.pinNode(block);
        try {
            if (e instanceof InternalNode in) {
                for (long child : in.children) {
                    assertLeavesWithinSize(rig, child);
                }
            } else {
                long bytes = ((LeafNode) e).totalBytes();
                assertTrue(bytes <= NODE_SIZE + BASEMENT_SIZE + 64, "leaf " + block + " holds " + bytes + " bytes");
            }
        } finally {
            store.unpin(e, false);
        }
    }

    private static int rootHeight(TreeRig rig) {
        BeTree tree = rig.tree;
        InternalNode root = tree.store().pinRoot(tree.rootBlock());
        try {
            return root.height;
        } finally {
            tree.store().unpin(root, false);
        }
    }

    private static long rootBuffered(TreeRig rig) {
        BeTree tree = rig.tree;
        InternalNode root = tree.store().pinRoot(tree.rootBlock());
        try {
            return root.bufferedBytes();
        } finally {
            tree.store().unpin(root, false);
        }
    }

    private static byte[] key(long k) {
        return ByteBuffer.allocate(8).putLong(k).array();
    }

    private static byte[] value(Random rnd) {
        byte[] v = new byte[20 + rnd.nextInt(200)];
        rnd.nextBytes(v);
        return v;
    }
}
