package io.betree.internal.memory;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

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
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledForJreRange;
import org.junit.jupiter.api.condition.JRE;

/**
 * The node-memory pool: buffers never overlap, every byte taken goes back to the source, and chunks
 * are packed. Runs on every JDK over direct buffers; the arena source on JDK 22+ only.
 */
class SegmentPoolTest {

    /** Direct buffers as regions, counting what is taken and given back. */
    private static final class CountingSource implements SegmentPool.Source {
        final Map<ByteBuffer, Boolean> live = new IdentityHashMap<>();
        int allocations;
        long liveBytes;

        @Override
        public synchronized SegmentPool.Region allocate(int bytes) {
            allocations++;
            liveBytes += bytes;
            ByteBuffer b = ByteBuffer.allocateDirect(bytes);
            live.put(b, true);
            return new SegmentPool.Region(b, b);
        }

        @Override
        public synchronized void free(SegmentPool.Region region) {
            assertTrue(live.remove(region.handle()) != null, "a region freed twice or never made");
            liveBytes -= region.buffer().capacity();
        }
    }

    @Test
    void buffersOfEverySizeNeverOverlapAndAllMemoryGoesBack() {
        CountingSource source = new CountingSource();
        SegmentPool pool = new SegmentPool(source);
        churn(pool, new SplittableRandom(42), 20_000, () -> assertEquals(source.liveBytes, pool.heldBytes(),
                "the pool's count and what it holds from its source"));
        assertTrue(pool.heldBytes() <= SegmentPool.CHUNK_SIZE, "one empty chunk at most is kept: " + pool.heldBytes());
        assertTrue(source.live.size() <= 1, source.live.size() + " regions still taken");
    }

    @Test
    void threadsSharingThePoolNeverGetOverlappingBuffers() throws Exception {
        CountingSource source = new CountingSource();
        SegmentPool pool = new SegmentPool(source);
        churnOnThreads(pool, 4);
        assertEquals(source.liveBytes, pool.heldBytes());
        assertTrue(source.live.size() <= 1, source.live.size() + " regions still taken");
    }

    /**
     * Each time a request takes the spare chunk, the refiller makes the next one: the request that
     * then finds no room in its chunks cuts its buffer from that spare without a C allocation of
     * its own, and once every buffer is back at most one chunk is still held.
     */
    @Test
    void aSpareChunkIsMadeAheadOnTheRefillersThread() throws Exception {
        CountingSource source = new CountingSource();
        Map<String, Integer> byThread = new ConcurrentHashMap<>();
        SegmentPool.Source recording = new SegmentPool.Source() {
            @Override
            public SegmentPool.Region allocate(int bytes) {
                byThread.merge(Thread.currentThread().getName(), 1, Integer::sum);
                return source.allocate(bytes);
            }

            @Override
            public void free(SegmentPool.Region region) {
                source.free(region);
            }
        };
        ExecutorService refiller = Executors.newSingleThreadExecutor(r -> new Thread(r, "refiller"));
        try {
            SegmentPool pool = new SegmentPool(recording, refiller);
            List<ByteBuf> held = new ArrayList<>();
            for (int i = 0; i < 6; i++) { // a chunk each
                held.add(pool.allocate(SegmentPool.CHUNK_SIZE));
                refiller.submit(() -> { }).get(10, TimeUnit.SECONDS); // the spare is made meanwhile
            }
            String caller = Thread.currentThread().getName();
            assertEquals(1, byThread.getOrDefault(caller, 0), "the caller took only the first chunk itself");
            assertEquals(6, byThread.get("refiller"), "the refiller made every later one, and one spare");
            assertEquals(7L * SegmentPool.CHUNK_SIZE, pool.heldBytes());
            held.forEach(ByteBuf::release);
            assertEquals(SegmentPool.CHUNK_SIZE, pool.heldBytes(), "one empty chunk is kept");

            churnOnThreads(pool, 4);
            refiller.submit(() -> { }).get(10, TimeUnit.SECONDS);
            assertEquals(source.liveBytes, pool.heldBytes());
            assertTrue(source.live.size() <= 1, source.live.size() + " regions still taken");
        } finally {
            refiller.shutdown();
        }
    }

    private static void churnOnThreads(SegmentPool pool, int threads) throws Exception {
        List<CompletableFuture<Void>> running = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            SplittableRandom rnd = new SplittableRandom(t);
            running.add(CompletableFuture.runAsync(() -> churn(pool, rnd, 5_000, () -> { })));
        }
        for (CompletableFuture<Void> t : running) {
            t.get(60, TimeUnit.SECONDS);
        }
    }

    /**
     * Takes and releases {@code steps} buffers of every size at random, each filled with a mark of
     * its own, checking on release that nobody else wrote into it; {@code check} runs after each step.
     */
    private static void churn(SegmentPool pool, SplittableRandom rnd, int steps, Runnable check) {
        Map<ByteBuf, Byte> held = new IdentityHashMap<>();
        List<ByteBuf> order = new ArrayList<>();
        for (int step = 0; step < steps; step++) {
            if (order.isEmpty() || rnd.nextInt(100) < 55) {
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
                byte mark = (byte) rnd.nextInt();
                while (buf.isWritable()) {
                    buf.writeByte(mark);
                }
                held.put(buf, mark);
                order.add(buf);
            } else {
                ByteBuf buf = order.remove(rnd.nextInt(order.size()));
                checkAndRelease(buf, held.remove(buf));
            }
            check.run();
        }
        for (ByteBuf buf : order) {
            checkAndRelease(buf, held.get(buf));
        }
    }

    /** Checks that every byte of {@code buf} still holds {@code mark}, then releases it. */
    private static void checkAndRelease(ByteBuf buf, byte mark) {
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
        // Had the two pages gone to the second chunk, 63 would no longer fit there.
        ByteBuf rest = pool.allocate(63 * SegmentPool.PAGE_SIZE);
        assertEquals(2, source.allocations);
        assertThrows(UnsupportedOperationException.class, () -> rest.capacity(SegmentPool.PAGE_SIZE));
        rest.release();
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
    void shortestFittingRunOfZeroBits() {
        assertEquals(0, SegmentPool.shortestRunOfZeros(0, 64));
        assertEquals(0, SegmentPool.shortestRunOfZeros(0, 1));
        assertEquals(1, SegmentPool.shortestRunOfZeros(1L, 63));
        // Free: bits 1-4 (four), 6-7 (two), 9-63 (55). Two pages go to bits 6-7, not 1-2.
        long used = 0b1_0010_0001L;
        assertEquals(6, SegmentPool.shortestRunOfZeros(used, 2));
        assertEquals(1, SegmentPool.shortestRunOfZeros(used, 3));
        assertEquals(1, SegmentPool.shortestRunOfZeros(used, 4));
        assertEquals(9, SegmentPool.shortestRunOfZeros(used, 5));
        assertEquals(9, SegmentPool.shortestRunOfZeros(used, 55));
        assertEquals(0, SegmentPool.shortestRunOfZeros(Long.MIN_VALUE, 63));
        assertThrows(IllegalStateException.class, () -> SegmentPool.shortestRunOfZeros(used, 56));
    }

    @Test
    void directRegionsGoBackToTheJvmAtOnce() {
        assumeTrue(DirectMemory.available(), "this JVM refuses sun.misc.Unsafe.invokeCleaner");
        BufferPoolMXBean direct = ManagementFactory.getPlatformMXBeans(BufferPoolMXBean.class).stream()
                .filter(b -> b.getName().equals("direct")).findFirst().orElseThrow();
        long before = direct.getMemoryUsed();
        DirectMemory memory = new DirectMemory();
        SegmentPool.Region region = memory.allocate(64 << 20);
        assertTrue(direct.getMemoryUsed() >= before + (64 << 20), "counted against the JVM's direct-memory limit");
        memory.free(region);
        assertTrue(direct.getMemoryUsed() < before + (64 << 20), "freed without waiting for a collection: "
                + before + " -> " + direct.getMemoryUsed());
    }

    @Test
    void theDefaultKindOfNodeMemoryIsArenasWhereTheJdkHasThem() {
        assumeTrue(System.getProperty("betree.nodeMemory") == null, "node memory chosen by a system property");
        assertEquals(Runtime.version().feature() >= 22 ? "arena" : "direct", NodeMemory.KIND);
    }

    @Test
    @EnabledForJreRange(min = JRE.JAVA_22)
    void arenasServeTheNodeMemoryOfThisJvm() {
        assumeTrue(System.getProperty("betree.nodeMemory") == null, "node memory chosen by a system property");
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
