package io.betree.compression;

import java.io.IOException;
import java.io.OutputStream;
import java.nio.ByteBuffer;

/** Writes into a buffer's remaining space, advancing its position; fails instead of overflowing. */
final class ByteBufferOutputStream extends OutputStream {

    private final ByteBuffer buf;

    ByteBufferOutputStream(ByteBuffer buf) {
        this.buf = buf;
    }

    @Override
    public void write(int b) throws IOException {
        ensureRoom(1);
        buf.put((byte) b);
    }

    @Override
    public void write(byte[] b, int off, int len) throws IOException {
        ensureRoom(len);
        buf.put(b, off, len);
    }

    private void ensureRoom(int len) throws IOException {
        if (buf.remaining() < len) {
            throw new IOException("output exceeds the destination buffer");
        }
    }
}
