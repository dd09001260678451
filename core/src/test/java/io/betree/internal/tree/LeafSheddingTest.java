package io.betree.internal.tree;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.betree.internal.cache.CacheEntry;
import io.betree.internal.cache.NodeCache;
import io.betree.internal.storage.BlockFile;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Leaves that shed their key filters ({@link LeafNode#shed}) over a real tree (block file, node
 * memory, a cache smaller than the tree): reads and writes after shedding give the model's
 * answers, the filters come back from the leaf's block exactly as they were (the tree checker finds
 * every key in its filter), point reads read them back only while misses are common, and the
 * evictor sheds clean leaves before it drops them.
 */
class LeafSheddingTest {
    private static final int ROWS = 150_000;

    @TempDir
    Path dir;

    private TreeRig rig;
    private NodeCache cache;
    private BlockFile file;
    private BeTree tree;
    private long msn;
    private final TreeMap<byte[], byte[]> model = new TreeMap<>(Keys::compare);
    private final Random rnd = new Random(20261126);

    @BeforeEach
    void buildTree() throws IOException {
        rig = new TreeRig(dir, 6L << 20, () -> msn);
        cache = rig.cache;
        file = rig.file;
        tree = rig.tree;
        for (int i = 0; i < ROWS; i++) {
            put(key(rnd.nextInt(1_000_000)));
        }
        settle();
    }

    @AfterEach
    void release() throws IOException {
        rig.close();
    }

    private static byte[] key(int n) {
        return ByteBuffer.allocate(8).putInt(n).putInt(n * 31).array();
    }

    /** A key never written, next to where {@code key(n)} sorts: misses spread over every leaf. */
    private static byte[] missKey(int n) {
        return ByteBuffer.allocate(8).putInt(n).putInt(n * 31 + 1).array();
    }

    private void put(byte[] key) {
        byte[] value = new byte[16 + rnd.nextInt(48)];
        rnd.nextBytes(value);
        tree.write(MessageType.PUT, key, value, ++msn);
        model.put(key, value);
    }

    /** Flushes every message to the leaves and writes every dirty node back, so all are clean. */
    private void settle() {
        while (tree.flushStep()) {
            // until the root is within its size
        }
        BeTree.whileUnchanged(List.of(tree), () -> {
            cache.beginCheckpoint(file::beginCheckpoint);
            return null;
        });
        cache.writeCheckpointImages();
        try {
            file.finishCheckpoint(null);
        } catch (IOException e) {
            throw new AssertionError(e);
        }
    }

    /** Sheds the filters of every cached clean leaf, as the evictor does; returns the leaves shed. */
    private List<LeafNode> shedCachedLeaves() {
        List<LeafNode> shed = new ArrayList<>();
        BeTree.whileUnchanged(List.of(tree), () -> {
            for (long block : tree.checkInvariants(file.path())) {
                CacheEntry e = cache.pinIfCached(block);
                if (e == null) {
                    continue;
                }
                cache.release(e, false);
                if (e instanceof LeafNode) {
                    LeafNode leaf = (LeafNode) e;
                    long before = leaf.memoryBytes();
                    if (cache.shed(leaf)) { // clean, and not pinned meanwhile by the evictor
                        assertFalse(leaf.filtersHeld());
                        assertTrue(leaf.memoryBytes() < before, "shedding freed memory");
                        shed.add(leaf);
                    }
                }
            }
            return null;
        });
        return shed;
    }

    private void assertModel() {
        for (Map.Entry<byte[], byte[]> e : model.entrySet()) {
            assertArrayEquals(e.getValue(), tree.get(e.getKey(), Long.MAX_VALUE));
        }
    }

    @Test
    void readsAndWritesAfterSheddingGiveTheModelsAnswers() {
        assertFalse(shedCachedLeaves().isEmpty(), "some leaf was cached and clean");
        long fetched = cache.stats().partialFetches();
        for (int i = 0; i < 2_000; i++) {
            assertNull(tree.get(missKey(rnd.nextInt(1_000_000)), Long.MAX_VALUE), "a key never written");
        }
        assertTrue(cache.stats().partialFetches() > fetched, "misses read filters back");
        assertModel();
        shedCachedLeaves();
        // Writes reach shed leaves: their filters are read back before keys join them.
        for (int i = 0; i < 5_000; i++) {
            put(key(rnd.nextInt(1_000_000)));
        }
        for (int i = 0; i < 1_000; i++) {
            byte[] k = key(rnd.nextInt(1_000_000));
            tree.write(MessageType.DELETE, k, null, ++msn);
            model.remove(k);
        }
        while (tree.flushStep()) {
            // every message down to the leaves
        }
        BeTree.whileUnchanged(List.of(tree), () -> tree.checkInvariants(file.path())); // every key in its filter
        assertModel();
        settle();
        shedCachedLeaves();
        BeTree.whileUnchanged(List.of(tree), () -> tree.checkInvariants(file.path())); // read back as stored
    }

    @Test
    void hitsLeaveShedFiltersOnDiskAndMissesReadThemBack() {
        List<byte[]> keys = new ArrayList<>(model.keySet());
        for (int i = 0; i < 1_000; i++) {
            tree.get(keys.get(rnd.nextInt(keys.size())), Long.MAX_VALUE); // hits: misses are rare
        }
        shedCachedLeaves();
        long fetched = cache.stats().partialFetches();
        for (int i = 0; i < 1_000; i++) {
            byte[] k = keys.get(rnd.nextInt(keys.size()));
            assertArrayEquals(model.get(k), tree.get(k, Long.MAX_VALUE));
        }
        assertEquals(fetched, cache.stats().partialFetches(), "a hit does not read filters back");
        for (int i = 0; i < 1_000; i++) {
            assertNull(tree.get(missKey(rnd.nextInt(1_000_000)), Long.MAX_VALUE));
        }
        assertTrue(cache.stats().partialFetches() > fetched, "once misses are common they do");
    }

    @Test
    void theEvictorShedsCleanLeavesBeforeDroppingThem() {
        // Every key read twice over a cache smaller than the tree: leaves loaded clean are used
        // again, reach the clock, and are shed when it picks them.
        for (int round = 0; round < 2; round++) {
            for (byte[] k : model.keySet()) {
                tree.get(k, Long.MAX_VALUE);
            }
        }
        assertTrue(cache.stats().sheds() > 0, "sheds: " + cache.stats());
        assertModel();
    }
}
