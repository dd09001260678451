package io.betree.internal.tree;

import io.betree.internal.cache.CacheEntry;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * A run of live entries read in one descent: those of one basement, from a start key on, merged
 * with every message pending above that basement. A cursor reads batch after batch, each starting
 * at the previous batch's {@link #resumeKey()}; no pin is held between batches.
 */
public final class ScanBatch {
    private static final byte[] TOMBSTONE = new byte[0];

    private final List<byte[]> keys;
    private final List<byte[]> values;
    private final byte[] resumeKey;

    private ScanBatch(List<byte[]> keys, List<byte[]> values, byte[] resumeKey) {
        this.keys = keys;
        this.values = values;
        this.resumeKey = resumeKey;
    }

    /** Number of entries. */
    public int size() {
        return keys.size();
    }

    /** Key of entry {@code i}. */
    public byte[] key(int i) {
        return keys.get(i);
    }

    /** Value of entry {@code i}. */
    public byte[] value(int i) {
        return values.get(i);
    }

    /** Where the next batch starts (inclusive), or {@code null} when the range is exhausted. */
    public byte[] resumeKey() {
        return resumeKey;
    }

    private static void emit(Map.Entry<byte[], byte[]> e, List<byte[]> keys, List<byte[]> values) {
        if (e.getValue() != TOMBSTONE) {
            keys.add(e.getKey());
            values.add(e.getValue());
        }
    }

    static ScanBatch read(NodeStore store, long rootBlock, byte[] from, byte[] to, long snapshotTs,
            java.util.NavigableMap<byte[], byte[]> overlay, byte[] overlayTombstone) {
        List<CacheEntry> path = new ArrayList<>();
        List<MessageBuffer> buffers = new ArrayList<>();
        byte[] upper = null;
        Basement basement = null;
        try {
            CacheEntry node = store.pinNode(rootBlock);
            path.add(node);
            while (node instanceof InternalNode) {
                InternalNode in = (InternalNode) node;
                int i = in.childFor(from);
                if (i < in.pivots.size()) {
                    upper = in.pivots.get(i);
                }
                buffers.add(in.buffers.get(i));
                node = store.pinChild(in, i);
                path.add(node);
            }
            LeafNode leaf = (LeafNode) node;
            int b = leaf.basementFor(from);
            if (b < leaf.pivots.size()) {
                upper = leaf.pivots.get(b);
            }
            byte[] limit = upper;
            if (to != null && (limit == null || Keys.compare(to, limit) < 0)) {
                limit = to;
            }
            basement = store.pinBasement(leaf.basements.get(b));
            // Pending messages (usually few) go into a sorted map; the basement's rows, already
            // sorted, are merged with it in one pass.
            TreeMap<byte[], byte[]> pending = new TreeMap<>(Keys::compare);
            for (int level = buffers.size() - 1; level >= 0; level--) {
                buffers.get(level).applyRange(from, limit, snapshotTs, pending, TOMBSTONE);
            }
            if (overlay != null) {
                var own = limit == null ? overlay.tailMap(from, true) : overlay.subMap(from, true, limit, false);
                for (Map.Entry<byte[], byte[]> e : own.entrySet()) {
                    pending.put(e.getKey().clone(), e.getValue() == overlayTombstone ? TOMBSTONE : e.getValue().clone());
                }
            }
            List<byte[]> keys = new ArrayList<>();
            List<byte[]> values = new ArrayList<>();
            java.util.Iterator<Map.Entry<byte[], byte[]>> it = pending.entrySet().iterator();
            Map.Entry<byte[], byte[]> next = it.hasNext() ? it.next() : null;
            int p = basement.lowerBound(from);
            while (p < basement.count() && (limit == null || basement.compareKey(p, limit) < 0)) {
                while (next != null && basement.compareKey(p, next.getKey()) > 0) {
                    emit(next, keys, values);
                    next = it.hasNext() ? it.next() : null;
                }
                int end = basement.keyEnd(p);
                if (next != null && basement.compareKey(p, next.getKey()) == 0) {
                    emit(next, keys, values);
                    next = it.hasNext() ? it.next() : null;
                } else {
                    int row = basement.visibleRow(p, end, snapshotTs);
                    if (row >= 0) {
                        keys.add(basement.key(row));
                        values.add(basement.value(row));
                    }
                }
                p = end;
            }
            while (next != null) {
                emit(next, keys, values);
                next = it.hasNext() ? it.next() : null;
            }
            boolean more = upper != null && (to == null || Keys.compare(upper, to) < 0);
            return new ScanBatch(keys, values, more ? upper : null);
        } finally {
            if (basement != null) {
                store.unpin(basement, false);
            }
            for (CacheEntry e : path) {
                store.unpin(e, false);
            }
        }
    }
}
