package io.betree.compression;

import java.nio.ByteBuffer;

/** A toy codec for registry tests: stores the bytes in reverse order under id 200. */
public final class ReversingCompressor implements BlockCompressor {

    @Override
    public int id() {
        return TestCodecProvider.ID;
    }

    @Override
    public String name() {
        return TestCodecProvider.NAME;
    }

    @Override
    public int level() {
        return 0;
    }

    @Override
    public int maxCompressedLength(int srcLength) {
        if (srcLength < 0) {
            throw new IllegalArgumentException("negative length");
        }
        return srcLength;
    }

    @Override
    public int compress(ByteBuffer src, ByteBuffer dst) {
        int n = src.remaining();
        if (dst.remaining() < n) {
            throw new IllegalArgumentException("destination too small");
        }
        for (int i = src.limit() - 1; i >= src.position(); i--) {
            dst.put(src.get(i));
        }
        src.position(src.limit());
        return n;
    }

    @Override
    public void decompress(ByteBuffer src, ByteBuffer dst, int originalLength) {
        if (src.remaining() != originalLength) {
            throw new CompressionFormatException("reverse-test: length mismatch");
        }
        compress(src, dst);
    }
}
