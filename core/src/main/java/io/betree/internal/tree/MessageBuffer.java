package io.betree.internal.tree;

import io.betree.internal.memory.NodeMemory;
import io.netty.buffer.ByteBuf;
import java.util.Arrays;

/**
 * The pending messages of one child of an internal node, off-heap. Messages are appended to
 * {@code data}; {@code index} holds their offsets, each with its key's first 8 bytes so that
 * searches rarely touch {@code data}. The index is a few runs, each sorted by (key, msn), then an
 * unsorted tail of at most {@value #TAIL} recent arrivals. When the tail fills it is sorted into a
 * run of its own, and the last two runs merge while the earlier is less than twice the later, so
 * runs shrink geometrically: a message is copied about log2(n / 64) times while its buffer fills,
 * and a lookup searches that many runs. One sorted prefix that each full tail was merged into
 * copied the whole index every time, and with large root buffers that was a third of a writer's
 * time in an iiBench load. Flushes, splits and merges {@link #consolidate} the buffer into one
 * run first.
 *
 * <p>Message layout: type (1 byte), msn (8), transaction id (8), key length (2), value length (4),
 * key, value. The transaction id is 0 for non-transactional writes.
 *
 * <p>Not thread-safe: the owning node's pin and the index lock guard it. Read-only methods may run
 * in several threads at once.
 */
public final class MessageBuffer {
    static final int HEADER = 23;
    /** An index entry: the message's offset (4 bytes) and its key's first 8 bytes (see {@link #keyPrefix(int)}). */
    private static final int ENTRY = 12;
    /** Unsorted arrivals a buffer keeps before it sorts them into a run. */
    static final int TAIL = 64;
    /**
     * The most message bytes a {@link #successor} reserves: within the pool's 512 KiB chunks. With
     * 1 MiB reserves (allocated one by one outside the chunks, on the flusher's thread) the FIFO
     * benchmark's fork went past its 512 MiB process cap twice; at 256 KiB it stayed within.
     */
    private static final int MAX_RESERVE = 256 << 10;

    private final NodeMemory memory;
    private ByteBuf data;
    private ByteBuf index;
    /** Where two runs are merged before the result is copied back; kept for reuse; may be null. */
    private ByteBuf scratch;
    private int count;
    /** Messages in runs; the tail is {@code [sorted, count)}. */
    private int sorted;
    /** Run {@code r} covers index positions {@code [r == 0 ? 0 : runEnds[r - 1], runEnds[r])}. */
    private int[] runEnds = new int[8];
    private int runs;

    /** An empty buffer. */
    public MessageBuffer(NodeMemory memory) {
        this(memory, 0, 0);
    }

    /**
     * An empty buffer with room for about {@code expectedMessages} messages of {@code expectedBytes}
     * bytes in all, so that it need not grow step by step as they arrive (see {@link #successor}).
     */
    private MessageBuffer(NodeMemory memory, int expectedMessages, int expectedBytes) {
        this.memory = memory;
        this.data = memory.allocate(Math.max(256, expectedBytes));
        this.index = memory.allocate(Math.max(64, expectedMessages * ENTRY));
    }

    /**
     * An empty buffer to take this one's place in its node when this one is flushed, with room for
     * half of what this one holds, up to {@value #MAX_RESERVE} bytes of messages: a root buffer
     * refills at about the pace it filled, and writers' threads grow buffers through a round trip
     * to the allocation thread, some forty of them for a buffer that grows from nothing by half
     * again each time (a few milliseconds each on a busy machine).
     */
    public MessageBuffer successor() {
        int bytes = Math.min(MAX_RESERVE, bytes() / 2);
        int messages = count == 0 ? 0 : (int) ((long) count * bytes / Math.max(1, bytes()));
        return new MessageBuffer(memory, messages, bytes);
    }

    /**
     * A buffer holding the {@code length} bytes of serialized messages at {@code src}'s reader index;
     * advances the reader index. Throws {@link IndexOutOfBoundsException} or
     * {@link IllegalArgumentException} on malformed input, which callers report as corruption.
     */
    public static MessageBuffer read(NodeMemory memory, ByteBuf src, int length) {
        if (length < 0 || length > src.readableBytes()) {
            throw new IllegalArgumentException("message buffer length " + length + " exceeds the node");
        }
        // One pass checks every message and counts them, so that the data is copied in one piece
        // and the index allocated once, rather than both growing message by message.
        int start = src.readerIndex();
        int end = start + length;
        int messages = 0;
        for (int off = start; off < end; messages++) {
            if (off + HEADER > end) {
                throw new IllegalArgumentException("malformed message at node offset " + off);
            }
            byte type = src.getByte(off);
            int keyLength = src.getUnsignedShort(off + 17);
            int valueLength = src.getInt(off + 19);
            if (!MessageType.isKnown(type) || valueLength < 0 || (long) off + HEADER + keyLength + valueLength > end) {
                throw new IllegalArgumentException("malformed message at node offset " + off);
            }
            off += HEADER + keyLength + valueLength;
        }
        MessageBuffer b = new MessageBuffer(memory, messages, length);
        try {
            b.data.writeBytes(src, start, length);
            for (int at = 0; at < length; at += b.messageLength(at)) {
                b.index.writeInt(at).writeLong(b.keyPrefix(at));
            }
            b.count = messages;
            b.sortLoaded();
        } catch (RuntimeException e) {
            b.release();
            throw e;
        }
        src.readerIndex(end);
        return b;
    }

    /** Serialized buffers are written in order; a buffer that is not gets sorted once here. */
    private void sortLoaded() {
        boolean inOrder = true;
        for (int k = 1; k < count && inOrder; k++) {
            inOrder = compareMessages(offsetAt(k - 1), offsetAt(k)) < 0;
        }
        if (!inOrder) {
            sortPositions(0, count);
        }
        sorted = count;
        runs = count == 0 ? 0 : 1;
        runEnds[0] = count;
    }

    /** Number of messages. */
    public int count() {
        return count;
    }

    /** Bytes of message data (the serialized size). */
    public int bytes() {
        return data.writerIndex();
    }

    /** Off-heap bytes held. */
    public long memoryBytes() {
        return (long) data.capacity() + index.capacity() + (scratch == null ? 0 : scratch.capacity());
    }

    /** Makes room for {@code messages} more messages of {@code bytes} bytes in all, so that appending them allocates nothing. */
    void reserve(int messages, int bytes) {
        data = memory.ensureWritable(data, bytes);
        index = memory.ensureWritable(index, messages * ENTRY);
    }

    /** Appends a message. */
    public void append(byte type, long msn, long txnId, byte[] key, byte[] value) {
        int valueLength = value == null ? 0 : value.length;
        data = memory.ensureWritable(data, HEADER + key.length + valueLength);
        int off = data.writerIndex();
        data.writeByte(type).writeLong(msn).writeLong(txnId).writeShort(key.length).writeInt(valueLength);
        data.writeBytes(key);
        if (valueLength > 0) {
            data.writeBytes(value);
        }
        addToIndex(off);
    }

    /** Appends a copy of the message at {@code offset} of {@code other}. */
    public void appendCopy(MessageBuffer other, int offset) {
        appendRaw(other.data, offset, other.messageLength(offset));
    }

    private void appendRaw(ByteBuf src, int offset, int length) {
        data = memory.ensureWritable(data, length);
        int off = data.writerIndex();
        data.writeBytes(src, offset, length);
        addToIndex(off);
    }

    private void addToIndex(int off) {
        index = memory.ensureWritable(index, ENTRY);
        index.writeInt(off).writeLong(keyPrefix(off));
        count++;
        if (count - sorted > TAIL) {
            sealTail();
            while (runs >= 2 && runLength(runs - 2) < 2 * runLength(runs - 1)) {
                mergeLastRuns();
            }
        }
    }

    /**
     * Sorts every message into one run, so that {@link #sortedOffset} walks them in (key, msn)
     * order. Merging from the smallest run up copies about twice the index.
     */
    public void consolidate() {
        if (count > sorted) {
            sealTail();
        }
        while (runs > 1) {
            mergeLastRuns();
        }
    }

    /** Sorts the tail in place and makes it the last run. */
    private void sealTail() {
        sortPositions(sorted, count);
        if (runs == runEnds.length) {
            runEnds = Arrays.copyOf(runEnds, runs * 2);
        }
        runEnds[runs++] = count;
        sorted = count;
    }

    /** Sorts index positions {@code [from, to)} by (key, msn) in place. */
    private void sortPositions(int from, int to) {
        int n = to - from;
        int[] offsets = new int[n];
        long[] prefixes = new long[n];
        for (int k = 0; k < n; k++) {
            offsets[k] = offsetAt(from + k);
            prefixes[k] = prefixAt(from + k);
        }
        TailSort.sort(this, offsets, prefixes, n);
        for (int k = 0; k < n; k++) {
            index.setInt((from + k) * ENTRY, offsets[k]);
            index.setLong((from + k) * ENTRY + 4, prefixes[k]);
        }
    }

    private int runStart(int r) {
        return r == 0 ? 0 : runEnds[r - 1];
    }

    private int runLength(int r) {
        return runEnds[r] - runStart(r);
    }

    /** Merges the last two runs into one: through {@code scratch}, then back in place. */
    private void mergeLastRuns() {
        int a = runStart(runs - 2);
        int b = runEnds[runs - 2];
        int c = runEnds[runs - 1];
        int bytes = (c - a) * ENTRY;
        if (scratch == null || scratch.capacity() < bytes) {
            memory.release(scratch);
            scratch = memory.allocate(Math.max(bytes, index.capacity()));
        }
        ByteBuf out = scratch.clear();
        int i = a;
        int j = b;
        while (i < b && j < c) {
            long pi = prefixAt(i);
            long pj = prefixAt(j);
            int cmp = Long.compareUnsigned(pi, pj);
            if (cmp < 0 || (cmp == 0 && compareMessages(offsetAt(i), offsetAt(j)) < 0)) {
                out.writeInt(offsetAt(i++)).writeLong(pi);
            } else {
                out.writeInt(offsetAt(j++)).writeLong(pj);
            }
        }
        out.writeBytes(index, i * ENTRY, (b - i) * ENTRY);
        out.writeBytes(index, j * ENTRY, (c - j) * ENTRY);
        index.setBytes(a * ENTRY, out, 0, bytes);
        runs--;
        runEnds[runs - 1] = c;
    }

    /** Compares two messages of this buffer by (key, msn). */
    int compareMessages(int a, int b) {
        int c = Keys.compare(data, a + HEADER, keyLength(a), data, b + HEADER, keyLength(b));
        return c != 0 ? c : Long.compare(msn(a), msn(b));
    }

    /** Offset of the message at position {@code i} of the index. */
    private int offsetAt(int i) {
        return index.getInt(i * ENTRY);
    }

    /** Key prefix of the message at position {@code i} of the index. */
    private long prefixAt(int i) {
        return index.getLong(i * ENTRY + 4);
    }

    /**
     * The first 8 bytes of the message's key as an unsigned big-endian number, zero-padded: two
     * keys whose prefixes differ compare as their prefixes do, so most probes of a search read
     * only the index.
     */
    private long keyPrefix(int off) {
        int length = keyLength(off);
        if (length >= 8) {
            return data.getLong(off + HEADER);
        }
        long p = 0;
        for (int i = 0; i < 8; i++) {
            p = (p << 8) | (i < length ? data.getUnsignedByte(off + HEADER + i) : 0);
        }
        return p;
    }

    private static long keyPrefix(byte[] key) {
        long p = 0;
        for (int i = 0; i < 8; i++) {
            p = (p << 8) | (i < key.length ? key[i] & 0xff : 0);
        }
        return p;
    }

    /** Number of messages in sorted runs (all but the tail); one run only after {@link #consolidate}. */
    int sortedCount() {
        return sorted;
    }

    /** Offset of the message at position {@code i} of the runs: in (key, msn) order after {@link #consolidate}. */
    int sortedOffset(int i) {
        return offsetAt(i);
    }

    /**
     * First position in the runs whose key is {@code >= key} (or {@code > key} if {@code strict}):
     * a position in (key, msn) order after {@link #consolidate}.
     */
    int lowerBound(byte[] key, boolean strict) {
        return lowerBound(key, strict, 0, sorted);
    }

    /** As {@link #lowerBound(byte[], boolean)} within the sorted positions {@code [lo, hi)}. */
    private int lowerBound(byte[] key, boolean strict, int lo, int hi) {
        long prefix = keyPrefix(key);
        while (lo < hi) {
            int mid = (lo + hi) >>> 1;
            int c = Long.compareUnsigned(prefixAt(mid), prefix);
            if (c == 0) {
                int off = offsetAt(mid);
                c = Keys.compare(data, off + HEADER, keyLength(off), key);
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
     * Offset of the newest message for {@code key} with msn at most {@code snapshotTs}, or -1 when
     * there is none.
     */
    public int findNewest(byte[] key, long snapshotTs) {
        int best = -1;
        for (int r = 0; r < runs; r++) {
            int start = runStart(r);
            // Within a run a key's messages are in msn order: the last one at or below the snapshot.
            for (int pos = lowerBound(key, true, start, runEnds[r]) - 1; pos >= start; pos--) {
                int off = offsetAt(pos);
                if (compareKey(off, key) != 0) {
                    break;
                }
                long msn = msn(off);
                if (msn <= snapshotTs) {
                    if (best < 0 || msn > msn(best)) {
                        best = off;
                    }
                    break;
                }
            }
        }
        long prefix = keyPrefix(key);
        for (int k = sorted; k < count; k++) {
            if (prefixAt(k) != prefix) {
                continue;
            }
            int off = offsetAt(k);
            long msn = msn(off);
            if (msn <= snapshotTs && compareKey(off, key) == 0 && (best < 0 || msn > msn(best))) {
                best = off;
            }
        }
        return best;
    }

    /**
     * Applies the messages with keys in {@code [from, upper)} ({@code upper} null: no bound) that a
     * snapshot at {@code snapshotTs} sees to {@code view}, the newest of each key: a put stores its
     * value, a delete stores {@code tombstone}.
     */
    void applyRange(byte[] from, byte[] upper, long snapshotTs, java.util.NavigableMap<byte[], byte[]> view,
            byte[] tombstone) {
        for (int off : visibleInRange(from, upper, snapshotTs)) {
            view.put(key(off), type(off) == MessageType.PUT ? value(off) : tombstone);
        }
    }

    /**
     * Offsets of the messages with keys in {@code [from, upper)} ({@code upper} null: no bound)
     * that a snapshot at {@code snapshotTs} sees: for each key, the newest message with msn at
     * most {@code snapshotTs}. In key order; tombstones included. Nothing is copied.
     */
    int[] visibleInRange(byte[] from, byte[] upper, long snapshotTs) {
        int[] all = inRange(from, upper);
        int n = 0;
        int last = -1; // offset of the current key's chosen message, -1 before the first key
        for (int off : all) {
            if (msn(off) > snapshotTs) {
                continue;
            }
            if (last >= 0 && compareKeys(off, last) == 0) {
                all[n - 1] = off; // (key, msn) order: a later message of the same key is newer
            } else {
                all[n++] = off;
            }
            last = off;
        }
        return Arrays.copyOf(all, n);
    }

    /**
     * Offsets of every message, in (key, msn) order, the runs and the tail merged on the fly; the
     * buffer is not changed.
     */
    int[] orderedOffsets() {
        return inRange(null, null);
    }

    /**
     * Offsets of the messages with keys in {@code [from, upper)} (null: no bound) in (key, msn)
     * order: each run's slice and the sorted tail, merged. Changes nothing.
     */
    private int[] inRange(byte[] from, byte[] upper) {
        int[] merged = tailInRange(from, upper);
        for (int r = runs - 1; r >= 0; r--) {
            int start = runStart(r);
            int end = runEnds[r];
            int lo = from == null ? start : lowerBound(from, false, start, end);
            int hi = upper == null ? end : lowerBound(upper, false, lo, end);
            if (lo == hi) {
                continue;
            }
            int[] slice = new int[hi - lo];
            for (int k = lo; k < hi; k++) {
                slice[k - lo] = offsetAt(k);
            }
            merged = merged.length == 0 ? slice : mergeOffsets(slice, merged);
        }
        return merged;
    }

    /** Two arrays of offsets in (key, msn) order merged into one. */
    private int[] mergeOffsets(int[] a, int[] b) {
        int[] out = new int[a.length + b.length];
        int i = 0;
        int j = 0;
        int n = 0;
        while (i < a.length && j < b.length) {
            out[n++] = compareMessages(a[i], b[j]) < 0 ? a[i++] : b[j++];
        }
        while (i < a.length) {
            out[n++] = a[i++];
        }
        while (j < b.length) {
            out[n++] = b[j++];
        }
        return out;
    }

    /** Offsets of the tail's messages with keys in {@code [from, upper)} (null: no bound), sorted by (key, msn). */
    private int[] tailInRange(byte[] from, byte[] upper) {
        int[] offsets = new int[count - sorted];
        long[] prefixes = new long[count - sorted];
        int n = 0;
        for (int k = sorted; k < count; k++) {
            int off = offsetAt(k);
            if ((from == null || compareKey(off, from) >= 0) && (upper == null || compareKey(off, upper) < 0)) {
                offsets[n] = off;
                prefixes[n++] = prefixAt(k);
            }
        }
        TailSort.sort(this, offsets, prefixes, n);
        return n == offsets.length ? offsets : Arrays.copyOf(offsets, n);
    }

    /** The largest key of any message, or {@code null} when empty. */
    public byte[] maxKey() {
        int best = -1;
        for (int r = 0; r < runs; r++) {
            int off = offsetAt(runEnds[r] - 1);
            if (best < 0 || compareKeys(off, best) > 0) {
                best = off;
            }
        }
        for (int k = sorted; k < count; k++) {
            int off = offsetAt(k);
            if (best < 0 || compareKeys(off, best) > 0) {
                best = off;
            }
        }
        return best < 0 ? null : key(best);
    }

    /** Type of the message at {@code off}. */
    public byte type(int off) {
        return data.getByte(off);
    }

    /** Message sequence number of the message at {@code off}. */
    public long msn(int off) {
        return data.getLong(off + 1);
    }

    /** Transaction id of the message at {@code off}. */
    public long txnId(int off) {
        return data.getLong(off + 9);
    }

    int keyLength(int off) {
        return data.getUnsignedShort(off + 17);
    }

    int valueLength(int off) {
        return data.getInt(off + 19);
    }

    int messageLength(int off) {
        return HEADER + keyLength(off) + valueLength(off);
    }

    /** The message's key, copied. */
    public byte[] key(int off) {
        return Keys.copy(data, off + HEADER, keyLength(off));
    }

    /** The message's value, copied. */
    public byte[] value(int off) {
        return Keys.copy(data, off + HEADER + keyLength(off), valueLength(off));
    }

    /** Compares the keys of two messages of this buffer. */
    int compareKeys(int a, int b) {
        return Keys.compare(data, a + HEADER, keyLength(a), data, b + HEADER, keyLength(b));
    }

    /** Compares the key of message {@code off} with that of message {@code otherOff} of {@code other}. */
    int compareKey(int off, MessageBuffer other, int otherOff) {
        return Keys.compare(data, off + HEADER, keyLength(off), other.data, otherOff + HEADER, other.keyLength(otherOff));
    }

    /** Compares the message's key with {@code key}. */
    int compareKey(int off, byte[] key) {
        return Keys.compare(data, off + HEADER, keyLength(off), key);
    }

    /** The data buffer, for copying messages out in bulk. */
    ByteBuf data() {
        return data;
    }

    /**
     * Writes the messages in (key, msn) order, so that loading needs no sort. Changes nothing in
     * the buffer, since the node cache serializes while readers may hold the tree's shared lock: the
     * runs and the tail are merged on the fly into a temporary array of offsets, so the bytes
     * written are those of a consolidated buffer.
     */
    public void serialize(ByteBuf out) {
        if (runs <= 1 && sorted == count) {
            for (int k = 0; k < count; k++) {
                int off = offsetAt(k);
                out.writeBytes(data, off, messageLength(off));
            }
            return;
        }
        for (int off : orderedOffsets()) {
            out.writeBytes(data, off, messageLength(off));
        }
    }

    /** Returns the memory; the buffer is unusable afterwards. */
    public void release() {
        memory.release(data);
        memory.release(index);
        memory.release(scratch);
        data = null;
        index = null;
        scratch = null;
    }
}
