package io.betree.internal.tree;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.locks.ReentrantLock;

/**
 * The chunk maps ({@link ChunkMap}) of the basements a tree wrote last, by block number: a
 * basement's write cannot reach its leaf (a basement does not know its leaf, and the leaf may be
 * written before or after it), so it leaves its map here, where the leaf's next write and the point
 * reads of the basement find it. Holds the newest {@link #CAPACITY} maps; an older one falls back
 * to what the leaf's block holds, which a chunk read checks by its stamp.
 *
 * <p>Thread-safe.
 */
final class RecentChunkMaps {
    /**
     * Maps kept: some 150 bytes of heap each (a 64 KiB basement has about eight chunks). They
     * live long enough to reach the old generation: 1,024 of them raised OffHeapMemoryTest's peak
     * heap on JDK 25 from 55 to 61-64 MiB (its bound is 64), 512 to 57-60. With 256, a checkpoint
     * of ChunkReadTest's tree wrote more basements than the table kept before their leaves, and a
     * fifth of its hits read the basement whole (docs/benchmarks.md).
     */
    static final int CAPACITY = 512;

    private final ReentrantLock lock = new ReentrantLock();
    private final LinkedHashMap<Long, byte[]> maps = new LinkedHashMap<>(256, 0.75f, false) {
        @Override
        protected boolean removeEldestEntry(Map.Entry<Long, byte[]> eldest) {
            return size() > CAPACITY;
        }
    };

    /** Records {@code entry} as the map of the newest stored version of basement {@code block}. */
    void put(long block, byte[] entry) {
        lock.lock();
        try {
            maps.remove(block); // to the youngest end
            maps.put(block, entry);
        } finally {
            lock.unlock();
        }
    }

    /** The map of the newest version of basement {@code block} written lately, or null. */
    byte[] get(long block) {
        lock.lock();
        try {
            return maps.get(block);
        } finally {
            lock.unlock();
        }
    }
}
