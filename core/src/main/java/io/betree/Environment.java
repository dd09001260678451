package io.betree;

import io.betree.compression.BlockCompressor;
import io.betree.internal.cache.NodeCache;
import io.betree.internal.env.Catalog;
import io.betree.internal.env.DurableLog;
import io.betree.internal.memory.NodeMemory;
import io.betree.internal.storage.BlockFile;
import io.betree.internal.storage.StorageEnv;
import io.betree.internal.tree.BeTree;
import io.betree.internal.tree.TreeConfig;
import io.betree.internal.txn.TransactionManager;
import io.betree.internal.txn.WriteOp;
import java.io.Closeable;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * A directory holding any number of named {@link Index indexes} in one data file, a write-ahead
 * log, and one off-heap node cache shared by all indexes.
 *
 * <pre>{@code
 * try (Environment env = Environment.open(dir, EnvironmentOptions.defaults().cacheBytes(256L << 20))) {
 *     Index orders = env.openIndex("orders", IndexOptions.defaults().codec(Codec.ZSTD));
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
    static final String DATA_FILE = "betree.data";
    static final String LOCK_FILE = "betree.lock";
    /**
     * Direct memory kept free beside the cache for compression and I/O scratch buffers.
     */
    private static final long DIRECT_MEMORY_HEADROOM = 8L << 20;

    private final Path directory;
    private final EnvironmentOptions options;
    private final Closeable fileLock;
    private final BlockFile file;
    private final DurableLog log;
    private final NodeMemory memory;
    private final NodeCache cache;
    private final TransactionManager txns;
    private final Object checkpointMutex = new Object();
    private final Map<String, Index> indexes = new TreeMap<>();
    private final Map<Integer, Index> indexesById = new HashMap<>();
    private int nextIndexId;
    private ScheduledExecutorService background;
    private volatile boolean closed;
    /** Set by a failed log sync or checkpoint: the environment then refuses work until reopened. */
    private volatile BetreeException failure;

    private Environment(Path directory, EnvironmentOptions options, Closeable fileLock, BlockFile file, DurableLog log,
            Catalog.Contents catalog) {
        this.directory = directory;
        this.options = options;
        this.fileLock = fileLock;
        this.file = file;
        this.log = log;
        this.memory = new NodeMemory();
        this.cache = new NodeCache(file, memory, options.cacheBytes());
        this.txns = new TransactionManager(log, catalog.lastTs());
        this.nextIndexId = catalog.nextIndexId();
        for (Catalog.Entry e : catalog.entries()) {
            BlockCompressor codec = Codec.byName(e.codec()).compressor(e.level());
            TreeConfig config = new TreeConfig(e.nodeSize(), e.basementSize(), e.fanout(), codec);
            register(new Index(this, e.name(), e.id(), BeTree.open(cache, file, config, txns::horizon, e.rootBlock())));
        }
    }

    private void register(Index index) {
        indexes.put(index.name(), index);
        indexesById.put(index.id(), index);
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
     * @throws BetreeException if the directory is already open, in this process or another
     * @throws CorruptionException if the stored files are damaged or are not betree files
     * @throws BetreeIOException if the files cannot be created or read
     */
    public static Environment open(Path directory, EnvironmentOptions options) {
        Objects.requireNonNull(directory, "directory");
        Objects.requireNonNull(options, "options");
        checkDirectMemory(options.cacheBytes());
        StorageEnv storage = options.storage();
        Path dir = directory.toAbsolutePath();
        Closeable lock = null;
        BlockFile file = null;
        DurableLog log = null;
        Environment env = null;
        try {
            storage.createDirectories(dir);
            lock = storage.lock(dir.resolve(LOCK_FILE));
            file = BlockFile.open(storage, dir.resolve(DATA_FILE));
            ByteBuffer root = file.rootRecord();
            Catalog.Contents catalog;
            try {
                catalog = root == null ? new Catalog.Contents(0, 0, 1, List.of()) : Catalog.read(root);
            } catch (IllegalArgumentException e) {
                throw new CorruptionException(dir.resolve(DATA_FILE), "catalog: " + e.getMessage());
            }
            log = DurableLog.open(storage, dir, options.logSegmentBytes());
            env = new Environment(dir, options, lock, file, log, catalog);
            env.recover(catalog.checkpointLsn());
            env.startBackgroundWork();
            return env;
        } catch (IOException e) {
            abandon(env, log, file, lock);
            throw new BetreeIOException("opening environment " + dir, e);
        } catch (RuntimeException | Error e) {
            abandon(env, log, file, lock);
            throw e;
        }
    }

    private static void abandon(Environment env, DurableLog log, BlockFile file, Closeable lock) {
        if (env != null) {
            env.closed = true;
            env.cache.releaseAll();
        }
        closeQuietly(log);
        closeQuietly(file);
        closeQuietly(lock);
    }

    private void recover(long fromLsn) {
        log.replay(fromLsn, new DurableLog.Replayer() {
            @Override
            public void createIndex(Catalog.Entry e) {
                if (indexesById.containsKey(e.id())) {
                    return;
                }
                createIndexNow(e.id(), e.name(), new TreeConfig(e.nodeSize(), e.basementSize(), e.fanout(),
                        Codec.byName(e.codec()).compressor(e.level())));
            }

            @Override
            public void commit(long ts, List<DurableLog.LoggedWrite> writes) {
                if (ts <= txns.visibleTs()) {
                    return;
                }
                List<WriteOp> ops = new ArrayList<>(writes.size());
                for (DurableLog.LoggedWrite w : writes) {
                    Index index = indexesById.get(w.indexId());
                    if (index == null) {
                        throw new CorruptionException(directory, "the log commits to index id " + w.indexId()
                                + ", which was never created");
                    }
                    ops.add(new WriteOp(w.indexId(), index.tree(), w.type(), w.key(), w.value()));
                }
                txns.recover(ts, ops);
            }
        });
    }

    private void startBackgroundWork() {
        if (options.durability() == Durability.ASYNC) {
            log.startPeriodicSync(options.syncInterval());
        }
        long every = options.checkpointInterval().toMillis();
        if (every > 0) {
            background = Executors.newSingleThreadScheduledExecutor(r -> {
                Thread t = new Thread(r, "betree-checkpoint " + directory.getFileName());
                t.setDaemon(true);
                return t;
            });
            background.scheduleWithFixedDelay(this::periodicCheckpoint, every, every, TimeUnit.MILLISECONDS);
        }
    }

    private void periodicCheckpoint() {
        try {
            if (!closed) {
                checkpoint();
            }
        } catch (RuntimeException e) {
            // The next checkpoint retries; a failure that persists also reaches callers of
            // checkpoint() and close(), so nothing is lost by not reporting it here.
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
                    + "m (on JDK 24+ -Dio.netty.maxDirectMemory=0 also works) or choose a smaller cache");
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

    private static void closeQuietly(Closeable c) {
        if (c != null) {
            try {
                c.close();
            } catch (IOException | RuntimeException ignored) {
                // Already failing; the first error is the one reported.
            }
        }
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
     *     does not fit (basement larger than half a node, node larger than an eighth of the cache)
     * @throws IllegalStateException if the environment is closed
     */
    public Index openIndex(String name, IndexOptions options) {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(options, "options");
        checkOpen();
        int nameBytes = name.getBytes(java.nio.charset.StandardCharsets.UTF_8).length;
        if (nameBytes == 0 || nameBytes > 255) {
            throw new IllegalArgumentException("index name must be 1 to 255 UTF-8 bytes, was " + nameBytes);
        }
        synchronized (indexes) {
            Index existing = indexes.get(name);
            if (existing != null) {
                existing.tree().useCodec(options.codec().compressor(options.level()));
                return existing;
            }
        }
        if (options.basementSize() * 2 > options.nodeSize()) {
            throw new IllegalArgumentException("basementSize " + options.basementSize()
                    + " must be at most half of nodeSize " + options.nodeSize());
        }
        if ((long) options.nodeSize() * 8 > this.options.cacheBytes()) {
            throw new IllegalArgumentException("nodeSize " + options.nodeSize() + " needs a cache of at least "
                    + options.nodeSize() * 8L + " bytes (8 nodes)");
        }
        BlockCompressor codec = options.codec().compressor(options.level());
        TreeConfig config = new TreeConfig(options.nodeSize(), options.basementSize(), options.fanout(), codec);
        txns.commitLock().lock();
        try {
            synchronized (indexes) {
                Index existing = indexes.get(name);
                if (existing != null) {
                    return existing;
                }
                int id = nextIndexId;
                log.appendCreateIndex(entryFor(id, name, 0, config));
                return createIndexNow(id, name, config);
            }
        } finally {
            txns.commitLock().unlock();
        }
    }

    private Index createIndexNow(int id, String name, TreeConfig config) {
        synchronized (indexes) {
            Index index = new Index(this, name, id, BeTree.create(cache, file, config, txns::horizon));
            register(index);
            nextIndexId = Math.max(nextIndexId, id + 1);
            return index;
        }
    }

    private static Catalog.Entry entryFor(int id, String name, long root, TreeConfig c) {
        return new Catalog.Entry(id, name, root, c.codec().name(), c.codec().level(), c.nodeSize(), c.basementSize(),
                c.fanout());
    }

    /** Names of all indexes, in sorted order. */
    public List<String> indexNames() {
        checkOpen();
        synchronized (indexes) {
            return new ArrayList<>(indexes.keySet());
        }
    }

    /**
     * Starts a transaction whose snapshot is the latest commit. The caller closes it.
     *
     * @throws IllegalStateException if the environment is closed
     */
    public Transaction begin() {
        checkOpen();
        return new Transaction(this, txns.beginSnapshot());
    }

    /**
     * Makes everything committed so far durable in the data file, so that recovery need not replay
     * the log before this point, and deletes log segments no longer needed.
     *
     * @throws IllegalStateException if the environment is closed
     * @throws BetreeIOException if writing fails; the previous checkpoint stays intact, and the
     *     environment refuses further work until it is closed and reopened (which recovers
     *     everything committed from the log)
     */
    public void checkpoint() {
        checkOpen();
        writeCheckpoint();
    }

    /**
     * A fuzzy checkpoint. Writers pause only while it notes where it starts (the log position, the
     * visible timestamp, each index's root) and marks the dirty nodes; it then writes those nodes'
     * images as they were at that moment while commits go on. A writer that touches a marked node
     * first copies it in memory (the copy is what the checkpoint writes), so it never waits for I/O.
     */
    private void writeCheckpoint() {
        synchronized (checkpointMutex) {
            try {
                Catalog.Contents catalog = beginCheckpoint();
                try {
                    cache.writeCheckpointImages();
                    file.finishCheckpoint(Catalog.write(catalog));
                } catch (IOException e) {
                    abortCheckpoint();
                    throw new BetreeIOException("checkpoint of " + directory, e);
                } catch (RuntimeException | Error e) {
                    abortCheckpoint();
                    throw e;
                }
                log.deleteBefore(catalog.checkpointLsn());
            } catch (BetreeException e) {
                throw fail(e);
            } catch (java.io.UncheckedIOException e) {
                throw fail(new BetreeIOException("checkpoint of " + directory, e.getCause()));
            }
        }
    }

    /**
     * Records the first storage failure; from then on the environment refuses work. After a failed
     * log sync the outcome of the commits it covered is unknown (a commit may or may not survive),
     * and after a failed checkpoint the data file may refuse writes: in both cases only reopening,
     * which recovers from the last checkpoint and the log, gives a state that is known to be safe.
     */
    private BetreeException fail(BetreeException e) {
        if (failure == null) {
            failure = e;
        }
        return e;
    }

    private Catalog.Contents beginCheckpoint() {
        txns.commitLock().lock();
        try {
            // Under the commit lock: an index created later logs its creation after the
            // checkpoint's log position, so recovery finds it.
            List<Index> all;
            synchronized (indexes) {
                all = new ArrayList<>(indexes.values());
            }
            for (Index i : all) {
                i.tree().lock().writeLock().lock();
            }
            try {
                List<Catalog.Entry> entries = new ArrayList<>();
                for (Index i : all) {
                    entries.add(entryFor(i.id(), i.name(), i.tree().rootBlock(), i.tree().config()));
                }
                int nextId;
                synchronized (indexes) {
                    nextId = nextIndexId;
                }
                file.beginCheckpoint();
                cache.beginCheckpoint();
                return new Catalog.Contents(txns.visibleTs(), log.endLsn(), nextId, entries);
            } finally {
                for (Index i : all) {
                    i.tree().lock().writeLock().unlock();
                }
            }
        } finally {
            txns.commitLock().unlock();
        }
    }

    private void abortCheckpoint() {
        cache.abortCheckpoint();
        try {
            file.abortCheckpoint();
        } catch (RuntimeException ignored) {
            // The original failure is the one reported; the next checkpoint starts afresh.
        }
    }

    // ---- called by Index and Transaction ----

    void writeSingle(Index index, byte type, byte[] key, byte[] value) {
        commit(-1, List.of(new WriteOp(index.id(), index.tree(), type, key, value)));
    }

    void commit(long snapshotTs, List<WriteOp> ops) {
        checkOpen();
        if (ops.isEmpty()) {
            return;
        }
        try {
            long position = txns.commit(snapshotTs, ops);
            if (options.durability() == Durability.SYNC) {
                txns.syncTo(position);
            }
        } catch (WriteConflictException e) {
            throw e;
        } catch (BetreeException e) {
            throw fail(e);
        }
    }

    boolean conflicts(Index index, byte[] key, long snapshotTs) {
        return txns.conflicts(index.id(), key, snapshotTs);
    }

    void endSnapshot(long snapshotTs) {
        txns.endSnapshot(snapshotTs);
    }

    long visibleTs() {
        return txns.visibleTs();
    }

    /** The environment's directory (absolute). */
    public Path directory() {
        return directory;
    }

    /** Counters of the node cache, for monitoring and tests. */
    public NodeCache.Stats cacheStats() {
        return cache.stats();
    }

    /** Off-heap bytes held by this environment's nodes and buffers now. */
    public long offHeapBytes() {
        return memory.used();
    }

    void checkOpen() {
        if (closed) {
            throw new IllegalStateException("environment " + directory + " is closed");
        }
        BetreeException f = failure;
        if (f != null) {
            throw new BetreeException("environment " + directory + " failed earlier (" + f.getMessage()
                    + "); close and reopen it to recover", f);
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
        synchronized (checkpointMutex) {
            if (closed) {
                return;
            }
            if (background != null) {
                background.shutdownNow();
            }
            Throwable failure = null;
            if (this.failure == null) {
                try {
                    writeCheckpoint();
                } catch (RuntimeException | Error e) {
                    failure = e;
                }
            }
            closed = true;
            synchronized (indexes) {
                for (Index i : indexes.values()) {
                    i.tree().close();
                }
            }
            cache.releaseAll();
            failure = closeAll(failure);
            if (failure instanceof Error) {
                throw (Error) failure;
            }
            if (failure != null) {
                throw (RuntimeException) failure;
            }
        }
    }

    /** Closes the log, the data file and the lock whatever fails; returns the first failure. */
    private Throwable closeAll(Throwable failure) {
        Closeable[] resources = {log, file, fileLock};
        for (Closeable c : resources) {
            try {
                c.close();
            } catch (IOException e) {
                failure = failure != null ? failure : new BetreeIOException("closing " + directory, e);
            } catch (RuntimeException e) {
                failure = failure != null ? failure : e;
            }
        }
        return failure;
    }
}
