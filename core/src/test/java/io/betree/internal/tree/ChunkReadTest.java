package io.betree.internal.tree;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

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
 * Point reads of basements the cache lacks, by one chunk ({@link NodeStore#readChunk}), over a real
 * block file: a tree is written with two versions of some keys and checkpointed, then opened again
 * over a cache a fraction of its size. Hits read a chunk where the cache is full and answer as the
 * model does at both snapshots; a chunk whose basement was written again since its leaf's map, or
 * whose bytes are damaged, is read whole instead, and damage is then a {@link CorruptionException}
 * naming the file and the block.
 */
class ChunkReadTest {
    /** 256 KiB nodes of 32 KiB basements: four chunks or so a basement. */
    private static final TreeConfig CONFIG = new TreeConfig(256 << 10, 32 << 10, 4, Compressors.create("lz4"));
    private static final int ROWS = 120_000;
    /** A cache of a tenth of the tree or so: full after the first reads. */
    private static final long SMALL_CACHE = 2L << 20;

    @TempDir
    Path dir;

    private final NodeMemory memory = new NodeMemory();
    private BlockFile file;
    private NodeCache cache;
    private RecordingBacking backing;
    private final Random rnd = new Random(20261128);
    /** Every key's value at the snapshot {@link #firstSnapshot}, and now. */
    private final TreeMap<byte[], byte[]> before = new TreeMap<>(Keys::compare);
    private final TreeMap<byte[], byte[]> now = new TreeMap<>(Keys::compare);
    private long msn;
    private long firstSnapshot;

    @AfterEach
    void release() throws IOException {
        if (cache != null) {
            cache.releaseAll();
        }
        if (file != null) {
            file.close();
        }
        assertEquals(0, memory.used(), "off-heap bytes left");
    }

    private NodeCache newCache(long bytes) {
        if (cache != null) {
            cache.releaseAll();
        }
        backing = new RecordingBacking(new BlockFileBacking(file, memory));
        cache = new NodeCache(backing, memory, bytes);
        return cache;
    }

    /**
     * Writes {@link #ROWS} random keys, then a new version of every fifth one, with the snapshot
     * between them kept; flushes them all to the leaves, checkpoints, and returns the root.
     */
    private long writeTree() throws IOException {
        file = BlockFile.open(StorageEnv.defaultEnv(), dir.resolve("tree.data"));
        NodeCache writing = newCache(64L << 20);
        BeTree tree = BeTree.create(writing, file, CONFIG, () -> firstSnapshot, FailureListener.IGNORE);
        Cleaner.forget(tree);
        firstSnapshot = Long.MAX_VALUE; // nothing to keep while the first versions go in
        List<byte[]> keys = new ArrayList<>();
        for (int i = 0; i < ROWS; i++) {
            byte[] key = new byte[8];
            rnd.nextBytes(key);
            byte[] value = value();
            tree.write(MessageType.PUT, key, value, ++msn);
            before.put(key, value);
            keys.add(key);
        }
        while (tree.flushStep()) {
            // the first versions down to the leaves
        }
        firstSnapshot = msn;
        now.putAll(before);
        for (int i = 0; i < keys.size(); i += 5) {
            byte[] value = value();
            tree.write(MessageType.PUT, keys.get(i), value, ++msn);
            now.put(keys.get(i), value);
        }
        while (tree.flushStep()) {
            // the second versions too: basements that hold both
        }
        long root = BeTree.whileUnchanged(List.of(tree), () -> {
            writing.beginCheckpoint(file::beginCheckpoint);
            tree.close();
            return tree.rootBlock();
        });
        writing.writeCheckpointImages();
        file.finishCheckpoint(null);
        return root;
    }

    private byte[] value() {
        byte[] value = new byte[20 + rnd.nextInt(60)];
        rnd.nextBytes(value);
        return value;
    }

    private BeTree reopen(long root, long cacheBytes) {
        BeTree tree = BeTree.open(newCache(cacheBytes), file, CONFIG, () -> firstSnapshot, FailureListener.IGNORE, root);
        Cleaner.forget(tree);
        return tree;
    }

    /** {@code reads} random keys of the model, each at both snapshots, against the model. */
    private void assertHitsMatchModel(BeTree tree, int reads) {
        assertHitsMatchModel(tree, reads, new ArrayList<>(now.keySet()));
    }

    /** {@code reads} random keys of {@code keys}, each at both snapshots, against the model. */
    private void assertHitsMatchModel(BeTree tree, int reads, List<byte[]> keys) {
        for (int i = 0; i < reads; i++) {
            byte[] key = keys.get(rnd.nextInt(keys.size()));
            assertArrayEquals(now.get(key), tree.get(key, msn), "now");
            assertArrayEquals(before.get(key), tree.get(key, firstSnapshot), "at the first snapshot");
        }
    }

    @Test
    void hitsUnderAFullCacheReadOneChunkAndAnswerAsTheModelAtEverySnapshot() throws IOException {
        long root = writeTree();
        List<Long> basements = storedBasements(root);
        BeTree tree = reopen(root, SMALL_CACHE);
        assertHitsMatchModel(tree, 4_000);
        for (int i = 0; i < 2_000; i++) {
            byte[] absent = new byte[9]; // no key of the model has nine bytes
            rnd.nextBytes(absent);
            assertNull(tree.get(absent, msn));
        }
        long chunks = backing.ranges().stream().filter(basements::contains).count(); // not the leaves' maps
        int wholeBasements = backing.count(BasementChunks.TAG, false);
        assertTrue(chunks > 2_000, "chunk reads: " + chunks);
        assertTrue(wholeBasements < chunks / 4, "whole basements " + wholeBasements + " beside chunks " + chunks);
        tree.close();
    }

    @Test
    void aCacheWithRoomReadsBasementsWhole() throws IOException {
        long root = writeTree();
        BeTree tree = reopen(root, 64L << 20);
        assertHitsMatchModel(tree, 2_000);
        assertEquals(0, backing.ranges().size(), "no chunk read while the cache has room");
        tree.close();
    }

    @Test
    void aBasementWrittenAgainSinceItsLeafsMapIsReadWhole() throws IOException {
        long root = writeTree();
        // Every basement stored again in chunks of another version, its leaves left as they were:
        // each map now names a stamp no chunk carries.
        List<Long> basements = storedBasements(root);
        BasementChunks rewriter = new BasementChunks(Compressors.create("lz4"), new RecentChunkMaps());
        for (long block : basements) {
            ByteBuf stored = new BlockFileBacking(file, memory).fetch(block);
            Basement b = BasementLoader.loadStored(block, stored, memory, rewriter);
            ByteBuf again = memory.allocate(b.serializedSizeBound());
            b.serialize(again);
            file.write(block, again.nioBuffer(), Compressors.forId(0));
            memory.release(again);
            b.releaseMemory();
        }
        file.checkpoint(null);
        BeTree tree = reopen(root, SMALL_CACHE);
        assertHitsMatchModel(tree, 2_000);
        long tried = backing.ranges().stream().filter(basements::contains).count();
        assertTrue(tried > 500, "chunks tried: " + tried);
        assertTrue(backing.count(BasementChunks.TAG, false) > 1_000, "then read whole");
        tree.close();
    }

    @Test
    void aDamagedChunkIsReadWholeAndReportedNamingTheFileAndTheBlock() throws IOException {
        long root = writeTree();
        // A basement whose leaf holds a map of it (a checkpoint that writes more basements than the
        // recent maps keep leaves some without): one whose chunks the reads of an earlier pass tried.
        List<Long> basements = storedBasements(root);
        BeTree earlier = reopen(root, SMALL_CACHE);
        assertHitsMatchModel(earlier, 2_000);
        earlier.close();
        long block = backing.ranges().stream().filter(basements::contains).findFirst().orElseThrow();
        Basement intact = storedBasement(block);
        byte[] firstKey = intact.key(0);
        byte[] lastKey = intact.key(intact.count() - 1);
        intact.releaseMemory();
        ByteBuffer stored = file.read(block, ByteBuffer::allocate);
        int firstRecord = BasementChunks.HEADER;
        int lastByte = firstRecord + BasementChunks.RECORD_HEADER + stored.getInt(firstRecord + 17) - 1;
        stored.put(lastByte, (byte) (stored.get(lastByte) ^ 1)); // the first chunk's last stored byte
        file.write(block, stored, Compressors.forId(0)); // the block's own CRC is right again
        file.checkpoint(null);
        BeTree tree = reopen(root, SMALL_CACHE);
        // Reads of other basements fill the cache, so that the read of the damaged one takes a chunk.
        List<byte[]> elsewhere = new ArrayList<>(now.headMap(firstKey, false).keySet());
        elsewhere.addAll(now.tailMap(lastKey, false).keySet());
        assertHitsMatchModel(tree, 1_000, elsewhere);
        // The evictor keeps the cache just below its target: read on until it is full again, then
        // at once the damaged basement.
        for (int i = 0; i < 10_000 && !cache.full(); i++) {
            assertHitsMatchModel(tree, 1, elsewhere);
        }
        assertTrue(cache.full(), "the cache filled");
        // At the first snapshot, which no newer version in a buffer above answers: from the basement.
        CorruptionException e = assertThrows(CorruptionException.class, () -> tree.get(firstKey, firstSnapshot));
        assertTrue(e.getMessage().contains(file.path().toString()), e.getMessage());
        assertTrue(e.getMessage().contains("block " + block), e.getMessage());
        assertTrue(backing.ranges().contains(block), "the chunk was tried first");
        assertTrue(cache.stats().rangeFetches() >= backing.ranges().size(), "the cache counts its range reads");
        tree.close();
    }

    /** Stored basement {@code block}, read whole; the caller releases it. */
    private Basement storedBasement(long block) {
        ByteBuf stored = new BlockFileBacking(file, memory).fetch(block);
        return BasementLoader.loadStored(block, stored, memory,
                new BasementChunks(Compressors.create("lz4"), new RecentChunkMaps()));
    }

    /** The basements of the stored tree at {@code root}, found through a fresh cache. */
    private List<Long> storedBasements(long root) {
        BeTree tree = reopen(root, 64L << 20);
        List<Long> basements = new ArrayList<>();
        for (long block : BeTree.whileUnchanged(List.of(tree), () -> tree.checkInvariants(file.path()))) {
            ByteBuf data = new BlockFileBacking(file, memory).fetch(block);
            if (data.getByte(0) == BasementChunks.TAG) {
                basements.add(block);
            }
            memory.release(data);
        }
        tree.close();
        return basements;
    }
}
