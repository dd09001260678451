package io.betree.internal.tree;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.betree.compression.BlockCompressor;
import io.betree.compression.Compressors;
import io.betree.internal.cache.NodeCache;
import io.betree.internal.fault.CorruptionException;
import io.betree.internal.fault.FailureListener;
import io.betree.internal.memory.NodeMemory;
import io.betree.internal.storage.BlockFile;
import io.betree.internal.storage.StorageEnv;
import io.netty.buffer.ByteBuf;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.TreeMap;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Leaves read by their head alone ({@link LeafNode#readHead}) over a real block file: a tree is
 * written and checkpointed, then opened again over an empty cache, where scans and hits fetch a
 * few KB of each leaf instead of its block, misses read the filters back, and every answer is the
 * model's. Leaves of the older form (tag 'L', compressed or raw) are read whole and written back in
 * the new one; a head longer than the part read is read whole; a damaged head is a
 * {@link CorruptionException} naming the file and the block.
 */
class LeafHeadReadTest {
    /** 1 MiB nodes of 4 KiB basements: leaves of some 250 basements, blocks of 20-30 KB. */
    private static final TreeConfig CONFIG = new TreeConfig(1 << 20, 4 << 10, 4, Compressors.create("lz4"));

    @TempDir
    Path dir;

    private final NodeMemory memory = new NodeMemory();
    private BlockFile file;
    private final List<NodeCache> caches = new ArrayList<>();
    private final TreeMap<byte[], byte[]> model = new TreeMap<>(Keys::compare);
    private final Random rnd = new Random(20261128);
    private long msn;

    @AfterEach
    void release() throws IOException {
        for (NodeCache c : caches) {
            c.releaseAll();
        }
        if (file != null) {
            file.close();
        }
        assertEquals(0, memory.used(), "off-heap bytes left");
    }

    private RecordingBacking backing;

    /** A tree of {@code rows} random keys of {@code keyBytes} bytes, flushed and checkpointed; its stored root. */
    private long writeTree(int rows, int keyBytes) throws IOException {
        file = BlockFile.open(StorageEnv.defaultEnv(), dir.resolve("tree.data"));
        NodeCache cache = cache();
        BeTree tree = BeTree.create(cache, file, CONFIG, () -> msn, FailureListener.IGNORE);
        Cleaner.forget(tree); // counts reads: no drain in between
        for (int i = 0; i < rows; i++) {
            byte[] key = new byte[keyBytes];
            rnd.nextBytes(key);
            byte[] value = new byte[20 + rnd.nextInt(40)];
            rnd.nextBytes(value);
            tree.write(MessageType.PUT, key, value, ++msn);
            model.put(key, value);
        }
        return settle(tree, cache);
    }

    /**
     * A new, empty cache over the file; the earlier ones are released first (their trees are
     * closed by then), so that none writes back what a drain or a flush changed after it last
     * checkpointed into the file the next tree reads.
     */
    private NodeCache cache() {
        for (NodeCache c : caches) {
            c.releaseAll();
        }
        caches.clear();
        backing = new RecordingBacking(new BlockFileBacking(file, memory));
        NodeCache cache = new NodeCache(backing, memory, 64L << 20);
        caches.add(cache);
        return cache;
    }

    /**
     * Flushes until the root is within its size, checkpoints and closes the tree; returns the root
     * the checkpoint holds. The tree is closed with the checkpoint's begin, so that no flush or
     * drain ({@link Cleaner}) changes blocks after it: the tests reopen the tree from this live file,
     * whose current blocks must be the checkpoint's.
     */
    private long settle(BeTree tree, NodeCache cache) throws IOException {
        while (tree.flushStep()) {
            // until the root is within its size
        }
        long root = BeTree.whileUnchanged(List.of(tree), () -> {
            cache.beginCheckpoint(file::beginCheckpoint);
            tree.close();
            return tree.rootBlock();
        });
        cache.writeCheckpointImages();
        file.finishCheckpoint(null);
        return root;
    }

    /** The tree at {@code root} over a new, empty cache. */
    private BeTree reopen(long root) {
        BeTree tree = BeTree.open(cache(), file, CONFIG, () -> msn, FailureListener.IGNORE, root);
        Cleaner.forget(tree); // counts reads: no drain in between
        return tree;
    }

    private void assertScanMatchesModel(BeTree tree) {
        List<byte[]> keys = new ArrayList<>(model.keySet());
        int next = 0;
        byte[] from = new byte[0];
        while (from != null) {
            ScanBatch b = tree.scanBatch(from, null, msn, null, null);
            for (int r = 0; r < b.size(); r++) {
                assertArrayEquals(keys.get(next), b.key(r), "row " + next);
                assertArrayEquals(model.get(keys.get(next)), b.value(r), "row " + next);
                next++;
            }
            from = b.resumeKey();
        }
        assertEquals(keys.size(), next);
    }

    /** Every stored leaf of the tree at {@code root}: block numbers, read through a fresh cache. */
    private List<Long> leafBlocks(long root) {
        BeTree tree = reopen(root);
        List<Long> leaves = new ArrayList<>();
        for (long block : BeTree.whileUnchanged(List.of(tree), () -> tree.checkInvariants(file.path()))) {
            ByteBuf data = new BlockFileBacking(file, memory).fetch(block);
            byte tag = data.getByte(0);
            memory.release(data);
            if (tag == LeafNode.TAG || tag == LeafNode.TAG_NO_MAPS || tag == LeafNode.TAG_WHOLE) {
                leaves.add(block);
            }
        }
        tree.close();
        return leaves;
    }

    @Test
    void scansAndHitsReadLeavesByTheirHeadAndMissesReadTheirFiltersBack() throws IOException {
        long root = writeTree(60_000, 8);
        BeTree tree = reopen(root);
        assertScanMatchesModel(tree);
        int heads = backing.count(LeafNode.TAG, true);
        assertTrue(heads > 1, "leaves read by their head: " + heads);
        assertEquals(0, backing.count(LeafNode.TAG, false), "no leaf read whole");

        // The leaves are cached by their heads: misses read their filters back.
        NodeCache cache = caches.get(caches.size() - 1);
        long fetchedAgain = cache.stats().partialFetches();
        for (int i = 0; i < 2_000; i++) {
            byte[] k = new byte[8];
            rnd.nextBytes(k);
            if (!model.containsKey(k)) {
                assertNull(tree.get(k, msn));
            }
        }
        assertTrue(cache.stats().partialFetches() > fetchedAgain, "misses read filters back");
        List<byte[]> keys = new ArrayList<>(model.keySet());
        for (int i = 0; i < 2_000; i++) {
            byte[] k = keys.get(rnd.nextInt(keys.size()));
            assertArrayEquals(model.get(k), tree.get(k, msn));
        }
        // Every key is in its basement's filter, as read back from the blocks.
        BeTree checked = tree;
        BeTree.whileUnchanged(List.of(checked), () -> checked.checkInvariants(file.path()));
        tree.close();
    }

    @Test
    void pointReadsReadLeavesByTheirHeadOnceMissesAreRare() throws IOException {
        long root = writeTree(150_000, 8);
        BeTree tree = reopen(root);
        List<byte[]> keys = new ArrayList<>(model.keySet());
        // Until enough reads are counted, misses count as common and leaves are read whole.
        for (int i = 0; i < 200; i++) {
            byte[] k = keys.get(i);
            assertArrayEquals(model.get(k), tree.get(k, msn));
        }
        int wholeBefore = backing.count(LeafNode.TAG, false);
        for (int i = 0; i < 2_000; i++) {
            byte[] k = keys.get(rnd.nextInt(keys.size()));
            assertArrayEquals(model.get(k), tree.get(k, msn));
        }
        assertTrue(backing.count(LeafNode.TAG, true) > 1, "heads read");
        assertEquals(wholeBefore, backing.count(LeafNode.TAG, false), "hits read no leaf whole");
        tree.close();
    }

    @Test
    void leavesAndBasementsOfOlderFormsAreReadAndWrittenBackInTheNewOnes() throws IOException {
        long root = writeTree(150_000, 8);
        List<Long> leaves = leafBlocks(root);
        assertTrue(leaves.size() > 4, "leaves: " + leaves.size());
        BlockCompressor lz4 = Compressors.create("lz4");
        BlockCompressor none = Compressors.forId(0);
        int olderBasements = 0;
        for (int i = 0; i < leaves.size(); i++) {
            ByteBuffer stored = file.read(leaves.get(i), ByteBuffer::allocate);
            int headLength = stored.getInt(1);
            int filtersLength = stored.getInt(5);
            int mapsLength = stored.getInt(9);
            ByteBuffer head = stored.duplicate().position(17).limit(17 + headLength);
            ByteBuffer filters = stored.duplicate().position(17 + headLength + mapsLength);
            if (i % 3 < 2) {
                // Versions 3 to 6: tag 'L', then the head and the filters with nothing between. Stored
                // compressed, as the older code did, or raw, as it did when that was no larger.
                ByteBuffer older = ByteBuffer.allocate(1 + headLength + filtersLength);
                older.put(LeafNode.TAG_WHOLE).put(head).put(filters).flip();
                file.write(leaves.get(i), older, i % 3 == 0 ? lz4 : none);
            } else {
                // Version 7: tag 'P', the lengths of head and filters, the head's CRC; no chunk maps.
                ByteBuffer older = ByteBuffer.allocate(13 + headLength + filtersLength);
                older.put(LeafNode.TAG_NO_MAPS).putInt(headLength).putInt(filtersLength).putInt(stored.getInt(13))
                        .put(head).put(filters).flip();
                file.write(leaves.get(i), older, none);
            }
            // Versions before 8 stored a basement's rows whole, compressed by the block's codec.
            long basement = stored.getLong(17 + 4);
            ByteBuf chunked = new BlockFileBacking(file, memory).fetch(basement);
            ByteBuf rows = BasementChunks.decodeWhole(chunked, memory);
            file.write(basement, rows.nioBuffer(), lz4);
            memory.release(chunked);
            memory.release(rows);
            olderBasements++;
        }
        file.checkpoint(null);
        assertEquals(leaves, leafBlocks(root));

        BeTree tree = reopen(root);
        assertScanMatchesModel(tree);
        assertTrue(backing.count(LeafNode.TAG_WHOLE, false) + backing.count(LeafNode.TAG_NO_MAPS, true)
                + backing.count(LeafNode.TAG_NO_MAPS, false) >= leaves.size(), "older leaves read");
        assertEquals(olderBasements, backing.count(Basement.TAG, false), "older basements read");
        // Enough writes to pass the root's size: flushes carry them down to leaves.
        for (int i = 0; i < 40_000; i++) {
            byte[] key = new byte[8];
            rnd.nextBytes(key);
            byte[] value = new byte[30];
            tree.write(MessageType.PUT, key, value, ++msn);
            model.put(key, value);
        }
        long newRoot = settle(tree, caches.get(caches.size() - 1));

        tree = reopen(newRoot);
        assertScanMatchesModel(tree);
        tree.close();
        // The leaves the writes reached were written back in the new form; the others stay as they were.
        int newForm = 0;
        for (long block : leafBlocks(newRoot)) {
            ByteBuf data = new BlockFileBacking(file, memory).fetch(block);
            newForm += data.getByte(0) == LeafNode.TAG ? 1 : 0;
            memory.release(data);
        }
        assertTrue(newForm > 0, "no leaf written back in the new form");
    }

    @Test
    void aHeadLongerThanThePartReadIsReadWhole() throws IOException {
        // 200-byte keys: some 250 pivots make a head far past the 8 KB read first.
        long root = writeTree(20_000, 200);
        BeTree tree = reopen(root);
        assertScanMatchesModel(tree);
        assertTrue(backing.count(LeafNode.TAG, true) > 0, "heads tried");
        assertTrue(backing.count(LeafNode.TAG, false) > 0, "then read whole");
        tree.close();
    }

    @Test
    void aDamagedHeadIsCorruptionNamingTheFileAndTheBlock() throws IOException {
        long root = writeTree(40_000, 8);
        long leaf = leafBlocks(root).get(0);
        ByteBuffer stored = file.read(leaf, ByteBuffer::allocate);
        stored.put(24, (byte) (stored.get(24) ^ 1)); // a byte of the first basement's block number
        file.write(leaf, stored, Compressors.forId(0)); // the block's own CRC is right again
        file.checkpoint(null);
        BeTree tree = reopen(root);
        CorruptionException e = assertThrows(CorruptionException.class, () -> assertScanMatchesModel(tree));
        assertTrue(e.getMessage().contains(file.path().toString()), e.getMessage());
        assertTrue(e.getMessage().contains("block " + leaf), e.getMessage());
        assertTrue(e.getMessage().contains("leaf head checksum mismatch"), e.getMessage());
        tree.close();
    }
}
