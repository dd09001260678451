package io.betree.internal.engine;

import io.betree.internal.cache.NodeCache;
import io.betree.internal.fault.BetreeException;
import io.betree.internal.fault.BetreeIOException;
import io.betree.internal.fault.CorruptionException;
import io.betree.internal.fault.EnvironmentFailedException;
import io.betree.internal.log.BackgroundScheduler;
import io.betree.internal.log.CommitPartsRecord;
import io.betree.internal.log.CommitRecord;
import io.betree.internal.log.CreateIndexRecord;
import io.betree.internal.log.DurableLog;
import io.betree.internal.log.PeriodicTask;
import io.betree.internal.log.WritesRecord;
import io.betree.internal.memory.NodeMemory;
import io.betree.internal.storage.BlockFile;
import io.betree.internal.storage.StorageEnv;
import io.betree.internal.tree.BeTree;
import io.betree.internal.tree.BlockFileBacking;
import io.betree.internal.tree.TreeConfig;
import io.betree.internal.tree.UpdateFunctions;
import io.betree.internal.tree.UpdateList;
import io.betree.internal.txn.TransactionManager;
import io.betree.internal.txn.WriteConflictException;
import io.betree.internal.txn.WriteOp;
import io.betree.internal.txn.spill.CommitRun;
import io.betree.internal.txn.spill.SpilledWrites;
import java.io.Closeable;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantLock;

/**
 * One open environment below the public API: the directory lock, the block file, the log, the node
 * cache, the indexes, transactions, checkpoints and recovery. The API validates arguments, keeps
 * the user's handles and translates failures; everything else happens here.
 *
 * <p>Fail-stop: after a failure that leaves the in-memory state unknown (a failed log sync or
 * checkpoint, a commit applied half-way) every call but {@link #close()} throws
 * {@link EnvironmentFailedException}; reopening recovers from the last checkpoint and the log.
 *
 * <p>Thread-safe. {@link #close()} is idempotent.
 */
public final class Engine implements AutoCloseable {
    static final String DATA_FILE = "betree.data";
    static final String LOCK_FILE = "betree.lock";

    private final Path directory;
    private final StorageEnv storage;
    private final EngineSettings settings;
    private final Closeable fileLock;
    private final BlockFile file;
    private final DurableLog log;
    private final NodeMemory memory;
    private final NodeCache cache;
    private final TransactionManager txns;
    private final IndexRegistry indexes;
    private final CheckpointCoordinator checkpoints;
    private final ReentrantLock closing = new ReentrantLock();
    /** The periodic checkpoints on the process's shared thread; null when off. Set at open, cleared by close. */
    private PeriodicTask periodicCheckpoints;
    private volatile boolean closed;
    /** The first failure after which the state in memory is unknown; then every call refuses. */
    private volatile Throwable failure;

    private Engine(Path directory, StorageEnv storage, EngineSettings settings, Closeable fileLock, BlockFile file,
            DurableLog log, Catalog.Contents catalog) {
        this.directory = directory;
        this.storage = storage;
        this.settings = settings;
        this.fileLock = fileLock;
        this.file = file;
        this.log = log;
        this.memory = new NodeMemory();
        this.cache = settings.sharedBudget() != null
                ? new NodeCache(new BlockFileBacking(file, memory), memory, settings.sharedBudget())
                : new NodeCache(new BlockFileBacking(file, memory), memory, settings.cacheBytes());
        try {
            this.txns = new TransactionManager(log, catalog.lastTs(), this::failed);
            this.indexes = new IndexRegistry(cache, file, txns, this::failed, catalog.nextIndexId(),
                    settings.updateFunctions());
            for (Catalog.Entry e : catalog.entries()) {
                indexes.open(e);
            }
            this.checkpoints = new CheckpointCoordinator(directory, file, cache, log, txns, indexes);
        } catch (RuntimeException | Error e) {
            cache.releaseAll(); // its memory, and its place in a shared budget
            throw e;
        }
    }

    /**
     * Opens the environment in {@code directory} through {@code storage}, creating the directory
     * and an empty environment when absent, and recovering committed work from the log.
     *
     * @throws io.betree.internal.fault.DirectoryInUseException if the directory is already open
     * @throws CorruptionException if the stored files are damaged or are not betree files
     * @throws BetreeIOException if the files cannot be created or read
     */
    public static Engine open(Path directory, StorageEnv storage, EngineSettings settings) {
        Path dir = directory.toAbsolutePath();
        Closeable lock = null;
        BlockFile file = null;
        DurableLog log = null;
        Engine engine = null;
        try {
            storage.createDirectories(dir);
            lock = storage.lock(dir.resolve(LOCK_FILE));
            file = BlockFile.open(storage, dir.resolve(DATA_FILE));
            Catalog.Contents catalog = readCatalog(file, dir.resolve(DATA_FILE));
            log = DurableLog.open(storage, dir, settings.logSegmentBytes());
            deleteLeftoverSpills(storage, dir);
            engine = new Engine(dir, storage, settings, lock, file, log, catalog);
            engine.recover(catalog.checkpointLsn());
            engine.startBackgroundWork();
            return engine;
        } catch (IOException e) {
            abandon(engine, log, file, lock);
            throw new BetreeIOException("opening environment " + dir, e);
        } catch (RuntimeException | Error e) {
            abandon(engine, log, file, lock);
            throw e;
        }
    }

    /** Deletes the files of transactions that spilled writes in a process that ended without cleaning up. */
    private static void deleteLeftoverSpills(StorageEnv storage, Path dir) throws IOException {
        for (Path p : storage.list(dir)) {
            if (SpilledWrites.isSpillFile(p.getFileName().toString())) {
                storage.delete(p);
            }
        }
    }

    private static Catalog.Contents readCatalog(BlockFile file, Path path) {
        ByteBuffer root = file.rootRecord();
        if (root == null) {
            return new Catalog.Contents(0, 0, 1, List.of());
        }
        try {
            return Catalog.read(root);
        } catch (IllegalArgumentException e) {
            throw new CorruptionException(path, "catalog: " + e.getMessage());
        }
    }

    private static void abandon(Engine engine, DurableLog log, BlockFile file, Closeable lock) {
        if (engine != null) {
            engine.closed = true;
            // Trees first: closing one waits out a flush or drain step in progress, which must not
            // find its nodes' memory released under it.
            for (StoredIndex i : engine.indexes.all()) {
                i.tree().close();
            }
            engine.cache.releaseAll();
        }
        closeQuietly(log);
        closeQuietly(file);
        closeQuietly(lock);
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

    /** Replays the log written since the checkpoint: index creations and commits it lacks. */
    private void recover(long fromLsn) {
        log.replay(fromLsn, new DurableLog.Replayer() {
            @Override
            public void createIndex(CreateIndexRecord r) {
                if (indexes.byId(r.indexId()) == null) {
                    indexes.create(r.indexId(), r.name(), IndexRegistry.configOf(new Catalog.Entry(r.indexId(),
                            r.name(), 0, r.codec(), r.level(), r.nodeSize(), r.basementSize(), r.fanout(), List.of())));
                }
            }

            @Override
            public void commit(CommitRecord r) {
                if (r.commitTs() <= txns.visibleTs()) {
                    return; // Already in the checkpoint.
                }
                txns.recover(r.commitTs(), replayedOps(r.commitTs(), r.ops()));
            }

            @Override
            public void commitParts(CommitPartsRecord r) {
                if (r.commitTs() <= txns.visibleTs()) {
                    return;
                }
                long[] lsns = r.partLsns();
                long writes = 0;
                for (int i = 0; i < lsns.length; i++) {
                    WritesRecord part = log.partAt(lsns[i]);
                    if (part.part() != i) {
                        throw new CorruptionException(directory, "the commit at timestamp " + r.commitTs()
                                + " names as its part " + i + " the record at LSN " + lsns[i] + ", which is part "
                                + part.part());
                    }
                    writes += part.ops().size();
                    txns.recover(r.commitTs(), replayedOps(r.commitTs(), part.ops()));
                }
                if (writes != r.writes()) {
                    throw new CorruptionException(directory, "the commit at timestamp " + r.commitTs() + " has "
                            + writes + " writes in its parts where it records " + r.writes());
                }
            }
        });
    }

    /** The logged writes of the commit at {@code ts}, bound to their trees. */
    private List<WriteOp> replayedOps(long ts, List<CommitRecord.Op> logged) {
        List<WriteOp> ops = new ArrayList<>(logged.size());
        for (CommitRecord.Op op : logged) {
            StoredIndex index = indexes.byId(op.indexId());
            if (index == null) {
                throw new CorruptionException(directory, "the log commits to index id " + op.indexId()
                        + ", which was never created");
            }
            try {
                WriteOp write = WriteOp.replayed(op, index.tree());
                ops.add(write);
                byte[] calls = op.type() == CommitRecord.UPDATE ? op.value()
                        : op.type() == CommitRecord.RANGE_UPDATE ? write.range().updates() : null;
                if (calls != null) {
                    for (String name : UpdateList.names(calls)) {
                        if (!settings.updateFunctions().knows(name)) {
                            throw UpdateFunctions.unknown(name);
                        }
                        index.noteFunction(name);
                    }
                }
            } catch (IllegalArgumentException e) {
                throw new CorruptionException(directory, "the log's commit at timestamp " + ts
                        + " is malformed: " + e.getMessage());
            }
        }
        return ops;
    }

    /** Schedules the periodic log sync and checkpoints on the threads every environment shares. */
    private void startBackgroundWork() {
        if (settings.periodicSync() != null) {
            log.startPeriodicSync(settings.periodicSync());
        }
        long every = settings.checkpointInterval().toMillis();
        if (every > 0) {
            periodicCheckpoints = BackgroundScheduler.scheduleCheckpoint("periodic checkpoint of " + directory,
                    TimeUnit.MILLISECONDS.toNanos(every), this::periodicCheckpoint);
        }
    }

    /**
     * One run of the periodic checkpoints, on the thread every environment shares for them. It
     * handles its own failures, so that the next run retries (one that escaped would end them).
     */
    private void periodicCheckpoint() {
        try {
            if (!closed && failure == null) {
                checkpoint();
            }
        } catch (RuntimeException e) {
            // The next checkpoint retries; a failure that persists also reaches callers of
            // checkpoint() and close(), so nothing is lost by not reporting it here.
        }
    }

    /** The environment's directory (absolute). */
    public Path directory() {
        return directory;
    }

    /**
     * The index {@code name}, created with {@code config} when absent; an existing one switches to
     * {@code config}'s codec for blocks written from now on and keeps its shape.
     *
     * @throws IllegalStateException if closed
     */
    public StoredIndex openIndex(String name, TreeConfig config) {
        checkOpen();
        StoredIndex existing = indexes.byName(name);
        if (existing == null) {
            // At a quiet point of the commit order, so that a checkpoint either includes the new
            // index or begins before its logged creation.
            existing = txns.runExclusive(() -> {
                StoredIndex raced = indexes.byName(name);
                if (raced != null) {
                    return raced;
                }
                int id = indexes.nextId();
                Catalog.Entry e = IndexRegistry.entryOf(id, name, 0, config, List.of());
                log.appendCreateIndex(new CreateIndexRecord(id, name, e.codec(), e.level(), e.nodeSize(),
                        e.basementSize(), e.fanout()));
                return indexes.create(id, name, config);
            });
            return existing;
        }
        existing.tree().useCodec(config.codec());
        return existing;
    }

    /** Every index, in name order. */
    public List<StoredIndex> indexes() {
        checkOpen();
        return indexes.all();
    }

    /** Starts a snapshot at the latest commit; pair with {@link #endSnapshot}. */
    public long beginSnapshot() {
        checkOpen();
        return txns.beginSnapshot();
    }

    /** Ends a snapshot; works after close too (it then only forgets it). */
    public void endSnapshot(long snapshotTs) {
        txns.endSnapshot(snapshotTs);
    }

    /** The oldest snapshot any reader may use, below which flushes drop versions; for tests. */
    long horizon() {
        return txns.oldestSnapshot();
    }

    /** Every commit at or below this timestamp is visible to new readers. */
    public long visibleTs() {
        return txns.visibleTs();
    }

    /** Whether a commit after {@code snapshotTs} wrote {@code key} of the index {@code indexId}. */
    public boolean conflicts(int indexId, byte[] key, long snapshotTs) {
        return txns.conflicts(indexId, key, snapshotTs);
    }

    /**
     * Commits {@code ops} (a transaction whose snapshot is {@code snapshotTs}, or {@code -1} for a
     * single write) and, when the settings say so, waits until it is on disk.
     *
     * @throws WriteConflictException if another transaction committed one of the keys first
     * @throws BetreeException if logging or applying fails; the engine then refuses further work
     */
    public void commit(long snapshotTs, List<WriteOp> ops) {
        commit(snapshotTs, ops, System.nanoTime(), () -> { });
    }

    /**
     * As {@link #commit(long, List)}, running {@code whenVisible} once the commit is visible, before
     * the caller may be held back and before the sync ({@link TransactionManager#commit(long, List, long,
     * Runnable)}); {@code startedNanos} is when the transaction began ({@link System#nanoTime}).
     */
    public void commit(long snapshotTs, List<WriteOp> ops, long startedNanos, Runnable whenVisible) {
        checkOpen();
        if (ops.isEmpty()) {
            return;
        }
        logAndSync(() -> txns.commit(snapshotTs, ops, startedNanos, whenVisible));
    }

    /**
     * Runs a commit that returns its log position, then syncs there if the settings say so; a
     * failure other than a conflict leaves the engine failed.
     */
    private void logAndSync(java.util.function.LongSupplier commit) {
        try {
            long position = commit.getAsLong();
            if (settings.syncEveryCommit()) {
                txns.syncTo(position);
            }
        } catch (WriteConflictException e) {
            throw e;
        } catch (BetreeException e) {
            throw fail(e);
        }
    }

    /**
     * A new, empty place for a transaction's writes beyond its heap share, in this environment's
     * directory; the transaction closes it (or {@link #commitSpilled} consumes it).
     *
     * @throws IllegalStateException if closed
     */
    public SpilledWrites newSpill() {
        checkOpen();
        return SpilledWrites.create(storage, directory);
    }

    /**
     * Commits a transaction whose writes were spilled, all of them now in {@code spilled} (which this
     * closes), as {@link #commit} commits one on the heap; see {@link TransactionManager#commitLarge}.
     *
     * @throws WriteConflictException if another transaction committed one of the keys first
     * @throws BetreeIOException if the spilled writes cannot be read back (the commit did not
     *     happen; the engine goes on)
     * @throws BetreeException if logging or applying fails; the engine then refuses further work
     */
    public void commitSpilled(long snapshotTs, SpilledWrites spilled) {
        CommitRun run;
        try {
            checkOpen();
            // Only temporary files so far: a failure here fails this commit, not the engine.
            run = spilled.mergeForCommit();
        } finally {
            spilled.close();
        }
        if (run.count() == 0) {
            run.close();
            return;
        }
        logAndSync(() -> txns.commitLarge(snapshotTs, run, id -> {
            StoredIndex index = indexes.byId(id);
            if (index == null) {
                throw new IllegalStateException("a transaction wrote to index id " + id + ", which does not exist");
            }
            return index.tree();
        }));
    }

    /**
     * Makes everything committed so far durable in the data file and deletes log segments no
     * longer needed; see {@link CheckpointCoordinator}.
     *
     * @throws BetreeIOException if writing fails; the engine then refuses further work
     */
    public void checkpoint() {
        checkOpen();
        try {
            checkpoints.checkpoint();
        } catch (BetreeException e) {
            throw fail(e);
        }
    }

    /**
     * Checks every index's tree ({@link BeTree#checkInvariants}) and the block file against them: no
     * block is reachable from two indexes, every reachable block number is allocated, and every
     * allocated number is reachable (none leaked). Runs at a quiet point of the commit order with
     * every tree unchanged, so commits and index creation wait until it returns; for tests and
     * diagnostics. It changes nothing, so a violation does not fail the engine.
     *
     * @throws CorruptionException naming the block and the broken invariant
     * @throws IllegalStateException if closed
     * @throws EnvironmentFailedException if an earlier failure left the state unknown
     */
    public void checkInvariants() {
        checkOpen();
        // Flushes paused before the commit order, as a checkpoint does (same order, no deadlock).
        QuietPoint.run(txns, indexes.trees(), () -> {
            List<StoredIndex> all = indexes.all();
            List<BeTree> trees = new ArrayList<>(all.size());
            for (StoredIndex i : all) {
                trees.add(i.tree());
            }
            return BeTree.whileUnchanged(trees, () -> {
                Path path = file.path();
                Map<Long, String> owners = new HashMap<>();
                long highest = -1;
                for (StoredIndex i : all) {
                    for (long block : i.tree().checkInvariants(path)) {
                        String other = owners.putIfAbsent(block, i.name());
                        if (other != null) {
                            throw new CorruptionException(path, block, "reachable from index " + other
                                    + " and from index " + i.name(), null);
                        }
                        if (!file.isAllocated(block)) {
                            throw new CorruptionException(path, block, "index " + i.name()
                                    + " reaches a block number that is not allocated", null);
                        }
                        highest = Math.max(highest, block);
                    }
                }
                long allocated = file.stats().blockCount();
                if (allocated != owners.size()) {
                    List<Long> leaked = new ArrayList<>();
                    for (long b = 0; b <= highest + allocated && leaked.size() < 10; b++) {
                        if (file.isAllocated(b) && !owners.containsKey(b)) {
                            leaked.add(b);
                        }
                    }
                    throw new CorruptionException(path, allocated + " block numbers are allocated but the indexes"
                            + " reach " + owners.size() + "; allocated and unreachable: " + leaked);
                }
                return null;
            });
        });
    }

    /** Counters of the node cache. */
    public NodeCache.Stats cacheStats() {
        return cache.stats();
    }

    /** Nanoseconds commits have been held back by back-pressure since open. */
    public long writerWaitNanos() {
        return txns.writerWaitNanos();
    }

    /** Off-heap bytes held by this environment's nodes and buffers now. */
    public long offHeapBytes() {
        return memory.used();
    }

    /**
     * @throws IllegalStateException if closed
     * @throws EnvironmentFailedException if an earlier failure left the state unknown
     */
    public void checkOpen() {
        if (closed) {
            throw new IllegalStateException("environment " + directory + " is closed");
        }
        Throwable f = failure;
        if (f != null) {
            throw new EnvironmentFailedException("environment " + directory + " failed earlier (" + f.getMessage()
                    + "); close and reopen it to recover", f);
        }
    }

    /** A part of the engine reports a failure that left its state unknown. */
    private void failed(Throwable cause) {
        if (failure == null) {
            failure = cause;
        }
    }

    private BetreeException fail(BetreeException e) {
        failed(e);
        return e;
    }

    /**
     * Checkpoints (unless an earlier failure makes that unsafe), then releases the cache, the files
     * and the directory lock, whatever fails; the first failure is thrown. Idempotent.
     */
    @Override
    public void close() {
        closing.lock();
        try {
            if (closed) {
                return;
            }
            if (periodicCheckpoints != null) {
                // No periodic checkpoint starts from now on, and one in progress (of this
                // environment; the shared thread may be busy with another's) has ended.
                periodicCheckpoints.cancel();
                periodicCheckpoints = null;
            }
            Throwable first = null;
            try {
                checkpoints.stop(failure == null);
            } catch (RuntimeException | Error e) {
                first = e;
            }
            closed = true;
            try {
                txns.close();
            } catch (RuntimeException | Error e) {
                first = first != null ? first : e;
            }
            for (StoredIndex i : indexes.all()) {
                i.tree().close();
            }
            cache.releaseAll();
            first = closeAll(first);
            if (first instanceof Error) {
                throw (Error) first;
            }
            if (first != null) {
                throw (RuntimeException) first;
            }
        } finally {
            closing.unlock();
        }
    }

    /** Closes the log, the data file and the lock whatever fails; returns the first failure. */
    private Throwable closeAll(Throwable first) {
        Closeable[] resources = {log, file, fileLock};
        for (Closeable c : resources) {
            try {
                c.close();
            } catch (IOException e) {
                first = first != null ? first : new BetreeIOException("closing " + directory, e);
            } catch (RuntimeException e) {
                first = first != null ? first : e;
            }
        }
        return first;
    }
}
