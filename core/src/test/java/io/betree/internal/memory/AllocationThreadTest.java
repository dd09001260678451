package io.betree.internal.memory;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.buffer.ByteBuf;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * Allocations on callers' threads go through the allocation threads: results and failures come
 * back to the caller, and an interrupt loses neither the memory nor the caller's interrupt flag.
 */
class AllocationThreadTest {
    @Test
    void aCallersAllocationIsMadeOnTheAllocationThread() {
        assertFalse(EngineThreads.allocatesDirectly());
        String[] where = new String[1];
        AllocationThread.allocate(() -> where[0] = Thread.currentThread().getName());
        assertEquals("betree-allocator", where[0]);
        NodeMemory memory = new NodeMemory();
        // Within a pool chunk: larger buffers may be kept ones of a larger size (HugeBuffers).
        ByteBuf buf = memory.allocate(256 << 10);
        assertEquals(256 << 10, buf.capacity());
        assertEquals(256 << 10, memory.used());
        memory.release(buf);
        assertEquals(0, memory.used());
    }

    @Test
    void buffersLargerThanAChunkHaveAThreadOfTheirOwn() {
        String[] where = new String[2];
        AllocationThread.allocateHuge(() -> where[0] = Thread.currentThread().getName());
        AllocationThread.allocate(() -> where[1] = Thread.currentThread().getName());
        assertEquals("betree-allocator-huge", where[0]);
        assertEquals("betree-allocator", where[1]);
    }

    @Test
    void failuresReachTheCaller() {
        IllegalStateException thrown = new IllegalStateException("no room");
        assertSame(thrown, assertThrows(IllegalStateException.class, () -> AllocationThread.allocate(() -> {
            throw thrown;
        })));
        assertThrows(OutOfMemoryError.class, () -> AllocationThread.allocate(() -> {
            throw new OutOfMemoryError("direct buffer memory");
        }));
    }

    @Test
    void anInterruptedCallerStillGetsItsMemoryAndKeepsItsInterrupt() {
        NodeMemory memory = new NodeMemory();
        Thread.currentThread().interrupt();
        try {
            ByteBuf buf = memory.allocate(4096);
            assertTrue(Thread.currentThread().isInterrupted(), "the interrupt must be passed on");
            memory.release(buf);
        } finally {
            Thread.interrupted();
        }
        assertEquals(0, memory.used());
    }

    @Test
    void theEnginesOwnThreadsAreDaemonsItKnows() throws Exception {
        CompletableFuture<Boolean> onEngine = new CompletableFuture<>();
        Thread t = EngineThreads.newDaemon(() -> onEngine.complete(EngineThreads.allocatesDirectly()), "test-engine");
        assertTrue(t.isDaemon());
        t.start();
        assertTrue(onEngine.get(10, TimeUnit.SECONDS));
        t.join();
    }
}
