package io.betree.internal.memory;

import io.netty.buffer.ByteBuf;
import java.util.ArrayList;
import java.util.List;

/**
 * Freed buffers larger than a pool chunk (whole-node images, decompressed nodes), kept for the next
 * request of about their size instead of going back to the C allocator. Each such buffer is an
 * allocation of its own: under a process memory cap one took up to 42 ms on the allocation thread
 * (why, whether the C allocator or page faults waiting for the kernel to reclaim page cache, was
 * not measured), and smaller requests queued behind it (2,000 waits of 5-50 ms in a
 * 64 MiB-cache iiBench load, writers' among them; keeping up to six, the waits of 10 ms or more
 * fell from 1,484 to 152). A kept buffer stays in the pool's count, so the caches' budgets still
 * see it ({@link NodeMemory#footprint}); hence few are kept.
 *
 * <p>At most {@link #MAX_KEPT} buffers and {@link #MAX_KEPT_BYTES} bytes are kept, process-wide,
 * and no more than an eighth of the node memory in use: kept buffers count against the budgets,
 * and with 12 MiB kept two environments sharing a 24 MiB budget held 3 MiB of nodes between
 * them. A cache at its hard limit has them all freed before it waits for its evictor
 * ({@link NodeMemory#releaseKeptBuffers}). Thread-safe.
 */
final class HugeBuffers {
    /** Huge sizes are rounded up to this, so that buffers of one node size serve each other. */
    static final int GRANULE = 256 << 10;
    private static final int MAX_KEPT = 4;
    private static final long MAX_KEPT_BYTES = 12L << 20;
    /** A kept buffer serves a request up to this fraction larger than the request. */
    private static final double MAX_SLACK = 0.25;

    private final List<ByteBuf> kept = new ArrayList<>();
    private long keptBytes;

    /** {@code size} rounded up to a whole number of granules. */
    static int roundUp(int size) {
        long rounded = ((long) size + GRANULE - 1) / GRANULE * GRANULE;
        return (int) Math.min(rounded, Integer.MAX_VALUE - 8);
    }

    /**
     * The smallest kept buffer with room for {@code size} bytes and not much more, cleared, or
     * null: the caller then allocates one.
     */
    synchronized ByteBuf take(int size) {
        int best = -1;
        for (int i = 0; i < kept.size(); i++) {
            int capacity = kept.get(i).capacity();
            if (capacity >= size && capacity <= size * (1 + MAX_SLACK)
                    && (best < 0 || capacity < kept.get(best).capacity())) {
                best = i;
            }
        }
        if (best < 0) {
            return null;
        }
        ByteBuf buf = kept.remove(best);
        keptBytes -= buf.capacity();
        return buf.clear();
    }

    /** Takes every kept buffer out for the caller to release; none is counted as kept afterwards. */
    synchronized List<ByteBuf> takeAll() {
        List<ByteBuf> all = new ArrayList<>(kept);
        kept.clear();
        keptBytes = 0;
        return all;
    }

    /**
     * Keeps {@code buf} for reuse if there is room, with {@code inUse} bytes of node memory held in
     * the process; returns false if the caller must release it.
     */
    synchronized boolean keep(ByteBuf buf, long inUse) {
        if (kept.size() >= MAX_KEPT || keptBytes + buf.capacity() > Math.min(MAX_KEPT_BYTES, inUse / 8)) {
            return false;
        }
        kept.add(buf);
        keptBytes += buf.capacity();
        return true;
    }
}
