package io.betree.internal.storage;

import java.nio.ByteBuffer;

/**
 * Per-thread direct scratch buffers for staging block I/O and compression.
 *
 * <p>Each thread keeps one buffer, grown to the largest size it needed rounded up to a power of
 * two (at least 64 KiB), so steady-state reads and writes allocate nothing, and a thread outgrows
 * its buffer a few times at most: each outgrown buffer is garbage whose direct memory returns only
 * when the heap is collected. A request above {@link #RETAINED_LIMIT} gets a
 * buffer that is not kept afterwards, so a thread that once handled an unusually large block does not
 * pin that much memory for its lifetime. Direct buffers are used because the file channel and the
 * native codecs would otherwise copy heap arrays into (JDK-cached, per-thread) direct memory anyway.
 *
 * <p>Buffers are borrowed with {@link #take} and handed back with {@link #giveBack}. While one is
 * borrowed, a nested request on the same thread (a read's allocator callback that evicts and writes
 * a block, say) gets a different buffer, so it can never clobber the caller's bytes.
 */
final class ScratchBuffers {

    /** Largest buffer a thread keeps between calls: 8 MiB plus room for a block header. */
    static final int RETAINED_LIMIT = (8 << 20) + 4096;

    private static final int GRANULE = 64 << 10;

    private static final ThreadLocal<ByteBuffer> CACHED = new ThreadLocal<>();

    private ScratchBuffers() {
    }

    /** Borrows a cleared buffer with capacity at least {@code minCapacity}, limit at its capacity. */
    static ByteBuffer take(int minCapacity) {
        ByteBuffer buf = CACHED.get();
        if (buf != null && buf.capacity() >= minCapacity) {
            CACHED.set(null);
            return buf.clear();
        }
        if (minCapacity > RETAINED_LIMIT) {
            return ByteBuffer.allocateDirect(minCapacity);
        }
        int capacity = Math.min(RETAINED_LIMIT, Math.max(GRANULE, Integer.highestOneBit(minCapacity - 1) << 1));
        return ByteBuffer.allocateDirect(capacity);
    }

    /** Returns a buffer from {@link #take}; the thread keeps it if it is the largest it may keep. */
    static void giveBack(ByteBuffer buf) {
        if (buf.capacity() > RETAINED_LIMIT) {
            return;
        }
        ByteBuffer cached = CACHED.get();
        if (cached == null || cached.capacity() < buf.capacity()) {
            CACHED.set(buf);
        }
    }
}
