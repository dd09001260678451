package io.betree.internal.memory;

import io.netty.buffer.AbstractByteBufAllocator;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.UnpooledByteBufAllocator;
import io.netty.buffer.UnpooledDirectByteBuf;
import io.netty.util.ResourceLeakDetector;
import java.nio.ByteBuffer;
import java.util.concurrent.Executor;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A pool of node buffers carved from native regions that a {@link Source} provides: on JDK 22+
 * {@code java.lang.foreign} arenas ({@link ForeignMemory}), which Netty's pool cannot draw on. It
 * has the shape of the Netty pool it stands in for, whose figures were measured: regions of 512 KiB
 * (chunks) in 64 pages of 8 KiB; a buffer of up to half a page takes a power-of-two slot in a page
 * shared with buffers of its size, a larger one a run of whole pages, and one larger than a chunk a
 * region of its own.
 *
 * <p>A chunk goes back to its source once its last buffer is freed, except one kept empty against
 * a burst. A run is taken from the chunk whose longest free run is the shortest that fits, so that
 * buffers crowd into few chunks and the others empty out, and within it from the shortest free run
 * that fits, so that long runs stay whole for large buffers; a page of slots goes back to its chunk
 * once empty (taking it again is a few bit operations; a kept one could hold a chunk alone).
 *
 * <p>Thread-safe: one lock, held for a few dozen bit operations; chunks are taken from and given
 * back to the source outside it. Buffers return to the pool when their reference count reaches
 * zero.
 */
final class SegmentPool {
    /** Where regions come from. */
    interface Source {
        /** A region of {@code bytes} bytes, zeroed; throws {@link OutOfMemoryError} if there is none. */
        Region allocate(int bytes);

        /** Gives back a region this source made; its buffer must not be used again. */
        void free(Region region);
    }

    /** A region of native memory and what its source needs to free it. */
    record Region(ByteBuffer buffer, Object handle) {
    }

    static final int PAGE_SIZE = 8192;
    static final int PAGES = 64;
    static final int CHUNK_SIZE = PAGE_SIZE * PAGES;
    /** The smallest slot; slots double up to half a page. */
    static final int MIN_SLOT = 64;
    private static final int MAX_SLOT = PAGE_SIZE / 2;
    private static final int SLOT_CLASSES = Integer.numberOfTrailingZeros(MAX_SLOT / MIN_SLOT) + 1;

    private final Source source;
    /** Chunks with a free page, by the length of their longest free run: heads of linked lists. */
    private final Chunk[] byLongestFreeRun = new Chunk[PAGES + 1];
    /** For each slot size, the pages of slots with room: heads of linked lists. */
    private final SlotPage[] withRoom = new SlotPage[SLOT_CLASSES];
    /** An empty chunk kept for the next request, or null. */
    private Chunk spare;
    /** Set when a request took the spare: the next one may then be made ahead. Guarded by this. */
    private boolean spareTaken;
    /** Whether a spare is being made ahead. Guarded by this. */
    private boolean refilling;
    /** Where a spare is made ahead of the request that needs it; null to make chunks on demand only. */
    private final Executor refiller;
    /** Bytes of every chunk and huge region held from the source. */
    private final AtomicLong heldBytes = new AtomicLong();

    /** A pool that takes a chunk from {@code source} only when a request needs one. */
    SegmentPool(Source source) {
        this(source, null);
    }

    /**
     * A pool that, each time a request takes its spare chunk, has {@code refiller} make the next
     * one ahead: the request after it then cuts its buffer at once instead of waiting for a C
     * allocation (in a cold point-miss probe under a 640 MiB process cap, 77 such waits took 40 ms
     * of a 340 ms phase). One spare chunk more is held at most.
     */
    SegmentPool(Source source, Executor refiller) {
        this.source = source;
        this.refiller = refiller;
    }

    /** Bytes this pool holds from its source: chunks, used or not, and huge regions. */
    long heldBytes() {
        return heldBytes.get();
    }

    /**
     * A buffer of exactly {@code capacity} bytes (its maximum too), writer index 0, contents
     * undefined; released through its reference count.
     */
    ByteBuf allocate(int capacity) {
        if (capacity <= 0) {
            throw new IllegalArgumentException("capacity " + capacity);
        }
        if (capacity > CHUNK_SIZE) {
            Region region = source.allocate(capacity);
            heldBytes.addAndGet(capacity);
            return LeakTracking.track(new PooledBuf(region.buffer(), capacity, null, 0, 0, null, 0, region));
        }
        while (true) {
            PooledBuf buf;
            boolean refill;
            synchronized (this) {
                buf = capacity <= MAX_SLOT ? takeSlot(capacity) : takeRun(capacity);
                refill = spareTaken && refiller != null && !refilling;
                refilling |= refill;
                spareTaken = false;
            }
            if (refill) {
                refiller.execute(this::refillSpare);
            }
            if (buf != null) {
                return LeakTracking.track(buf);
            }
            if (awaitRefill()) {
                continue; // the spare made ahead may serve this request
            }
            // No chunk has room: take one without holding the lock, which every allocation and
            // release waits for (the source may wait for the allocation thread, or for the JVM to
            // collect before it grants direct memory).
            offerAsSpare(newChunk());
        }
    }

    /** A chunk taken from the source, counted as held. */
    private Chunk newChunk() {
        Chunk fresh = new Chunk(source.allocate(CHUNK_SIZE));
        heldBytes.addAndGet(CHUNK_SIZE);
        return fresh;
    }

    /**
     * Keeps {@code fresh} as the spare, or gives it back when another thread's new chunk became
     * the spare first (that one may serve the request instead).
     */
    private void offerAsSpare(Chunk fresh) {
        synchronized (this) {
            if (spare == null) {
                spare = fresh;
                return;
            }
        }
        source.free(fresh.region);
        heldBytes.addAndGet(-CHUNK_SIZE);
    }

    /**
     * Makes a spare chunk ahead, on the refiller's thread. A failure is left for the request that
     * next finds no room, which then takes its chunk itself and sees it.
     */
    private void refillSpare() {
        try {
            offerAsSpare(newChunk());
        } catch (RuntimeException | OutOfMemoryError e) {
            // left for the next request (above)
        } finally {
            synchronized (this) {
                refilling = false; // after the spare is in place: a waiter then finds it
                notifyAll();
            }
        }
    }

    /** Waits while a spare is being made ahead; false, at once, if none is. */
    private synchronized boolean awaitRefill() {
        if (!refilling) {
            return false;
        }
        boolean interrupted = false;
        while (refilling) {
            try {
                wait();
            } catch (InterruptedException e) {
                interrupted = true; // the allocation goes on; the flag is passed on
            }
        }
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
        return true;
    }

    // ---- runs of pages ----

    /** A run of pages for {@code capacity} bytes, or null if no chunk has room for it. */
    private PooledBuf takeRun(int capacity) {
        int pages = (capacity + PAGE_SIZE - 1) / PAGE_SIZE;
        Chunk chunk = chunkWithRun(pages);
        if (chunk == null) {
            return null;
        }
        int first = takeRun(chunk, pages);
        return new PooledBuf(chunk.region.buffer(), capacity, chunk, first * PAGE_SIZE, pages, null, 0, null);
    }

    /** The chunk with the shortest longest free run of at least {@code pages}, the spare, or null. */
    private Chunk chunkWithRun(int pages) {
        for (int run = pages; run <= PAGES; run++) {
            if (byLongestFreeRun[run] != null) {
                return byLongestFreeRun[run];
            }
        }
        Chunk chunk = spare;
        spare = null;
        if (chunk != null) {
            link(chunk);
            spareTaken = true;
        }
        return chunk;
    }

    /**
     * Marks {@code pages} free pages in {@code chunk} used, at the start of its shortest free run
     * that holds them; returns the first page. The first run that fits may be a long one that a
     * larger buffer needs later while a shorter run would do; a cache of 56 KiB basements and
     * 100 KiB leaves (probes of cache variants since taken back) kept 12-26% of its chunks' pages
     * free. What this placement saves was not measured apart (the default iiBench with it: 231 s
     * against 246, docs/benchmarks.md).
     */
    private int takeRun(Chunk chunk, int pages) {
        int first = shortestRunOfZeros(chunk.usedPages, pages);
        unlink(chunk);
        chunk.usedPages |= runMask(first, pages);
        chunk.longestFreeRun = longestRunOfZeros(chunk.usedPages);
        link(chunk);
        return first;
    }

    /** Marks a run free; returns its chunk's region if that is now to go back to the source, else null. */
    private Region freeRun(Chunk chunk, int first, int pages) {
        long mask = runMask(first, pages);
        if ((chunk.usedPages & mask) != mask) {
            throw new IllegalStateException("pages " + first + "+" + pages + " of a chunk freed twice");
        }
        unlink(chunk);
        chunk.usedPages &= ~mask;
        chunk.longestFreeRun = longestRunOfZeros(chunk.usedPages);
        if (chunk.usedPages != 0) {
            link(chunk);
        } else if (spare == null) {
            spare = chunk;
        } else {
            return chunk.region;
        }
        return null;
    }

    private static long runMask(int first, int pages) {
        return pages == 64 ? -1L : ((1L << pages) - 1) << first;
    }

    /** Where the shortest run of at least {@code length} clear bits in {@code bits} starts; the chunk has one. */
    static int shortestRunOfZeros(long bits, int length) {
        long free = ~bits;
        int best = -1;
        int bestLength = Integer.MAX_VALUE;
        while (free != 0) {
            int start = Long.numberOfTrailingZeros(free);
            // Zeros shifted in above the top bit end the run there: at most 64 - start.
            int runLength = Long.numberOfTrailingZeros(~(free >>> start));
            if (runLength >= length && runLength < bestLength) {
                best = start;
                bestLength = runLength;
                if (runLength == length) {
                    break;
                }
            }
            free &= ~runMask(start, runLength);
        }
        if (best < 0) {
            throw new IllegalStateException("no run of " + length + " free pages in a chunk listed as having one");
        }
        return best;
    }

    /** The length of the longest run of clear bits in {@code bits}. */
    static int longestRunOfZeros(long bits) {
        long runs = ~bits;
        int length = 0;
        while (runs != 0) {
            runs &= runs >>> 1; // each round shortens every run of set bits by one
            length++;
        }
        return length;
    }

    private void link(Chunk chunk) {
        if (chunk.longestFreeRun == 0) {
            return; // full: found again when a buffer in it is freed
        }
        Chunk head = byLongestFreeRun[chunk.longestFreeRun];
        chunk.prev = null;
        chunk.next = head;
        if (head != null) {
            head.prev = chunk;
        }
        byLongestFreeRun[chunk.longestFreeRun] = chunk;
        chunk.linked = true;
    }

    private void unlink(Chunk chunk) {
        if (!chunk.linked) {
            return;
        }
        if (chunk.prev != null) {
            chunk.prev.next = chunk.next;
        } else {
            byLongestFreeRun[chunk.longestFreeRun] = chunk.next;
        }
        if (chunk.next != null) {
            chunk.next.prev = chunk.prev;
        }
        chunk.prev = null;
        chunk.next = null;
        chunk.linked = false;
    }

    // ---- slots within a page ----

    private static int slotClass(int capacity) {
        int slot = Math.max(MIN_SLOT, Integer.highestOneBit(capacity - 1) << 1);
        return Integer.numberOfTrailingZeros(slot / MIN_SLOT);
    }

    /** A slot for {@code capacity} bytes, or null if no page has one and no chunk has a free page. */
    private PooledBuf takeSlot(int capacity) {
        int cls = slotClass(capacity);
        SlotPage page = withRoom[cls];
        if (page == null) {
            Chunk chunk = chunkWithRun(1);
            if (chunk == null) {
                return null;
            }
            page = new SlotPage(chunk, takeRun(chunk, 1), MIN_SLOT << cls, cls);
            page.linkInto(withRoom);
        }
        int slot = page.take();
        if (page.free == 0) {
            page.unlinkFrom(withRoom);
        }
        return new PooledBuf(page.chunk.region.buffer(), capacity, page.chunk,
                page.page * PAGE_SIZE + slot * page.slotSize, 0, page, slot, null);
    }

    /** Frees a slot; returns a region to go back to the source, or null (as {@link #freeRun}). */
    private Region freeSlot(SlotPage page, int slot) {
        page.give(slot);
        if (page.free == 1) {
            page.linkInto(withRoom);
        }
        if (page.free == page.slots) {
            page.unlinkFrom(withRoom);
            return freeRun(page.chunk, page.page, 1);
        }
        return null;
    }

    private void giveBack(PooledBuf buf) {
        Region region;
        int bytes;
        if (buf.huge != null) {
            region = buf.huge;
            bytes = buf.capacityAtStart;
        } else {
            synchronized (this) {
                region = buf.slotPage != null ? freeSlot(buf.slotPage, buf.slot)
                        : freeRun(buf.chunk, buf.offset / PAGE_SIZE, buf.pages);
            }
            bytes = CHUNK_SIZE;
        }
        if (region != null) {
            source.free(region); // outside the lock: closing an arena stops every thread for a moment
            heldBytes.addAndGet(-bytes);
        }
    }

    /** A region of 64 pages; guarded by the pool's lock. */
    private static final class Chunk {
        final Region region;
        long usedPages;
        int longestFreeRun = PAGES;
        boolean linked;
        Chunk prev;
        Chunk next;

        Chunk(Region region) {
            this.region = region;
        }
    }

    /** One page cut into slots of one size; guarded by the pool's lock. */
    private static final class SlotPage {
        final Chunk chunk;
        final int page;
        final int slotSize;
        final int cls;
        final int slots;
        final long[] used;
        int free;
        boolean linked;
        SlotPage prev;
        SlotPage next;

        SlotPage(Chunk chunk, int page, int slotSize, int cls) {
            this.chunk = chunk;
            this.page = page;
            this.slotSize = slotSize;
            this.cls = cls;
            this.slots = PAGE_SIZE / slotSize;
            this.used = new long[(slots + 63) / 64];
            if (slots < 64) {
                used[0] = -1L << slots; // bits past the last slot never free
            }
            this.free = slots;
        }

        int take() {
            for (int w = 0; w < used.length; w++) {
                if (used[w] != -1L) {
                    int bit = Long.numberOfTrailingZeros(~used[w]);
                    used[w] |= 1L << bit;
                    free--;
                    return w * 64 + bit;
                }
            }
            throw new IllegalStateException("no free slot in a page listed as having one");
        }

        void give(int slot) {
            long bit = 1L << (slot & 63);
            if ((used[slot >>> 6] & bit) == 0) {
                throw new IllegalStateException("slot " + slot + " freed twice");
            }
            used[slot >>> 6] &= ~bit;
            free++;
        }

        void linkInto(SlotPage[] heads) {
            prev = null;
            next = heads[cls];
            if (next != null) {
                next.prev = this;
            }
            heads[cls] = this;
            linked = true;
        }

        void unlinkFrom(SlotPage[] heads) {
            if (!linked) {
                return;
            }
            if (prev != null) {
                prev.next = next;
            } else {
                heads[cls] = next;
            }
            if (next != null) {
                next.prev = prev;
            }
            prev = null;
            next = null;
            linked = false;
        }
    }

    /** A buffer over part of a chunk, or over a huge region, that returns it to the pool when released. */
    private final class PooledBuf extends UnpooledDirectByteBuf {
        final Chunk chunk;
        final int offset;
        final int pages;
        final SlotPage slotPage;
        final Region huge;
        final int capacityAtStart;
        final int slot;

        PooledBuf(ByteBuffer whole, int capacity, Chunk chunk, int offset, int pages, SlotPage slotPage, int slot,
                Region huge) {
            super(UnpooledByteBufAllocator.DEFAULT, whole.duplicate().limit(offset + capacity).position(offset),
                    capacity);
            this.chunk = chunk;
            this.offset = offset;
            this.pages = pages;
            this.slotPage = slotPage;
            this.slot = slot;
            this.huge = huge;
            this.capacityAtStart = capacity;
            clear(); // a wrapped buffer starts out readable to its end; a new one starts empty
        }

        /** A node buffer keeps its size: the pool's count and its slot depend on it. */
        @Override
        public ByteBuf capacity(int newCapacity) {
            if (newCapacity != capacityAtStart) {
                throw new UnsupportedOperationException("a pooled node buffer of " + capacityAtStart
                        + " bytes cannot become " + newCapacity);
            }
            return this;
        }

        @Override
        protected void deallocate() {
            super.deallocate();
            giveBack(this);
        }
    }

    /**
     * Netty's leak detection for this pool's buffers, when it is turned up past its default
     * ({@code -Dio.netty.leakDetection.level=advanced}, which samples, or {@code paranoid}, which
     * tracks every buffer, as the leak tests run): a buffer dropped unreleased is reported when
     * collected. Only the wrapping is used; this is not an allocator anyone asks for buffers.
     *
     * <p>Not at the default level, where Netty wraps one buffer in 128: every call site that had
     * seen only pool buffers and then met a wrapped one was deoptimized and compiled again, and
     * stayed bimorphic. In a 16-writer time series, 54 deoptimizations for a new class against
     * 10-18 without the wrapping, and the writers' root append (65-89 KB of compiled code)
     * compiled five times against twice (docs/benchmarks.md). The node memory's own count
     * ({@link NodeMemory}) still tells whether anything was not released.
     */
    private static final class LeakTracking extends AbstractByteBufAllocator {
        private LeakTracking() {
            super(true);
        }

        static ByteBuf track(ByteBuf buf) {
            return ResourceLeakDetector.getLevel().compareTo(ResourceLeakDetector.Level.SIMPLE) > 0
                    ? toLeakAwareBuffer(buf) : buf;
        }

        @Override
        protected ByteBuf newHeapBuffer(int initialCapacity, int maxCapacity) {
            throw new UnsupportedOperationException();
        }

        @Override
        protected ByteBuf newDirectBuffer(int initialCapacity, int maxCapacity) {
            throw new UnsupportedOperationException();
        }

        @Override
        public boolean isDirectBufferPooled() {
            return true;
        }
    }
}
