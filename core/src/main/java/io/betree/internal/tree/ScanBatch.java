package io.betree.internal.tree;

import io.betree.internal.cache.CacheEntry;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * A run of live entries read in one descent: those of one basement, from a start key on, merged
 * with every message pending above that basement, up to a number of entries the reader chooses.
 * A cursor reads batch after batch, each starting at the previous batch's {@link #resumeKey()}; no
 * pin is held between batches.
 */
public final class ScanBatch {
    private static final byte[] TOMBSTONE = new byte[0];
    /** Marks a key whose newest pending message is an update, until {@link Updates#resolve} works it out. */
    private static final byte[] UPDATED = new byte[0];
    /** A transaction's own writes one batch takes at most (see {@link ScanOverlay}). */
    static final int OVERLAY_BATCH = 4096;

    private final List<byte[]> keys;
    private final List<byte[]> values;
    private final byte[] resumeKey;
    private final int tombstones;
    /** Whether a range message above the basement covered part of the batch. */
    private final boolean rangesAbove;

    private ScanBatch(List<byte[]> keys, List<byte[]> values, byte[] resumeKey, int tombstones, boolean rangesAbove) {
        this.keys = keys;
        this.values = values;
        this.resumeKey = resumeKey;
        this.tombstones = tombstones;
        this.rangesAbove = rangesAbove;
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

    /**
     * Pending deletes this batch stepped over: messages above the basement that hid a row or
     * deleted nothing. Many of them mean reads of this range pay for deletes that a flush would
     * apply once (see {@link BeTree#scanBatch}).
     */
    int tombstones() {
        return tombstones;
    }

    /**
     * Whether a range message waiting above the basement covered part of the batch, which made the
     * batch work out its keys one by one: a flush of its path applies the message once instead
     * (see {@link BeTree#scanBatch}).
     */
    boolean rangesAbove() {
        return rangesAbove;
    }

    /** Where the next batch starts (inclusive), or {@code null} when the range is exhausted. */
    public byte[] resumeKey() {
        return resumeKey;
    }

    static ScanBatch read(NodeStore store, long rootBlock, byte[] from, byte[] to, long snapshotTs,
            ScanOverlay overlay, byte[] overlayTombstone, int maxEntries, UpdateFunctions functions) {
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
                BufferPartition partition = store.pinBufferIfAny(in, i);
                if (partition != null) {
                    path.add(partition);
                    buffers.add(partition.buffer());
                }
                node = store.pinChildForRead(in, i); // a scan needs no key filters
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
            TreeMap<byte[], byte[]> own = null;
            boolean cut = false;
            if (overlay != null) {
                own = new TreeMap<>(Keys::compare);
                Iterator<Map.Entry<byte[], byte[]>> it = overlay.range(from, limit);
                while (it.hasNext()) {
                    Map.Entry<byte[], byte[]> w = it.next();
                    if (own.size() == OVERLAY_BATCH) {
                        // The batch ends before this write: a large transaction's writes in one
                        // basement's range need not fit the heap.
                        limit = w.getKey();
                        cut = true;
                        break;
                    }
                    own.put(w.getKey(), w.getValue());
                }
            }
            long now = functions.nowMillis(); // one clock reading for the batch
            Updates updates = new Updates(buffers, basement, snapshotTs, functions, now);
            List<byte[]> pending;
            boolean rangesAbove = rangesIn(buffers, from, limit, snapshotTs);
            if (rangesAbove || overlay != null && overlay.hasRanges()) {
                pending = resolvedOneByOne(buffers, basement, from, limit, snapshotTs, own, overlay, overlayTombstone,
                        updates);
            } else if (own == null || own.isEmpty()) {
                pending = pendingRuns(buffers, from, limit, snapshotTs, updates);
            } else {
                pending = pendingWithOverlay(buffers, from, limit, snapshotTs, own, overlay, overlayTombstone, updates);
            }
            int[] tombstones = new int[1];
            byte[] full = mergeWithBasement(basement, from, limit, snapshotTs, now, pending, keys, values, maxEntries,
                    tombstones);
            if (full != null) {
                return new ScanBatch(keys, values, full, tombstones[0], rangesAbove);
            }
            if (cut) {
                return new ScanBatch(keys, values, limit, tombstones[0], rangesAbove);
            }
            boolean more = upper != null && (to == null || Keys.compare(upper, to) < 0);
            return new ScanBatch(keys, values, more ? upper : null, tombstones[0], rangesAbove);
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
     * The pending messages in {@code [from, limit)} that a snapshot at {@code snapshotTs} sees, the
     * newest per key, in key order, as key, value pairs ({@link #TOMBSTONE} for a delete). This is
     * the common case, no transaction's own writes: each level's visible messages are already in
     * key order, so they are merged level by level in one pass each, and a tombstone costs a
     * comparison, not a map insertion. A range full of deleted rows (a queue's head) is skipped
     * quickly that way.
     */
    private static List<byte[]> pendingRuns(List<MessageBuffer> buffers, byte[] from, byte[] limit, long snapshotTs,
            Updates updates) {
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
                int c = i >= src.length ? 1 : j >= visible.length ? -1 : src[i].compareKey(off[i], b, visible[j]);
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
        List<byte[]> pending = new ArrayList<>(2 * src.length);
        for (int m = 0; m < src.length; m++) {
            byte[] key = src[m].key(off[m]);
            byte type = src[m].type(off[m]);
            pending.add(key);
            pending.add(MessageType.isPut(type) ? orTombstone(Expiry.ofPut(type, src[m].value(off[m]), updates.now))
                    : type == MessageType.UPDATE ? updates.resolve(key) : TOMBSTONE);
        }
        return pending;
    }

    /** Whether a range message a snapshot at {@code snapshotTs} sees in {@code buffers} meets {@code [from, limit)}. */
    private static boolean rangesIn(List<MessageBuffer> buffers, byte[] from, byte[] limit, long snapshotTs) {
        for (MessageBuffer b : buffers) {
            if (b.hasRangeIn(from, limit, snapshotTs)) {
                return true;
            }
        }
        return false;
    }

    /**
     * As {@link #pendingWithOverlay} (or {@link #pendingRuns}, {@code own} null), where range
     * messages are pending or the transaction has range operations of its own: every key in
     * {@code [from, limit)} that the buffers or the basement hold, each worked out on its own, as a
     * point read would ({@link Updates#resolve}), the transaction's own range operations and
     * writes on top ({@link ScanOverlay#overRanges}). Every row of the basement in the range gets an
     * answer, so that the merge with the basement takes none of them as it stands. Slower than the
     * merges, which is what a scan pays while a range delete or a broadcast waits above its rows.
     */
    private static List<byte[]> resolvedOneByOne(List<MessageBuffer> buffers, Basement basement, byte[] from,
            byte[] limit, long snapshotTs, java.util.NavigableMap<byte[], byte[]> own, ScanOverlay overlay,
            byte[] overlayTombstone, Updates updates) {
        TreeMap<byte[], byte[]> map = new TreeMap<>(Keys::compare);
        for (MessageBuffer b : buffers) {
            for (int off : b.visibleInRange(from, limit, snapshotTs)) {
                map.put(b.key(off), null);
            }
        }
        for (int p = basement.lowerBound(from); p < basement.count() && (limit == null || basement.compareKey(p, limit) < 0);
                p = basement.keyEnd(p)) {
            map.put(basement.key(p), null);
        }
        if (own != null) {
            for (byte[] key : own.keySet()) {
                map.put(key.clone(), null);
            }
        }
        for (Map.Entry<byte[], byte[]> e : map.entrySet()) {
            byte[] key = e.getKey();
            byte[] mine = own == null ? null : own.get(key);
            byte[] value;
            if (mine != null && !overlay.isUpdateList(mine)) {
                value = mine == overlayTombstone ? TOMBSTONE : mine.clone();
            } else {
                byte[] committed = updates.resolve(key);
                byte[] v = committed == TOMBSTONE ? null : committed;
                if (overlay != null) {
                    v = overlay.overRanges(key, v);
                }
                if (mine != null) {
                    v = UpdateList.apply(updates.functions, key, v, mine);
                }
                value = v == null ? TOMBSTONE : v;
            }
            e.setValue(value);
        }
        List<byte[]> pending = new ArrayList<>(2 * map.size());
        for (Map.Entry<byte[], byte[]> e : map.entrySet()) {
            pending.add(e.getKey());
            pending.add(e.getValue());
        }
        return pending;
    }

    /** As {@link #pendingRuns}, with a transaction's own writes on top, through a sorted map. */
    private static List<byte[]> pendingWithOverlay(List<MessageBuffer> buffers, byte[] from, byte[] limit,
            long snapshotTs, java.util.NavigableMap<byte[], byte[]> own, ScanOverlay overlay, byte[] overlayTombstone,
            Updates updates) {
        TreeMap<byte[], byte[]> map = new TreeMap<>(Keys::compare);
        for (int level = buffers.size() - 1; level >= 0; level--) {
            MessageBuffer b = buffers.get(level);
            for (int off : b.visibleInRange(from, limit, snapshotTs)) {
                byte type = b.type(off);
                map.put(b.key(off), MessageType.isPut(type) ? orTombstone(Expiry.ofPut(type, b.value(off), updates.now))
                        : type == MessageType.UPDATE ? UPDATED : TOMBSTONE);
            }
        }
        for (Map.Entry<byte[], byte[]> e : map.entrySet()) {
            byte[] mine = own.get(e.getKey());
            // Worked out unless the transaction's own put or delete of the key replaces it below.
            if (e.getValue() == UPDATED && (mine == null || overlay.isUpdateList(mine))) {
                e.setValue(updates.resolve(e.getKey()));
            }
        }
        for (Map.Entry<byte[], byte[]> e : own.entrySet()) {
            byte[] v = e.getValue();
            if (overlay.isUpdateList(v)) {
                map.put(e.getKey().clone(), updates.over(e.getKey(), map.get(e.getKey()), v));
            } else {
                map.put(e.getKey().clone(), v == overlayTombstone ? TOMBSTONE : v.clone());
            }
        }
        List<byte[]> pending = new ArrayList<>(2 * map.size());
        for (Map.Entry<byte[], byte[]> e : map.entrySet()) {
            pending.add(e.getKey());
            pending.add(e.getValue());
        }
        return pending;
    }

    /**
     * Merges the basement's rows in {@code [from, limit)} with {@code pending} (key, value pairs in
     * key order, which win over rows of the same key), keeping what a snapshot at
     * {@code snapshotTs} sees and dropping tombstones, which it counts in {@code tombstones[0]}.
     * Stops before an entry past {@code maxEntries} and returns the key just after the last one
     * taken, where the next batch starts; null when it took everything. (A short scan took the rest
     * of its basement, up to some 1,400 entries for 100 used; copying them drew 60% of the CPU
     * samples of warm 100-row scans.)
     */
    private static byte[] mergeWithBasement(Basement basement, byte[] from, byte[] limit, long snapshotTs, long now,
            List<byte[]> pending, List<byte[]> keys, List<byte[]> values, int maxEntries, int[] tombstones) {
        int m = 0;
        int p = basement.lowerBound(from);
        while (p < basement.count() && (limit == null || basement.compareKey(p, limit) < 0)) {
            while (m < pending.size() && basement.compareKey(p, pending.get(m)) > 0) {
                if (keys.size() >= maxEntries && pending.get(m + 1) != TOMBSTONE) {
                    return justAfter(keys);
                }
                m = emitPending(pending, m, keys, values, tombstones);
            }
            int end = basement.keyEnd(p);
            if (m < pending.size() && basement.compareKey(p, pending.get(m)) == 0) {
                if (keys.size() >= maxEntries && pending.get(m + 1) != TOMBSTONE) {
                    return justAfter(keys);
                }
                m = emitPending(pending, m, keys, values, tombstones);
            } else {
                int row = basement.visibleRow(p, end, snapshotTs, now);
                if (row >= 0) {
                    if (keys.size() >= maxEntries) {
                        return justAfter(keys);
                    }
                    keys.add(basement.key(row));
                    values.add(basement.value(row));
                }
            }
            p = end;
        }
        while (m < pending.size()) {
            if (keys.size() >= maxEntries && pending.get(m + 1) != TOMBSTONE) {
                return justAfter(keys);
            }
            m = emitPending(pending, m, keys, values, tombstones);
        }
        return null;
    }

    /** The smallest key after the last of {@code keys}: it with a zero byte appended. */
    private static byte[] justAfter(List<byte[]> keys) {
        byte[] last = keys.get(keys.size() - 1);
        return Arrays.copyOf(last, last.length + 1);
    }

    /** Emits the pending pair at {@code m} unless it is a tombstone; returns the next pair's index. */
    private static int emitPending(List<byte[]> pending, int m, List<byte[]> keys, List<byte[]> values,
            int[] tombstones) {
        byte[] value = pending.get(m + 1);
        if (value != TOMBSTONE) {
            keys.add(pending.get(m));
            values.add(value);
        } else {
            tombstones[0]++;
        }
        return m + 2;
    }

    /**
     * Works out the value of a key whose newest pending message in the batch's range is an update
     * (or of any key, where range messages are pending): its messages in the buffers on the path,
     * newest first, down to a put or a delete, or else the basement's row, then the updates applied
     * oldest first ({@link PendingUpdates}).
     */
    private static final class Updates {
        private final List<MessageBuffer> buffersTopDown;
        private final Basement basement;
        private final long snapshotTs;
        final UpdateFunctions functions;
        /** The batch's clock reading ({@link Expiry}). */
        final long now;

        Updates(List<MessageBuffer> buffersTopDown, Basement basement, long snapshotTs, UpdateFunctions functions,
                long now) {
            this.buffersTopDown = buffersTopDown;
            this.basement = basement;
            this.snapshotTs = snapshotTs;
            this.functions = functions;
            this.now = now;
        }

        /** The key's value, or {@link #TOMBSTONE} when absent. */
        byte[] resolve(byte[] key) {
            PendingUpdates pending = new PendingUpdates(functions, key, now);
            for (MessageBuffer buffer : buffersTopDown) {
                byte[] found = pending.readBuffer(buffer, snapshotTs);
                if (found != PendingUpdates.NOT_FOUND) {
                    return orTombstone(pending.over(found));
                }
            }
            return orTombstone(pending.over(basement.get(key, snapshotTs, now)));
        }

        /**
         * The value a transaction's own {@code updateList} makes of {@code key}'s: {@code pending}
         * (what the buffers above say, {@link #TOMBSTONE} for absent) or, when null, the basement's row.
         */
        byte[] over(byte[] key, byte[] pending, byte[] updateList) {
            byte[] base = pending == null ? basement.get(key, snapshotTs, now) : pending == TOMBSTONE ? null : pending;
            return orTombstone(UpdateList.apply(functions, key, base, updateList));
        }

    }

    private static byte[] orTombstone(byte[] value) {
        return value == null ? TOMBSTONE : value;
    }
}
