package io.betree.compression;

import java.io.InputStream;
import java.nio.ByteBuffer;

/** Reads the remaining bytes of a buffer, advancing its position; works for any kind of buffer. */
final class ByteBufferInputStream extends InputStream {

    private final ByteBuffer buf;

    ByteBufferInputStream(ByteBuffer buf) {
        this.buf = buf;
    }

    @Override
    public int read() {
        return buf.hasRemaining() ? buf.get() & 0xFF : -1;
    }

    @Override
    public int read(byte[] b, int off, int len) {
        if (len == 0) {
            return 0;
        }
        if (!buf.hasRemaining()) {
            return -1;
        }
        int n = Math.min(len, buf.remaining());
        buf.get(b, off, n);
        return n;
    }

    @Override
    public int available() {
        return buf.remaining();
    }
}
