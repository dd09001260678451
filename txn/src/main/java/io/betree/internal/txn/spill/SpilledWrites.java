package io.betree.internal.txn.spill;

import io.betree.internal.log.CommitRecord.Op;
import io.betree.internal.storage.StorageEnv;
import java.io.Closeable;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The writes one transaction moved off the heap, as sorted runs in levels: each move adds a run to
 * level 0, and when a level holds {@link #FAN_IN} runs they are merged into one run of the next
 * level, each level in a {@link SpillFile} of its own (a merged level's file is deleted). A level's
 * runs are newer than those of every higher level, and within a level later runs are newer. So a
 * lookup reads at most a few blocks per level, a merge holds one block per run, and the files hold
 * each write about once per level.
 *
 * <p>Not thread-safe: it belongs to the transaction. {@link #close()} deletes the files; idempotent.
 */
public final class SpilledWrites implements Closeable {
    /** File names of spilled transactions start with this; the engine deletes leftovers at open. */
    public static final String FILE_PREFIX = "betree-txn-";
    /** Runs a level collects before they are merged into one run of the next level. */
    static final int FAN_IN = 8;
    private static final AtomicLong NEXT_NAME = new AtomicLong();

    private final StorageEnv storage;
    private final Path directory;
    private final String name;
    /** Level 0 first; a level with no runs may have no file. */
    private final List<Level> levels = new ArrayList<>();
    private int filesCreated;

    private static final class Level {
        SpillFile file;
        final List<SortedRun> runs = new ArrayList<>();
    }

    private SpilledWrites(StorageEnv storage, Path directory) {
        this.storage = storage;
        this.directory = directory;
        this.name = FILE_PREFIX + NEXT_NAME.incrementAndGet();
    }

    /** Starts an empty set of runs; files are created under {@code directory} as they are needed. */
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
        SortedRun run = fileOf(level(0)).append(sorted);
        if (run == null) {
            return;
        }
        level(0).runs.add(run);
        for (int l = 0; level(l).runs.size() >= FAN_IN; l++) {
            Level full = level(l);
            SortedRun merged = fileOf(level(l + 1)).append(new MergedWrites(sources(full.runs)));
            level(l + 1).runs.add(merged);
            full.runs.clear();
            full.file.close();
            full.file = null;
        }
    }

    private Level level(int l) {
        while (levels.size() <= l) {
            levels.add(new Level());
        }
        return levels.get(l);
    }

    private SpillFile fileOf(Level level) {
        if (level.file == null) {
            level.file = SpillFile.create(storage, directory.resolve(name + "-" + (++filesCreated) + ".spill"));
        }
        return level.file;
    }

    /** Every run, oldest first: the highest level first, each level's runs in order. */
    private List<SortedRun> runsOldestFirst() {
        List<SortedRun> all = new ArrayList<>();
        for (int l = levels.size() - 1; l >= 0; l--) {
            all.addAll(levels.get(l).runs);
        }
        return all;
    }

    private static List<Iterator<Op>> sources(List<SortedRun> runs) {
        List<Iterator<Op>> sources = new ArrayList<>(runs.size());
        for (SortedRun r : runs) {
            sources.add(r.all());
        }
        return sources;
    }

    /** The latest spilled write of {@code key} to index {@code indexId}, or null if none. */
    public Op lookup(int indexId, byte[] key) {
        List<SortedRun> runs = runsOldestFirst();
        for (int i = runs.size() - 1; i >= 0; i--) {
            Op op = runs.get(i).lookup(indexId, key);
            if (op != null) {
                return op;
            }
        }
        return null;
    }

    /**
     * The latest spilled write of each key of index {@code indexId} in {@code [from, limit)}
     * ({@code limit} null: no upper end), in key order, read a block at a time.
     */
    public Iterator<Op> range(int indexId, byte[] from, byte[] limit) {
        List<Iterator<Op>> sources = new ArrayList<>();
        for (SortedRun run : runsOldestFirst()) {
            sources.add(run.range(indexId, from, limit));
        }
        return new MergedWrites(sources);
    }

    /**
     * Merges every run into one, the latest write of each key, in a new file, and deletes the
     * others. This object is closed afterwards; the caller owns the returned run.
     */
    public CommitRun mergeForCommit() {
        SpillFile merged = SpillFile.create(storage, directory.resolve(name + ".commit"));
        try {
            List<Integer> indexIds = new ArrayList<>();
            Iterator<Op> all = new MergedWrites(sources(runsOldestFirst()));
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
        RuntimeException failed = null;
        for (Level level : levels) {
            level.runs.clear();
            if (level.file != null) {
                try {
                    level.file.close();
                } catch (RuntimeException e) {
                    failed = failed == null ? e : failed;
                }
                level.file = null;
            }
        }
        if (failed != null) {
            throw failed;
        }
    }
}
