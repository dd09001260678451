package io.betree.internal.tree;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.betree.compression.Compressors;
import io.betree.internal.cache.CacheEntry;
import io.betree.internal.cache.NodeCache;
import io.betree.internal.fault.CorruptionException;
import io.betree.internal.fault.FailureListener;
import io.betree.internal.memory.NodeMemory;
import io.betree.internal.storage.BlockFile;
import io.betree.internal.storage.StorageEnv;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.Collections;
import java.util.List;
import java.util.Random;
import java.util.Set;
import java.util.function.Predicate;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The tree checker over a real tree (block file, node memory, a small cache, the reshaper) built
 * by random puts, deletes and sequential appends with small nodes, so that it has several levels,
 * full buffers, split leaves and evicted nodes: the checker passes on it, and each kind of damage
 * done to an in-memory node through package access (pivots swapped, a child pointer aimed at
 * the wrong block, a cycle, a message outside its child's key range or older than what lies
 * below, basements swapped, a wrong recorded basement or buffer size) is reported as a
 * {@link CorruptionException} naming the block, after which the damage is undone and the tree
 * passes again with no pin left behind. Tests run with the tree paused
 * ({@link BeTree#whileUnchanged}), so that background flushes neither race with the damage nor
 * hold pins.
 */
class TreeCheckerTest {
    private static final int WRITES = 60_000;

    @TempDir
    Path dir;

    private BlockFile file;
    private NodeMemory memory;
    private NodeCache cache;
    private BeTree tree;
    private long msn;

    @BeforeEach
    void buildTree() throws IOException {
        file = BlockFile.open(StorageEnv.defaultEnv(), dir.resolve("tree.data"));
        memory = new NodeMemory();
        // Smaller than the tree, so that nodes are evicted and the checker reads some back from the
        // file. (At 2 MiB a writer waited in NodeCache.makeRoom for ever: the pool's footprint
        // stayed over the hard limit with nothing left to evict.)
        cache = new NodeCache(new BlockFileBacking(file, memory), memory, 6L << 20);
        TreeConfig config = new TreeConfig(64 << 10, 4 << 10, 4, Compressors.create("lz4"));
        // The horizon lags, so recent rows keep their timestamps and a key can have several versions.
        tree = BeTree.create(cache, file, config, () -> Math.max(0, msn - 3_000), FailureListener.IGNORE);
        Random rnd = new Random(20261201);
        byte[] maxKey = new byte[0];
        for (int i = 0; i < WRITES; i++) {
            int kind = rnd.nextInt(100);
            byte[] key;
            if (kind < 8) {
                key = ByteBuffer.allocate(maxKey.length + 1).put(maxKey).put((byte) rnd.nextInt(256)).array();
                if (key.length > 40) {
                    key = randomKey(rnd);
                }
            } else {
                key = randomKey(rnd);
            }
            if (kind >= 8 && kind < 20) {
                tree.write(MessageType.DELETE, key, null, ++msn);
            } else {
                byte[] value = new byte[20 + rnd.nextInt(100)];
                rnd.nextBytes(value);
                tree.write(MessageType.PUT, key, value, ++msn);
                if (Keys.compare(key, maxKey) > 0) {
                    maxKey = key;
                }
            }
            if (i % 10_000 == 9_999) {
                tree.checkInvariants(file.path()); // while background flushes come and go
            }
        }
        while (tree.flushStep()) {
            // Brings the root within its size, so that no flush is left to do.
        }
    }

    private static byte[] randomKey(Random rnd) {
        return ByteBuffer.allocate(8).putInt(rnd.nextInt(60_000)).putInt(rnd.nextInt(4)).array();
    }

    @AfterEach
    void release() throws IOException {
        tree.close(); // waits for a flush step in progress; later ones do nothing
        cache.releaseAll();
        file.close();
        assertEquals(0, memory.used(), "off-heap bytes left after the cache released everything");
    }

    @Test
    void passesOnATreeOfSeveralLevels() {
        paused(() -> {
            int height = rootHeight();
            assertTrue(height >= 2, "the tree should have at least two levels of internal nodes, has height " + height);
            Set<Long> blocks = check();
            assertEquals(file.stats().blockCount(), blocks.size(),
                    "the only tree in the file reaches every allocated block number");
            assertTrue(blocks.size() > 50, "blocks reached: " + blocks.size());
            assertTrue(cache.stats().evictions() > 0, "no node was evicted, so none was read back");
            assertEquals(blocks, check(), "a second check reaches the same blocks");
            assertNothingPinned(blocks);
        });
    }

    @Test
    void reportsPivotsOutOfOrder() {
        paused(() -> {
            Set<Long> blocks = check();
            InternalNode node = (InternalNode) find(e -> e instanceof InternalNode in && in.pivots.size() >= 2);
            try {
                Collections.swap(node.pivots, 0, 1);
                CorruptionException e = assertFails(node.blockNumber(), "pivots out of order");
                assertTrue(e.getMessage().contains("block " + node.blockNumber()), e.getMessage());
                Collections.swap(node.pivots, 0, 1);
            } finally {
                store().unpin(node, false);
            }
            assertEquals(blocks, check());
            assertNothingPinned(blocks);
        });
    }

    @Test
    void reportsAChildPointerAimedAtASiblingsBlock() {
        paused(() -> {
            Set<Long> blocks = check();
            InternalNode node = (InternalNode) find(e -> e instanceof InternalNode in && in.children.size() >= 2);
            long second = node.children.get(1);
            try {
                node.children.set(1, node.children.get(0));
                assertFails(node.children.get(0), "reachable twice");
                node.children.set(1, second);
            } finally {
                store().unpin(node, false);
            }
            assertEquals(blocks, check());
            assertNothingPinned(blocks);
        });
    }

    @Test
    void reportsACycle() {
        paused(() -> {
            Set<Long> blocks = check();
            long root = tree.rootBlock();
            InternalNode node = (InternalNode) find(e -> e instanceof InternalNode in && e.blockNumber() != root);
            long first = node.children.get(0);
            try {
                node.children.set(0, root);
                assertFails(root, "reachable twice");
                node.children.set(0, first);
            } finally {
                store().unpin(node, false);
            }
            assertEquals(blocks, check());
            assertNothingPinned(blocks);
        });
    }

    @Test
    void reportsAChildAtTheWrongHeight() {
        paused(() -> {
            Set<Long> blocks = check();
            InternalNode node = (InternalNode) find(e -> e instanceof InternalNode in && in.height >= 2
                    && in.children.size() >= 2);
            long first = node.children.get(0);
            long leaf = leftmostLeaf(node.children.get(node.children.size() - 1));
            try {
                node.children.set(0, leaf);
                assertFails(node.blockNumber(), "has height 0, expected " + (node.height - 1));
                node.children.set(0, first);
            } finally {
                store().unpin(node, false);
            }
            assertEquals(blocks, check());
            assertNothingPinned(blocks);
        });
    }

    @Test
    void reportsAMessageOutsideItsChildsRange() {
        paused(() -> {
            Set<Long> blocks = check();
            InternalNode node = (InternalNode) find(e -> e instanceof InternalNode in && in.children.size() >= 2);
            try {
                // Child 0 holds keys below pivot 0; pivot 0 itself routes to child 1.
                withExtraMessage(node, 0, node.pivots.get(0), ++msn,
                        () -> assertFails(node.blockNumber(), "is not below the upper bound"));
            } finally {
                store().unpin(node, false);
            }
            assertEquals(blocks, check());
            assertNothingPinned(blocks);
        });
    }

    @Test
    void reportsAMessageThatIsNotNewerThanWhatLiesBelowIt() {
        paused(() -> {
            Set<Long> blocks = check();
            byte[] key = firstStoredKey();
            InternalNode root = store().pinRoot(tree.rootBlock());
            try {
                // Older than the row of the same key in a basement below (every msn and row timestamp is >= 0).
                withExtraMessage(root, 0, key, 0L, () -> {
                    CorruptionException e = assertThrows(CorruptionException.class, this::check);
                    assertTrue(e.detail().contains("is not older than the message @0 for the same key in buffer 0 of"
                            + " block " + root.blockNumber()), e.getMessage());
                });
            } finally {
                store().unpin(root, false);
            }
            assertEquals(blocks, check());
            assertNothingPinned(blocks);
        });
    }

    @Test
    void reportsAWrongRecordedBufferSize() {
        paused(() -> {
            Set<Long> blocks = check();
            InternalNode node = (InternalNode) find(e -> e instanceof InternalNode in && in.bufferBytes.get(0) > 0);
            int size = node.bufferBytes.get(0);
            try {
                node.noteBytes(0, size + 1);
                assertFails(node.blockNumber(), "records buffer 0 (block " + node.partitions.get(0) + ") as "
                        + (size + 1) + " bytes, but it holds " + size);
            } finally {
                node.noteBytes(0, size);
                store().unpin(node, false);
            }
            assertEquals(blocks, check());
            assertNothingPinned(blocks);
        });
    }

    @Test
    void reportsAKeyFilterThatLacksAKeyOfItsBasement() {
        paused(() -> {
            check();
            LeafNode leaf = (LeafNode) find(e -> e instanceof LeafNode l && l.basements.size() >= 2
                    && l.basementBytes.get(0) > 5 && l.basementBytes.get(1) > 5);
            try {
                Collections.swap(leaf.filters, 0, 1);
                assertFails(leaf.blockNumber(), "the key filter of basement 0 (block " + leaf.basements.get(0)
                        + ") lacks the key of row 0");
                Collections.swap(leaf.filters, 0, 1);
            } finally {
                store().unpin(leaf, false);
            }
        });
    }

    @Test
    void reportsSwappedBasementsAndAWrongRecordedSize() {
        paused(() -> {
            Set<Long> blocks = check();
            LeafNode leaf = (LeafNode) find(e -> e instanceof LeafNode l && l.basements.size() >= 2
                    && l.basementBytes.get(0) > 5 && l.basementBytes.get(1) > 5);
            try {
                swapBasements(leaf);
                // Basement 0's rows now sit behind pivot 0, which bounds them from above.
                CorruptionException e = assertThrows(CorruptionException.class, this::check);
                assertEquals(leaf.basements.get(0), e.blockNumber(), e.getMessage());
                assertTrue(e.detail().contains("is not below the upper bound"), e.getMessage());
                swapBasements(leaf);
                int size = leaf.basementBytes.get(1);
                leaf.basementBytes.set(1, size + 1);
                assertFails(leaf.blockNumber(), "records basement 1 (block " + leaf.basements.get(1) + ") as "
                        + (size + 1) + " bytes, but it holds " + size);
                leaf.basementBytes.set(1, size);
            } finally {
                store().unpin(leaf, false);
            }
            assertEquals(blocks, check());
            assertNothingPinned(blocks);
        });
    }

    // ---- helpers ----

    /**
     * Runs a test's body with the tree paused: no write and no background flush changes it, or
     * holds a pin, meanwhile (the checker's read locks are reentrant under the pause).
     */
    private void paused(Runnable body) {
        BeTree.whileUnchanged(List.of(tree), () -> {
            body.run();
            return null;
        });
    }

    private NodeStore store() {
        return tree.store();
    }

    private Set<Long> check() {
        return tree.checkInvariants(file.path());
    }

    private CorruptionException assertFails(long block, String detail) {
        CorruptionException e = assertThrows(CorruptionException.class, this::check);
        assertEquals(block, e.blockNumber(), e.getMessage());
        assertTrue(e.detail().contains(detail), "expected \"" + detail + "\" in: " + e.getMessage());
        assertEquals(file.path(), e.file());
        return e;
    }

    private int rootHeight() {
        InternalNode root = store().pinRoot(tree.rootBlock());
        try {
            return root.height;
        } finally {
            store().unpin(root, false);
        }
    }

    /** Pins and returns the first node in depth-first order that {@code wanted} accepts; the caller unpins it. */
    private CacheEntry find(Predicate<CacheEntry> wanted) {
        CacheEntry found = find(tree.rootBlock(), wanted);
        assertNotNull(found, "the tree has no node of the kind the test needs");
        return found;
    }

    private CacheEntry find(long block, Predicate<CacheEntry> wanted) {
        CacheEntry e = store().pinNode(block);
        if (wanted.test(e)) {
            return e;
        }
        try {
            if (e instanceof InternalNode in) {
                for (long child : in.children) {
                    CacheEntry found = find(child, wanted);
                    if (found != null) {
                        return found;
                    }
                }
            }
            return null;
        } finally {
            store().unpin(e, false);
        }
    }

    private long leftmostLeaf(long block) {
        CacheEntry e = store().pinNode(block);
        try {
            return e instanceof InternalNode in ? leftmostLeaf(in.children.get(0)) : block;
        } finally {
            store().unpin(e, false);
        }
    }

    /** The first key stored in a basement of the leftmost leaf: under child 0 at every level. */
    private byte[] firstStoredKey() {
        LeafNode leaf = (LeafNode) store().pinNode(leftmostLeaf(tree.rootBlock()));
        try {
            for (long b : leaf.basements) {
                Basement basement = store().pinBasement(b);
                try {
                    if (basement.count() > 0) {
                        return basement.key(0);
                    }
                } finally {
                    store().unpin(basement, false);
                }
            }
        } finally {
            store().unpin(leaf, false);
        }
        throw new AssertionError("the leftmost leaf is empty");
    }

    private MessageBuffer copy(MessageBuffer original) {
        MessageBuffer out = new MessageBuffer(memory);
        original.consolidate();
        out.appendRun(original, 0, original.count());
        return out;
    }

    /**
     * Runs {@code body} with a put of {@code key} at {@code msn} added to buffer {@code i} of the
     * pinned {@code node} (its recorded size to match; a block made for it if it had none), then
     * puts the buffer back as it was.
     */
    private void withExtraMessage(InternalNode node, int i, byte[] key, long msn, Runnable body) {
        boolean hadBlock = node.partitions.get(i) != InternalNode.NO_BLOCK;
        int recorded = node.bufferBytes.get(i);
        BufferPartition partition = store().pinBuffer(node, i);
        MessageBuffer damaged = copy(partition.buffer());
        damaged.append(MessageType.PUT, msn, 0L, key, new byte[] {1});
        MessageBuffer original = partition.replace(damaged);
        node.noteBytes(i, damaged.bytes());
        try {
            body.run();
        } finally {
            partition.replace(original);
            node.noteBytes(i, recorded);
            damaged.release();
            store().unpin(partition, false);
            if (!hadBlock) {
                store().takeAndFreeBuffer(node, i).release();
            }
        }
    }

    private static void swapBasements(LeafNode leaf) {
        Collections.swap(leaf.basements, 0, 1);
        Collections.swap(leaf.basementBytes, 0, 1);
        Collections.swap(leaf.filters, 0, 1);
    }

    /**
     * Every block the checker reached is unpinned: the cache refuses to drop a pinned entry. Drops
     * the entries without writing them, so it is the last thing a test does.
     */
    private void assertNothingPinned(Set<Long> blocks) {
        for (long b : blocks) {
            cache.discardIfCached(b);
        }
    }
}
