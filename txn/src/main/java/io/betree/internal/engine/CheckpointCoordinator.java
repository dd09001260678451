package io.betree.internal.engine;

import io.betree.internal.cache.NodeCache;
import io.betree.internal.fault.BetreeIOException;
import io.betree.internal.log.DurableLog;
import io.betree.internal.storage.BlockFile;
import io.betree.internal.tree.BeTree;
import io.betree.internal.txn.TransactionManager;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.locks.ReentrantLock;

/**
 * Owns the checkpoint protocol, the one place that orders the steps of the block file, the node
 * cache and the log. A checkpoint is fuzzy:
 * <ol>
 * <li>With the trees' flush steps paused ({@link BeTree#withFlushesPaused}), at a quiet point of
 * the commit order ({@link QuietPoint}), with every tree unchanged
 * ({@link BeTree#whileUnchanged}), it notes the log position, the visible timestamp
 * and each index's root, has the block file capture its translation table
 * ({@link BlockFile#beginCheckpoint}) and the cache mark its dirty nodes
 * ({@link NodeCache#beginCheckpoint}). Writers wait only for this, which does no I/O.</li>
 * <li>While commits go on it writes the marked nodes' images as they were at that moment
 * ({@link NodeCache#writeCheckpointImages}; a writer that touches a marked node first has it copied
 * in memory), then makes the captured table and the catalog durable
 * ({@link BlockFile#finishCheckpoint}).</li>
 * <li>It deletes the log segments recovery no longer needs.</li>
 * </ol>
 * On a failure the block file and the cache drop the checkpoint in progress ({@code abort}) and the
 * previous checkpoint stays in force.
 *
 * <p>Thread-safe; one checkpoint runs at a time.
 */
final class CheckpointCoordinator {
    private final Path directory;
    private final BlockFile file;
    private final NodeCache cache;
    private final DurableLog log;
    private final TransactionManager txns;
    private final IndexRegistry indexes;
    /** Held for a whole checkpoint; {@link ReentrantLock} rather than a monitor, as it spans I/O. */
    private final ReentrantLock running = new ReentrantLock();
    private boolean stopped;
    /** Where the running checkpoint may delete the log before; set at its quiet point. Guarded by running. */
    private long logNeededFrom;

    CheckpointCoordinator(Path directory, BlockFile file, NodeCache cache, DurableLog log, TransactionManager txns,
            IndexRegistry indexes) {
        this.directory = directory;
        this.file = file;
        this.cache = cache;
        this.log = log;
        this.txns = txns;
        this.indexes = indexes;
    }

    /**
     * Runs a checkpoint, waiting for one in progress to end first.
     *
     * @throws IllegalStateException after {@link #stop}
     * @throws BetreeIOException if writing fails; the previous checkpoint stays intact
     */
    void checkpoint() {
        running.lock();
        try {
            if (stopped) {
                throw new IllegalStateException("environment " + directory + " is closed");
            }
            run();
        } finally {
            running.unlock();
        }
    }

    /**
     * Waits for a checkpoint in progress, then runs a last one if {@code checkpointFirst}; no
     * checkpoint runs afterwards. The last one's failure is thrown, but the coordinator is stopped
     * whatever happens.
     */
    void stop(boolean checkpointFirst) {
        running.lock();
        try {
            if (stopped) {
                return;
            }
            stopped = true;
            if (checkpointFirst) {
                run();
            }
        } finally {
            running.unlock();
        }
    }

    private void run() {
        try {
            Catalog.Contents catalog = begin();
            try {
                cache.writeCheckpointImages();
                file.finishCheckpoint(Catalog.write(catalog));
            } catch (IOException e) {
                abort();
                throw new BetreeIOException("checkpoint of " + directory, e);
            } catch (RuntimeException | Error e) {
                abort();
                throw e;
            }
            log.deleteBefore(logNeededFrom);
        } catch (UncheckedIOException e) {
            throw new BetreeIOException("checkpoint of " + directory, e.getCause());
        }
    }

    /** Step 1: the moment the checkpoint stands for. Returns the catalog it will record. */
    private Catalog.Contents begin() {
        // Flush steps in progress are waited out first, while commits go on: waited out inside
        // the quiet point, they would hold every commit back for as long as a step takes.
        // At a quiet point of the commit order: an index created later logs its creation after
        // the checkpoint's log position, so recovery finds it.
        return QuietPoint.run(txns, indexes.trees(), () -> {
            List<StoredIndex> all = indexes.all();
            List<BeTree> trees = new ArrayList<>(all.size());
            for (StoredIndex i : all) {
                trees.add(i.tree());
            }
            return BeTree.whileUnchanged(trees, () -> {
                List<Catalog.Entry> entries = new ArrayList<>(all.size());
                for (StoredIndex i : all) {
                    entries.add(IndexRegistry.entryOf(i, i.tree().rootBlock()));
                }
                cache.beginCheckpoint(file::beginCheckpoint);
                long lsn = log.endLsn();
                // Taken here, at the quiet point: a large commit whose record follows this position
                // may have logged parts before it, and recovery from here reads them.
                logNeededFrom = txns.logNeededFrom(lsn);
                return new Catalog.Contents(txns.visibleTs(), lsn, indexes.nextId(), entries);
            });
        });
    }

    private void abort() {
        cache.abortCheckpoint();
        try {
            file.abortCheckpoint();
        } catch (RuntimeException ignored) {
            // The original failure is the one reported; the next checkpoint starts afresh.
        }
    }
}
