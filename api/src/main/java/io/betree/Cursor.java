package io.betree;

import io.betree.internal.tree.BeTree;
import io.betree.internal.tree.Keys;
import io.betree.internal.tree.ScanBatch;

/**
 * Iterates the entries of a key range in ascending unsigned-lexicographic key order:
 *
 * <pre>{@code
 * try (Cursor c = index.scan(from, to)) {
 *     while (c.next()) { use(c.key(), c.value()); }
 * }
 * }</pre>
 *
 * <p>The cursor reads the index in batches, merging pending messages: a few dozen entries first,
 * twice as many each time after, up to a basement at a time, so that a short scan copies little
 * more than it uses. It holds no lock or node between reads: it never blocks writers. A cursor of
 * a {@link Transaction} sees the transaction's snapshot and its own writes. A cursor without one
 * sees, in each batch, the latest commit when it got there: commits made while it iterates may
 * or may not be seen. Not thread-safe: use a
 * cursor from one thread at a time. {@link #close()} is idempotent.
 */
public final class Cursor implements AutoCloseable {
    /** Entries the first batch takes at most; each later one takes twice the one before. */
    private static final int FIRST_BATCH = 64;
    private final Index index;
    private final BeTree tree;
    private final byte[] to;
    private final Transaction txn;
    private ScanBatch batch;
    private int position = -1;
    private byte[] nextStart;
    private int batchEntries = FIRST_BATCH;
    private boolean closed;

    Cursor(Index index, BeTree tree, byte[] from, byte[] to, Transaction txn) {
        this.index = index;
        this.tree = tree;
        this.to = to;
        this.txn = txn;
        this.nextStart = from;
    }

    /**
     * Advances to the next entry.
     *
     * @return false when the range is exhausted
     * @throws IllegalStateException if the cursor or its environment is closed
     */
    public boolean next() {
        checkOpen();
        while (true) {
            if (batch != null && position + 1 < batch.size()) {
                position++;
                return true;
            }
            if (nextStart == null) {
                batch = null;
                return false;
            }
            if (to != null && Keys.compare(nextStart, to) >= 0) {
                nextStart = null;
                continue;
            }
            try {
                batch = txn == null
                        ? tree.scanBatch(nextStart, to, index.visibleTs(), null, null, batchEntries)
                        : tree.scanBatch(nextStart, to, txn.snapshotTs(), txn.writesTo(index), Transaction.DELETED,
                                batchEntries);
                batchEntries = batchEntries > Integer.MAX_VALUE / 2 ? Integer.MAX_VALUE : batchEntries * 2;
            } catch (io.betree.internal.fault.BetreeException e) {
                throw Failures.translate(e);
            }
            nextStart = batch.resumeKey();
            position = -1;
        }
    }

    /**
     * The current entry's key (a fresh copy).
     *
     * @throws IllegalStateException if {@link #next()} has not returned true
     */
    public byte[] key() {
        checkPositioned();
        return batch.key(position).clone();
    }

    /**
     * The current entry's value (a fresh copy).
     *
     * @throws IllegalStateException if {@link #next()} has not returned true
     */
    public byte[] value() {
        checkPositioned();
        return batch.value(position).clone();
    }

    private void checkOpen() {
        if (closed) {
            throw new IllegalStateException("cursor is closed");
        }
        index.checkOpen();
        if (txn != null) {
            txn.checkActive();
        }
    }

    private void checkPositioned() {
        checkOpen();
        if (batch == null || position < 0) {
            throw new IllegalStateException("cursor is not positioned on an entry; call next() first");
        }
    }

    /** Releases the cursor. Idempotent. */
    @Override
    public void close() {
        closed = true;
        batch = null;
    }
}
