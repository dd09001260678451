package io.betree;

import io.betree.internal.memory.NodeMemory;
import io.betree.internal.storage.StorageEnv;
import io.betree.internal.tree.UpdateList;
import java.time.Duration;
import java.time.InstantSource;
import java.util.Collections;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;

/**
 * Settings of an {@link Environment}. Immutable: each setter returns a new instance.
 *
 * <pre>{@code EnvironmentOptions.defaults().cacheBytes(256L << 20).durability(Durability.SYNC)}</pre>
 */
public final class EnvironmentOptions {
    /** Default node cache budget: 128 MiB. */
    public static final long DEFAULT_CACHE_BYTES = 128L << 20;
    /** Smallest accepted cache budget: 4 MiB (indexes with default options adapt their node size to it). */
    public static final long MIN_CACHE_BYTES = 4L << 20;
    /** Default heap share of one transaction's pending writes: 8 MiB. */
    public static final long DEFAULT_TRANSACTION_MEMORY_BYTES = 8L << 20;

    private final long cacheBytes;
    private final StorageEnv storage;
    private final Durability durability;
    private final Duration syncInterval;
    private final Duration checkpointInterval;
    private final long logSegmentBytes;
    private final long transactionMemoryBytes;
    /** The budget shared with other environments, or null for one of this environment's own. */
    private final MemoryBudget memoryBudget;
    /** Update functions by name; unmodifiable. */
    private final Map<String, UpdateFunction> updateFunctions;
    /** What expiring rows are read against. */
    private final InstantSource clock;

    private EnvironmentOptions(long cacheBytes, StorageEnv storage, Durability durability, Duration syncInterval,
            Duration checkpointInterval, long logSegmentBytes, long transactionMemoryBytes, MemoryBudget memoryBudget,
            Map<String, UpdateFunction> updateFunctions, InstantSource clock) {
        this.cacheBytes = cacheBytes;
        this.storage = storage;
        this.durability = durability;
        this.syncInterval = syncInterval;
        this.checkpointInterval = checkpointInterval;
        this.logSegmentBytes = logSegmentBytes;
        this.transactionMemoryBytes = transactionMemoryBytes;
        this.memoryBudget = memoryBudget;
        this.updateFunctions = updateFunctions;
        this.clock = clock;
    }

    /**
     * The defaults: a 128 MiB cache (smaller when the JVM's direct-memory limit could not hold
     * it, but at least {@link #MIN_CACHE_BYTES}), {@link Durability#SYNC}, a checkpoint every 60
     * seconds, 64 MiB log segments, the platform's file system.
     */
    public static EnvironmentOptions defaults() {
        long fits = (NodeMemory.maxDirectMemory() - (8L << 20)) / 7 * 4;
        long cache = NodeMemory.uncappedByJvm() ? DEFAULT_CACHE_BYTES
                : Math.max(MIN_CACHE_BYTES, Math.min(DEFAULT_CACHE_BYTES, fits));
        return new EnvironmentOptions(cache, StorageEnv.defaultEnv(), Durability.SYNC,
                Duration.ofMillis(50), Duration.ofSeconds(60), 64L << 20, DEFAULT_TRANSACTION_MEMORY_BYTES, null,
                Map.of(), InstantSource.system());
    }

    /**
     * The byte budget of the off-heap node cache, shared by every index of the environment: a cap,
     * not a target (the evictor works from a little below it; writers wait past it). Nodes
     * live outside the Java heap, so this may exceed {@code -Xmx}: on JDK 22+ with no JVM option;
     * on JDK 17-21 the JVM's direct memory limit ({@code -XX:MaxDirectMemorySize}, by default the
     * heap size) must then be raised, see the README.
     *
     * @throws IllegalArgumentException if below {@link #MIN_CACHE_BYTES}
     */
    public EnvironmentOptions cacheBytes(long bytes) {
        if (bytes < MIN_CACHE_BYTES) {
            throw new IllegalArgumentException("cacheBytes " + bytes + " is below the minimum of " + MIN_CACHE_BYTES);
        }
        return new EnvironmentOptions(bytes, storage, durability, syncInterval, checkpointInterval, logSegmentBytes,
                transactionMemoryBytes, null, updateFunctions, clock);
    }

    /**
     * Makes the environment's node cache draw on {@code budget}, one cap shared with every other
     * environment opened with it (a stream processor opens a store per partition), instead of a
     * budget of its own; {@link #cacheBytes()} then gives the shared budget's size. A later
     * {@link #cacheBytes(long)} gives the environment a budget of its own again. Under memory
     * pressure an environment keeps at least an equal share of the budget; one that is busy takes
     * what idle ones do not use.
     */
    public EnvironmentOptions memoryBudget(MemoryBudget budget) {
        Objects.requireNonNull(budget, "budget");
        return new EnvironmentOptions(budget.bytes(), storage, durability, syncInterval, checkpointInterval,
                logSegmentBytes, transactionMemoryBytes, budget, updateFunctions, clock);
    }

    /** What a returned commit promises; default {@link Durability#SYNC}. */
    public EnvironmentOptions durability(Durability durability) {
        Objects.requireNonNull(durability, "durability");
        return new EnvironmentOptions(cacheBytes, storage, durability, syncInterval, checkpointInterval, logSegmentBytes,
                transactionMemoryBytes, memoryBudget, updateFunctions, clock);
    }

    /**
     * How often the log is synced under {@link Durability#ASYNC}; default 50 ms.
     *
     * @throws IllegalArgumentException if not positive
     */
    public EnvironmentOptions syncInterval(Duration interval) {
        Objects.requireNonNull(interval, "interval");
        if (interval.isNegative() || interval.isZero()) {
            throw new IllegalArgumentException("syncInterval must be positive, was " + interval);
        }
        return new EnvironmentOptions(cacheBytes, storage, durability, interval, checkpointInterval, logSegmentBytes,
                transactionMemoryBytes, memoryBudget, updateFunctions, clock);
    }

    /**
     * How often a checkpoint runs in the background; default 60 s. {@link Duration#ZERO} turns
     * periodic checkpoints off ({@link Environment#checkpoint()} and close still checkpoint).
     *
     * @throws IllegalArgumentException if negative
     */
    public EnvironmentOptions checkpointInterval(Duration interval) {
        Objects.requireNonNull(interval, "interval");
        if (interval.isNegative()) {
            throw new IllegalArgumentException("checkpointInterval must not be negative, was " + interval);
        }
        return new EnvironmentOptions(cacheBytes, storage, durability, syncInterval, interval, logSegmentBytes,
                transactionMemoryBytes, memoryBudget, updateFunctions, clock);
    }

    /**
     * Size at which the log moves to a new segment file; default 64 MiB, at least 1 MiB. Segments
     * wholly before the last checkpoint are deleted.
     */
    public EnvironmentOptions logSegmentBytes(long bytes) {
        if (bytes < (1L << 20)) {
            throw new IllegalArgumentException("logSegmentBytes must be at least 1 MiB, was " + bytes);
        }
        return new EnvironmentOptions(cacheBytes, storage, durability, syncInterval, checkpointInterval, bytes,
                transactionMemoryBytes, memoryBudget, updateFunctions, clock);
    }

    /**
     * How much heap one transaction's pending writes may take, about, before they move to a
     * temporary file in the environment's directory; default 8 MiB, at least 1 KiB. A transaction
     * of any size thus commits within a bounded heap: its reads still see its own writes, and its
     * commit streams them into the log and the indexes in bounded batches. Committing a transaction
     * that moved its writes holds other commits back for a moment that grows with its size (its
     * keys are checked against the commits made since it began).
     *
     * @throws IllegalArgumentException if below 1 KiB
     */
    public EnvironmentOptions transactionMemoryBytes(long bytes) {
        if (bytes < 1024) {
            throw new IllegalArgumentException("transactionMemoryBytes must be at least 1024, was " + bytes);
        }
        return new EnvironmentOptions(cacheBytes, storage, durability, syncInterval, checkpointInterval, logSegmentBytes,
                bytes, memoryBudget, updateFunctions, clock);
    }

    /**
     * The file layer the environment uses. The default is the platform's file system; tests pass a
     * wrapper that injects faults, through the test-jar's {@code StorageSeam}. Not public API.
     */
    EnvironmentOptions storage(StorageEnv storage) {
        return new EnvironmentOptions(cacheBytes, Objects.requireNonNull(storage, "storage"), durability, syncInterval,
                checkpointInterval, logSegmentBytes, transactionMemoryBytes, memoryBudget, updateFunctions, clock);
    }

    /**
     * Registers {@code function} under {@code name} (replacing one registered under that name), for
     * {@link Index#update}. Updates are stored with the name of their function, so every
     * environment that opens the directory must register the same functions under the same names:
     * opening one whose log holds an update of a name not registered fails, naming it.
     *
     * @throws IllegalArgumentException if the name is empty, longer than 255 bytes of UTF-8, or not
     *     well-formed Unicode
     */
    public EnvironmentOptions updateFunction(String name, UpdateFunction function) {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(function, "function");
        UpdateList.nameBytes(name);
        Map<String, UpdateFunction> more = new TreeMap<>(updateFunctions);
        more.put(name, function);
        return new EnvironmentOptions(cacheBytes, storage, durability, syncInterval, checkpointInterval, logSegmentBytes,
                transactionMemoryBytes, memoryBudget, Collections.unmodifiableMap(more), clock);
    }

    /**
     * The clock that row expiry ({@link Index#put(byte[], byte[], Duration)}, {@link IndexOptions#ttl})
     * is computed and read against; default {@link InstantSource#system()}. Tests pass a clock they
     * move by hand. Must be thread-safe and should not go backwards.
     */
    public EnvironmentOptions clock(InstantSource clock) {
        Objects.requireNonNull(clock, "clock");
        return new EnvironmentOptions(cacheBytes, storage, durability, syncInterval, checkpointInterval, logSegmentBytes,
                transactionMemoryBytes, memoryBudget, updateFunctions, clock);
    }

    /** The clock of row expiry. */
    public InstantSource clock() {
        return clock;
    }

    /** The update functions registered, by name (unmodifiable). */
    public Map<String, UpdateFunction> updateFunctions() {
        return updateFunctions;
    }

    /** The cache budget in bytes: the environment's own, or the shared {@link #memoryBudget()}'s. */
    public long cacheBytes() {
        return cacheBytes;
    }

    /** The budget shared with other environments, or null when the environment has one of its own. */
    public MemoryBudget memoryBudget() {
        return memoryBudget;
    }

    /** The durability of commits. */
    public Durability durability() {
        return durability;
    }

    /** The sync interval under {@link Durability#ASYNC}. */
    public Duration syncInterval() {
        return syncInterval;
    }

    /** The periodic checkpoint interval ({@link Duration#ZERO}: off). */
    public Duration checkpointInterval() {
        return checkpointInterval;
    }

    /** The log segment size. */
    public long logSegmentBytes() {
        return logSegmentBytes;
    }

    /** The heap share of one transaction's pending writes. */
    public long transactionMemoryBytes() {
        return transactionMemoryBytes;
    }

    /** The file layer. */
    StorageEnv storage() {
        return storage;
    }
}
