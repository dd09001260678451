package io.betree.internal.txn.spill;

import io.betree.internal.log.CommitRecord.Op;
import io.betree.internal.storage.StorageEnv;
import io.betree.internal.tree.Keys;
import java.io.Closeable;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;

/**
 * The writes one transaction moved off the heap: sorted runs in one {@link SpillFile}, the newest run
 * holding the latest writes. The transaction still reads its own writes through them, and its commit
 * merges them into one {@link CommitRun}.
 *
 * <p>Not thread-safe: it belongs to the transaction. {@link #close()} deletes the file; idempotent.
 */
public final class SpilledWrites implements Closeable {
    /** File names of spilled transactions start with this; the engine deletes leftovers at open. */
    public static final String FILE_PREFIX = "betree-txn-";
    private static final AtomicLong NEXT_FILE = new AtomicLong();

    private final StorageEnv storage;
    private final Path directory;
    private final String name;
    private final SpillFile file;
    private final List<SortedRun> runs = new ArrayList<>();

    private SpilledWrites(StorageEnv storage, Path directory) {
        this.storage = storage;
        this.directory = directory;
        this.name = FILE_PREFIX + NEXT_FILE.incrementAndGet();
        this.file = SpillFile.create(storage, directory.resolve(name + ".spill"));
    }

    /** Starts an empty set of runs in a new file under {@code directory}. */
    public static SpilledWrites create(StorageEnv storage, Path directory) {
        return new SpilledWrites(storage, directory);
    }

    /** Whether {@code fileName} is one a spilled transaction writes (a leftover, after a crash). */
    public static boolean isSpillFile(String fileName) {
        return fileName.startsWith(FILE_PREFIX) && (fileName.endsWith(".spill") || fileName.endsWith(".commit"));
    }

    /**
     * Adds the writes of {@code sorted} (ascending by index id and key, one per key) as the newest
     * run: they win over every earlier run's writes of the same keys.
     */
    public void spill(Iterator<Op> sorted) {
        SortedRun run = file.append(sorted);
        if (run != null) {
            runs.add(run);
        }
    }

    /** Spilled writes across all runs, counting a key once per run it is in. */
    public long count() {
        long n = 0;
        for (SortedRun r : runs) {
            n += r.count();
        }
        return n;
    }

    /** The latest spilled write of {@code key} to index {@code indexId}, or null if none. */
    public Op lookup(int indexId, byte[] key) {
        for (int i = runs.size() - 1; i >= 0; i--) {
            Op op = runs.get(i).lookup(indexId, key);
            if (op != null) {
                return op;
            }
        }
        return null;
    }

    /**
     * Calls {@code action} with every spilled write to index {@code indexId} with a key in
     * {@code [from, limit)} ({@code limit} null: no upper end), each run in key order, older runs
     * first: applying them in that order leaves the latest write of each key.
     */
    public void forEachInRange(int indexId, byte[] from, byte[] limit, Consumer<Op> action) {
        for (SortedRun run : runs) {
            Iterator<Op> it = run.from(indexId, from);
            while (it.hasNext()) {
                Op op = it.next();
                if (op.indexId() != indexId || limit != null && Keys.compare(op.key(), limit) >= 0) {
                    break;
                }
                action.accept(op);
            }
        }
    }

    /**
     * Merges every run into one, the latest write of each key, in a new file, and deletes this one.
     * This object is closed afterwards; the caller owns the returned run.
     */
    public CommitRun mergeForCommit() {
        SpillFile merged = SpillFile.create(storage, directory.resolve(name + ".commit"));
        try {
            List<Iterator<Op>> sources = new ArrayList<>(runs.size());
            for (SortedRun r : runs) {
                sources.add(r.all());
            }
            List<Integer> indexIds = new ArrayList<>();
            Iterator<Op> all = new MergedWrites(sources);
            SortedRun run = merged.append(new Iterator<>() {
                @Override
                public boolean hasNext() {
                    return all.hasNext();
                }

                @Override
                public Op next() {
                    Op op = all.next();
                    if (indexIds.isEmpty() || indexIds.get(indexIds.size() - 1) != op.indexId()) {
                        indexIds.add(op.indexId());
                    }
                    return op;
                }
            });
            close();
            return new CommitRun(merged, run, indexIds);
        } catch (RuntimeException | Error e) {
            merged.close();
            throw e;
        }
    }

    @Override
    public void close() {
        runs.clear();
        file.close();
    }
}
