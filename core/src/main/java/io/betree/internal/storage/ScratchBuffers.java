package io.betree.internal.storage;

import java.nio.ByteBuffer;

/**
 * Per-thread direct scratch buffers for staging block I/O and compression.
 *
 * <p>Each thread keeps one buffer and grows it to the largest size it needed, rounded up to 64 KiB,
 * so steady-state reads and writes allocate nothing. A request above {@link #RETAINED_LIMIT} gets a
 * buffer of its own that is not kept, so a thread that once handled an unusually large block does
 * not pin that much memory for its lifetime. Direct buffers are used because the file channel and the
 * native codecs would otherwise copy heap arrays into (JDK-cached, per-thread) direct memory anyway.
 *
 * <p>A caller must be done with a buffer before it asks for another on the same thread.
 */
final class ScratchBuffers {

    /** Largest buffer a thread keeps between calls: 8 MiB plus room for a block header. */
    static final int RETAINED_LIMIT = (8 << 20) + 4096;

    private static final int GRANULE = 64 << 10;

    private static final ThreadLocal<ByteBuffer> CACHED = new ThreadLocal<>();

    private ScratchBuffers() {
    }

    /** A cleared buffer with capacity at least {@code minCapacity}, limit set to its capacity. */
    static ByteBuffer get(int minCapacity) {
        ByteBuffer buf = CACHED.get();
        if (buf != null && buf.capacity() >= minCapacity) {
            return buf.clear();
        }
        if (minCapacity > RETAINED_LIMIT) {
            return ByteBuffer.allocateDirect(minCapacity);
        }
        int capacity = (int) Math.min(RETAINED_LIMIT, ((long) minCapacity + GRANULE - 1) / GRANULE * GRANULE);
        buf = ByteBuffer.allocateDirect(capacity);
        CACHED.set(buf);
        return buf;
    }
}
