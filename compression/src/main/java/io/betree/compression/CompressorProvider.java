package io.betree.compression;

/**
 * Describes one codec to {@link Compressors}. The built-in codecs are providers too; additional
 * codecs are found with {@link java.util.ServiceLoader} (list the implementing class, which needs
 * a public no-argument constructor, in
 * {@code META-INF/services/io.betree.compression.CompressorProvider}).
 *
 * <p>Names and ids must be unique across all providers; a clash makes the registry unusable
 * rather than letting the same on-disk id mean two formats.
 */
public interface CompressorProvider {

    /** Lower-case codec name, equal to {@link BlockCompressor#name()} of the instances created. */
    String name();

    /** On-disk id (0..255), equal to {@link BlockCompressor#id()} of the instances created. */
    int id();

    /** Level used when none is given; it must pass {@link #validateLevel(int)}. */
    int defaultLevel();

    /**
     * Checks that {@code level} is supported.
     *
     * @throws IllegalArgumentException naming the valid levels if it is not
     */
    void validateLevel(int level);

    /** Creates a thread-safe compressor for a level that passed {@link #validateLevel(int)}. */
    BlockCompressor create(int level);
}
