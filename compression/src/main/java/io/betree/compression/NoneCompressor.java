package io.betree.compression;

import java.nio.ByteBuffer;

/**
 * The identity codec: blocks are stored as they are. Its format has no header, so decompression
 * only checks that the stored length equals the original length.
 */
public final class NoneCompressor extends AbstractBlockCompressor {

    /** On-disk identifier of stored blocks. */
    public static final int ID = 0;

    /** Registry name of this codec. */
    public static final String NAME = "none";

    /** Creates the identity codec; its level is always 0. */
    public NoneCompressor() {
        super(0);
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
        return srcLength;
    }

    @Override
    int compressBlock(ByteBuffer in, ByteBuffer out) {
        int length = in.remaining();
        out.put(in);
        return length;
    }

    @Override
    int decompressBlock(ByteBuffer in, ByteBuffer out) {
        if (in.remaining() != out.remaining()) {
            throw malformed("stored block has " + in.remaining() + " bytes, expected " + out.remaining(), null);
        }
        int length = in.remaining();
        out.put(in);
        return length;
    }
}
