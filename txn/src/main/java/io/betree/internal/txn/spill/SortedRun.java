package io.betree.internal.txn.spill;

import io.betree.internal.log.CommitRecord.Op;
import io.betree.internal.tree.Keys;
import java.util.Comparator;
import java.util.Iterator;
import java.util.List;
import java.util.NoSuchElementException;

/**
 * One run of a {@link SpillFile}: writes ascending by index id and key, one per key, in blocks whose
 * first writes stay in memory so that a lookup reads one block. Safe for concurrent readers as long
 * as its file stays open.
 */
final class SortedRun {
    /** Writes ordered by index id, then key. */
    static final Comparator<Op> ORDER = SortedRun::compare;

    private final SpillFile file;
    /** Block start offsets, and the run's end as the last element. */
    private final long[] blockStarts;
    private final Op[] firsts;
    private final Op last;
    private final long count;

    SortedRun(SpillFile file, long[] blockStarts, Op[] firsts, Op last, long count) {
        this.file = file;
        this.blockStarts = blockStarts;
        this.firsts = firsts;
        this.last = last;
        this.count = count;
    }

    /** Writes in the run. */
    long count() {
        return count;
    }

    /** The write of {@code key} to index {@code indexId}, or null if the run has none. */
    Op lookup(int indexId, byte[] key) {
        if (compare(indexId, key, last) > 0) {
            return null;
        }
        int b = blockFor(indexId, key);
        if (b < 0) {
            return null;
        }
        List<Op> ops = file.readBlock(blockStarts[b], blockStarts[b + 1]);
        int lo = 0;
        int hi = ops.size() - 1;
        while (lo <= hi) {
            int mid = (lo + hi) >>> 1;
            int c = compare(indexId, key, ops.get(mid));
            if (c == 0) {
                return ops.get(mid);
            } else if (c < 0) {
                hi = mid - 1;
            } else {
                lo = mid + 1;
            }
        }
        return null;
    }

    /** The writes at or after {@code key} of index {@code indexId} (null key: the index's first), in order. */
    Iterator<Op> from(int indexId, byte[] key) {
        int b = Math.max(0, key == null ? blockFor(indexId, new byte[0]) : blockFor(indexId, key));
        return new Iterator<>() {
            private int block = b;
            private List<Op> ops = List.of();
            private int next;
            private Op peeked = advance(true);

            private Op advance(boolean skipSmaller) {
                while (true) {
                    if (next < ops.size()) {
                        Op op = ops.get(next++);
                        if (skipSmaller && (op.indexId() < indexId
                                || op.indexId() == indexId && key != null && Keys.compare(op.key(), key) < 0)) {
                            continue;
                        }
                        return op;
                    }
                    if (block >= firsts.length) {
                        return null;
                    }
                    ops = file.readBlock(blockStarts[block], blockStarts[block + 1]);
                    block++;
                    next = 0;
                }
            }

            @Override
            public boolean hasNext() {
                return peeked != null;
            }

            @Override
            public Op next() {
                if (peeked == null) {
                    throw new NoSuchElementException();
                }
                Op op = peeked;
                peeked = advance(false);
                return op;
            }
        };
    }

    /**
     * The writes to index {@code indexId} with keys in {@code [from, limit)} (null: open end), in
     * key order.
     */
    Iterator<Op> range(int indexId, byte[] from, byte[] limit) {
        Iterator<Op> writes = from(indexId, from);
        return new Iterator<>() {
            private Op next = advance();

            private Op advance() {
                if (!writes.hasNext()) {
                    return null;
                }
                Op op = writes.next();
                return op.indexId() != indexId || limit != null && Keys.compare(op.key(), limit) >= 0 ? null : op;
            }

            @Override
            public boolean hasNext() {
                return next != null;
            }

            @Override
            public Op next() {
                Op op = next;
                if (op == null) {
                    throw new NoSuchElementException();
                }
                next = advance();
                return op;
            }
        };
    }

    /** Every write of the run, in order. */
    Iterator<Op> all() {
        return from(Integer.MIN_VALUE, null);
    }

    /** The last block whose first write is at or before (indexId, key), or -1. */
    private int blockFor(int indexId, byte[] key) {
        int lo = 0;
        int hi = firsts.length - 1;
        int found = -1;
        while (lo <= hi) {
            int mid = (lo + hi) >>> 1;
            if (compare(indexId, key, firsts[mid]) >= 0) {
                found = mid;
                lo = mid + 1;
            } else {
                hi = mid - 1;
            }
        }
        return found;
    }

    private static int compare(int indexId, byte[] key, Op op) {
        int c = Integer.compare(indexId, op.indexId());
        return c != 0 ? c : Keys.compare(key, op.key());
    }

    static int compare(Op a, Op b) {
        return compare(a.indexId(), a.key(), b);
    }
}
