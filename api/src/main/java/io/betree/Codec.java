package io.betree;

import io.betree.compression.BlockCompressor;
import io.betree.compression.Compressors;

/**
 * Block compression algorithms an index can use. The algorithm's id is stored with every block,
 * so an index can change codec between opens and old blocks stay readable.
 */
public enum Codec {
    /** No compression. */
    NONE("none"),
    /** LZ4: fastest, modest ratio. */
    LZ4("lz4"),
    /** Zstandard: a good ratio at high speed (levels 1-22, default 3). */
    ZSTD("zstd"),
    /** XZ/LZMA2: the best ratio, slowest (presets 0-9, default 6). */
    XZ("xz"),
    /** Deflate (zlib): widely compatible (levels 0-9, default 6). */
    DEFLATE("deflate");

    private final String algorithm;

    Codec(String algorithm) {
        this.algorithm = algorithm;
    }

    /** The algorithm's lower-case name in the compression registry. */
    public String algorithm() {
        return algorithm;
    }

    /** The codec's default level. */
    public int defaultLevel() {
        return Compressors.defaultLevel(algorithm);
    }

    BlockCompressor compressor(int level) {
        return Compressors.create(algorithm, level);
    }

    /** The codec whose {@link #algorithm()} is {@code name} (case-insensitive). */
    public static Codec byName(String name) {
        for (Codec c : values()) {
            if (c.algorithm.equalsIgnoreCase(name)) {
                return c;
            }
        }
        throw new IllegalArgumentException("unknown codec '" + name + "'; known: none, lz4, zstd, xz, deflate");
    }
}
