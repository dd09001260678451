package io.betree.compression;

import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.util.concurrent.locks.ReentrantLock;
import org.tukaani.xz.LZMA2Options;
import org.tukaani.xz.SingleXZInputStream;
import org.tukaani.xz.XZ;
import org.tukaani.xz.XZOutputStream;

/**
 * One .xz stream (LZMA2 filter, CRC32 check) per block through XZ for Java, presets 0 to 9.
 *
 * <p>The LZMA2 dictionary is capped at the block size (but at least 4 KiB), which costs no ratio
 * and keeps encoder memory proportional to the block. Decompression enforces a memory limit
 * derived from the original length, so a stream announcing a large dictionary, including one
 * written by another xz encoder with an uncapped dictionary, is rejected as malformed instead of
 * triggering a large allocation.
 */
public final class XzCompressor extends AbstractBlockCompressor {

    /** On-disk identifier of xz blocks. */
    public static final int ID = 3;

    /** Registry name of this codec. */
    public static final String NAME = "xz";

    /** Default preset. */
    public static final int DEFAULT_LEVEL = 6;

    /** Highest preset. */
    public static final int MAX_LEVEL = 9;

    /** Stream header, block header, padding, check, index and stream footer, generously rounded. */
    private static final int CONTAINER_OVERHEAD = 128;

    /** Copy granularity between the streams and buffers without a usable backing array. */
    private static final int CHUNK = 64 * 1024;

    /** Creates a codec compressing with the default preset. */
    public XzCompressor() {
        this(DEFAULT_LEVEL);
    }

    /**
     * Creates a codec compressing with preset {@code level}.
     *
     * @throws IllegalArgumentException if {@code level} is outside 0..9
     */
    public XzCompressor(int level) {
        super(checkLevel(level));
    }

    /** Returns {@code level} if valid, otherwise throws naming the valid range. */
    static int checkLevel(int level) {
        if (level < 0 || level > MAX_LEVEL) {
            throw new IllegalArgumentException("invalid xz preset " + level + "; valid presets are 0.." + MAX_LEVEL);
        }
        return level;
    }

    /** Returns {@value #ID}. */
    @Override
    public int id() {
        return ID;
    }

    /** Returns {@value #NAME}. */
    @Override
    public String name() {
        return NAME;
    }

    @Override
    long bound(int srcLength) {
        // Incompressible data is stored in uncompressed LZMA2 chunks of at most 64 KiB with a
        // 3-byte header each; one more chunk may end early, and an end marker byte follows.
        long chunks = srcLength / (64 * 1024) + 2;
        return (long) srcLength + 3 * chunks + 1 + CONTAINER_OVERHEAD;
    }

    /**
     * XZ's encoder takes about eleven times its dictionary in heap (46 MB for a 4 MiB node at the
     * default preset), so blocks are compressed one at a time per process: a small heap must not
     * meet two encoders at once (the cache's evictor and a checkpoint, say). A lock rather than a
     * monitor: a virtual thread waiting for its turn must not pin its carrier.
     */
    private static final ReentrantLock ENCODER_TURN = new ReentrantLock();

    @Override
    int compressBlock(ByteBuffer in, ByteBuffer out) {
        ENCODER_TURN.lock();
        try {
            return compressAlone(in, out);
        } finally {
            ENCODER_TURN.unlock();
        }
    }

    private int compressAlone(ByteBuffer in, ByteBuffer out) {
        int start = out.position();
        try {
            LZMA2Options options = new LZMA2Options(level());
            options.setDictSize(Math.max(LZMA2Options.DICT_SIZE_MIN, Math.min(options.getDictSize(), in.remaining())));
            try (XZOutputStream xz = new XZOutputStream(new ByteBufferOutputStream(out), options, XZ.CHECK_CRC32)) {
                if (in.hasArray()) {
                    xz.write(in.array(), in.arrayOffset() + in.position(), in.remaining());
                } else {
                    byte[] chunk = new byte[Math.min(CHUNK, in.remaining())];
                    while (in.hasRemaining()) {
                        int n = Math.min(chunk.length, in.remaining());
                        in.get(chunk, 0, n);
                        xz.write(chunk, 0, n);
                    }
                }
                xz.finish();
            }
        } catch (IOException e) {
            throw new IllegalStateException("xz compression failed", e);
        }
        return out.position() - start;
    }

    @Override
    int decompressBlock(ByteBuffer in, ByteBuffer out) {
        int expected = out.remaining();
        try (InputStream xz = new SingleXZInputStream(new ByteBufferInputStream(in), memoryLimitKiB(expected))) {
            int produced = 0;
            byte[] chunk = out.hasArray() ? null : new byte[Math.min(CHUNK, Math.max(expected, 1))];
            while (produced < expected) {
                int n = chunk == null
                        ? xz.read(out.array(), out.arrayOffset() + out.position(), out.remaining())
                        : xz.read(chunk, 0, Math.min(chunk.length, out.remaining()));
                if (n <= 0) {
                    throw malformed("stream ends after " + produced + " bytes, expected " + expected, null);
                }
                if (chunk == null) {
                    out.position(out.position() + n);
                } else {
                    out.put(chunk, 0, n);
                }
                produced += n;
            }
            if (xz.read() != -1) {
                throw malformed("stream holds more than " + expected + " bytes", null);
            }
        } catch (IOException e) {
            throw malformed("corrupt stream: " + e, e);
        }
        if (in.hasRemaining()) {
            throw malformed(in.remaining() + " trailing bytes after the stream", null);
        }
        return expected;
    }

    /**
     * Decoder memory limit for a block of {@code originalLength} bytes: our encoder's dictionary is
     * at most the block size (at least 4 KiB), which the format rounds up by less than half.
     */
    private static int memoryLimitKiB(int originalLength) {
        long dictKiB = Math.max(originalLength, LZMA2Options.DICT_SIZE_MIN) / 1024L + 1;
        return (int) Math.min(Integer.MAX_VALUE, 256 + 2 * dictKiB);
    }
}
