package io.betree.compression;

import java.nio.ByteBuffer;
import net.jpountz.lz4.LZ4Compressor;
import net.jpountz.lz4.LZ4Exception;
import net.jpountz.lz4.LZ4Factory;
import net.jpountz.lz4.LZ4SafeDecompressor;

/**
 * LZ4 block format (no frame, no checksum) through lz4-java's fastest available implementation.
 * Level 0 selects the fast compressor and levels 1 to 17 the high-compression (HC) one; all
 * levels produce the same format. Decompression always uses the bounds-checking safe decompressor.
 */
public final class Lz4Compressor extends AbstractBlockCompressor {

    /** On-disk identifier of LZ4 blocks. */
    public static final int ID = 1;

    /** Registry name of this codec. */
    public static final String NAME = "lz4";

    /** Default level: the fast compressor. */
    public static final int DEFAULT_LEVEL = 0;

    /** Highest level, the slowest high-compression setting. */
    public static final int MAX_LEVEL = 17;

    private static final LZ4Factory FACTORY = LZ4Factory.fastestInstance();
    private static final LZ4SafeDecompressor DECOMPRESSOR = FACTORY.safeDecompressor();

    private final LZ4Compressor compressor;

    /** Creates a codec with the fast compressor. */
    public Lz4Compressor() {
        this(DEFAULT_LEVEL);
    }

    /**
     * Creates a codec compressing at {@code level}.
     *
     * @throws IllegalArgumentException if {@code level} is outside 0..17
     */
    public Lz4Compressor(int level) {
        super(checkLevel(level));
        compressor = level == 0 ? FACTORY.fastCompressor() : FACTORY.highCompressor(level);
    }

    /** Returns {@code level} if valid, otherwise throws naming the valid range. */
    static int checkLevel(int level) {
        if (level < 0 || level > MAX_LEVEL) {
            throw new IllegalArgumentException("invalid lz4 level " + level
                    + "; valid levels are 0 (fast) and 1.." + MAX_LEVEL + " (high compression)");
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
        try {
            return compressor.maxCompressedLength(srcLength);
        } catch (IllegalArgumentException e) {
            return Long.MAX_VALUE;
        }
    }

    @Override
    int compressBlock(ByteBuffer in, ByteBuffer out) {
        return compressor.compress(in, in.position(), in.remaining(), out, out.position(), out.remaining());
    }

    @Override
    int decompressBlock(ByteBuffer in, ByteBuffer out) {
        try {
            return DECOMPRESSOR.decompress(in, in.position(), in.remaining(), out, out.position(), out.remaining());
        } catch (LZ4Exception e) {
            throw malformed("corrupt block", e);
        }
    }
}
