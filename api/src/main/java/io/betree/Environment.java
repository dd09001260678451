package io.betree;

import io.betree.internal.engine.Engine;
import io.betree.internal.engine.EngineSettings;
import io.betree.internal.engine.StoredIndex;
import io.betree.internal.memory.NodeMemory;
import io.betree.internal.storage.StorageEnv;
import io.betree.internal.tree.TreeConfig;
import io.betree.internal.txn.WriteOp;
import io.betree.internal.txn.spill.SpilledWrites;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;

/**
 * A directory holding any number of named {@link Index indexes} in one data file, a write-ahead
 * log, and one off-heap node cache shared by all indexes.
 *
 * <pre>{@code
 * try (Environment env = Environment.open(dir, EnvironmentOptions.defaults().cacheBytes(256L << 20))) {
 *     Index orders = env.openIndex("orders", IndexOptions.defaults().codec(Codec.LZ4));
 *     orders.put(key, value);
 * }
 * }</pre>
 *
 * <p>Durability: a commit is logged before it is applied and, under {@link Durability#SYNC}, on
 * disk before it returns. Checkpoints (periodic, on demand, at close) write the indexes' nodes so
 * that recovery, at the next open after a crash, replays only the log written since. A directory
 * can be open in only one environment at a time, in this process or any other.
 *
 * <p>Thread-safe. {@link #close()} is idempotent.
 */
public final class Environment implements AutoCloseable {
    /**
     * Direct memory kept free beside the cache for compression and I/O scratch buffers.
     */
    private static final long DIRECT_MEMORY_HEADROOM = 8L << 20;

    private final Engine engine;
    private final EnvironmentOptions options;
    private final Map<Integer, Index> handles = new ConcurrentHashMap<>();

    private final RegisteredFunctions functions;

    private Environment(Engine engine, EnvironmentOptions options, RegisteredFunctions functions) {
        this.engine = engine;
        this.options = options;
        this.functions = functions;
    }

    /** Opens {@code directory} with default options; see {@link #open(Path, EnvironmentOptions)}. */
    public static Environment open(Path directory) {
        return open(directory, EnvironmentOptions.defaults());
    }

    /**
     * Opens the environment in {@code directory}, creating the directory and an empty environment
     * when absent, and recovering committed work from the log after a crash.
     *
     * @throws NullPointerException if an argument is null
     * @throws IllegalArgumentException if the cache does not fit the JVM's direct memory limit
     * @throws DirectoryInUseException if the directory is already open, in this process or another
     * @throws CorruptionException if the stored files are damaged or are not betree files
     * @throws BetreeIOException if the files cannot be created or read
     */
    public static Environment open(Path directory, EnvironmentOptions options) {
        Objects.requireNonNull(directory, "directory");
        Objects.requireNonNull(options, "options");
        return open(directory, options, options.storage());
    }

    /** Opens through {@code storage}; the test seam (see the test-jar's {@code StorageSeam}). */
    static Environment open(Path directory, EnvironmentOptions options, StorageEnv storage) {
        Objects.requireNonNull(directory, "directory");
        Objects.requireNonNull(options, "options");
        checkDirectMemory(options.cacheBytes());
        Durability d = options.durability();
        RegisteredFunctions functions = new RegisteredFunctions(options.updateFunctions(), options.clock());
        EngineSettings settings = new EngineSettings(options.cacheBytes(), d == Durability.SYNC,
                d == Durability.ASYNC ? options.syncInterval() : null, options.checkpointInterval(),
                options.logSegmentBytes(), options.memoryBudget() == null ? null : options.memoryBudget().internal(),
                functions);
        try {
            return new Environment(Engine.open(directory, storage, settings), options, functions);
        } catch (io.betree.internal.fault.BetreeException e) {
            throw Failures.translate(e);
        }
    }

    private static void checkDirectMemory(long cacheBytes) {
        if (NodeMemory.uncappedByJvm()) {
            return;
        }
        long limit = NodeMemory.maxDirectMemory();
        long needed = directMemoryNeeded(cacheBytes);
        if (needed > limit) {
            throw new IllegalArgumentException("cacheBytes of " + (cacheBytes >> 20) + " MiB needs "
                    + (needed >> 20) + " MiB of direct memory but the JVM allows " + (limit >> 20)
                    + " MiB; start the JVM with -XX:MaxDirectMemorySize=" + ((needed + (1 << 20) - 1) >> 20)
                    + "m, " + (Runtime.version().feature() >= 22
                            ? "leave node memory in arenas (no -Dbetree.nodeMemory), which need no flag,"
                            : "run on JDK 22+, where node memory needs no flag,")
                    + " or choose a smaller cache");
        }
    }

    /**
     * Direct memory a cache of {@code cacheBytes} may take: 7/4 of it (the pool's fragmentation and
     * nodes pinned past the budget: a 256 MiB cache was measured holding up to 416 MB of pooled
     * memory under random inserts) plus scratch buffers.
     */
    static long directMemoryNeeded(long cacheBytes) {
        return cacheBytes / 4 * 7 + DIRECT_MEMORY_HEADROOM;
    }

    /** Opens or creates the index {@code name} with default options. */
    public Index openIndex(String name) {
        return openIndex(name, IndexOptions.defaults());
    }

    /**
     * Opens the index {@code name}, creating it when absent. An existing index keeps the node size,
     * basement size and fanout it was created with; the codec given here applies to nodes created
     * from now on (older blocks stay readable: each block names its codec). Opening the same name
     * again returns the same {@link Index}.
     *
     * @throws NullPointerException if an argument is null
     * @throws IllegalArgumentException if the name is empty or longer than 255 bytes, or the shape
     *     set does not fit (basement larger than half a node, node larger than an eighth of the
     *     cache); sizes left unset adapt to the cache ({@link IndexOptions})
     * @throws IllegalStateException if the environment is closed
     */
    public Index openIndex(String name, IndexOptions options) {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(options, "options");
        checkOpen();
        int nameBytes = name.getBytes(StandardCharsets.UTF_8).length;
        if (nameBytes == 0 || nameBytes > 255) {
            throw new IllegalArgumentException("index name must be 1 to 255 UTF-8 bytes, was " + nameBytes);
        }
        IndexOptions shape = options.fittedTo(this.options.cacheBytes());
        if (shape.basementSize() * 2 > shape.nodeSize()) {
            throw new IllegalArgumentException("basementSize " + shape.basementSize()
                    + " must be at most half of nodeSize " + shape.nodeSize());
        }
        if ((long) shape.nodeSize() * IndexOptions.CACHE_NODES > this.options.cacheBytes()) {
            throw new IllegalArgumentException("nodeSize " + shape.nodeSize() + " needs a cache of at least "
                    + shape.nodeSize() * (long) IndexOptions.CACHE_NODES + " bytes (" + IndexOptions.CACHE_NODES
                    + " nodes); the cache holds " + this.options.cacheBytes() + " (leave nodeSize unset and it"
                    + " adapts)");
        }
        TreeConfig config = new TreeConfig(shape.nodeSize(), shape.basementSize(), shape.fanout(),
                shape.codec().compressor(shape.level()));
        try {
            Index index = handle(engine.openIndex(name, config));
            if (options.ttl() != null) {
                index.defaultTtl(options.ttl());
            }
            return index;
        } catch (io.betree.internal.fault.BetreeException e) {
            throw Failures.translate(e);
        }
    }

    private Index handle(StoredIndex stored) {
        return handles.computeIfAbsent(stored.id(), id -> new Index(this, stored));
    }

    /** Names of all indexes, in sorted order. */
    public List<String> indexNames() {
        checkOpen();
        List<String> names = new ArrayList<>();
        for (StoredIndex i : engine.indexes()) {
            names.add(i.name());
        }
        return names;
    }

    /**
     * Starts a transaction whose snapshot is the latest commit. The caller closes it.
     *
     * @throws IllegalStateException if the environment is closed
     */
    public Transaction begin() {
        try {
            return new Transaction(this, engine.beginSnapshot());
        } catch (io.betree.internal.fault.BetreeException e) {
            throw Failures.translate(e);
        }
    }

    /**
     * Makes everything committed so far durable in the data file, so that recovery need not replay
     * the log before this point, and deletes log segments no longer needed. Writers pause only
     * while it notes where it starts; it then writes the nodes as they were at that moment while
     * commits go on.
     *
     * @throws IllegalStateException if the environment is closed
     * @throws BetreeIOException if writing fails; the previous checkpoint stays intact, and the
     *     environment refuses further work until it is closed and reopened (which recovers
     *     everything committed from the log)
     */
    public void checkpoint() {
        try {
            engine.checkpoint();
        } catch (io.betree.internal.fault.BetreeException e) {
            throw Failures.translate(e);
        }
    }

    /**
     * Checks the invariants of every index's tree and of the data file's block bookkeeping (see
     * the engine's {@code checkInvariants}); commits wait meanwhile. For tests, through the
     * test-jar's {@code TreeChecks}; not public API.
     *
     * @throws CorruptionException naming the block and the broken invariant
     * @throws IllegalStateException if the environment is closed
     */
    void checkInvariants() {
        try {
            engine.checkInvariants();
        } catch (io.betree.internal.fault.BetreeException e) {
            throw Failures.translate(e);
        }
    }

    // ---- called by Index and Transaction ----

    void commit(long snapshotTs, List<WriteOp> ops) {
        commit(snapshotTs, ops, System.nanoTime(), () -> { });
    }

    /**
     * As {@link #commit(long, List)}, for a transaction begun at {@code startedNanos}
     * ({@link System#nanoTime}), running {@code whenVisible} once the commit is visible.
     */
    void commit(long snapshotTs, List<WriteOp> ops, long startedNanos, Runnable whenVisible) {
        try {
            engine.commit(snapshotTs, ops, startedNanos, whenVisible);
        } catch (io.betree.internal.fault.BetreeException e) {
            throw Failures.translate(e);
        }
    }

    /** A transaction's writes outgrew its heap share: they move to a new spill file. */
    SpilledWrites newSpill() {
        try {
            return engine.newSpill();
        } catch (io.betree.internal.fault.BetreeException e) {
            throw Failures.translate(e);
        }
    }

    void commitSpilled(long snapshotTs, SpilledWrites spilled) {
        try {
            engine.commitSpilled(snapshotTs, spilled);
        } catch (io.betree.internal.fault.BetreeException e) {
            throw Failures.translate(e);
        }
    }

    /** The registered update functions. */
    RegisteredFunctions functions() {
        return functions;
    }

    /**
     * How many calls of update functions threw since the environment opened, where an update met
     * the value it changes (a flush, a read, a scan): each such call changed nothing, and is counted
     * each time it is met. A function that accepts every value it can meet keeps this at 0.
     * Thread-safe.
     */
    public long failedUpdateCalls() {
        return functions.failedCalls();
    }

    long transactionMemoryBytes() {
        return options.transactionMemoryBytes();
    }

    boolean conflicts(Index index, byte[] key, long snapshotTs) {
        try {
            return engine.conflicts(index.id(), key, snapshotTs);
        } catch (io.betree.internal.fault.BetreeException e) {
            throw Failures.translate(e);
        }
    }

    void endSnapshot(long snapshotTs) {
        engine.endSnapshot(snapshotTs);
    }

    long visibleTs() {
        return engine.visibleTs();
    }

    /** The environment's directory (absolute). */
    public Path directory() {
        return engine.directory();
    }

    /** Counters of the node cache, for monitoring and tests. */
    public CacheStats cacheStats() {
        var s = engine.cacheStats();
        return new CacheStats(s.entries(), s.bytes(), s.budgetBytes(), s.misses(), s.evictions(), s.writeBacks());
    }

    /** Off-heap bytes held by this environment's nodes and buffers now. */
    public long offHeapBytes() {
        return engine.offHeapBytes();
    }

    /**
     * Nanoseconds commits of this environment have been held back since open because background
     * flushing fell behind their writes (back-pressure: a short delay per commit first, a wait for
     * the flushers only when they are far behind). Thread-safe; for monitoring and benchmarks.
     */
    public long writerWaitNanos() {
        return engine.writerWaitNanos();
    }

    /**
     * @throws IllegalStateException if the environment is closed
     * @throws EnvironmentFailedException if an earlier failure left it unusable until reopened
     */
    void checkOpen() {
        try {
            engine.checkOpen();
        } catch (io.betree.internal.fault.BetreeException e) {
            throw Failures.translate(e);
        }
    }

    /**
     * Checkpoints, then releases the cache, the files and the directory lock. Idempotent. Calls in
     * progress on other threads finish first; later calls on any index, transaction or cursor
     * throw {@link IllegalStateException}. If the final checkpoint fails, resources are still
     * released and the error is thrown; the next open recovers from the log. After an earlier
     * storage failure close skips the checkpoint and only releases resources.
     */
    @Override
    public void close() {
        try {
            engine.close();
        } catch (io.betree.internal.fault.BetreeException e) {
            throw Failures.translate(e);
        }
    }
}
