package io.betree;

import io.betree.internal.log.CommitRecord;
import io.betree.internal.log.CommitRecord.Op;
import io.betree.internal.tree.Expiry;
import io.betree.internal.tree.Keys;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.NoSuchElementException;
import java.util.Set;
import java.util.function.Predicate;

/**
 * A transaction's own writes to one index in key order, as a scan lays them over its snapshot: the
 * writes spilled to disk merged with the newer ones still on the heap, the heap's winning on a
 * shared key; deletes as {@link Transaction#DELETED}, a spilled update as its list of calls, which
 * it adds to a set the scan's overlay consults (by identity), a spilled expiring put as its value,
 * or a delete once it expired.
 */
final class OwnWrites implements Iterator<Map.Entry<byte[], byte[]>> {
    private final Iterator<Op> older;
    private final Iterator<Map.Entry<byte[], byte[]>> newer;
    private Op nextOlder;
    private Map.Entry<byte[], byte[]> nextNewer;
    private final Set<byte[]> olderUpdateLists;
    /** The clock the scan reads expiring values against. */
    private final long now;

    OwnWrites(Iterator<Op> older, Iterator<Map.Entry<byte[], byte[]>> newer, Set<byte[]> olderUpdateLists, long now) {
        this.older = older;
        this.newer = newer;
        this.olderUpdateLists = olderUpdateLists;
        this.now = now;
        this.nextOlder = older.hasNext() ? older.next() : null;
        this.nextNewer = newer.hasNext() ? newer.next() : null;
    }

    @Override
    public boolean hasNext() {
        return nextOlder != null || nextNewer != null;
    }

    @Override
    public Map.Entry<byte[], byte[]> next() {
        if (!hasNext()) {
            throw new NoSuchElementException();
        }
        int c = nextOlder == null ? 1 : nextNewer == null ? -1 : Keys.compare(nextOlder.key(), nextNewer.getKey());
        if (c < 0) {
            Op op = nextOlder;
            nextOlder = older.hasNext() ? older.next() : null;
            if (op.type() == CommitRecord.UPDATE) {
                olderUpdateLists.add(op.value());
            } else if (op.type() == CommitRecord.PUT_EXPIRING) {
                return Map.entry(op.key(), live(op.value(), now));
            }
            return Map.entry(op.key(), op.value() == null ? Transaction.DELETED : op.value());
        }
        if (c == 0) {
            nextOlder = older.hasNext() ? older.next() : null;
        }
        Map.Entry<byte[], byte[]> w = nextNewer;
        nextNewer = newer.hasNext() ? newer.next() : null;
        return w;
    }

    /** An expiring value's stored form as a scan at {@code nowMillis} shows it: the value, or a delete once expired. */
    static byte[] live(byte[] stored, long nowMillis) {
        byte[] value = Expiry.live(stored, nowMillis);
        return value == null ? Transaction.DELETED : value;
    }

    /**
     * The writes on the heap as log ops, ascending by index id and key: what a spill moves to disk;
     * the values {@code isUpdateList} accepts become updates, those {@code isExpiring} accepts
     * expiring puts. Reads each index's sorted view; the sets must not change while it is used.
     */
    static Iterator<Op> sortedOps(Map<Index, WriteSet> writes, Predicate<byte[]> isUpdateList,
            Predicate<byte[]> isExpiring) {
        List<Map.Entry<Index, WriteSet>> byId = new ArrayList<>(writes.entrySet());
        byId.sort((a, b) -> Integer.compare(a.getKey().id(), b.getKey().id()));
        List<Iterator<Op>> perIndex = new ArrayList<>(byId.size());
        for (Map.Entry<Index, WriteSet> e : byId) {
            int id = e.getKey().id();
            Iterator<Map.Entry<byte[], byte[]>> it = e.getValue().sorted().entrySet().iterator();
            perIndex.add(new Iterator<>() {
                @Override
                public boolean hasNext() {
                    return it.hasNext();
                }

                @Override
                public Op next() {
                    Map.Entry<byte[], byte[]> w = it.next();
                    return w.getValue() == Transaction.DELETED ? Op.delete(id, w.getKey())
                            : isUpdateList.test(w.getValue()) ? new Op(id, CommitRecord.UPDATE, w.getKey(), w.getValue())
                            : isExpiring.test(w.getValue()) ? new Op(id, CommitRecord.PUT_EXPIRING, w.getKey(), w.getValue())
                            : Op.put(id, w.getKey(), w.getValue());
                }
            });
        }
        Iterator<Iterator<Op>> chain = perIndex.iterator();
        return new Iterator<>() {
            private Iterator<Op> current = Collections.emptyIterator();

            @Override
            public boolean hasNext() {
                while (!current.hasNext() && chain.hasNext()) {
                    current = chain.next();
                }
                return current.hasNext();
            }

            @Override
            public Op next() {
                if (!hasNext()) {
                    throw new NoSuchElementException();
                }
                return current.next();
            }
        };
    }
}
