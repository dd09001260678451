package io.betree.compression;

import java.nio.ByteBuffer;
import net.jpountz.lz4.LZ4Compressor;
import net.jpountz.lz4.LZ4Exception;
import net.jpountz.lz4.LZ4Factory;
import net.jpountz.lz4.LZ4SafeDecompressor;

/**
 * LZ4 block format (no frame, no checksum) through lz4-java: its JNI implementation where loading
 * it prints no warning, its pure-Java one otherwise (see {@link #nativeAccessAllowed()}); both
 * write and read the same blocks. Level 0 selects the fast compressor and levels 1 to 17 the
 * high-compression (HC) one; all levels produce the same format. Decompression always uses the
 * bounds-checking safe decompressor.
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

    /**
     * The implementation used. On JDK 24+ loading a JNI library without native access enabled
     * makes the JVM print a warning that only a command-line flag silences, so there the JNI
     * build is used only when the user has given that flag; otherwise the pure-Java safe build
     * (same block format, no warning) at some cost in speed: measured on JDK 25, an LZ4 load ran
     * at 34.3k rows/s with it against 49.3k rows/s with JNI. The choice is made once, when this
     * class initialises; if a library in the same module (zstd-jni on the class path) has already
     * caused the warning, the JVM has since enabled native access for that module and JNI is used.
     */
    static final LZ4Factory FACTORY = nativeAccessAllowed() ? LZ4Factory.fastestInstance() : LZ4Factory.safeInstance();

    private final LZ4Compressor compressor;
    private final LZ4SafeDecompressor decompressor;

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
        this(level, FACTORY);
    }

    /** Creates a codec compressing at {@code level} through {@code factory}; for tests. */
    Lz4Compressor(int level, LZ4Factory factory) {
        super(checkLevel(level));
        compressor = level == 0 ? factory.fastCompressor() : factory.highCompressor(level);
        decompressor = factory.safeDecompressor();
    }

    /**
     * Whether lz4-java may load its JNI library without the JVM printing a warning: on JDK 17-23
     * always; on JDK 24+ only when native access is enabled for lz4-java's module (the unnamed
     * module when it is on the class path), as {@code --enable-native-access=ALL-UNNAMED} does.
     * {@code Module.isNativeAccessEnabled()} exists from JDK 22, so it is called reflectively.
     */
    static boolean nativeAccessAllowed() {
        if (Runtime.version().feature() < 24) {
            return true;
        }
        try {
            Object enabled = Module.class.getMethod("isNativeAccessEnabled").invoke(LZ4Factory.class.getModule());
            return Boolean.TRUE.equals(enabled);
        } catch (ReflectiveOperationException | RuntimeException e) {
            return false;
        }
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
            return decompressor.decompress(in, in.position(), in.remaining(), out, out.position(), out.remaining());
        } catch (LZ4Exception e) {
            throw malformed("corrupt block", e);
        }
    }
}
