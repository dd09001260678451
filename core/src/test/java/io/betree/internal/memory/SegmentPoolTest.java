package io.betree.internal.memory;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.buffer.ByteBuf;
import io.netty.util.IllegalReferenceCountException;
import java.lang.management.BufferPoolMXBean;
import java.lang.management.ManagementFactory;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledForJreRange;
import org.junit.jupiter.api.condition.JRE;

/**
 * The pool that stands in for Netty's on JDK 22+: buffers never overlap, every byte taken goes back
 * to the source, and chunks are packed. Runs on every JDK over direct buffers; the arena source on
 * JDK 22+ only.
 */
class SegmentPoolTest {

    /** Direct buffers as regions, counting what is taken and given back. */
    private static final class CountingSource implements SegmentPool.Source {
        final Map<ByteBuffer, Boolean> live = new IdentityHashMap<>();
        int allocations;

        @Override
        public synchronized SegmentPool.Region allocate(int bytes) {
            allocations++;
            ByteBuffer b = ByteBuffer.allocateDirect(bytes);
            live.put(b, true);
            return new SegmentPool.Region(b, b);
        }

        @Override
        public synchronized void free(SegmentPool.Region region) {
            assertTrue(live.remove(region.handle()) != null, "a region freed twice or never made");
        }
    }

    @Test
    void buffersOfEverySizeNeverOverlapAndAllMemoryGoesBack() {
        CountingSource source = new CountingSource();
        SegmentPool pool = new SegmentPool(source);
        SplittableRandom rnd = new SplittableRandom(42);
        List<ByteBuf> held = new ArrayList<>();
        for (int step = 0; step < 20_000; step++) {
            if (held.isEmpty() || rnd.nextInt(100) < 55) {
                int size = switch (rnd.nextInt(4)) {
                    case 0 -> 1 + rnd.nextInt(SegmentPool.MIN_SLOT * 2);
                    case 1 -> 1 + rnd.nextInt(SegmentPool.PAGE_SIZE);
                    case 2 -> 1 + rnd.nextInt(SegmentPool.CHUNK_SIZE);
                    default -> rnd.nextInt(50) == 0 ? SegmentPool.CHUNK_SIZE + 1 + rnd.nextInt(1 << 20)
                            : 1 + rnd.nextInt(64 << 10);
                };
                ByteBuf buf = pool.allocate(size);
                assertEquals(size, buf.capacity());
                assertEquals(size, buf.maxCapacity());
                assertEquals(0, buf.writerIndex());
                byte mark = (byte) step;
                while (buf.isWritable()) {
                    buf.writeByte(mark);
                }
                held.add(buf);
            } else {
                ByteBuf buf = held.remove(rnd.nextInt(held.size()));
                checkAndRelease(buf);
            }
        }
        for (ByteBuf buf : held) {
            checkAndRelease(buf);
        }
        assertTrue(pool.heldBytes() <= SegmentPool.CHUNK_SIZE, "one empty chunk at most is kept: " + pool.heldBytes());
        assertTrue(source.live.size() <= 1, source.live.size() + " regions still taken");
    }

    /** Checks that nothing else wrote into {@code buf}, then releases it. */
    private static void checkAndRelease(ByteBuf buf) {
        byte mark = buf.getByte(0);
        for (int i = 0; i < buf.capacity(); i++) {
            if (buf.getByte(i) != mark) {
                throw new AssertionError("byte " + i + " of a " + buf.capacity() + "-byte buffer was overwritten");
            }
        }
        assertTrue(buf.release());
    }

    @Test
    void runsArePackedIntoTheFullestChunkThatFits() {
        CountingSource source = new CountingSource();
        SegmentPool pool = new SegmentPool(source);
        List<ByteBuf> pages = new ArrayList<>();
        for (int i = 0; i < SegmentPool.PAGES; i++) {
            pages.add(pool.allocate(SegmentPool.PAGE_SIZE));
        }
        assertEquals(1, source.allocations, "64 pages fill one chunk");
        ByteBuf next = pool.allocate(SegmentPool.PAGE_SIZE);
        assertEquals(2, source.allocations);
        // Free two neighbouring pages of the first chunk: a two-page run goes there, not to the second.
        pages.get(10).release();
        pages.get(11).release();
        ByteBuf two = pool.allocate(2 * SegmentPool.PAGE_SIZE);
        assertEquals(2, source.allocations);
        two.release();
        next.release();
        for (int i = 0; i < SegmentPool.PAGES; i++) {
            if (i != 10 && i != 11) {
                pages.get(i).release();
            }
        }
        assertEquals(1, source.live.size(), "the second empty chunk goes back to the source");
        assertEquals(SegmentPool.CHUNK_SIZE, pool.heldBytes());
    }

    @Test
    void aBufferReleasedTwiceIsRefusedAndCountedOnce() {
        SegmentPool pool = new SegmentPool(new CountingSource());
        ByteBuf small = pool.allocate(100);
        ByteBuf other = pool.allocate(100);
        small.release();
        assertThrows(IllegalReferenceCountException.class, small::release);
        other.release();
        assertEquals(SegmentPool.CHUNK_SIZE, pool.heldBytes());
        assertThrows(IllegalArgumentException.class, () -> pool.allocate(0));
    }

    @Test
    void longestRunOfZeroBits() {
        assertEquals(64, SegmentPool.longestRunOfZeros(0));
        assertEquals(0, SegmentPool.longestRunOfZeros(-1L));
        assertEquals(63, SegmentPool.longestRunOfZeros(1L));
        assertEquals(63, SegmentPool.longestRunOfZeros(Long.MIN_VALUE));
        assertEquals(3, SegmentPool.longestRunOfZeros(~0b0111_0110L));
    }

    @Test
    void directRegionsGoBackToTheJvmAtOnce() {
        assertTrue(DirectMemory.available());
        BufferPoolMXBean direct = ManagementFactory.getPlatformMXBeans(BufferPoolMXBean.class).stream()
                .filter(b -> b.getName().equals("direct")).findFirst().orElseThrow();
        long before = direct.getMemoryUsed();
        DirectMemory memory = new DirectMemory();
        SegmentPool.Region region = memory.allocate(8 << 20);
        assertTrue(direct.getMemoryUsed() >= before + (8 << 20), "counted against the JVM's direct-memory limit");
        memory.free(region);
        assertTrue(direct.getMemoryUsed() < before + (8 << 20), "freed without waiting for a collection: "
                + before + " -> " + direct.getMemoryUsed());
    }

    @Test
    void theDefaultKindOfNodeMemoryIsArenasWhereTheJdkHasThem() {
        assertEquals(Runtime.version().feature() >= 22 ? "arena" : "direct", NodeMemory.KIND);
    }

    @Test
    @EnabledForJreRange(min = JRE.JAVA_22)
    void arenasServeTheNodeMemoryOfThisJvm() {
        assertTrue(ForeignMemory.available());
        assertTrue(NodeMemory.uncappedByJvm());
        ForeignMemory arenas = new ForeignMemory();
        SegmentPool.Region region = arenas.allocate(SegmentPool.CHUNK_SIZE);
        assertTrue(region.buffer().isDirect());
        assertEquals(SegmentPool.CHUNK_SIZE, region.buffer().capacity());
        assertFalse(region.buffer().get(SegmentPool.CHUNK_SIZE - 1) != 0, "zeroed");
        arenas.free(region);
    }
}
