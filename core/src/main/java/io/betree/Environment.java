package io.betree;

import io.betree.compression.BlockCompressor;
import io.betree.internal.cache.NodeCache;
import io.betree.internal.env.Catalog;
import io.betree.internal.memory.NodeMemory;
import io.betree.internal.storage.BlockFile;
import io.betree.internal.storage.StorageEnv;
import io.betree.internal.tree.BeTree;
import io.betree.internal.tree.TreeConfig;
import java.io.Closeable;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A directory holding any number of named {@link Index indexes} in one data file, with one off-heap
 * node cache shared by all of them.
 *
 * <pre>{@code
 * try (Environment env = Environment.open(dir, EnvironmentOptions.defaults().cacheBytes(256L << 20))) {
 *     Index orders = env.openIndex("orders", IndexOptions.defaults().codec(Codec.ZSTD));
 *     orders.put(key, value);
 * }
 * }</pre>
 *
 * <p>Durability: data is durable after {@link #checkpoint()} or {@link #close()}; after a crash the
 * environment reopens at its last checkpoint. A directory can be open in only one environment
 * at a time, in this process or any other. Thread-safe. {@link #close()} is idempotent.
 */
public final class Environment implements AutoCloseable {
    static final String DATA_FILE = "betree.data";
    static final String LOCK_FILE = "betree.lock";
    /** Direct memory kept free beside the cache for compression and I/O buffers. */
    private static final long DIRECT_MEMORY_HEADROOM = 32L << 20;

    private final Path directory;
    private final EnvironmentOptions options;
    private final Closeable fileLock;
    private final BlockFile file;
    private final NodeMemory memory;
    private final NodeCache cache;
    private final AtomicLong msn;
    private final Map<String, Catalog.Entry> stored = new TreeMap<>();
    private final Map<String, Index> open = new TreeMap<>();
    private volatile boolean closed;

    private Environment(Path directory, EnvironmentOptions options, Closeable fileLock, BlockFile file,
            Catalog.Contents catalog) {
        this.directory = directory;
        this.options = options;
        this.fileLock = fileLock;
        this.file = file;
        this.memory = new NodeMemory();
        this.cache = new NodeCache(file, memory, options.cacheBytes());
        this.msn = new AtomicLong(catalog.lastMsn());
        for (Catalog.Entry e : catalog.entries()) {
            stored.put(e.name(), e);
        }
    }

    /** Opens {@code directory} with default options; see {@link #open(Path, EnvironmentOptions)}. */
    public static Environment open(Path directory) {
        return open(directory, EnvironmentOptions.defaults());
    }

    /**
     * Opens the environment in {@code directory}, creating the directory and an empty environment
     * when absent.
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
        try {
            storage.createDirectories(dir);
            lock = storage.lock(dir.resolve(LOCK_FILE));
            file = BlockFile.open(storage, dir.resolve(DATA_FILE));
            ByteBuffer root = file.rootRecord();
            Catalog.Contents catalog;
            try {
                catalog = root == null ? new Catalog.Contents(0, List.of()) : Catalog.read(root);
            } catch (IllegalArgumentException e) {
                throw new CorruptionException(dir.resolve(DATA_FILE), "catalog: " + e.getMessage());
            }
            return new Environment(dir, options, lock, file, catalog);
        } catch (IOException e) {
            closeQuietly(file);
            closeQuietly(lock);
            throw new BetreeIOException("opening environment " + dir, e);
        } catch (RuntimeException e) {
            closeQuietly(file);
            closeQuietly(lock);
            throw e;
        }
    }

    private static void checkDirectMemory(long cacheBytes) {
        if (NodeMemory.uncappedByJvm()) {
            return;
        }
        long limit = NodeMemory.maxDirectMemory();
        if (cacheBytes + DIRECT_MEMORY_HEADROOM > limit) {
            throw new IllegalArgumentException("cacheBytes of " + (cacheBytes >> 20) + " MiB needs "
                    + ((cacheBytes + DIRECT_MEMORY_HEADROOM) >> 20) + " MiB of direct memory but the JVM allows "
                    + (limit >> 20) + " MiB; start the JVM with -XX:MaxDirectMemorySize="
                    + ((cacheBytes + DIRECT_MEMORY_HEADROOM + (1 << 20) - 1) >> 20)
                    + "m (on JDK 24+ -Dio.netty.maxDirectMemory=0 also works) or choose a smaller cache");
        }
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
     * basement size and fanout it was created with; the codec given here applies to blocks written
     * from now on. Opening the same name again returns the same {@link Index}.
     *
     * @throws NullPointerException if an argument is null
     * @throws IllegalArgumentException if the name is empty or longer than 255 bytes, or the shape
     *     does not fit (basement larger than half a node, node larger than an eighth of the cache)
     * @throws IllegalStateException if the environment is closed
     */
    public synchronized Index openIndex(String name, IndexOptions options) {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(options, "options");
        checkOpen();
        int nameBytes = name.getBytes(java.nio.charset.StandardCharsets.UTF_8).length;
        if (nameBytes == 0 || nameBytes > 255) {
            throw new IllegalArgumentException("index name must be 1 to 255 UTF-8 bytes, was " + nameBytes);
        }
        Index existing = open.get(name);
        if (existing != null) {
            return existing;
        }
        Catalog.Entry entry = stored.get(name);
        IndexOptions effective = entry == null ? options
                : options.withShape(entry.nodeSize(), entry.basementSize(), entry.fanout());
        if (effective.basementSize() * 2 > effective.nodeSize()) {
            throw new IllegalArgumentException("basementSize " + effective.basementSize()
                    + " must be at most half of nodeSize " + effective.nodeSize());
        }
        if ((long) effective.nodeSize() * 8 > this.options.cacheBytes()) {
            throw new IllegalArgumentException("nodeSize " + effective.nodeSize() + " needs a cache of at least "
                    + effective.nodeSize() * 8L + " bytes (8 nodes)");
        }
        BlockCompressor codec = effective.codec().compressor(effective.level());
        TreeConfig config = new TreeConfig(effective.nodeSize(), effective.basementSize(), effective.fanout(), codec);
        BeTree tree = entry == null ? BeTree.create(cache, file, config, msn)
                : BeTree.open(cache, file, config, msn, entry.rootBlock());
        Index index = new Index(this, name, tree);
        open.put(name, index);
        return index;
    }

    /** Names of all indexes, created in this or earlier sessions, in sorted order. */
    public synchronized List<String> indexNames() {
        checkOpen();
        java.util.TreeSet<String> names = new java.util.TreeSet<>(stored.keySet());
        names.addAll(open.keySet());
        return new ArrayList<>(names);
    }

    /**
     * Makes everything written so far durable: writes every dirty node and a new checkpoint of the
     * block file, synced to disk. Writers wait while it runs.
     *
     * @throws IllegalStateException if the environment is closed
     * @throws BetreeIOException if writing fails; the previous checkpoint stays intact
     */
    public synchronized void checkpoint() {
        checkOpen();
        writeCheckpoint();
    }

    private void writeCheckpoint() {
        List<Index> indexes = new ArrayList<>(open.values());
        for (Index i : indexes) {
            i.tree().lock().writeLock().lock();
        }
        try {
            cache.writeAllDirty();
            Map<String, Catalog.Entry> entries = new TreeMap<>(stored);
            for (Index i : indexes) {
                TreeConfig c = i.tree().config();
                entries.put(i.name(), new Catalog.Entry(i.name(), i.tree().rootBlock(), c.codec().name(),
                        c.codec().level(), c.nodeSize(), c.basementSize(), c.fanout()));
            }
            file.checkpoint(Catalog.write(msn.get(), new ArrayList<>(entries.values())));
            stored.clear();
            stored.putAll(entries);
        } catch (IOException e) {
            throw new BetreeIOException("checkpoint of " + directory, e);
        } finally {
            for (Index i : indexes) {
                i.tree().lock().writeLock().unlock();
            }
        }
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
    }

    /**
     * Checkpoints, then releases the cache, the files and the directory lock. Idempotent. Calls in
     * progress on other threads finish first; later calls on any index or cursor throw
     * {@link IllegalStateException}. If the final checkpoint fails, resources are still released
     * and the error is thrown; the environment then reopens at its previous checkpoint.
     */
    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        RuntimeException failure = null;
        try {
            writeCheckpoint();
        } catch (RuntimeException e) {
            failure = e;
        }
        closed = true;
        for (Index i : open.values()) {
            i.tree().close();
        }
        cache.releaseAll();
        try {
            file.close();
        } catch (IOException e) {
            failure = failure != null ? failure : new BetreeIOException("closing " + directory, e);
        }
        try {
            fileLock.close();
        } catch (IOException e) {
            failure = failure != null ? failure : new BetreeIOException("unlocking " + directory, e);
        }
        if (failure != null) {
            throw failure;
        }
    }
}
