package io.betree.internal.tree;

import io.betree.internal.memory.NodeMemory;
import io.netty.buffer.ByteBuf;
import java.util.Arrays;

/**
 * The pending messages of one child of an internal node, off-heap. Messages are appended to
 * {@code data}; {@code index} holds their offsets, each with its key's first 8 bytes so that
 * searches rarely touch {@code data}: a prefix sorted by (key, msn) followed by a short unsorted
 * tail of recent arrivals, merged into the prefix once it grows past {@link #tailLimit}, a
 * thirty-second of the prefix (64 to 1,024 messages). A merge copies the whole index, so a fixed
 * limit made filling a buffer cost the square of its size (a fifth of a 1-writer time-series
 * load's CPU went to merges); a proportional one keeps each insert's share of merging constant,
 * while point reads, which scan the tail, scan at most 1,024 index entries, comparing key
 * prefixes first.
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
    private static final int MIN_TAIL = 64;
    private static final int MAX_TAIL = 1024;
    /**
     * The most message bytes a {@link #successor} reserves: within the pool's 512 KiB chunks. With
     * 1 MiB reserves (allocated one by one outside the chunks, on the flusher's thread) the FIFO
     * benchmark's fork went past its 512 MiB process cap twice; at 256 KiB it stayed within.
     */
    private static final int MAX_RESERVE = 256 << 10;

    private final NodeMemory memory;
    private ByteBuf data;
    private ByteBuf index;
    /** The previous index, reused as the target of the next {@link #consolidate}; may be null. */
    private ByteBuf spareIndex;
    private int count;
    private int sorted;

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
        MessageBuffer b = new MessageBuffer(memory);
        if (length < 0 || length > src.readableBytes()) {
            b.release();
            throw new IllegalArgumentException("message buffer length " + length + " exceeds the node");
        }
        try {
            int end = src.readerIndex() + length;
            while (src.readerIndex() < end) {
                int off = src.readerIndex();
                byte type = src.getByte(off);
                int keyLength = src.getUnsignedShort(off + 17);
                int valueLength = src.getInt(off + 19);
                if (!MessageType.isKnown(type) || valueLength < 0 || off + HEADER + keyLength + valueLength > end) {
                    throw new IllegalArgumentException("malformed message at node offset " + off);
                }
                b.data = memory.ensureWritable(b.data, HEADER + keyLength + valueLength);
                int at = b.data.writerIndex();
                b.data.writeBytes(src, off, HEADER + keyLength + valueLength);
                b.index = memory.ensureWritable(b.index, ENTRY);
                b.index.writeInt(at).writeLong(b.keyPrefix(at));
                b.count++;
                src.readerIndex(off + HEADER + keyLength + valueLength);
            }
            b.sortLoaded();
        } catch (RuntimeException e) {
            b.release();
            throw e;
        }
        return b;
    }

    /** Serialized buffers are written in order; a buffer that is not gets sorted once here. */
    private void sortLoaded() {
        boolean inOrder = true;
        for (int k = 1; k < count && inOrder; k++) {
            inOrder = compareMessages(offsetAt(k - 1), offsetAt(k)) < 0;
        }
        if (!inOrder) {
            Integer[] boxed = new Integer[count];
            for (int k = 0; k < count; k++) {
                boxed[k] = offsetAt(k);
            }
            Arrays.sort(boxed, this::compareMessages);
            index.clear();
            for (Integer off : boxed) {
                index.writeInt(off).writeLong(keyPrefix(off));
            }
        }
        sorted = count;
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
        return (long) data.capacity() + index.capacity() + (spareIndex == null ? 0 : spareIndex.capacity());
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
        if (count - sorted > tailLimit()) {
            consolidate();
        }
    }

    /** How long the unsorted tail may grow before it is merged into the sorted prefix. */
    private int tailLimit() {
        return Math.min(MAX_TAIL, Math.max(MIN_TAIL, sorted >>> 5));
    }

    /**
     * Merges the unsorted tail into the sorted prefix so that every message is in (key, msn) order.
     * Each tail message finds its place by binary search and the prefix is copied in runs between
     * those places, so the cost is a memory copy of the index plus 64 searches, not a full merge.
     * The merge writes into a spare index kept for the purpose and the two swap roles: a fresh
     * index per merge was the largest source of fragmentation in the off-heap pool.
     */
    public void consolidate() {
        if (sorted == count) {
            return;
        }
        int[] tail = sortedTail();
        if (spareIndex == null || spareIndex.capacity() < count * ENTRY) {
            memory.release(spareIndex);
            spareIndex = memory.allocate(index.capacity());
        }
        ByteBuf merged = spareIndex.clear();
        int copied = 0;
        for (int t : tail) {
            int pos = upperBound(t, copied);
            merged.writeBytes(index, copied * ENTRY, (pos - copied) * ENTRY);
            merged.writeInt(t).writeLong(keyPrefix(t));
            copied = pos;
        }
        merged.writeBytes(index, copied * ENTRY, (sorted - copied) * ENTRY);
        spareIndex = index;
        index = merged;
        sorted = count;
    }

    /** First position at or after {@code from} in the sorted prefix that sorts after message {@code off}. */
    private int upperBound(int off, int from) {
        long prefix = keyPrefix(off);
        int lo = from;
        int hi = sorted;
        while (lo < hi) {
            int mid = (lo + hi) >>> 1;
            int c = Long.compareUnsigned(index.getLong(mid * ENTRY + 4), prefix);
            if (c == 0) {
                c = compareMessages(offsetAt(mid), off);
            }
            if (c <= 0) {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        return lo;
    }

    /** Offsets of the unsorted tail, sorted by (key, msn); a fresh heap array of at most 1,024 ints. */
    int[] sortedTail() {
        int n = count - sorted;
        Integer[] boxed = new Integer[n];
        for (int k = 0; k < n; k++) {
            boxed[k] = offsetAt(sorted + k);
        }
        Arrays.sort(boxed, this::compareMessages);
        int[] out = new int[n];
        for (int k = 0; k < n; k++) {
            out[k] = boxed[k];
        }
        return out;
    }

    private int compareMessages(int a, int b) {
        int c = Keys.compare(data, a + HEADER, keyLength(a), data, b + HEADER, keyLength(b));
        return c != 0 ? c : Long.compare(msn(a), msn(b));
    }

    /** Offset of the message at position {@code i} of the index. */
    private int offsetAt(int i) {
        return index.getInt(i * ENTRY);
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

    /** Number of messages in the sorted prefix. */
    int sortedCount() {
        return sorted;
    }

    /** Offset of the message at position {@code i} of the sorted prefix. */
    int sortedOffset(int i) {
        return offsetAt(i);
    }

    /** First position in the sorted prefix whose key is {@code >= key} (or {@code > key} if {@code strict}). */
    int lowerBound(byte[] key, boolean strict) {
        long prefix = keyPrefix(key);
        int lo = 0;
        int hi = sorted;
        while (lo < hi) {
            int mid = (lo + hi) >>> 1;
            int c = Long.compareUnsigned(index.getLong(mid * ENTRY + 4), prefix);
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
        for (int pos = lowerBound(key, true) - 1; pos >= 0; pos--) {
            int off = offsetAt(pos);
            if (compareKey(off, key) != 0) {
                break;
            }
            if (msn(off) <= snapshotTs) {
                best = off;
                break;
            }
        }
        long prefix = keyPrefix(key);
        for (int k = sorted; k < count; k++) {
            if (index.getLong(k * ENTRY + 4) != prefix) {
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
     * Applies the messages with keys in {@code [from, upper)} ({@code upper} null: no bound) to
     * {@code view} in age order, so that the newest message of each key is applied last: a put
     * stores its value, a delete stores {@code tombstone}. Messages newer than {@code snapshotTs}
     * are skipped.
     */
    void applyRange(byte[] from, byte[] upper, long snapshotTs, java.util.NavigableMap<byte[], byte[]> view,
            byte[] tombstone) {
        for (int k = lowerBound(from, false); k < sorted; k++) {
            int off = offsetAt(k);
            if (upper != null && compareKey(off, upper) >= 0) {
                break;
            }
            if (msn(off) <= snapshotTs) {
                view.put(key(off), type(off) == MessageType.PUT ? value(off) : tombstone);
            }
        }
        for (int k = sorted; k < count; k++) {
            int off = offsetAt(k);
            if (msn(off) <= snapshotTs && compareKey(off, from) >= 0 && (upper == null || compareKey(off, upper) < 0)) {
                view.put(key(off), type(off) == MessageType.PUT ? value(off) : tombstone);
            }
        }
    }

    /**
     * Offsets of the messages with keys in {@code [from, upper)} ({@code upper} null: no bound)
     * that a snapshot at {@code snapshotTs} sees: for each key, the newest message with msn at
     * most {@code snapshotTs}. In key order; tombstones included. Nothing is copied.
     */
    int[] visibleInRange(byte[] from, byte[] upper, long snapshotTs) {
        int[] out = new int[16];
        int n = 0;
        int[] tail = tailInRange(from, upper);
        int t = 0;
        int k = lowerBound(from, false);
        int last = -1; // offset of the current key's chosen message, -1 before the first key
        while (true) {
            int off;
            boolean prefixLeft = k < sorted && (upper == null || compareKey(offsetAt(k), upper) < 0);
            if (prefixLeft && (t >= tail.length || compareMessages(offsetAt(k), tail[t]) <= 0)) {
                off = offsetAt(k++);
            } else if (t < tail.length) {
                off = tail[t++];
            } else {
                break;
            }
            if (msn(off) > snapshotTs) {
                continue;
            }
            if (last >= 0 && compareKeys(off, last) == 0) {
                out[n - 1] = off; // (key, msn) order: a later message of the same key is newer
            } else {
                if (n == out.length) {
                    out = Arrays.copyOf(out, n * 2);
                }
                out[n++] = off;
            }
            last = off;
        }
        return Arrays.copyOf(out, n);
    }

    /** Offsets of the unsorted tail's messages with keys in {@code [from, upper)}, sorted by (key, msn). */
    private int[] tailInRange(byte[] from, byte[] upper) {
        Integer[] boxed = new Integer[count - sorted];
        int n = 0;
        for (int k = sorted; k < count; k++) {
            int off = offsetAt(k);
            if (compareKey(off, from) >= 0 && (upper == null || compareKey(off, upper) < 0)) {
                boxed[n++] = off;
            }
        }
        Arrays.sort(boxed, 0, n, this::compareMessages);
        int[] out = new int[n];
        for (int k = 0; k < n; k++) {
            out[k] = boxed[k];
        }
        return out;
    }

    /** The largest key of any message, or {@code null} when empty. */
    public byte[] maxKey() {
        int best = -1;
        if (sorted > 0) {
            best = offsetAt(sorted - 1);
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
     * unsorted tail is sorted into a small temporary array and merged on the fly with the sorted
     * prefix exactly as {@link #consolidate} would merge it (each tail message after the prefix
     * messages that do not sort after it), so the bytes written are those of a consolidated buffer.
     */
    public void serialize(ByteBuf out) {
        int[] tail = sortedTail();
        int copied = 0;
        for (int t : tail) {
            int pos = upperBound(t, copied);
            writeSorted(out, copied, pos);
            out.writeBytes(data, t, messageLength(t));
            copied = pos;
        }
        writeSorted(out, copied, sorted);
    }

    /** Writes the messages at positions {@code [from, to)} of the sorted prefix. */
    private void writeSorted(ByteBuf out, int from, int to) {
        for (int k = from; k < to; k++) {
            int off = offsetAt(k);
            out.writeBytes(data, off, messageLength(off));
        }
    }

    /** Returns the memory; the buffer is unusable afterwards. */
    public void release() {
        memory.release(data);
        memory.release(index);
        memory.release(spareIndex);
        data = null;
        index = null;
        spareIndex = null;
    }
}
