package io.betree.compression;

import java.nio.ByteBuffer;
import java.util.zip.DataFormatException;
import java.util.zip.Deflater;
import java.util.zip.Inflater;

/**
 * zlib-wrapped deflate streams (RFC 1950, with Adler-32 check) through {@link Deflater} and
 * {@link Inflater}, levels 0 (stored) to 9. Each call uses its own native stream, ended before
 * returning.
 */
public final class DeflateCompressor extends AbstractBlockCompressor {

    /** On-disk identifier of deflate blocks. */
    public static final int ID = 4;

    /** Registry name of this codec. */
    public static final String NAME = "deflate";

    /** Default level. */
    public static final int DEFAULT_LEVEL = 6;

    /** Highest level. */
    public static final int MAX_LEVEL = 9;

    /** Creates a codec compressing at the default level. */
    public DeflateCompressor() {
        this(DEFAULT_LEVEL);
    }

    /**
     * Creates a codec compressing at {@code level}.
     *
     * @throws IllegalArgumentException if {@code level} is outside 0..9
     */
    public DeflateCompressor(int level) {
        super(checkLevel(level));
    }

    /** Returns {@code level} if valid, otherwise throws naming the valid range. */
    static int checkLevel(int level) {
        if (level < 0 || level > MAX_LEVEL) {
            throw new IllegalArgumentException("invalid deflate level " + level + "; valid levels are 0.." + MAX_LEVEL);
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
        // zlib's compressBound() plus slack for zlib builds whose stored-block path differs.
        long n = srcLength;
        return n + (n >>> 12) + (n >>> 14) + (n >>> 25) + 13 + 32;
    }

    @Override
    int compressBlock(ByteBuffer in, ByteBuffer out) {
        Deflater deflater = new Deflater(level());
        try {
            int start = out.position();
            deflater.setInput(in);
            deflater.finish();
            while (!deflater.finished()) {
                if (deflater.deflate(out) == 0 && !deflater.finished()) {
                    throw new IllegalStateException("deflate made no progress with "
                            + out.remaining() + " bytes of output space left");
                }
            }
            return out.position() - start;
        } finally {
            deflater.end();
        }
    }

    @Override
    int decompressBlock(ByteBuffer in, ByteBuffer out) {
        Inflater inflater = new Inflater();
        try {
            int start = out.position();
            inflater.setInput(in);
            while (!inflater.finished()) {
                if (inflater.inflate(out) == 0 && !inflater.finished()) {
                    if (inflater.needsDictionary()) {
                        throw malformed("stream requires a preset dictionary", null);
                    }
                    if (inflater.needsInput()) {
                        throw malformed("truncated stream", null);
                    }
                    throw malformed(out.hasRemaining() ? "decoder made no progress"
                            : "stream holds more than " + (out.position() - start) + " bytes", null);
                }
            }
            if (inflater.getRemaining() != 0) {
                throw malformed(inflater.getRemaining() + " trailing bytes after the stream", null);
            }
            return out.position() - start;
        } catch (DataFormatException e) {
            throw malformed("corrupt stream: " + e.getMessage(), e);
        } finally {
            inflater.end();
        }
    }
}
