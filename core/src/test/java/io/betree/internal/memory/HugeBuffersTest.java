package io.betree.internal.memory;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Buffers larger than a pool chunk are rounded up to whole granules and reused once freed, within
 * a bound; the byte count of the memory that handed them out stays exact.
 */
class HugeBuffersTest {
    /**
     * Through {@link NodeMemory}: whole granules, an exact count, and an empty buffer whether or not
     * it was kept (the kept buffers are the process's, so other tests may have taken the room).
     */
    @Test
    void hugeBuffersComeInWholeGranulesEmptyAndCountedExactly() {
        NodeMemory memory = new NodeMemory();
        assertEquals((4 << 20) + HugeBuffers.GRANULE, HugeBuffers.roundUp((4 << 20) + 1000));
        ByteBuf first = memory.allocate((4 << 20) + 1000);
        // A fresh buffer has exactly the rounded size; one kept by an earlier test may be larger.
        assertTrue(first.capacity() >= HugeBuffers.roundUp((4 << 20) + 1000), "capacity " + first.capacity());
        assertEquals(0, first.capacity() % HugeBuffers.GRANULE);
        assertEquals(first.capacity(), memory.used());
        first.writeLong(42);
        memory.release(first);
        assertEquals(0, memory.used());
        ByteBuf second = memory.allocate(4 << 20);
        assertEquals(0, second.writerIndex(), "a buffer comes back empty, reused or not");
        assertTrue(second.capacity() >= 4 << 20);
        assertEquals(second.capacity(), memory.used());
        memory.release(second);
        assertEquals(0, memory.used());
    }

    @Test
    void aKeptBufferServesNoRequestMuchSmallerOrAnyLarger() {
        HugeBuffers huge = new HugeBuffers();
        ByteBuf buf = Unpooled.directBuffer(8 << 20, 8 << 20);
        try {
            assertTrue(huge.keep(buf, 1L << 30));
            assertNull(huge.take(2 << 20), "a quarter of the buffer would waste the rest");
            assertNull(huge.take((8 << 20) + 1));
            buf.writeLong(42);
            ByteBuf again = huge.take(7 << 20);
            assertSame(buf, again);
            assertEquals(0, again.writerIndex(), "a kept buffer comes back empty");
            assertNull(huge.take(7 << 20), "taken once only");
        } finally {
            buf.release();
        }
    }

    /** Kept buffers are all handed out at once, for a cache at its hard limit to free. */
    @Test
    void everyKeptBufferIsTakenOutAtOnceAndNoneIsKeptAfterwards() {
        HugeBuffers huge = new HugeBuffers();
        ByteBuf a = Unpooled.directBuffer(1 << 20, 1 << 20);
        ByteBuf b = Unpooled.directBuffer(2 << 20, 2 << 20);
        try {
            assertTrue(huge.keep(a, 1L << 30));
            assertTrue(huge.keep(b, 1L << 30));
            List<ByteBuf> all = huge.takeAll();
            assertEquals(2, all.size());
            assertTrue(all.contains(a) && all.contains(b));
            assertNull(huge.take(1 << 20), "nothing kept any more");
            assertEquals(0, huge.takeAll().size());
        } finally {
            a.release();
            b.release();
        }
    }

    /**
     * Through {@link NodeMemory}: a buffer it kept is freed by {@link NodeMemory#releaseKeptBuffers}
     * (kept buffers are the process's, so the count may include ones other tests left).
     */
    @Test
    void releasingKeptBuffersFreesThem() {
        NodeMemory memory = new NodeMemory();
        NodeMemory.releaseKeptBuffers();
        ByteBuf buf = memory.allocate(3 << 20);
        int capacity = buf.capacity();
        // Some node memory in use, so that the kept share (an eighth of it) has room for this one.
        List<ByteBuf> inUse = new ArrayList<>();
        for (int i = 0; i < 12; i++) {
            inUse.add(memory.allocate(3 << 20));
        }
        try {
            memory.release(buf);
            assertEquals(1, buf.refCnt(), "kept, not freed");
            assertTrue(NodeMemory.releaseKeptBuffers() >= capacity);
            assertEquals(0, buf.refCnt(), "freed");
        } finally {
            inUse.forEach(memory::release);
            NodeMemory.releaseKeptBuffers();
        }
        assertEquals(0, memory.used());
    }

    @Test
    void fewBuffersAreKept() {
        HugeBuffers huge = new HugeBuffers();
        List<ByteBuf> bufs = new ArrayList<>();
        int kept = 0;
        try {
            for (int i = 0; i < 20; i++) {
                ByteBuf b = Unpooled.directBuffer(1 << 20, 1 << 20);
                bufs.add(b);
                if (huge.keep(b, 1L << 30)) {
                    kept++;
                }
            }
            assertTrue(kept > 0 && kept < 20, kept + " of 20 kept");
            ByteBuf again = huge.take(1 << 20);
            assertNotNull(again);
        } finally {
            bufs.forEach(ByteBuf::release);
        }
    }

    @Test
    void keptBuffersStayWithinAnEighthOfTheMemoryInUse() {
        HugeBuffers huge = new HugeBuffers();
        ByteBuf buf = Unpooled.directBuffer(1 << 20, 1 << 20);
        try {
            assertFalse(huge.keep(buf, 4L << 20), "1 MiB is over an eighth of 4 MiB in use");
            assertTrue(huge.keep(buf, 8L << 20));
        } finally {
            buf.release();
        }
    }
}
