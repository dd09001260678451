package io.betree.internal.tree;

import io.netty.buffer.ByteBuf;
import java.nio.ByteBuffer;
import java.util.Arrays;

/**
 * Reads of a {@link MessageBuffer} by key, across its sorted runs and its unsorted tail: the first
 * position of a key in a run, the newest message of a key that a snapshot sees, the largest key,
 * and the messages of a key range (or of the whole buffer) in (key, msn) order, the runs' slices
 * and the sorted tail merged on the fly, which is also the order the buffer is serialized in. The
 * buffer holds the messages and keeps its runs (see its class comment) and answers these through
 * its methods of the same names; nothing here changes it.
 *
 * <p>Holds no state. These are read-only methods of the buffer, so, as the buffer's, they may run
 * in several threads at once; whoever changes the buffer excludes them (the owning node's pin and
 * the index lock).
 */
final class BufferReads {
    private BufferReads() {
    }

    /** As {@link MessageBuffer#lowerBound(byte[], boolean)} within the sorted positions {@code [lo, hi)}. */
    static int lowerBound(MessageBuffer buffer, byte[] key, boolean strict, int lo, int hi) {
        long prefix = MessageBuffer.keyPrefix(key, 0);
        long prefix2 = MessageBuffer.keyPrefix(key, 8);
        while (lo < hi) {
            int mid = (lo + hi) >>> 1;
            int c = Long.compareUnsigned(buffer.prefixAt(mid), prefix);
            if (c == 0) {
                c = Long.compareUnsigned(buffer.prefix2At(mid), prefix2);
            }
            if (c == 0) {
                int off = buffer.offsetAt(mid);
                c = Keys.compare(buffer.dataView(), off + MessageBuffer.HEADER, buffer.keyLength(off), key);
            }
            if (c < 0 || (strict && c == 0)) {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        return lo;
    }

    /**
     * {@link MessageBuffer#findNewest}: a binary search of each run, then a pass over the tail
     * that compares key prefixes first.
     */
    static int findNewest(MessageBuffer buffer, byte[] key, long snapshotTs) {
        int best = -1;
        for (int r = 0; r < buffer.runCount(); r++) {
            int start = buffer.runStart(r);
            // Within a run a key's messages are in msn order: the last one at or below the snapshot.
            for (int pos = lowerBound(buffer, key, true, start, buffer.runEnd(r)) - 1; pos >= start; pos--) {
                int off = buffer.offsetAt(pos);
                if (buffer.compareKey(off, key) != 0) {
                    break;
                }
                long msn = buffer.msn(off);
                if (msn <= snapshotTs) {
                    if (best < 0 || msn > buffer.msn(best)) {
                        best = off;
                    }
                    break;
                }
            }
        }
        long prefix = MessageBuffer.keyPrefix(key, 0);
        long prefix2 = MessageBuffer.keyPrefix(key, 8);
        for (int k = buffer.sortedCount(); k < buffer.count(); k++) {
            if (buffer.prefixAt(k) != prefix || buffer.prefix2At(k) != prefix2) {
                continue;
            }
            int off = buffer.offsetAt(k);
            long msn = buffer.msn(off);
            if (msn <= snapshotTs && buffer.compareKey(off, key) == 0 && (best < 0 || msn > buffer.msn(best))) {
                best = off;
            }
        }
        return best;
    }

    /**
     * {@link MessageBuffer#visibleInRange}: the range's messages in (key, msn) order, of each key
     * the last at or below the snapshot kept.
     */
    static int[] visibleInRange(MessageBuffer buffer, byte[] from, byte[] upper, long snapshotTs) {
        int[] all = inRange(buffer, from, upper);
        int n = 0;
        int last = -1; // offset of the current key's chosen message, -1 before the first key
        for (int off : all) {
            if (buffer.msn(off) > snapshotTs) {
                continue;
            }
            if (last >= 0 && buffer.compareKeys(off, last) == 0) {
                all[n - 1] = off; // (key, msn) order: a later message of the same key is newer
            } else {
                all[n++] = off;
            }
            last = off;
        }
        return Arrays.copyOf(all, n);
    }

    /** {@link MessageBuffer#orderedOffsets}: the whole buffer's range. */
    static int[] orderedOffsets(MessageBuffer buffer) {
        return inRange(buffer, null, null);
    }

    /**
     * Offsets of the messages of {@code buffer} with keys in {@code [from, upper)} (null: no bound)
     * in (key, msn) order: the sorted tail and each run's slice, merged by their index entries, so
     * that keys are read from the buffer's data only where two prefixes tie. Merging offsets by the
     * keys in the data was a third of the evictor's time in a small-cache delete-FIFO load (it
     * serializes unconsolidated buffers through here). Changes nothing.
     */
    private static int[] inRange(MessageBuffer buffer, byte[] from, byte[] upper) {
        Entries merged = tailInRange(buffer, from, upper);
        for (int r = buffer.runCount() - 1; r >= 0; r--) {
            int start = buffer.runStart(r);
            int end = buffer.runEnd(r);
            int lo = from == null ? start : lowerBound(buffer, from, false, start, end);
            int hi = upper == null ? end : lowerBound(buffer, upper, false, lo, end);
            if (lo < hi) {
                merged = mergeRun(buffer, lo, hi, merged);
            }
        }
        return merged.n == merged.offsets.length ? merged.offsets : Arrays.copyOf(merged.offsets, merged.n);
    }

    /** Index entries gathered off the buffer: offsets and key prefixes, the first {@code n} in use. */
    private static final class Entries {
        final int[] offsets;
        final long[] prefixes;
        final long[] prefixes2;
        int n;

        Entries(int capacity) {
            offsets = new int[capacity];
            prefixes = new long[capacity];
            prefixes2 = new long[capacity];
        }
    }

    /** The sorted positions {@code [lo, hi)} of a run of {@code buffer} merged with {@code b} into new entries. */
    private static Entries mergeRun(MessageBuffer buffer, int lo, int hi, Entries b) {
        Entries out = new Entries(hi - lo + b.n);
        int i = lo;
        int j = 0;
        int n = 0;
        while (i < hi && j < b.n) {
            long p = buffer.prefixAt(i);
            long p2 = buffer.prefix2At(i);
            int off = buffer.offsetAt(i);
            if (buffer.compareEntries(p, p2, off, b.prefixes[j], b.prefixes2[j], b.offsets[j]) < 0) {
                out.offsets[n] = off;
                out.prefixes[n] = p;
                out.prefixes2[n++] = p2;
                i++;
            } else {
                out.offsets[n] = b.offsets[j];
                out.prefixes[n] = b.prefixes[j];
                out.prefixes2[n++] = b.prefixes2[j++];
            }
        }
        for (; i < hi; i++) {
            out.offsets[n] = buffer.offsetAt(i);
            out.prefixes[n] = buffer.prefixAt(i);
            out.prefixes2[n++] = buffer.prefix2At(i);
        }
        int rest = b.n - j;
        System.arraycopy(b.offsets, j, out.offsets, n, rest);
        System.arraycopy(b.prefixes, j, out.prefixes, n, rest);
        System.arraycopy(b.prefixes2, j, out.prefixes2, n, rest);
        out.n = n + rest;
        return out;
    }

    /** The tail's messages with keys in {@code [from, upper)} (null: no bound), sorted by (key, msn). */
    private static Entries tailInRange(MessageBuffer buffer, byte[] from, byte[] upper) {
        Entries e = new Entries(buffer.count() - buffer.sortedCount());
        int n = 0;
        for (int k = buffer.sortedCount(); k < buffer.count(); k++) {
            int off = buffer.offsetAt(k);
            if ((from == null || buffer.compareKey(off, from) >= 0)
                    && (upper == null || buffer.compareKey(off, upper) < 0)) {
                e.offsets[n] = off;
                e.prefixes[n] = buffer.prefixAt(k);
                e.prefixes2[n++] = buffer.prefix2At(k);
            }
        }
        TailSort.sort(buffer, e.offsets, e.prefixes, e.prefixes2, n);
        e.n = n;
        return e;
    }

    /** {@link MessageBuffer#maxKey}: the largest of each run's last key and the tail's keys. */
    static byte[] maxKey(MessageBuffer buffer) {
        int best = -1;
        for (int r = 0; r < buffer.runCount(); r++) {
            int off = buffer.offsetAt(buffer.runEnd(r) - 1);
            if (best < 0 || buffer.compareKeys(off, best) > 0) {
                best = off;
            }
        }
        for (int k = buffer.sortedCount(); k < buffer.count(); k++) {
            int off = buffer.offsetAt(k);
            if (best < 0 || buffer.compareKeys(off, best) > 0) {
                best = off;
            }
        }
        return best < 0 ? null : buffer.key(best);
    }

    /**
     * {@link MessageBuffer#serialize}, the buffer's data being {@code data}. Changes nothing in the
     * buffer, since the node cache serializes while readers may hold the tree's shared lock: the
     * runs and the tail are merged on the fly into a temporary array of offsets, so the bytes
     * written are those of a consolidated buffer.
     */
    static void serialize(MessageBuffer buffer, ByteBuf data, ByteBuf out) {
        int total = data.writerIndex();
        out.ensureWritable(total);
        int start = out.writerIndex();
        // Copied through one view of the output: a ByteBuf-to-ByteBuf copy per message made two
        // NIO buffer objects for each (in a 16-writer time series, a tenth of the bytes the process
        // allocated, all of them the evictor's).
        ByteBuffer dst = out.nioBufferCount() == 1 ? out.nioBuffer(start, total) : null;
        int at = 0;
        if (buffer.runCount() <= 1 && buffer.sortedCount() == buffer.count()) {
            for (int k = 0; k < buffer.count(); k++) {
                at += copyMessage(buffer, data, buffer.offsetAt(k), out, dst, at);
            }
        } else {
            for (int off : orderedOffsets(buffer)) {
                at += copyMessage(buffer, data, off, out, dst, at);
            }
        }
        if (dst != null) {
            out.writerIndex(start + at);
        }
    }

    /** Copies the message at {@code off} to {@code dst} at {@code at}, or appends it to {@code out} with no view. */
    private static int copyMessage(MessageBuffer buffer, ByteBuf data, int off, ByteBuf out, ByteBuffer dst, int at) {
        int length = buffer.messageLength(off);
        if (dst != null) {
            dst.put(at, buffer.dataView(), off, length);
        } else {
            out.writeBytes(data, off, length);
        }
        return length;
    }
}
