package io.betree.internal.tree;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Commits whose writes are runs of rising keys beyond every key of the tree, given to
 * {@link BeTree#writeAll} whole: the sequential path takes each run a part at a time, down the
 * rightmost path once per part, splitting basements, leaves and the root as the parts fill them.
 * Deletes in a run have nothing to delete and must not stop it; a key at or below the largest so
 * far ends the run and goes to the root's buffers, and a later rising key starts a new run. Every
 * row must then read back (from the nodes as written, and after the root's buffers are flushed),
 * and the tree's invariants hold.
 */
class SequentialRunTest {
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
            long next = 0;
            for (int commit = 0; commit < 60; commit++) {
                List<Write> writes = new ArrayList<>();
                java.util.Set<Long> overwritten = new java.util.HashSet<>();
                // A commit writes a key once (a transaction's write set keeps the last write).
                long writtenBefore = next;
                int size = 1 + rnd.nextInt(3_000);
                for (int i = 0; i < size; i++) {
                    int kind = rnd.nextInt(100);
                    if (kind < 5) {
                        // A delete beyond every key: nothing to delete, and the run goes on.
                        writes.add(new Write(MessageType.DELETE, key(next + 1 + rnd.nextInt(3)), null));
                    } else if (kind < 7 && writtenBefore > 0) {
                        // A key among those of earlier commits: ends the run, goes to the root's
                        // buffers (at most once in this commit: a later write of it wins below).
                        long k = rnd.nextLong(writtenBefore);
                        if (!overwritten.add(k)) {
                            continue;
                        }
                        byte[] value = value(rnd);
                        writes.add(new Write(MessageType.PUT, key(k), value));
                        model.put(k, value);
                    } else {
                        next += 1 + rnd.nextInt(3);
                        byte[] value = value(rnd);
                        writes.add(new Write(MessageType.PUT, key(next), value));
                        model.put(next, value);
                    }
                }
                rig.tree.writeAll(writes, ++msn);
            }
            assertTrue(rootHeight(rig) >= 2, "the runs should have split the root at least twice");
            checkAll(rig, model, next);
            while (rig.tree.flushStep()) {
                // Flushes the root's buffers down, so that the rows they held are read from leaves too.
            }
            checkAll(rig, model, next);
        }
    }

    private static void checkAll(TreeRig rig, TreeMap<Long, byte[]> model, long last) {
        rig.tree.checkInvariants(rig.file.path());
        for (long k = 0; k <= last + 4; k++) {
            byte[] expected = model.get(k);
            byte[] actual = rig.tree.get(key(k), Long.MAX_VALUE);
            if (expected == null) {
                assertNull(actual, "key " + k + " was never put");
            } else {
                assertArrayEquals(expected, actual, "key " + k);
            }
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

    private static byte[] key(long k) {
        return ByteBuffer.allocate(8).putLong(k).array();
    }

    private static byte[] value(Random rnd) {
        byte[] v = new byte[20 + rnd.nextInt(200)];
        rnd.nextBytes(v);
        return v;
    }
}
