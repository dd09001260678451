package io.betree.internal.tree;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.betree.compression.Compressors;
import io.betree.internal.cache.CacheEntry;
import io.betree.internal.cache.NodeCache;
import io.betree.internal.fault.CorruptionException;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Point reads answered from one stored chunk of a basement ({@link NodeStore#readFromChunk}) over a
 * real tree whose basements (32 KiB) hold several chunks: with the basements, or the leaves too,
 * out of the cache, every read gives the model's answer at the newest and at an older snapshot and
 * no basement enters the cache; a leaf's map made stale sends the read to the whole basement, with
 * the right answer; a flipped byte in a chunk is a {@link CorruptionException} naming file and block.
 */
class ChunkReadTest {
    private static final int ROWS = 40_000;

    @TempDir
    Path dir;

    private TreeRig rig;
    private NodeCache cache;
    private BeTree tree;
    private long msn;
    private long horizon;
    private long snapshot;
    private final TreeMap<byte[], byte[]> atSnapshot = new TreeMap<>(Keys::compare);
    private final TreeMap<byte[], byte[]> newest = new TreeMap<>(Keys::compare);
    private final Random rnd = new Random(20261127);

    @BeforeEach
    void buildTree() throws IOException {
        rig = new TreeRig(dir, 64L << 20, () -> horizon,
                new TreeConfig(256 << 10, 32 << 10, 8, Compressors.create("lz4")));
        cache = rig.cache;
        tree = rig.tree;
        for (int i = 0; i < ROWS; i++) {
            put(key(rnd.nextInt(1_000_000)));
        }
        snapshot = msn;
        horizon = snapshot; // the snapshot keeps the versions it sees
        atSnapshot.putAll(newest);
        List<byte[]> keys = new ArrayList<>(newest.keySet());
        for (int i = 0; i < keys.size(); i += 10) {
            put(keys.get(i));
        }
        for (int i = 3; i < keys.size(); i += 13) {
            tree.write(MessageType.DELETE, keys.get(i), null, ++msn);
            newest.remove(keys.get(i));
        }
        rig.settle();
    }

    @AfterEach
    void release() throws IOException {
        rig.close();
    }

    private static byte[] key(int n) {
        return ByteBuffer.allocate(8).putInt(n).putInt(n * 31).array();
    }

    private void put(byte[] key) {
        byte[] value = new byte[20 + rnd.nextInt(100)];
        rnd.nextBytes(value);
        tree.write(MessageType.PUT, key, value, ++msn);
        newest.put(key, value);
    }

    /** The basements still cached after the last {@link #evict}: not clean, so kept. */
    private final Set<Long> keptByEvict = new HashSet<>();

    /** Drops every cached clean basement, and with {@code leavesToo} every clean leaf, from the cache. */
    private void evict(boolean leavesToo) {
        keptByEvict.clear();
        for (long leaf : leaves()) {
            for (long block : basementsOf(leaf)) {
                dropIfClean(block);
                if (cache.isCached(block)) {
                    keptByEvict.add(block);
                }
            }
            if (leavesToo) {
                dropIfClean(leaf);
            }
        }
    }

    private void dropIfClean(long block) {
        CacheEntry e = cache.pinIfCached(block);
        if (e != null) {
            cache.release(e, false);
            if (e.clean()) {
                cache.discardIfCached(block);
            }
        }
    }

    /** The block numbers of every leaf, found without reading a basement. */
    private List<Long> leaves() {
        List<Long> leaves = new ArrayList<>();
        collectLeaves(tree.rootBlock(), leaves);
        return leaves;
    }

    private void collectLeaves(long block, List<Long> leaves) {
        CacheEntry e = tree.store().pinNode(block);
        try {
            if (e instanceof InternalNode in) {
                for (long child : new ArrayList<>(in.children)) {
                    collectLeaves(child, leaves);
                }
            } else {
                leaves.add(block);
            }
        } finally {
            cache.release(e, false);
        }
    }

    private List<Long> basementsOf(long leafBlock) {
        LeafNode leaf = (LeafNode) tree.store().pinNode(leafBlock);
        try {
            return new ArrayList<>(leaf.basements);
        } finally {
            cache.release(leaf, false);
        }
    }

    private void assertModels() {
        for (Map.Entry<byte[], byte[]> e : atSnapshot.entrySet()) {
            assertArrayEquals(e.getValue(), tree.get(e.getKey(), snapshot), "at the snapshot");
            assertArrayEquals(newest.get(e.getKey()), tree.get(e.getKey(), Long.MAX_VALUE), "newest");
        }
        for (int i = 0; i < 2_000; i++) {
            int n = rnd.nextInt(1_000_000);
            byte[] absent = ByteBuffer.allocate(8).putInt(n).putInt(n * 31 + 1).array();
            assertNull(tree.get(absent, Long.MAX_VALUE), "a key never written");
        }
    }

    /**
     * No basement of several chunks was loaded since the last {@link #evict} (one it kept, being
     * changed since the last checkpoint, is not counted): reads fetched a chunk of each. (A basement of one
     * chunk is read whole and cached, as its chunk would be all of it.) Most basements have several.
     */
    private void assertNoBasementOfSeveralChunksCached() {
        int several = 0;
        int all = 0;
        for (long leafBlock : leaves()) {
            LeafNode leaf = (LeafNode) tree.store().pinNode(leafBlock);
            try {
                for (int b = 0; b < leaf.basements.size(); b++) {
                    all++;
                    ChunkMap map = leaf.chunkMap(b);
                    if (map != null && map.chunkCount() > 1) {
                        several++;
                        long block = leaf.basements.get(b);
                        assertFalse(cache.isCached(block) && !keptByEvict.contains(block), "basement " + b
                                + " of leaf " + leafBlock + " (" + map.chunkCount() + " chunks) was loaded");
                    }
                }
            } finally {
                cache.release(leaf, false);
            }
        }
        assertTrue(several > all * 3 / 4, several + " of " + all + " basements have maps of several chunks");
    }

    @Test
    void readsOfBasementsOutOfTheCacheFetchOneChunkAndGiveTheModelsAnswers() {
        evict(false);
        assertModels();
        assertNoBasementOfSeveralChunksCached();
        evict(true); // the leaves read back from disk bring their stored maps
        assertModels();
        assertNoBasementOfSeveralChunksCached();
    }

    /**
     * Leaves read from disk, their maps parsed by reads, shed the maps their stored images hold
     * (a leaf never read from disk has no image and keeps them), then take writes and are stored
     * again: the maps of the basements the writes left alone come from the images, the others
     * from the basements stored anew, so reads after the leaves are read back still fetch one
     * chunk.
     */
    @Test
    void mapsShedBeforeALeafIsStoredAgainAreStoredWithIt() throws IOException {
        evict(true);
        assertModels(); // parses the maps
        for (long block : leaves()) {
            LeafNode leaf = (LeafNode) tree.store().pinNode(block);
            cache.release(leaf, false);
            assertTrue(cache.shed(leaf), "leaf " + block + " shed something");
            assertTrue(leaf.filtersHeld(), "the maps went first");
            for (int b = 0; b < leaf.basements.size(); b++) {
                assertNull(leaf.chunkSlots.get(b).map(), "the image holds the map of basement " + b);
            }
        }
        for (int i = 0; i < 30; i++) { // a write in many leaves, in few of their basements
            byte[] key = key(rnd.nextInt(1_000_000));
            put(key);
            tree.flushPath(key);
        }
        rig.settle();
        evict(true);
        assertModels();
        assertNoBasementOfSeveralChunksCached();
    }

    /** The first leaf with a basement of several chunks, pinned: the caller unpins it. */
    private LeafNode leafWithChunks() {
        for (long block : leaves()) {
            LeafNode leaf = (LeafNode) tree.store().pinNode(block);
            for (int b = 0; b < leaf.basements.size(); b++) {
                if (leaf.chunkMap(b) != null && leaf.chunkMap(b).chunkCount() > 2) {
                    return leaf;
                }
            }
            cache.release(leaf, false);
        }
        throw new AssertionError("no leaf has a basement of several chunks");
    }

    private int basementWithChunks(LeafNode leaf) {
        for (int b = 0; ; b++) {
            if (leaf.chunkMap(b) != null && leaf.chunkMap(b).chunkCount() > 2) {
                return b;
            }
        }
    }

    /** A stored key of basement {@code b} of {@code leaf} that its chunk {@code c} holds. */
    private byte[] keyInChunk(LeafNode leaf, int b, int c) {
        byte[] from = b == 0 ? new byte[0] : leaf.pivots.get(b - 1);
        for (byte[] k = atSnapshot.ceilingKey(from); k != null; k = atSnapshot.higherKey(k)) {
            if (leaf.chunkMap(b).chunkFor(k) == c) {
                return k;
            }
        }
        throw new AssertionError("no key in chunk " + c);
    }

    @Test
    void aStaleMapSendsTheReadToTheWholeBasement() {
        evict(false);
        LeafNode leaf = leafWithChunks();
        int b = basementWithChunks(leaf);
        ChunkMap map = leaf.chunkMap(b);
        byte[] key = keyInChunk(leaf, b, 1);
        ByteBuf bytes = Unpooled.buffer(map.serializedSize());
        map.write(bytes);
        bytes.setLong(1, map.stamp + 1); // as if the basement had been stored again since
        leaf.chunkSlots.get(b).set(ChunkMap.read(bytes));
        cache.release(leaf, false);
        assertArrayEquals(atSnapshot.get(key), tree.get(key, snapshot));
        assertArrayEquals(newest.get(key), tree.get(key, Long.MAX_VALUE));
        assertTrue(cache.isCached(leaf.basements.get(b)), "the basement was read whole");
        assertTrue(leaf.chunkMap(b) != null && leaf.chunkMap(b).stamp == map.stamp,
                "the basement read gave the leaf its map again");
        assertModels();
    }

    @Test
    void aFlippedByteInAChunkIsACorruptionNamingFileAndBlock() throws IOException {
        evict(false);
        LeafNode leaf = leafWithChunks();
        int b = basementWithChunks(leaf);
        ChunkMap map = leaf.chunkMap(b);
        long block = leaf.basements.get(b);
        byte[] key = keyInChunk(leaf, b, 1);
        cache.release(leaf, false);
        long at = rig.file.blockOffset(block) + 32 + map.start(1) + 20;
        try (FileChannel ch = FileChannel.open(rig.file.path(), StandardOpenOption.READ, StandardOpenOption.WRITE)) {
            ByteBuffer one = ByteBuffer.allocate(1);
            ch.read(one, at);
            one.put(0, (byte) (one.get(0) ^ 0x40)).rewind();
            ch.write(one, at);
        }
        CorruptionException e = assertThrows(CorruptionException.class, () -> tree.get(key, Long.MAX_VALUE));
        assertNotNull(e.getMessage());
        assertTrue(e.getMessage().contains(rig.file.path().toString()), e.getMessage());
        assertTrue(e.getMessage().contains(Long.toString(block)), e.getMessage());
    }
}
