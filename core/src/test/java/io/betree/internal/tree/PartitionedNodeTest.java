package io.betree.internal.tree;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.betree.compression.Compressors;
import io.betree.internal.cache.CacheEntry;
import io.betree.internal.cache.NodeCache;
import io.betree.internal.fault.FailureListener;
import io.betree.internal.memory.NodeMemory;
import io.betree.internal.storage.BlockFile;
import io.betree.internal.storage.StorageEnv;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.HashSet;
import java.util.List;
import java.util.Random;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Internal nodes whose message buffers are blocks of their own, over a real block file: a tree of
 * several levels with messages pending at every level is checkpointed and opened again with an
 * empty cache, and each point read then fetches, besides the nodes and the basement on its path,
 * only the buffers on its path, and below the root none that is empty (an empty buffer there has no
 * block). The answers are those the messages give.
 */
class PartitionedNodeTest {
    private static final TreeConfig CONFIG = new TreeConfig(64 << 10, 4 << 10, 8, Compressors.create("lz4"));
    private static final int ROWS = 100_000;

    @TempDir
    Path dir;

    @Test
    void aColdPointReadFetchesTheBuffersOnItsPathOnly() throws Exception {
        Path path = dir.resolve("tree.data");
        Checkpointed built = buildCheckpointedTree(path);
        withReopenedTree(path, built, 64L << 20, (tree, file, backing) -> {
            Random rnd = new Random(20261126);
            int buffersFetched = 0;
            for (int n = 0; n < 200; n++) {
                int k = rnd.nextInt(ROWS);
                backing.clear();
                assertArrayEquals(value(k, k % 10 == 0 ? 1 : 0), tree.get(key(k), built.msn()), "row " + k);
                Set<Long> onPath = buffersOnPath(tree, key(k));
                for (RecordingBacking.Fetch f : backing.fetched()) {
                    if (f.tag() == BufferPartition.TAG) {
                        assertTrue(onPath.contains(f.block()), "read of row " + k + " fetched buffer block " + f.block()
                                + ", not one on its path " + onPath);
                        buffersFetched++;
                    }
                }
            }
            assertTrue(buffersFetched > 0, "no read fetched a buffer: the tree has no pending messages below");
            assertTrue(rootHeight(tree) >= 2, "the tree is too shallow to test: height " + rootHeight(tree));
        });
    }

    /**
     * Keys between stored rows: the leaves' key filters answer, so almost no miss reads a basement
     * (each filter admits about 0.8% of absent keys), while every hit still finds its row.
     */
    @Test
    void aColdMissReadsAlmostNoBasement() throws Exception {
        Path path = dir.resolve("tree.data");
        Checkpointed built = buildCheckpointedTree(path);
        withReopenedTree(path, built, 64L << 20, (tree, file, backing) -> {
            Random rnd = new Random(26);
            int misses = 5_000;
            for (int n = 0; n < misses; n++) {
                long k = rnd.nextInt(ROWS);
                byte[] between = ByteBuffer.allocate(9).putLong(k).put((byte) 0).array();
                assertEquals(null, tree.get(between, built.msn()), "key after row " + k);
            }
            // Basements read whole, and chunks of basements read alone (the leaves' maps are read
            // alone too, once a leaf: the cache has room, so no chunk is read).
            long basementsRead = backing.fetched().stream().filter(f -> f.tag() == BasementChunks.TAG).count();
            assertEquals(0, backing.fetched().stream().filter(f -> f.tag() == Basement.TAG).count(), "older form");
            assertTrue(basementsRead < misses / 50, basementsRead + " basements read for " + misses + " misses");
            for (int n = 0; n < 500; n++) {
                int k = rnd.nextInt(ROWS);
                assertArrayEquals(value(k, k % 10 == 0 ? 1 : 0), tree.get(key(k), built.msn()), "row " + k);
            }
        });
    }

    /**
     * Leaves read from disk keep their filters' bits in their stored image. Splits and merges of
     * such leaves, in a cache a third of the tree's size, so that the leaves they came from are
     * evicted (their images freed and reused), leave every filter holding its basement's keys and
     * every row readable.
     */
    @Test
    void filtersOfLeavesReadFromDiskSurviveSplitsAndMerges() throws Exception {
        Path path = dir.resolve("tree.data");
        Checkpointed built = buildCheckpointedTree(path);
        withReopenedTree(path, built, 8L << 20, (tree, file, backing) -> {
            long msn = built.msn();
            // New rows above the old ones split the last leaves again and again; deleting most of the
            // lowest quarter merges leaves.
            for (long k = 0; k < ROWS / 4; k++) {
                tree.write(MessageType.PUT, key(ROWS + k * 7919L % ROWS), value(k, 2), ++msn);
            }
            for (long k = 0; k < ROWS / 4; k++) {
                if (k % 8 != 0) {
                    tree.write(MessageType.DELETE, key(k), null, ++msn);
                }
            }
            while (tree.flushStep()) {
                // every message down to the leaves
            }
            tree.checkInvariants(file.path());
            for (long k = 0; k < ROWS; k += 3) {
                byte[] expected = k < ROWS / 4 && k % 8 != 0 ? null : value(k, k % 10 == 0 ? 1 : 0);
                assertArrayEquals(expected, tree.get(key(k), msn), "row " + k);
                if (k < ROWS / 4) {
                    assertArrayEquals(value(k, 2), tree.get(key(ROWS + k * 7919L % ROWS), msn), "new row " + k);
                }
            }
        });
    }

    /** A checkpointed tree: its root block and the msn of its last write. */
    private record Checkpointed(long rootBlock, long msn) {
    }

    /** What a test does with a tree opened again from its checkpoint. */
    private interface ReopenedTreeTest {
        void run(BeTree tree, BlockFile file, RecordingBacking backing) throws Exception;
    }

    /**
     * Opens the tree checkpointed in {@code path} with an empty cache of {@code cacheBytes} over a
     * recording backing store, runs {@code test}, then closes the tree (no background flush
     * outlives the cache), releases the cache and checks no off-heap byte is left.
     */
    private static void withReopenedTree(Path path, Checkpointed built, long cacheBytes, ReopenedTreeTest test)
            throws Exception {
        try (BlockFile file = BlockFile.open(StorageEnv.defaultEnv(), path)) {
            NodeMemory memory = new NodeMemory();
            RecordingBacking backing = new RecordingBacking(new BlockFileBacking(file, memory));
            NodeCache cache = new NodeCache(backing, memory, cacheBytes);
            BeTree tree = null;
            try {
                tree = BeTree.open(cache, file, CONFIG, () -> 0, FailureListener.IGNORE, built.rootBlock());
                Cleaner.forget(tree); // counts reads: no drain in between
                test.run(tree, file, backing);
            } finally {
                if (tree != null) {
                    tree.close();
                }
                cache.releaseAll();
            }
            assertEquals(0, memory.used(), "off-heap bytes left after the cache released everything");
        }
    }

    /**
     * Writes {@link #ROWS} rows in a scattered order and updates every tenth, leaving messages pending
     * at every level, and checkpoints the tree.
     */
    private static Checkpointed buildCheckpointedTree(Path path) throws IOException {
        long rootBlock;
        long msn = 0;
        try (BlockFile file = BlockFile.open(StorageEnv.defaultEnv(), path)) {
            NodeMemory memory = new NodeMemory();
            NodeCache cache = new NodeCache(new BlockFileBacking(file, memory), memory, 64L << 20);
            BeTree tree = null;
            try {
                tree = BeTree.create(cache, file, CONFIG, () -> 0, FailureListener.IGNORE);
                Cleaner.forget(tree); // counts reads: no drain in between
                for (int i = 0; i < ROWS; i++) {
                    tree.write(MessageType.PUT, key(i * 7919L % ROWS), value(i * 7919L % ROWS, 0), ++msn);
                }
                // Updates of every tenth row: messages pending above rows already in basements.
                for (int i = 0; i < ROWS; i += 10) {
                    tree.write(MessageType.PUT, key(i), value(i, 1), ++msn);
                }
                while (tree.flushStep()) {
                    // drained, so that no background step runs on after the checkpoint
                }
                rootBlock = checkpoint(file, cache, tree);
            } finally {
                if (tree != null) {
                    tree.close(); // no background flush outlives the cache
                }
                cache.releaseAll();
            }
            assertEquals(0, memory.used(), "off-heap bytes left after the cache released everything");
        }
        return new Checkpointed(rootBlock, msn);
    }

    @Test
    void aSequentialSplitThatSendsABuffersMessagesAllRightKeepsItsBlock() throws Exception {
        try (BlockFile file = BlockFile.open(StorageEnv.defaultEnv(), dir.resolve("sequential.data"))) {
            NodeMemory memory = new NodeMemory();
            NodeCache cache = new NodeCache(new BlockFileBacking(file, memory), memory, 64L << 20);
            BeTree tree = null;
            try {
                // Nodes large enough that the root keeps a thousand messages; fanout 4, so that the
                // root's last child splits by child count, at pivots below those messages' keys.
                tree = BeTree.create(cache, file, new TreeConfig(256 << 10, 4 << 10, 4,
                        Compressors.create("lz4")), () -> 0, FailureListener.IGNORE);
                Cleaner.forget(tree); // counts reads: no drain in between
                long msn = 0;
                long next = 0;
                for (; next < 20_000; next++) {
                    tree.write(MessageType.PUT, key(next), value(next, 0), ++msn);
                }
                // With the structure lock taken, keys beyond every key go to the root's last buffer.
                tree.structure.readLock().lock();
                try {
                    for (long end = next + 1_000; next < end; next++) {
                        tree.write(MessageType.PUT, key(next), value(next, 0), ++msn);
                    }
                } finally {
                    tree.structure.readLock().unlock();
                }
                assertTrue(tree.rootFullness() > 0, "the root holds no messages");
                // The sequential path again: the root's last child splits until the root's last
                // buffer, which the path holds pinned, is split with all its messages going right.
                for (long end = next + 60_000; next < end; next++) {
                    tree.write(MessageType.PUT, key(next), value(next, 0), ++msn);
                }
                tree.checkInvariants(file.path());
                for (long k = 0; k < next; k += 7) {
                    assertArrayEquals(value(k, 0), tree.get(key(k), msn), "row " + k);
                }
            } finally {
                if (tree != null) {
                    tree.close(); // no background flush outlives the cache
                }
                cache.releaseAll();
            }
            assertEquals(0, memory.used(), "off-heap bytes left after the cache released everything");
        }
    }

    /** Checkpoints the tree as the engine does; returns the root block the checkpoint holds. */
    private static long checkpoint(BlockFile file, NodeCache cache, BeTree tree) throws IOException {
        long root = BeTree.withFlushesPaused(List.of(tree), () -> BeTree.whileUnchanged(List.of(tree), () -> {
            cache.beginCheckpoint(file::beginCheckpoint);
            return tree.rootBlock();
        }));
        cache.writeCheckpointImages();
        file.finishCheckpoint(null);
        return root;
    }

    /**
     * The block numbers of the buffers on the path to {@code key}, checking that below the root each
     * one that has a block holds messages.
     */
    private static Set<Long> buffersOnPath(BeTree tree, byte[] key) {
        Set<Long> blocks = new HashSet<>();
        NodeStore store = tree.store();
        CacheEntry node = store.pinNode(tree.rootBlock());
        while (node instanceof InternalNode in) {
            int i = in.childFor(key);
            if (in.partitions.get(i) != InternalNode.NO_BLOCK) {
                assertTrue(in.blockNumber() == tree.rootBlock() || in.bufferBytes.get(i) > 0,
                        "block " + in.blockNumber() + " keeps a block for its empty buffer " + i);
                blocks.add(in.partitions.get(i));
            }
            CacheEntry child = store.pinChild(in, i);
            store.unpin(node, false);
            node = child;
        }
        store.unpin(node, false);
        return blocks;
    }

    private static int rootHeight(BeTree tree) {
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

    private static byte[] value(long k, int version) {
        byte[] v = new byte[100];
        ByteBuffer.wrap(v).putLong(k).putInt(version);
        return v;
    }
}
