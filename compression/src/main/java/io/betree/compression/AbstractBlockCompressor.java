package io.betree.compression;

import java.nio.ByteBuffer;
import java.nio.ReadOnlyBufferException;
import java.util.Objects;

/**
 * Argument checking and buffer bookkeeping shared by the built-in codecs.
 *
 * <p>Subclasses work on private duplicates of the caller's buffers, so the caller's positions move
 * only after an operation has fully succeeded.
 */
abstract class AbstractBlockCompressor implements BlockCompressor {

    private final int level;

    AbstractBlockCompressor(int level) {
        this.level = level;
    }

    @Override
    public final int level() {
        return level;
    }

    @Override
    public final int maxCompressedLength(int srcLength) {
        if (srcLength < 0) {
            throw new IllegalArgumentException("negative source length: " + srcLength);
        }
        long bound = bound(srcLength);
        if (bound > Integer.MAX_VALUE) {
            throw new IllegalArgumentException(name() + " cannot compress " + srcLength + " bytes at once");
        }
        return (int) bound;
    }

    @Override
    public final int compress(ByteBuffer src, ByteBuffer dst) {
        Objects.requireNonNull(src, "src");
        Objects.requireNonNull(dst, "dst");
        int bound = maxCompressedLength(src.remaining());
        if (dst.remaining() < bound) {
            throw new IllegalArgumentException(name() + ": destination has " + dst.remaining()
                    + " bytes remaining, maxCompressedLength(" + src.remaining() + ") is " + bound);
        }
        if (dst.isReadOnly()) {
            throw new ReadOnlyBufferException();
        }
        int written = compressBlock(src.duplicate(), dst.duplicate());
        if (written < 0 || written > bound) {
            throw new IllegalStateException(name() + " produced " + written + " bytes, bound is " + bound);
        }
        src.position(src.limit());
        dst.position(dst.position() + written);
        return written;
    }

    @Override
    public final void decompress(ByteBuffer src, ByteBuffer dst, int originalLength) {
        Objects.requireNonNull(src, "src");
        Objects.requireNonNull(dst, "dst");
        if (originalLength < 0) {
            throw new IllegalArgumentException("negative original length: " + originalLength);
        }
        if (dst.remaining() < originalLength) {
            throw new IllegalArgumentException(name() + ": destination has " + dst.remaining()
                    + " bytes remaining, original length is " + originalLength);
        }
        if (dst.isReadOnly()) {
            throw new ReadOnlyBufferException();
        }
        ByteBuffer out = dst.duplicate();
        out.limit(out.position() + originalLength);
        int produced = decompressBlock(src.duplicate(), out);
        if (produced != originalLength) {
            throw malformed("decompressed to " + produced + " bytes, expected " + originalLength, null);
        }
        src.position(src.limit());
        dst.position(dst.position() + originalLength);
    }

    /** Upper bound of the output size for {@code srcLength} input bytes, possibly above int range. */
    abstract long bound(int srcLength);

    /**
     * Compresses {@code in} from position to limit into {@code out}, which has at least
     * {@code bound(in.remaining())} bytes remaining. Both buffers are private duplicates whose
     * positions may be left anywhere. Returns the number of bytes written from the initial
     * position of {@code out}.
     */
    abstract int compressBlock(ByteBuffer in, ByteBuffer out);

    /**
     * Decompresses all of {@code in} into {@code out}, whose remaining space is exactly the expected
     * original length; never writes past its limit. Both buffers are private duplicates. Returns the
     * number of bytes produced; throws {@link CompressionFormatException} for malformed input,
     * including input that is not consumed completely.
     */
    abstract int decompressBlock(ByteBuffer in, ByteBuffer out);

    /** Creates the exception reported for malformed input. */
    final CompressionFormatException malformed(String detail, Throwable cause) {
        return new CompressionFormatException(name() + ": " + detail, cause);
    }

    @Override
    public String toString() {
        return name() + "(level " + level + ")";
    }
}
