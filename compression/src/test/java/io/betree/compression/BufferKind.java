package io.betree.compression;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.ByteBuffer;

/**
 * The kinds of buffers a codec must handle. Every buffer made here starts at a non-zero position
 * and is surrounded by guard bytes (before the position and after the limit) that
 * {@link #assertGuardsIntact} checks afterwards.
 */
public enum BufferKind {
    /** A plain heap buffer: {@code arrayOffset() == 0}. */
    HEAP,
    /** A heap buffer sliced out of a larger array: {@code arrayOffset() > 0}. */
    HEAP_SLICE,
    /** A direct buffer. */
    DIRECT,
    /** A read-only heap buffer, which exposes no array; only valid as a source. */
    READ_ONLY;

    /** Bytes before the position. */
    static final int LEAD = 13;
    /** Bytes after the limit. */
    static final int TAIL = 11;
    /** Value of the guard bytes, also filling destinations before use. */
    static final byte GUARD = (byte) 0xA7;

    /** A buffer whose remaining bytes are {@code content}. */
    public ByteBuffer holding(byte[] content) {
        ByteBuffer buf = raw(content.length);
        ByteBuffer fill = buf.duplicate();
        fill.put(content);
        return this == READ_ONLY ? buf.asReadOnlyBuffer() : buf;
    }

    /** A writable buffer with exactly {@code size} bytes remaining, filled with guard bytes. */
    public ByteBuffer withRoom(int size) {
        if (this == READ_ONLY) {
            throw new IllegalStateException("a read-only buffer cannot be a destination");
        }
        return raw(size);
    }

    private ByteBuffer raw(int size) {
        int total = LEAD + size + TAIL;
        ByteBuffer whole;
        if (this == DIRECT) {
            whole = ByteBuffer.allocateDirect(total);
        } else if (this == HEAP_SLICE) {
            whole = ByteBuffer.wrap(new byte[total + 7], 7, total).slice();
        } else {
            whole = ByteBuffer.allocate(total);
        }
        for (int i = 0; i < total; i++) {
            whole.put(i, GUARD);
        }
        whole.position(LEAD).limit(LEAD + size);
        return whole;
    }

    /**
     * Asserts that the guard bytes of a buffer made by this class are unchanged; {@code limit} is
     * the limit the buffer was created with.
     */
    public static void assertGuardsIntact(ByteBuffer buffer, int limit, String what) {
        ByteBuffer buf = buffer.duplicate().clear();
        for (int i = 0; i < LEAD; i++) {
            assertEquals(GUARD, buf.get(i), what + ": byte " + i + " before the position was modified");
        }
        for (int i = limit; i < limit + TAIL; i++) {
            assertEquals(GUARD, buf.get(i), what + ": byte " + i + " after the limit was modified");
        }
    }
}
