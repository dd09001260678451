package io.betree.internal.log;

import io.betree.internal.storage.FileHandle;
import java.io.IOException;
import java.nio.ByteBuffer;

/**
 * Buffered positional reads of one segment file of known size: a window of the file is kept in a
 * heap buffer and refilled when a request falls outside it, so a forward scan reads the file in large
 * chunks whatever the record sizes.
 */
final class SegmentWindow {

    /** Bytes read per refill, unless a single request needs more. */
    private static final int CHUNK = 1 << 20;

    private final FileHandle file;
    private final long size;
    private ByteBuffer buffer = ByteBuffer.allocate(0);
    /** File offset of {@code buffer}'s first byte. */
    private long start;

    /** A window over {@code file}, whose first {@code size} bytes are read. */
    SegmentWindow(FileHandle file, long size) {
        this.file = file;
        this.size = size;
    }

    /** The number of readable bytes. */
    long size() {
        return size;
    }

    /**
     * The bytes [{@code offset}, {@code offset + length}) as a buffer positioned at 0; valid until the
     * next call.
     *
     * @throws IllegalArgumentException if the range is not within the readable size
     */
    ByteBuffer bytes(long offset, int length) throws IOException {
        if (offset < 0 || length < 0 || offset + length > size) {
            throw new IllegalArgumentException("range [" + offset + ", +" + length + ") outside " + size + " bytes");
        }
        if (offset < start || offset + length > start + buffer.limit()) {
            fill(offset, length);
        }
        return buffer.slice((int) (offset - start), length);
    }

    private void fill(long offset, int length) throws IOException {
        int n = (int) Math.max(length, Math.min(CHUNK, size - offset));
        if (buffer.capacity() < n) {
            buffer = ByteBuffer.allocate(n);
        }
        buffer.clear().limit(n);
        start = offset;
        try {
            file.readFully(buffer, offset);
        } finally {
            buffer.flip();
        }
    }
}
