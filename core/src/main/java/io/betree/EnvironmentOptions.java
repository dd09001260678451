package io.betree;

import io.betree.internal.storage.StorageEnv;
import java.util.Objects;

/**
 * Settings of an {@link Environment}. Immutable: each setter returns a new instance.
 *
 * <pre>{@code EnvironmentOptions.defaults().cacheBytes(256L << 20)}</pre>
 */
public final class EnvironmentOptions {
    /** Default node cache budget: 128 MiB. */
    public static final long DEFAULT_CACHE_BYTES = 128L << 20;
    /** Smallest accepted cache budget: 16 MiB. */
    public static final long MIN_CACHE_BYTES = 16L << 20;

    private final long cacheBytes;
    private final StorageEnv storage;

    private EnvironmentOptions(long cacheBytes, StorageEnv storage) {
        this.cacheBytes = cacheBytes;
        this.storage = storage;
    }

    /** The defaults: a 128 MiB cache on the platform's file system. */
    public static EnvironmentOptions defaults() {
        return new EnvironmentOptions(DEFAULT_CACHE_BYTES, StorageEnv.defaultEnv());
    }

    /**
     * The byte budget of the off-heap node cache, shared by every index of the environment. Nodes
     * live outside the Java heap, so this may exceed {@code -Xmx}; on JDK 17-23 the JVM's direct
     * memory limit ({@code -XX:MaxDirectMemorySize}, by default the heap size) must then be raised,
     * see the README.
     *
     * @throws IllegalArgumentException if below {@link #MIN_CACHE_BYTES}
     */
    public EnvironmentOptions cacheBytes(long bytes) {
        if (bytes < MIN_CACHE_BYTES) {
            throw new IllegalArgumentException("cacheBytes " + bytes + " is below the minimum of " + MIN_CACHE_BYTES);
        }
        return new EnvironmentOptions(bytes, storage);
    }

    /** The cache budget in bytes. */
    public long cacheBytes() {
        return cacheBytes;
    }

    /**
     * The file layer the environment uses. The default is the platform's file system; tests pass a
     * wrapper that injects faults. This is an internal seam and may change between versions.
     */
    public EnvironmentOptions storage(StorageEnv storage) {
        return new EnvironmentOptions(cacheBytes, Objects.requireNonNull(storage, "storage"));
    }

    /** The file layer. */
    public StorageEnv storage() {
        return storage;
    }
}
