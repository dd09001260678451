package io.betree.compression;

import java.util.List;
import java.util.concurrent.locks.ReentrantLock;

/**
 * Registry of the available codecs: the built-in ones ({@code none}, {@code lz4}, {@code zstd},
 * {@code xz}, {@code deflate}) and any {@link CompressorProvider} found by
 * {@link java.util.ServiceLoader} in the class loader that loaded this class. The registry is built
 * on first use; names are matched case-insensitively.
 */
public final class Compressors {

    private static volatile CodecRegistry registry;
    private static final ReentrantLock LOADING = new ReentrantLock();

    private Compressors() {
    }

    /**
     * The default-level instance of the codec stored on disk as {@code id}; it decompresses blocks
     * written at any level.
     *
     * @throws CompressionFormatException if no codec has that id (for example a corrupt header)
     * @throws IllegalStateException if the codec's provider cannot create a valid instance (the
     *     instance is created on first use, so a codec never used loads no library)
     */
    public static BlockCompressor forId(int id) {
        return registry().forId(id);
    }

    /**
     * A compressor for codec {@code name} at {@code level}.
     *
     * @throws IllegalArgumentException if the name is unknown (the message lists the valid names)
     *     or the level unsupported (the message gives the valid levels)
     */
    public static BlockCompressor create(String name, int level) {
        return registry().create(name, level);
    }

    /**
     * A compressor for codec {@code name} at its default level.
     *
     * @throws IllegalArgumentException if the name is unknown
     */
    public static BlockCompressor create(String name) {
        CodecRegistry r = registry();
        return r.create(name, r.defaultLevel(name));
    }

    /**
     * The default level of codec {@code name}.
     *
     * @throws IllegalArgumentException if the name is unknown
     */
    public static int defaultLevel(String name) {
        return registry().defaultLevel(name);
    }

    /** The names of all registered codecs, in id order; the list is immutable. */
    public static List<String> names() {
        return registry().names();
    }

    /**
     * The registry, loaded on first use. A provider clash is reported on every call as an
     * {@link IllegalStateException} rather than once as an initialisation error.
     */
    static CodecRegistry registry() {
        CodecRegistry r = registry;
        if (r == null) {
            // A lock, not a monitor: loading reads the class path, and a virtual thread must not
            // pin its carrier meanwhile.
            LOADING.lock();
            try {
                r = registry;
                if (r == null) {
                    r = CodecRegistry.load(Compressors.class.getClassLoader());
                    registry = r;
                }
            } finally {
                LOADING.unlock();
            }
        }
        return r;
    }
}
