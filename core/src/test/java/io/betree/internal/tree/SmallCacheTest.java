package io.betree.internal.tree;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.betree.compression.Compressors;
import io.betree.internal.cache.CacheEntry;
import io.betree.internal.cache.NodeCache;
import io.betree.internal.fault.FailureListener;
import io.betree.internal.memory.NodeMemory;
import io.betree.internal.storage.BlockFile;
import io.betree.internal.storage.StorageEnv;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A tree far larger than a tiny cache: writers must never wait for ever for room the evictor cannot
 * make (the pool's partly used chunks count against the budget, and eviction cannot free them), and
 * reads that step over many pending deletes push them down once, after which the range reads clean.
 */
class SmallCacheTest {
    @TempDir
    Path dir;

    @Test
    void writersGoOnWhenEvictionCannotGetUnderTheBudget() {
        assertTimeoutPreemptively(Duration.ofMinutes(2), () -> {
            try (BlockFile file = BlockFile.open(StorageEnv.defaultEnv(), dir.resolve("tiny.data"))) {
                NodeMemory memory = new NodeMemory();
                NodeCache cache = new NodeCache(new BlockFileBacking(file, memory), memory, 2L << 20);
                try {
                    BeTree tree = BeTree.create(cache, file, new TreeConfig(64 << 10, 4 << 10, 4,
                            Compressors.create("lz4")), () -> 0, FailureListener.IGNORE);
                    Cleaner.forget(tree); // counts reads: no drain in between
                    long msn = 0;
                    for (int i = 0; i < 60_000; i++) {
                        tree.write(MessageType.PUT, key(i * 7919L % 60_000), new byte[100], ++msn);
                    }
                    assertArrayEquals(new byte[100], tree.get(key(12_345), msn));
                } finally {
                    cache.releaseAll();
                }
            }
        }, "a writer waited for ever in the node cache");
    }

    @Test
    void aReadOverManyPendingDeletesPushesThemDownOnce() throws Exception {
        try (BlockFile file = BlockFile.open(StorageEnv.defaultEnv(), dir.resolve("queue.data"))) {
            NodeMemory memory = new NodeMemory();
            NodeCache cache = new NodeCache(new BlockFileBacking(file, memory), memory, 64L << 20);
            try {
                // Large nodes: the deletes stay in the root's buffers until something pushes them.
                BeTree tree = BeTree.create(cache, file, new TreeConfig(4 << 20, 64 << 10, 16,
                        Compressors.create("lz4")), () -> Long.MAX_VALUE, FailureListener.IGNORE);
                Cleaner.forget(tree); // counts reads: no drain in between
                long msn = 0;
                for (int i = 0; i < 20_000; i++) {
                    tree.write(MessageType.PUT, key(i), new byte[100], ++msn);
                }
                for (int i = 0; i < 5_000; i++) {
                    tree.write(MessageType.DELETE, key(i), null, ++msn);
                }
                ScanBatch first = tree.scanBatch(new byte[0], null, msn, null, null);
                assertTrue(first.tombstones() >= BeTree.TOMBSTONES_WORTH_A_FLUSH, "tombstones: " + first.tombstones());
                ScanBatch again = tree.scanBatch(new byte[0], null, msn, null, null);
                assertEquals(0, again.tombstones(), "the first read pushed the deletes down");
                byte[] from = new byte[0];
                int rows = 0;
                long expect = 5_000;
                while (from != null) {
                    ScanBatch b = tree.scanBatch(from, null, msn, null, null);
                    for (int r = 0; r < b.size(); r++) {
                        assertEquals(expect++, ByteBuffer.wrap(b.key(r)).getLong());
                        rows++;
                    }
                    from = b.resumeKey();
                }
                assertEquals(15_000, rows);
            } finally {
                cache.releaseAll();
            }
        }
    }

    @Test
    void aSequentialWriterReadsNoNodeTheCacheDroppedAndAppendsToTheRootInstead() throws Exception {
        try (BlockFile file = BlockFile.open(StorageEnv.defaultEnv(), dir.resolve("sequential.data"))) {
            NodeMemory memory = new NodeMemory();
            // Twice the cache's size in rows, and room enough that the cache stays below its hard
            // limit, past which even the root may go.
            // Counts the blocks read on this thread (flushers and evictors read on theirs).
            Thread writer = Thread.currentThread();
            java.util.concurrent.atomic.AtomicLong writerReads = new java.util.concurrent.atomic.AtomicLong();
            BlockFileBacking blocks = new BlockFileBacking(file, memory);
            ForwardingBackingStore counting = new ForwardingBackingStore(blocks) {
                @Override
                public io.netty.buffer.ByteBuf fetch(long blockNumber) {
                    if (Thread.currentThread() == writer) {
                        writerReads.incrementAndGet();
                    }
                    return super.fetch(blockNumber);
                }

                @Override
                public io.netty.buffer.ByteBuf fetchPrefix(long blockNumber, int bytes) {
                    if (Thread.currentThread() == writer) {
                        writerReads.incrementAndGet();
                    }
                    return super.fetchPrefix(blockNumber, bytes);
                }
            };
            NodeCache cache = new NodeCache(counting, memory, 8L << 20);
            try {
                BeTree tree = BeTree.create(cache, file, new TreeConfig(64 << 10, 4 << 10, 4,
                        Compressors.create("lz4")), () -> 0, FailureListener.IGNORE);
                Cleaner.forget(tree); // counts reads: no drain in between
                byte[] value = new byte[100];
                long msn = 0;
                long next = 0;
                for (; next < 150_000; next++) {
                    tree.write(MessageType.PUT, key(next), value, ++msn);
                }
                java.util.Random rnd = new java.util.Random(20261125);
                int toRoot = 0;
                // The root and its buffers are kept resident, but may go too when the cache passes
                // its hard limit (other tests' memory in this process counts against a small
                // budget): held throughout, so that the reads counted are those below them.
                List<CacheEntry> root = holdRoot(cache, tree, msn);
                try {
                    for (int round = 0; round < 100 && toRoot == 0; round++) {
                        // Scans of older rows fill the cache with their basements, and the
                        // evictor drops the rest, in time the rightmost path too. (Point reads
                        // would not: under a full cache they read a chunk of a basement.)
                        for (int i = 0; i < 200; i++) {
                            tree.scanBatch(key(rnd.nextInt(100_000)), null, msn, null, null);
                        }
                        long k = next++;
                        long m = ++msn;
                        boolean wentToRoot = BeTree.withFlushesPaused(List.of(tree), () -> {
                            long reads = writerReads.get();
                            double rootBefore = tree.rootFullness();
                            tree.write(MessageType.PUT, key(k), value, m);
                            assertEquals(reads, writerReads.get(), "the writer read a node");
                            return tree.rootFullness() > rootBefore;
                        });
                        toRoot += wentToRoot ? 1 : 0;
                        List<CacheEntry> now = holdRoot(cache, tree, msn); // it may have split
                        release(cache, root);
                        root = now;
                    }
                } finally {
                    release(cache, root);
                }
                assertTrue(toRoot > 0, "the reads never made the cache drop the rightmost path");
                for (long k = 0; k < next; k++) {
                    assertArrayEquals(value, tree.get(key(k), msn), "row " + k);
                }
            } finally {
                cache.releaseAll();
            }
        }
    }

    /**
     * Pins the tree's current root, reading it back first if the cache let it go, and its message
     * buffers; returns them, root first.
     */
    private static List<CacheEntry> holdRoot(NodeCache cache, BeTree tree, long msn) {
        for (int attempt = 0; attempt < 1_000; attempt++) {
            CacheEntry root = cache.pinIfCached(tree.rootBlock());
            if (root != null) {
                List<CacheEntry> held = new ArrayList<>(List.of(root));
                InternalNode node = (InternalNode) root;
                for (int i = 0; i < node.partitions.size(); i++) {
                    // Only buffers with messages: an empty one has nothing to read back, and a
                    // root split by a background flush frees its block, which must not be pinned
                    // then (pinBuffer also gave empty buffers blocks behind the flusher's back).
                    if (node.bufferBytes.get(i) > 0) {
                        BufferPartition p = tree.store().pinBufferIfAny(node, i);
                        if (p != null) {
                            held.add(p);
                        }
                    }
                }
                return held;
            }
            tree.get(key(0), msn);
        }
        throw new AssertionError("the root never stayed in the cache long enough to pin it");
    }

    private static void release(NodeCache cache, List<CacheEntry> held) {
        for (CacheEntry e : held) {
            cache.release(e, false);
        }
    }

    private static byte[] key(long k) {
        return ByteBuffer.allocate(8).putLong(k).array();
    }
}
