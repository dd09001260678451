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
            List<byte[]> keys = new ArrayList<>();
            List<byte[]> values = new ArrayList<>();
            var own = overlay == null ? null
                    : limit == null ? overlay.tailMap(from, true) : overlay.subMap(from, true, limit, false);
            if (own == null || own.isEmpty()) {
                mergeStreaming(buffers, basement, from, limit, snapshotTs, keys, values);
            } else {
                mergeWithOverlay(buffers, basement, from, limit, snapshotTs, own, overlayTombstone, keys, values);
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

    /**
     * The common case, no transaction's own writes: each level's visible messages are already in
     * key order, so they are merged with each other and with the basement's rows in one pass
     * each, and a tombstone costs a comparison, not a map insertion. A range full of deleted rows
     * (a queue's head) is skipped quickly that way.
     */
    private static void mergeStreaming(List<MessageBuffer> buffers, Basement basement, byte[] from, byte[] limit,
            long snapshotTs, List<byte[]> keys, List<byte[]> values) {
        MessageBuffer[] src = new MessageBuffer[0];
        int[] off = new int[0];
        for (int level = buffers.size() - 1; level >= 0; level--) {
            MessageBuffer b = buffers.get(level);
            int[] visible = b.visibleInRange(from, limit, snapshotTs);
            if (visible.length == 0) {
                continue;
            }
            int n = 0;
            MessageBuffer[] mSrc = new MessageBuffer[src.length + visible.length];
            int[] mOff = new int[mSrc.length];
            int i = 0;
            int j = 0;
            while (i < src.length || j < visible.length) {
                int c = i >= src.length ? 1 : j >= visible.length ? -1
                        : Keys.compare(src[i].data(), off[i] + MessageBuffer.HEADER, src[i].keyLength(off[i]),
                                b.data(), visible[j] + MessageBuffer.HEADER, b.keyLength(visible[j]));
                if (c < 0) {
                    mSrc[n] = src[i];
                    mOff[n++] = off[i++];
                } else if (c > 0) {
                    mSrc[n] = b;
                    mOff[n++] = visible[j++];
                } else {
                    boolean upperNewer = b.msn(visible[j]) >= src[i].msn(off[i]);
                    mSrc[n] = upperNewer ? b : src[i];
                    mOff[n++] = upperNewer ? visible[j] : off[i];
                    i++;
                    j++;
                }
            }
            src = java.util.Arrays.copyOf(mSrc, n);
            off = java.util.Arrays.copyOf(mOff, n);
        }
        int m = 0;
        byte[] messageKey = src.length > 0 ? src[0].key(off[0]) : null;
        int p = basement.lowerBound(from);
        while (p < basement.count() && (limit == null || basement.compareKey(p, limit) < 0)) {
            while (messageKey != null && basement.compareKey(p, messageKey) > 0) {
                emitMessage(src[m], off[m], messageKey, keys, values);
                messageKey = ++m < src.length ? src[m].key(off[m]) : null;
            }
            int end = basement.keyEnd(p);
            if (messageKey != null && basement.compareKey(p, messageKey) == 0) {
                emitMessage(src[m], off[m], messageKey, keys, values);
                messageKey = ++m < src.length ? src[m].key(off[m]) : null;
            } else {
                int row = basement.visibleRow(p, end, snapshotTs);
                if (row >= 0) {
                    keys.add(basement.key(row));
                    values.add(basement.value(row));
                }
            }
            p = end;
        }
        while (messageKey != null) {
            emitMessage(src[m], off[m], messageKey, keys, values);
            messageKey = ++m < src.length ? src[m].key(off[m]) : null;
        }
    }

    private static void emitMessage(MessageBuffer b, int off, byte[] key, List<byte[]> keys, List<byte[]> values) {
        if (b.type(off) == MessageType.PUT) {
            keys.add(key);
            values.add(b.value(off));
        }
    }

    /** With a transaction's own writes in range: pending messages and those writes go through a sorted map. */
    private static void mergeWithOverlay(List<MessageBuffer> buffers, Basement basement, byte[] from, byte[] limit,
            long snapshotTs, java.util.NavigableMap<byte[], byte[]> own, byte[] overlayTombstone, List<byte[]> keys,
            List<byte[]> values) {
        TreeMap<byte[], byte[]> pending = new TreeMap<>(Keys::compare);
        for (int level = buffers.size() - 1; level >= 0; level--) {
            buffers.get(level).applyRange(from, limit, snapshotTs, pending, TOMBSTONE);
        }
        for (Map.Entry<byte[], byte[]> e : own.entrySet()) {
            pending.put(e.getKey().clone(), e.getValue() == overlayTombstone ? TOMBSTONE : e.getValue().clone());
        }
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
    }
}
