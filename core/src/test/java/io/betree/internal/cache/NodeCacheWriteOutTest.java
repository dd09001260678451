package io.betree.internal.cache;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.betree.compression.BlockCompressor;
import io.betree.internal.memory.NodeMemory;
import io.netty.buffer.ByteBuf;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * The evictor serializes a dirty victim without the cache's lock: other blocks are pinned and
 * loaded meanwhile, and only a pin of the victim itself waits until its image is taken.
 */
class NodeCacheWriteOutTest {
    private static final int BLOCK_BYTES = 16 << 10;

    @Test
    void otherPinsGoOnWhileAVictimIsSerialized() throws Exception {
        NodeMemory memory = new NodeMemory();
        NodeCacheConcurrencyTest.Store store = new NodeCacheConcurrencyTest.Store(memory);
        store.images.put(1L, new byte[BLOCK_BYTES]);
        NodeCache cache = new NodeCache(store, memory, BLOCK_BYTES / 2);
        CountDownLatch serializing = new CountDownLatch(1);
        CountDownLatch letGo = new CountDownLatch(1);
        EntryLoader<Gated> loader = (b, data) -> new Gated(b, data, memory, null, null);
        try {
            ByteBuf words = memory.allocate(BLOCK_BYTES);
            words.writeZero(BLOCK_BYTES);
            Gated victim = new Gated(0, words, memory, serializing, letGo);
            victim.set(7);
            cache.add(victim);
            cache.release(victim, true);
            // Over the hard limit: this waits while the evictor takes the only entry, the victim.
            CompletableFuture<Void> roomWaiter = CompletableFuture.runAsync(cache::awaitRoom);
            assertTrue(serializing.await(10, TimeUnit.SECONDS), "the evictor began serializing the victim");

            CompletableFuture<Gated> other = CompletableFuture.supplyAsync(() -> cache.pin(1, Gated.class, loader));
            Gated loaded = other.get(10, TimeUnit.SECONDS);
            assertEquals(0, loaded.value(), "another block was loaded and pinned during the serialization");
            cache.release(loaded, false);

            CompletableFuture<Gated> same = CompletableFuture.supplyAsync(() -> cache.pin(0, Gated.class, loader));
            Thread.sleep(200);
            assertFalse(same.isDone(), "a pin of the victim waits until its image is taken");
            letGo.countDown();
            Gated again = same.get(10, TimeUnit.SECONDS);
            assertEquals(7, again.value(), "the victim's contents, cached or read back");
            cache.release(again, false);
            roomWaiter.get(10, TimeUnit.SECONDS);
            cache.releaseAll(); // waits for the eviction tasks, so for the victim's write
            assertEquals(7, NodeCacheConcurrencyTest.Store.count(store.images.get(0L)), "the image reached the store");
        } finally {
            letGo.countDown();
            cache.releaseAll();
        }
        assertEquals(0, memory.used(), "every entry's memory went back");
    }

    /** A block of equal words whose first serialization can be held at a gate. */
    private static final class Gated extends CacheEntry {
        private final NodeMemory memory;
        private final CountDownLatch serializing;
        private final CountDownLatch letGo;
        private ByteBuf words;

        Gated(long blockNumber, ByteBuf words, NodeMemory memory, CountDownLatch serializing, CountDownLatch letGo) {
            super(blockNumber);
            this.words = words;
            this.memory = memory;
            this.serializing = serializing;
            this.letGo = letGo;
        }

        long value() {
            return words.getLong(0);
        }

        void set(long value) {
            for (int i = 0; i < BLOCK_BYTES / 8; i++) {
                words.setLong(i * 8, value);
            }
        }

        @Override
        public BlockCompressor compressor() {
            return null;
        }

        @Override
        public long memoryBytes() {
            return words.capacity();
        }

        @Override
        public int serializedSizeBound() {
            return BLOCK_BYTES;
        }

        @Override
        public void serialize(ByteBuf out) {
            if (serializing != null && letGo.getCount() > 0) {
                serializing.countDown();
                try {
                    letGo.await(30, TimeUnit.SECONDS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
            out.writeBytes(words, 0, BLOCK_BYTES);
        }

        @Override
        protected void releaseMemory() {
            memory.release(words);
            words = null;
        }
    }
}
