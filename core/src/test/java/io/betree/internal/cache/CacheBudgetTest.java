package io.betree.internal.cache;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.betree.internal.cache.NodeCacheConcurrencyTest.Counter;
import io.betree.internal.cache.NodeCacheConcurrencyTest.Store;
import io.betree.internal.memory.NodeMemory;
import io.netty.buffer.ByteBuf;
import org.junit.jupiter.api.Test;

/** The eviction target below a cap: the room writers and write-backs get. */
class CacheBudgetTest {
    private static final long MIB = 1L << 20;
    private static final int BLOCK_BYTES = 16 << 10;

    @Test
    void theTargetLeavesAnEighthAtLeastSixteenMibAtMostAQuarter() {
        assertEquals(896 * MIB, new CacheBudget(1024 * MIB).busyTargetBytes(), "an eighth");
        assertEquals(80 * MIB, new CacheBudget(96 * MIB).busyTargetBytes(), "at least 16 MiB");
        assertEquals(48 * MIB, new CacheBudget(64 * MIB).busyTargetBytes(), "a quarter, 16 MiB");
        assertEquals(24 * MIB, new CacheBudget(32 * MIB).busyTargetBytes(), "at most a quarter");
        assertEquals(64 * MIB, new CacheBudget(64 * MIB).capBytes());
    }

    /**
     * With nothing dirty in any member, the evictors leave only a sixteenth below the cap; a dirty
     * entry in any member brings the eighth back, and its write-back or freeing takes it away again.
     */
    @Test
    void theRoomForWritesIsKeptOnlyWhileSomethingIsDirty() {
        CacheBudget budget = new CacheBudget(64 * MIB);
        NodeMemory memory = new NodeMemory();
        Store store = new Store(memory);
        store.images.put(1L, new byte[BLOCK_BYTES]);
        NodeCache quiet = new NodeCache(store, memory, budget);
        NodeCache busy = new NodeCache(new Store(memory), memory, budget);
        try {
            assertEquals(60 * MIB, budget.targetBytes(), "no member, nothing dirty");
            Counter read = quiet.pin(1L, Counter.class, (b, data) -> new Counter(b, data, memory));
            quiet.unpin(read, false);
            assertEquals(60 * MIB, budget.targetBytes(), "a block read is clean");

            ByteBuf data = memory.allocate(BLOCK_BYTES).writeZero(BLOCK_BYTES);
            Counter made = new Counter(2L, data, memory);
            busy.add(made);
            assertEquals(48 * MIB, budget.targetBytes(), "a new entry is dirty, in the other member");
            busy.unpin(made, false);
            busy.discard(pinned(busy, made));
            assertEquals(60 * MIB, budget.targetBytes(), "its block freed, nothing is dirty");

            read = quiet.pin(1L, Counter.class, (b, d) -> new Counter(b, d, memory));
            read.increment();
            quiet.unpin(read, true);
            assertEquals(48 * MIB, budget.targetBytes(), "a changed entry is dirty");
            quiet.beginCheckpoint(store.checkpointImages::clear);
            quiet.writeCheckpointImages();
            assertEquals(60 * MIB, budget.targetBytes(), "written back, it is clean again");
        } finally {
            quiet.releaseAll();
            busy.releaseAll();
        }
    }

    private static Counter pinned(NodeCache cache, Counter c) {
        return cache.pin(c.blockNumber(), Counter.class, (b, d) -> {
            throw new AssertionError("block " + b + " should be cached");
        });
    }

    @Test
    void aBudgetMustBePositive() {
        assertThrows(IllegalArgumentException.class, () -> new CacheBudget(0));
        assertThrows(IllegalArgumentException.class, () -> new CacheBudget(-1));
    }
}
