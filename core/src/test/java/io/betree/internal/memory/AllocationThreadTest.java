package io.betree.internal.memory;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.buffer.ByteBuf;
import org.junit.jupiter.api.Test;

/**
 * Buffers larger than a pool chunk are made on the allocation thread, smaller ones on the caller's:
 * results and failures come back to the caller, and an interrupt loses neither the memory nor the
 * caller's interrupt flag.
 */
class AllocationThreadTest {
    @Test
    void buffersLargerThanAChunkAreMadeOnTheAllocationThread() {
        String[] where = new String[1];
        AllocationThread.allocateHuge(() -> where[0] = Thread.currentThread().getName());
        assertEquals("betree-allocator-huge", where[0]);
        NodeMemory memory = new NodeMemory();
        ByteBuf small = memory.allocate(256 << 10); // within a pool chunk: exactly its size
        assertEquals(256 << 10, small.capacity());
        ByteBuf huge = memory.allocate(3 << 20);
        assertTrue(huge.capacity() >= 3 << 20);
        assertEquals(small.capacity() + huge.capacity(), memory.used());
        memory.release(small);
        memory.release(huge);
        assertEquals(0, memory.used());
    }

    @Test
    void failuresReachTheCaller() {
        IllegalStateException thrown = new IllegalStateException("no room");
        assertSame(thrown, assertThrows(IllegalStateException.class, () -> AllocationThread.allocateHuge(() -> {
            throw thrown;
        })));
        assertThrows(OutOfMemoryError.class, () -> AllocationThread.allocateHuge(() -> {
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
    void theEnginesOwnThreadsAreDaemons() {
        Thread t = EngineThreads.newDaemon(() -> { }, "test-engine");
        assertTrue(t.isDaemon());
        assertEquals("test-engine", t.getName());
    }
}
