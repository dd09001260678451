package io.betree.internal.cache;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.betree.internal.memory.NodeMemory;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** {@link NodeCache#prefetch}: a block read ahead is cached unpinned, once, and pinned later without a read. */
class NodeCachePrefetchTest {
    private static final int BLOCK_BYTES = 16 << 10;

    @Test
    void aPrefetchedBlockIsPinnedWithoutAnotherRead() {
        NodeMemory memory = new NodeMemory();
        NodeCacheConcurrencyTest.Store store = new NodeCacheConcurrencyTest.Store(memory);
        store.images.put(1L, new byte[BLOCK_BYTES]);
        NodeCache cache = new NodeCache(store, memory, 64L * BLOCK_BYTES);
        EntryLoader<NodeCacheConcurrencyTest.Counter> loader =
                (b, data) -> new NodeCacheConcurrencyTest.Counter(b, data, memory);
        try {
            assertFalse(cache.isCached(1));
            cache.prefetch(1, loader);
            assertTrue(cache.isCached(1));
            assertEquals(1, cache.stats().misses());
            cache.prefetch(1, loader);
            assertEquals(1, cache.stats().misses(), "a cached block is not read again");
            NodeCacheConcurrencyTest.Counter pinned = cache.pin(1, NodeCacheConcurrencyTest.Counter.class, loader);
            assertEquals(1, cache.stats().misses(), "the pin found the block read ahead");
            assertSame(pinned, cache.pinIfCached(1));
            cache.release(pinned, false);
            cache.release(pinned, false);
        } finally {
            cache.releaseAll();
        }
        assertEquals(0, memory.used(), "every entry's memory went back");
    }

    /** Prefetches and pins of the same blocks at once: one entry each, no memory left over. */
    @Test
    void prefetchesRacingWithPinsCacheOneEntry() throws Exception {
        NodeMemory memory = new NodeMemory();
        NodeCacheConcurrencyTest.Store store = new NodeCacheConcurrencyTest.Store(memory);
        int blocks = 200;
        for (long b = 0; b < blocks; b++) {
            store.images.put(b, new byte[BLOCK_BYTES]);
        }
        NodeCache cache = new NodeCache(store, memory, 4L * blocks * BLOCK_BYTES);
        EntryLoader<NodeCacheConcurrencyTest.Counter> loader =
                (b, data) -> new NodeCacheConcurrencyTest.Counter(b, data, memory);
        try {
            List<CompletableFuture<Void>> work = new ArrayList<>();
            for (int t = 0; t < 4; t++) {
                boolean prefetching = t % 2 == 0;
                work.add(CompletableFuture.runAsync(() -> {
                    for (long b = 0; b < blocks; b++) {
                        if (prefetching) {
                            cache.prefetch(b, loader);
                        } else {
                            cache.release(cache.pin(b, NodeCacheConcurrencyTest.Counter.class, loader), false);
                        }
                    }
                }));
            }
            for (CompletableFuture<Void> w : work) {
                w.get(30, TimeUnit.SECONDS);
            }
            assertEquals(blocks, cache.stats().entries());
            assertEquals((long) blocks * BLOCK_BYTES, cache.stats().bytes(), "each block accounted once");
        } finally {
            cache.releaseAll();
        }
        assertEquals(0, memory.used(), "the copies that lost a race went back too");
    }
}
