package io.betree.internal.txn.spill;

import io.betree.internal.log.CommitRecord;
import io.betree.internal.log.CommitRecord.Op;
import java.io.Closeable;
import java.util.Collections;
import java.util.Iterator;
import java.util.List;
import java.util.concurrent.locks.ReentrantReadWriteLock;

/**
 * The writes of a spilled transaction's commit: one sorted run, one write per key, in its own file.
 * The commit streams it into the log and the trees; afterwards the conflict table keeps it, to tell
 * transactions whose snapshots predate the commit which keys it wrote, until none is left.
 *
 * <p>Thread-safe. {@link #close()} (which deletes the file) waits for lookups in progress; an
 * iterator must be used up before close (the conflict table closes a run only once no snapshot
 * predates its commit, and the commit is visible). Idempotent close.
 */
public final class CommitRun implements Closeable {
    private final ReentrantReadWriteLock open = new ReentrantReadWriteLock();
    private final SpillFile file;
    private final SortedRun run;
    private final List<Integer> indexIds;
    private boolean closed;

    CommitRun(SpillFile file, SortedRun run, List<Integer> indexIds) {
        this.file = file;
        this.run = run;
        this.indexIds = Collections.unmodifiableList(indexIds);
    }

    /** Writes in the commit. */
    public long count() {
        return run == null ? 0 : run.count();
    }

    /** The ids of the indexes written to, ascending. */
    public List<Integer> indexIds() {
        return indexIds;
    }

    /** The writes in order of index id and key; only while open. */
    public Iterator<Op> iterator() {
        return run == null ? Collections.emptyIterator() : run.all();
    }

    /** The writes to index {@code indexId} in key order; only while open. */
    public Iterator<Op> iterator(int indexId) {
        return run == null ? Collections.emptyIterator() : run.range(indexId, null, null);
    }

    /**
     * Whether the commit wrote {@code key} of index {@code indexId}; false once closed (the conflict
     * table closes it when no snapshot predates the commit any more).
     */
    public boolean contains(int indexId, byte[] key) {
        open.readLock().lock();
        try {
            return !closed && run != null && run.lookup(indexId, key) != null;
        } finally {
            open.readLock().unlock();
        }
    }

    /**
     * Whether a write of this commit other than an update (which is blind) shares its key with a
     * write of {@code other}: one pass over both runs, in key order. Both must stay open meanwhile.
     */
    public boolean sharesAKeyWith(CommitRun other) {
        Iterator<Op> mine = iterator();
        Iterator<Op> theirs = other.iterator();
        if (!mine.hasNext() || !theirs.hasNext()) {
            return false;
        }
        Op a = mine.next();
        Op b = theirs.next();
        while (true) {
            int c = SortedRun.compare(a, b);
            if (c == 0 && a.type() != CommitRecord.UPDATE) {
                return true; // an update of this run's is blind: it conflicts with nothing
            }
            if (c == 0) {
                c = -1;
            }
            if (c < 0) {
                if (!mine.hasNext()) {
                    return false;
                }
                a = mine.next();
            } else {
                if (!theirs.hasNext()) {
                    return false;
                }
                b = theirs.next();
            }
        }
    }

    /** Deletes the file. */
    @Override
    public void close() {
        open.writeLock().lock();
        try {
            if (!closed) {
                closed = true;
                file.close();
            }
        } finally {
            open.writeLock().unlock();
        }
    }
}
