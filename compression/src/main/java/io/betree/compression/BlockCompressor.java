package io.betree.compression;

import java.nio.ByteBuffer;

/**
 * Compresses and decompresses whole blocks. One instance per codec and level; implementations are
 * thread-safe (any per-call state is thread-local or allocated per call).
 *
 * <p>Buffers may be heap or direct. Each method reads {@code src} from its position to its limit
 * and writes {@code dst} from its position; on return both positions have advanced past the bytes
 * consumed and produced. The {@link #id()} is stored with every block on disk and never changes
 * for a given algorithm, so any level of a codec decompresses with the same instance.
 *
 * <p>When a method throws, the positions of both buffers are left unchanged; the bytes of
 * {@code dst} between its position and limit may have been overwritten.
 *
 * @see Compressors
 */
public interface BlockCompressor {

    /** Stable on-disk identifier of the algorithm (0..255). */
    int id();

    /** Lower-case algorithm name, for example {@code "zstd"}; used for lookup by name. */
    String name();

    /** Compression level this instance compresses with (algorithm specific; 0 when not applicable). */
    int level();

    /**
     * Upper bound of the compressed size of {@code srcLength} input bytes.
     *
     * @throws IllegalArgumentException if {@code srcLength} is negative or the bound does not fit
     *     in an {@code int}
     */
    int maxCompressedLength(int srcLength);

    /**
     * Compresses all remaining bytes of {@code src} into {@code dst}.
     *
     * @return the number of bytes written to {@code dst}
     * @throws IllegalArgumentException if {@code dst} has less than
     *     {@link #maxCompressedLength(int)} bytes remaining
     */
    int compress(ByteBuffer src, ByteBuffer dst);

    /**
     * Decompresses all remaining bytes of {@code src}, which must hold exactly one block produced by
     * {@link #compress}, into {@code dst}; exactly {@code originalLength} bytes must result.
     *
     * <p>On success {@code src} has been consumed up to its limit and the position of {@code dst}
     * has advanced by {@code originalLength}. No memory is allocated in proportion to any size read
     * from {@code src}; only {@code originalLength}, which the caller bounds, sizes allocations.
     *
     * @throws CompressionFormatException if the input is malformed or does not decompress to
     *     exactly {@code originalLength} bytes; never crashes the JVM on malformed input
     * @throws IllegalArgumentException if {@code originalLength} is negative or {@code dst} has
     *     less than {@code originalLength} bytes remaining
     */
    void decompress(ByteBuffer src, ByteBuffer dst, int originalLength);
}
