package io.betree.internal.cache;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.betree.compression.BlockCompressor;
import io.betree.internal.memory.NodeMemory;
import io.netty.buffer.ByteBuf;
import org.junit.jupiter.api.Test;

/**
 * A cache whose entries nobody changes (reads only): it keeps entries up to its quiet target, and
 * it evicts the entries that route reads (internal nodes, leaves) only after all others.
 */
class NodeCacheQuietTest {
    private static final int BLOCK_BYTES = 16 << 10;
    private static final long CAP = 2L << 20;
    private static final int ROUTES = 16;
    private static final int OTHERS = 300;

    @Test
    void readsStreamingThroughLeaveTheRoutesCached() {
        NodeMemory memory = new NodeMemory();
        NodeCacheConcurrencyTest.Store store = new NodeCacheConcurrencyTest.Store(memory);
        for (long b = 0; b < ROUTES + OTHERS; b++) {
            store.images.put(b, new byte[BLOCK_BYTES]);
        }
        NodeCache cache = new NodeCache(store, memory, CAP);
        EntryLoader<Block> loader = (b, data) -> new Block(b, data, memory, b < ROUTES);
        try {
            for (long b = 0; b < ROUTES; b++) {
                cache.unpin(cache.pin(b, Block.class, loader), false);
            }
            // Each block once, as random point reads over a large index use their basements: under
            // the plain clock the routes, read once too, would go with the rest.
            for (long b = ROUTES; b < ROUTES + OTHERS; b++) {
                cache.unpin(cache.pin(b, Block.class, loader), false);
            }
            CacheBudget writing = new CacheBudget(CAP);
            writing.changed();
            assertTrue(cache.stats().bytes() > writing.targetBytes(),
                    "a quiet cache holds more than the writers' target: " + cache.stats());
            long misses = cache.stats().misses();
            for (long b = 0; b < ROUTES; b++) {
                cache.unpin(cache.pin(b, Block.class, loader), false);
            }
            assertEquals(misses, cache.stats().misses(), "every route was still cached");
        } finally {
            cache.releaseAll();
        }
        assertEquals(0, memory.used(), "every entry's memory went back");
    }

    /** A block as read from the store; a route or not. */
    private static final class Block extends CacheEntry {
        private final NodeMemory memory;
        private final boolean route;
        private ByteBuf bytes;

        Block(long blockNumber, ByteBuf bytes, NodeMemory memory, boolean route) {
            super(blockNumber);
            this.bytes = bytes;
            this.memory = memory;
            this.route = route;
        }

        @Override
        protected boolean routesReads() {
            return route;
        }

        @Override
        public BlockCompressor compressor() {
            return null;
        }

        @Override
        public long memoryBytes() {
            return bytes.capacity();
        }

        @Override
        public int serializedSizeBound() {
            return BLOCK_BYTES;
        }

        @Override
        public void serialize(ByteBuf out) {
            out.writeBytes(bytes, 0, BLOCK_BYTES);
        }

        @Override
        protected void releaseMemory() {
            memory.release(bytes);
            bytes = null;
        }
    }
}
