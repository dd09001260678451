package io.betree.internal.memory;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import java.lang.management.ManagementFactory;
import java.nio.ByteBuffer;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Off-heap memory for nodes: pooled direct buffers from one allocator shared by every environment
 * of the process, with a byte count per environment so that the node cache can hold its budget.
 * The allocator is {@link SegmentPool}, over {@code java.lang.foreign} arenas on JDK 22 and later
 * and over the JVM's direct buffers before; Netty's pool on request ({@link #KIND}).
 *
 * <p>Thread-safe. Buffers handed out must be given back through {@link #release(ByteBuf)} so the
 * count stays exact; Netty's leak detector reports any buffer that is dropped instead.
 */
public final class NodeMemory {

    private static final int PAGE_SIZE = 8192;
    private static final int MAX_ORDER = 6;

    /**
     * Netty's pool, used with {@code betree.nodeMemory=netty} only ({@link #SEGMENTS} otherwise,
     * which has the same shape). One pool per process: chunks are shared, so many small
     * environments do not each hold chunks. No per-thread caches: they would keep memory for threads that are gone (an environment's
     * evictor after close), and nodes are large enough that the arenas serve them well. Chunks are
     * 512 KiB (8 KiB pages, order 6): a chunk returns to the OS only when every buffer in it is
     * gone, and with 4 MiB chunks a random-insert load left the pool 2-2.5x larger than the
     * buffers it held; at 512 KiB it is about 1.25x. Buffers over 512 KiB (whole-node images,
     * large message buffers) are allocated and freed one by one, outside the chunks.
     */
    private static final PooledByteBufAllocator POOL = new PooledByteBufAllocator(true, 0,
            Math.max(1, Math.min(4, Runtime.getRuntime().availableProcessors())), PAGE_SIZE, MAX_ORDER, 0, 0, false);
    /** The pool's chunk size: larger buffers are each a C allocation of their own. */
    private static final int CHUNK_SIZE = PAGE_SIZE << MAX_ORDER;

    /**
     * Where node memory comes from, set by the system property {@code betree.nodeMemory}:
     * {@code arena} ({@code java.lang.foreign}, JDK 22+: no JVM limit counts it, so no JVM option is
     * needed for any cache size), {@code direct} (the JVM's direct buffers, counted against
     * {@code -XX:MaxDirectMemorySize}), both through {@link SegmentPool}, or {@code netty} (Netty's
     * pool over direct buffers, {@link #POOL}). By default arenas where the JDK has them, else
     * direct buffers.
     */
    static final String KIND = kind(System.getProperty("betree.nodeMemory", ""));

    private static String kind(String asked) {
        String kind = asked.isEmpty() ? (ForeignMemory.available() ? "arena" : "direct") : asked;
        // DirectMemory is looked at only when it may be used: its probe calls
        // sun.misc.Unsafe.invokeCleaner, which JDK 24 and later warn about on standard error.
        return switch (kind) {
            case "arena" -> ForeignMemory.available() ? kind : DirectMemory.available() ? "direct" : "netty";
            case "direct" -> DirectMemory.available() ? kind : "netty";
            case "netty" -> kind;
            default -> throw new IllegalArgumentException(
                    "betree.nodeMemory is \"" + asked + "\"; expected arena, direct or netty");
        };
    }

    /** The pool of {@link #KIND} arena or direct; null for netty. */
    private static final SegmentPool SEGMENTS = switch (KIND) {
        case "arena" -> segmentPool(new ForeignMemory());
        case "direct" -> segmentPool(new DirectMemory());
        default -> null;
    };

    /**
     * A pool over {@code source} whose chunks are taken on the allocation thread (for the reason
     * given at {@link #allocate}) while buffers within them are cut on the callers' threads: no
     * round trip to the allocation thread for each buffer. Against Netty's pool with that round
     * trip, a 30 M-row iiBench took 252 s instead of 302 and a 16-writer time series 23.9 s instead
     * of 29.3 (docs/benchmarks.md); a single-threaded cold-read probe showed no difference beyond
     * its noise.
     */
    private static SegmentPool segmentPool(SegmentPool.Source source) {
        return new SegmentPool(new SegmentPool.Source() {
            @Override
            public SegmentPool.Region allocate(int bytes) {
                // Huge buffers are already on their own allocation thread, as are the engine's
                // threads that allocate directly.
                return bytes > CHUNK_SIZE || EngineThreads.allocatesDirectly() ? source.allocate(bytes)
                        : AllocationThread.allocate(() -> source.allocate(bytes));
            }

            @Override
            public void free(SegmentPool.Region region) {
                source.free(region);
            }
        }, AllocationThread::later);
    }

    /** Freed buffers larger than a chunk, kept for reuse. */
    private static final HugeBuffers HUGE = new HugeBuffers();

    /** Bytes held by the buffers of every instance, to split the pool's overhead among them. */
    private static final AtomicLong ALL_USED = new AtomicLong();

    /** How often the pool's footprint is re-measured (Netty's pool walks its chunk lists for it). */
    private static final long FOOTPRINT_REFRESH_NANOS = 1_000_000L;

    private final AtomicLong used = new AtomicLong();
    private volatile long overheadShare;
    private volatile long footprintMeasuredAt = System.nanoTime() - FOOTPRINT_REFRESH_NANOS;

    /** Bytes currently held by buffers from this instance (by capacity). */
    public long used() {
        return used.get();
    }

    /**
     * Off-heap bytes this instance is answerable for: its buffers plus its share (in proportion to
     * its buffers) of what the pool holds beyond every instance's buffers, i.e. partly used
     * chunks. This is what the node cache keeps within its budget. Re-measured at most once a
     * millisecond, so it may lag a burst of allocations by that much.
     */
    public long footprint() {
        long now = System.nanoTime();
        if (now - footprintMeasuredAt >= FOOTPRINT_REFRESH_NANOS) {
            footprintMeasuredAt = now;
            long all = ALL_USED.get();
            long overhead = Math.max(0, poolBytes() - all);
            long mine = used.get();
            overheadShare = all <= 0 || mine <= 0 ? 0 : (long) (overhead * ((double) mine / all));
        }
        return used.get() + overheadShare;
    }

    /** Has the next {@link #footprint} measure again: the pool has just given memory back. */
    public void remeasureFootprint() {
        footprintMeasuredAt = System.nanoTime() - FOOTPRINT_REFRESH_NANOS;
    }

    /** Bytes held by the buffers of every instance in the process. */
    static long allUsed() {
        return ALL_USED.get();
    }

    /** Bytes of node memory the pool holds for every environment of the process, chunks included. */
    public static long poolBytes() {
        return SEGMENTS != null ? SEGMENTS.heldBytes() : POOL.metric().usedDirectMemory();
    }

    /** A buffer of exactly {@code size} bytes from the process's pool, on the calling thread. */
    private static ByteBuf take(int size) {
        // A fixed maximum capacity: a buffer that grew on its own would make the count wrong.
        return SEGMENTS != null ? SEGMENTS.allocate(size) : POOL.directBuffer(size, size);
    }

    /**
     * A direct buffer with room for {@code capacity} bytes, writer index 0. On a thread that is not
     * the engine's own, and for a buffer larger than a chunk on any thread, the pool is asked on
     * the allocation thread ({@link AllocationThread}): such a buffer is a C allocation of its own,
     * of any size, and when the engine's threads made them, each in the C allocator's arena for
     * that thread, the arenas held the freed ones' memory (resident size 300 MiB to 520 MiB in
     * four minutes of a 64 MiB-budget iiBench load while the pool held 75 MiB). A buffer larger
     * than a chunk is rounded up in size and may be one freed before ({@link HugeBuffers}). From
     * {@link SegmentPool} (the default) only its chunks are taken on the allocation thread.
     */
    public ByteBuf allocate(int capacity) {
        int size = Math.max(capacity, 16);
        ByteBuf buf;
        if (size > CHUNK_SIZE) {
            int huge = HugeBuffers.roundUp(size);
            buf = HUGE.take(huge);
            if (buf == null) {
                buf = AllocationThread.allocateHuge(() -> take(huge));
            }
        } else {
            // SegmentPool's own cut is never sent to the allocation thread: the chunk it may need
            // is taken there, and the thread would wait for itself.
            buf = SEGMENTS != null || EngineThreads.allocatesDirectly() ? take(size)
                    : AllocationThread.allocate(() -> take(size));
        }
        used.addAndGet(buf.capacity());
        ALL_USED.addAndGet(buf.capacity());
        return buf;
    }

    /** Grows {@code buf} so that {@code extra} more bytes can be written, keeping the count exact. */
    public ByteBuf ensureWritable(ByteBuf buf, int extra) {
        if (buf.writableBytes() >= extra) {
            return buf;
        }
        long needed = (long) buf.writerIndex() + extra;
        if (needed > Integer.MAX_VALUE - 8) {
            throw new IllegalStateException("node buffer would exceed 2 GiB");
        }
        int newCapacity = (int) Math.min(Integer.MAX_VALUE - 8, Math.max(needed, (long) buf.capacity() * 3 / 2));
        ByteBuf bigger = allocate(newCapacity);
        bigger.writeBytes(buf, buf.readerIndex(), buf.readableBytes());
        release(buf);
        return bigger;
    }

    /**
     * A view of {@code buf}'s whole capacity for absolute reads and writes, index for index, big-endian,
     * valid until {@code buf} is released. The hot loops of sorting, searching and merging read
     * through views: Netty checks bounds and the reference count on every accessor call, which
     * was a third of a flusher's time in a time-series load, while a JDK buffer's bounds check
     * compiles to almost nothing.
     */
    public static ByteBuffer view(ByteBuf buf) {
        return buf.nioBuffer(0, buf.capacity());
    }

    /** Returns {@code buf} to the pool; {@code null} is ignored. */
    public void release(ByteBuf buf) {
        if (buf != null) {
            used.addAndGet(-buf.capacity());
            ALL_USED.addAndGet(-buf.capacity());
            NativeHeapTrimmer.released(buf.capacity());
            if (buf.capacity() <= CHUNK_SIZE || buf.refCnt() != 1 || !HUGE.keep(buf, ALL_USED.get())) {
                buf.release();
            }
        }
    }

    /**
     * Gives back to the C allocator every freed buffer larger than a chunk kept for reuse
     * ({@link HugeBuffers}); returns the bytes given back. For a cache at its hard limit: kept
     * buffers count against every budget, and freeing them makes room at once, where evicting
     * means compressing and writing nodes. Thread-safe.
     */
    public static long releaseKeptBuffers() {
        long bytes = 0;
        RuntimeException failed = null;
        for (ByteBuf buf : HUGE.takeAll()) {
            bytes += buf.capacity();
            try {
                buf.release();
            } catch (RuntimeException e) {
                failed = failed == null ? e : failed; // the others are freed all the same
            }
        }
        if (failed != null) {
            throw failed;
        }
        return bytes;
    }

    /**
     * The most direct memory this JVM lets NIO buffers take: {@code -XX:MaxDirectMemorySize} when
     * set, otherwise the maximum heap size, which is the JVM's default for that limit.
     */
    public static long maxDirectMemory() {
        try {
            var bean = ManagementFactory.getPlatformMXBean(com.sun.management.HotSpotDiagnosticMXBean.class);
            long configured = Long.parseLong(bean.getVMOption("MaxDirectMemorySize").getValue());
            if (configured > 0) {
                return configured;
            }
        } catch (RuntimeException | LinkageError e) {
            // Not a HotSpot JVM: fall back to the documented default below.
        }
        return Runtime.getRuntime().maxMemory();
    }

    /**
     * Whether node memory lies outside the JVM's direct-memory limit: when it comes from
     * {@code java.lang.foreign} arenas (JDK 22+, the default there), and with Netty's pool on JDK
     * 24+ with {@code -Dio.netty.maxDirectMemory=0}, where Netty allocates through memory segments
     * that the limit does not count.
     */
    public static boolean uncappedByJvm() {
        return KIND.equals("arena") || KIND.equals("netty") && Runtime.version().feature() >= 24
                && "0".equals(System.getProperty("io.netty.maxDirectMemory"));
    }
}
