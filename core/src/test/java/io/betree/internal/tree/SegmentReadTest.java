package io.betree.internal.tree;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
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
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Point reads of basements the cache does not hold: with a full cache they read one segment by the
 * layout their leaf keeps; a layout of an older version, or a damaged segment, never answers, and
 * the whole block is read (and its damage reported) instead.
 */
class SegmentReadTest {
    private static final TreeConfig CONFIG = new TreeConfig(256 << 10, 32 << 10, 8, Compressors.create("lz4"));
    private static final int ROWS = 60_000;

    @TempDir
    Path dir;

    /** What a test does with an open tree. */
    private interface TreeTest {
        long run(BeTree tree, BlockFile file, NodeCache cache, List<long[]> fetched) throws Exception;
    }

    @Test
    void onceTheLeavesKnowTheLayoutsAPointReadOfAnUncachedBasementReadsOneSegment() throws Exception {
        Path path = dir.resolve("tree.data");
        long root = withTree(path, -1, 64L << 20, (tree, file, cache, fetched) -> {
            long msn = 0;
            for (int i = 0; i < ROWS; i++) {
                long k = i * 7919L % ROWS;
                tree.write(MessageType.PUT, key(k), value(k, 0), ++msn);
            }
            return drainAndCheckpoint(tree, file, cache);
        });
        // Reads of every row through a small cache: each basement is read by a segment or whole,
        // and a whole read teaches its leaf the layout it found.
        List<Long> order = new ArrayList<>();
        for (long k = 0; k < ROWS; k++) {
            order.add(k);
        }
        Collections.shuffle(order, new Random(20261126));
        root = withTree(path, root, 2L << 20, (tree, file, cache, fetched) -> {
            for (long k : order) {
                assertArrayEquals(value(k, 0), tree.get(key(k), Long.MAX_VALUE), "row " + k);
            }
            assertTrue(tree.store().segmentReads() > 0, "no read took a segment");
            return drainAndCheckpoint(tree, file, cache);
        });
        withTree(path, root, 2L << 20, (tree, file, cache, fetched) -> {
            int scanned = 0;
            for (byte[] from = new byte[0]; from != null; ) {
                ScanBatch batch = tree.scanBatch(from, null, Long.MAX_VALUE, null, null);
                scanned += batch.size();
                from = batch.resumeKey();
            }
            assertEquals(ROWS, scanned); // and the cache full: its evictor has just been at work
            synchronized (fetched) {
                fetched.clear();
            }
            long before = tree.store().segmentReads();
            int gets = 0;
            for (long k = 0; k < ROWS; k += 600) { // about two basements apart: each read once
                assertArrayEquals(value(k, 0), tree.get(key(k), Long.MAX_VALUE), "row " + k);
                gets++;
            }
            synchronized (fetched) {
                for (long[] f : fetched) {
                    assertTrue(f[1] != SegmentedBasement.TAG, "a point read fetched basement block " + f[0] + " whole");
                }
            }
            long segmentReads = tree.store().segmentReads() - before;
            assertTrue(segmentReads >= gets / 2, segmentReads + " of " + gets + " reads took a segment");
            for (long k = 0; k < ROWS; k += 300) { // keys between rows, and before and after all
                assertNull(tree.get(Arrays.copyOf(key(k), 9), Long.MAX_VALUE));
            }
            assertNull(tree.get(new byte[0], Long.MAX_VALUE));
            assertNull(tree.get(key(ROWS), Long.MAX_VALUE));
            return 0;
        });
    }

    @Test
    void aLayoutOfAnOlderVersionNeverAnswers() throws Exception {
        withTree(dir.resolve("stale.data"), -1, 64L << 20, (tree, file, cache, fetched) -> {
            long msn = 0;
            for (long k = 0; k < ROWS; k++) {
                tree.write(MessageType.PUT, key(k), value(k, 0), ++msn);
            }
            drainAndCheckpoint(tree, file, cache);
            List<long[]> blocks = new ArrayList<>();
            List<SegmentLayout> old = new ArrayList<>();
            for (long k = 0; k < ROWS; k += 1_000) {
                long block = basementOf(tree, key(k));
                blocks.add(new long[] {k, block});
                old.add(storedLayout(file, block));
            }
            for (long k = 0; k < ROWS; k++) {
                tree.write(MessageType.PUT, key(k), value(k, 1), ++msn);
            }
            drainAndCheckpoint(tree, file, cache);
            int changed = 0;
            for (int i = 0; i < blocks.size(); i++) {
                long k = blocks.get(i)[0];
                long block = blocks.get(i)[1];
                if (basementOf(tree, key(k)) != block) {
                    continue; // split or merged away
                }
                SegmentLayout now = storedLayout(file, block);
                if (now.writeId == old.get(i).writeId) {
                    continue; // its updates still wait in buffers above
                }
                changed++;
                assertSame(NodeStore.OUT_OF_DATE, tree.store().readByLayout(block, old.get(i), key(k), msn),
                        "the layout of an older version answered for row " + k);
                Basement basement = tree.store().pinBasement(block);
                try { // the basement's own answer: a newer one may still wait in a buffer above
                    assertArrayEquals(basement.get(key(k), msn), tree.store().readByLayout(block, now, key(k), msn),
                            "row " + k);
                } finally {
                    tree.store().unpin(basement, false);
                }
            }
            assertTrue(changed > 0, "no basement was rewritten");
            for (long k = 0; k < ROWS; k += 7) {
                assertArrayEquals(value(k, 1), tree.get(key(k), msn), "row " + k);
            }
            return 0;
        });
    }

    @Test
    void aDamagedSegmentIsReportedNotServed() throws Exception {
        Path path = dir.resolve("damaged.data");
        withTree(path, -1, 64L << 20, (tree, file, cache, fetched) -> {
            long msn = 0;
            for (long k = 0; k < ROWS; k++) {
                tree.write(MessageType.PUT, key(k), value(k, 0), ++msn);
            }
            drainAndCheckpoint(tree, file, cache);
            byte[] key = key(ROWS / 2);
            long block = basementOf(tree, key);
            SegmentLayout layout = storedLayout(file, block);
            int s = layout.segmentFor(key);
            long at = file.blockOffset(block) + 32 + layout.offset(s) + SegmentLayout.SEGMENT_PREFIX
                    + layout.storedLength(s) / 2;
            try (FileChannel ch = FileChannel.open(path, StandardOpenOption.READ, StandardOpenOption.WRITE)) {
                ByteBuffer one = ByteBuffer.allocate(1);
                ch.read(one, at);
                one.put(0, (byte) (one.get(0) ^ 0x10)).rewind();
                ch.write(one, at);
            }
            assertSame(NodeStore.OUT_OF_DATE, tree.store().readByLayout(block, layout, key, msn));
            cache.discardIfCached(block);
            CorruptionException e = assertThrows(CorruptionException.class, () -> tree.get(key, Long.MAX_VALUE));
            assertTrue(e.getMessage().contains("block " + block), e.getMessage());
            return 0;
        });
    }

    /** The block of the basement that holds {@code key}. */
    private static long basementOf(BeTree tree, byte[] key) {
        NodeStore store = tree.store();
        CacheEntry node = store.pinRoot(tree.rootBlock());
        while (node instanceof InternalNode in) {
            CacheEntry child = store.pinChild(in, in.childFor(key));
            store.unpin(node, false);
            node = child;
        }
        LeafNode leaf = (LeafNode) node;
        long block = leaf.basements.get(leaf.basementFor(key));
        store.unpin(leaf, false);
        return block;
    }

    /** The layout at the front of the current version of basement {@code block} in the file. */
    private static SegmentLayout storedLayout(BlockFile file, long block) throws IOException {
        ByteBuffer payload = file.read(block, ByteBuffer::allocate);
        return SegmentedBasement.layout(Unpooled.wrappedBuffer(payload));
    }

    private static long drainAndCheckpoint(BeTree tree, BlockFile file, NodeCache cache) throws Exception {
        while (tree.flushStep()) {
            // drained, so that no background step runs on after the checkpoint
        }
        return PartitionedNodeTest.checkpoint(file, cache, tree);
    }

    /**
     * Opens the tree of {@code root} in {@code path} (a new one when -1) under a cache of
     * {@code cacheBytes} whose fetches are recorded with their payload's tag, runs the test, and
     * returns what it returns.
     */
    private static long withTree(Path path, long root, long cacheBytes, TreeTest test) throws Exception {
        try (BlockFile file = BlockFile.open(StorageEnv.defaultEnv(), path)) {
            NodeMemory memory = new NodeMemory();
            List<long[]> fetched = new ArrayList<>();
            ForwardingBackingStore recording = new ForwardingBackingStore(new BlockFileBacking(file, memory)) {
                @Override
                public ByteBuf fetch(long blockNumber) {
                    ByteBuf data = super.fetch(blockNumber);
                    synchronized (fetched) {
                        fetched.add(new long[] {blockNumber, data.getByte(data.readerIndex())});
                    }
                    return data;
                }
            };
            NodeCache cache = new NodeCache(recording, memory, cacheBytes);
            BeTree tree = null;
            try {
                tree = root < 0 ? BeTree.create(cache, file, CONFIG, () -> 0, FailureListener.IGNORE)
                        : BeTree.open(cache, file, CONFIG, () -> 0, FailureListener.IGNORE, root);
                return test.run(tree, file, cache, fetched);
            } finally {
                if (tree != null) {
                    tree.close();
                }
                cache.releaseAll();
            }
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
