package io.betree.internal.tree;

import io.betree.internal.memory.NodeMemory;
import io.netty.buffer.ByteBuf;
import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.List;

/**
 * The pending messages of one child of an internal node, off-heap. Messages are appended to
 * {@code data}; {@code index} holds their offsets, each with its key's first 16 bytes so that
 * searches and sorts rarely touch {@code data}. The index is a few runs, each sorted by (key, msn), then an
 * unsorted tail of at most {@value #TAIL} recent arrivals. When the tail fills it is sorted into a
 * run of its own, and the last two runs merge while the earlier is less than twice the later, so
 * runs shrink geometrically: a message is copied about log2(n / 64) times while its buffer fills,
 * and a lookup searches that many runs. One sorted prefix that each full tail was merged into
 * copied the whole index every time, and with large root buffers that was a third of a writer's
 * time in an iiBench load. Flushes, splits and merges {@link #consolidate} the buffer into one
 * run first. {@link SortedRuns} sorts and merges runs; {@link BufferReads} searches and merges them
 * for reads, which change nothing.
 *
 * <p>Message layout: type (1 byte), msn (8), transaction id (8), key length (2), value length (4),
 * key, value. The transaction id is 0 for non-transactional writes.
 *
 * <p>Messages over a key range ({@link RangeMessage}) are few and kept apart, on the heap, in msn
 * order: {@link #ranges}. They count in {@link #bytes} and are stored after the keyed messages;
 * {@link #count} and the positions of the runs are the keyed messages'.
 *
 * <p>Not thread-safe: the owning node's pin and the index lock guard it. Read-only methods may run
 * in several threads at once.
 */
public final class MessageBuffer {
    static final int HEADER = 23;
    /**
     * An index entry: the message's offset (4 bytes) and its key's first 16 bytes as two longs (see
     * {@link #keyPrefix(int, int)}). With 8 bytes, keys that share them (a time series' sensor and
     * the high half of its timestamp) were compared in {@code data}, a fifth of a writer's time.
     */
    static final int ENTRY = 20;
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
    /** Views of {@code data} and {@code index} for reads ({@link NodeMemory#view}); replaced with them. */
    private ByteBuffer dataView;
    private ByteBuffer indexView;
    /** Where two runs are merged before the result is copied back; kept for reuse; may be null. */
    private ByteBuf scratch;
    private ByteBuffer scratchView;
    private int count;
    /** Messages in runs; the tail is {@code [sorted, count)}. */
    private int sorted;
    /** Run {@code r} covers index positions {@code [r == 0 ? 0 : runEnds[r - 1], runEnds[r])}. */
    private int[] runEnds = new int[8];
    private int runs;
    /** The range messages; null while there are none. */
    private RangeList ranges;

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
        setData(memory.allocate(Math.max(256, expectedBytes)));
        setIndex(memory.allocate(Math.max(64, expectedMessages * ENTRY)));
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
        // Through a JDK view: Netty's per-call checks were a sixth of loading a node.
        StoredMessages stored = StoredMessages.check(NodeMemory.view(src), start, end);
        int messages = stored.keyed();
        int keyedEnd = stored.keyedEnd();
        List<RangeMessage> ranges = stored.ranges();
        int keyedLength = keyedEnd - start;
        MessageBuffer b = new MessageBuffer(memory, messages, keyedLength);
        try {
            b.appendRanges(ranges);
            b.data.writeBytes(src, start, keyedLength);
            int entry = 0;
            for (int at = 0; at < keyedLength; at += b.messageLength(at)) {
                putEntry(b.indexView, entry, at, b.keyPrefix(at, 0), b.keyPrefix(at, 8));
                entry += ENTRY;
            }
            b.index.writerIndex(entry);
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
            inOrder = compareEntries(k - 1, k) < 0;
        }
        if (!inOrder) {
            SortedRuns.sortPositions(this, indexView, 0, count);
        }
        sorted = count;
        runs = count == 0 ? 0 : 1;
        runEnds[0] = count;
    }

    /** Number of messages. */
    public int count() {
        return count;
    }

    /** Bytes of message data (the serialized size), range messages included. */
    public int bytes() {
        return data.writerIndex() + rangeBytes();
    }

    /** Whether it holds no message, keyed or range. */
    public boolean isEmpty() {
        return count == 0 && ranges == null;
    }

    /** Bytes held: off-heap, and the range messages' (on the heap, counted at their stored size). */
    public long memoryBytes() {
        return (long) data.capacity() + index.capacity() + (scratch == null ? 0 : scratch.capacity()) + rangeBytes();
    }

    private int rangeBytes() {
        return ranges == null ? 0 : ranges.bytes();
    }

    /**
     * Adds a range message, newer than or as new as every range message held (appended in commit
     * order, or a parent's after older ones; see {@link #absorbRanges}).
     */
    void appendRange(RangeMessage r) {
        if (ranges == null) {
            ranges = new RangeList();
        }
        ranges.add(r);
    }

    /** {@link #appendRange} of each of {@code parts}, in order. */
    void appendRanges(List<RangeMessage> parts) {
        for (RangeMessage r : parts) {
            appendRange(r);
        }
    }

    /**
     * Adds the range messages of {@code other}, which covers keys this buffer's do not (a neighbour
     * being merged in), keeping msn order.
     */
    void absorbRanges(MessageBuffer other) {
        if (other.ranges != null) {
            if (ranges == null) {
                ranges = new RangeList();
            }
            ranges.addAll(other.ranges);
        }
    }

    /** The range messages, in msn order; empty when none. Not to be changed. */
    List<RangeMessage> ranges() {
        return ranges == null ? List.of() : ranges.messages();
    }

    /** Whether it holds range messages. */
    boolean hasRanges() {
        return ranges != null;
    }

    /** {@link RangeList#newestCovering}; null when there are no range messages. */
    RangeMessage newestRangeCovering(byte[] key, long maxMsn) {
        return ranges == null ? null : ranges.newestCovering(key, maxMsn);
    }

    /** {@link RangeList#anyIn}; false when there are no range messages. */
    boolean hasRangeIn(byte[] from, byte[] limit, long snapshotTs) {
        return ranges != null && ranges.anyIn(from, limit, snapshotTs);
    }

    /** Makes room for {@code messages} more messages of {@code bytes} bytes in all, so that appending them allocates nothing. */
    void reserve(int messages, int bytes) {
        growData(bytes);
        growIndex(messages * ENTRY);
    }

    private void setData(ByteBuf buf) {
        data = buf;
        dataView = NodeMemory.view(buf);
    }

    private void setIndex(ByteBuf buf) {
        index = buf;
        indexView = NodeMemory.view(buf);
    }

    /** Makes room for {@code bytes} more bytes of messages. */
    private void growData(int bytes) {
        ByteBuf grown = memory.ensureWritable(data, bytes);
        if (grown != data) {
            setData(grown);
        }
    }

    /** Makes room for {@code bytes} more bytes of index. */
    private void growIndex(int bytes) {
        ByteBuf grown = memory.ensureWritable(index, bytes);
        if (grown != index) {
            setIndex(grown);
        }
    }

    /**
     * Appends a message. Written through the views at absolute offsets, the writer indexes moved
     * once: through the buffers' own writes (ten calls, each a few levels of bounds checks and
     * accessors), the writers' root append ({@link WritePath}), into which this is compiled,
     * took 67-71 KB of machine code in a 16-writer time series, against 51 KB this way
     * (docs/benchmarks.md).
     */
    public void append(byte type, long msn, long txnId, byte[] key, byte[] value) {
        int valueLength = value == null ? 0 : value.length;
        int length = HEADER + key.length + valueLength;
        growData(length);
        growIndex(ENTRY);
        int off = data.writerIndex();
        ByteBuffer d = dataView;
        d.put(off, type).putLong(off + 1, msn).putLong(off + 9, txnId).putShort(off + 17, (short) key.length)
                .putInt(off + 19, valueLength).put(off + HEADER, key);
        if (valueLength > 0) {
            d.put(off + HEADER + key.length, value);
        }
        data.writerIndex(off + length);
        int at = index.writerIndex();
        putEntry(indexView, at, off, keyPrefix(key, 0), keyPrefix(key, 8));
        index.writerIndex(at + ENTRY);
        count++;
        if (count - sorted > TAIL) {
            sealTail();
            mergeSmallRuns();
        }
    }

    /**
     * Appends copies of the messages at positions {@code [from, to)} of {@code other}'s runs, which
     * must be in (key, msn) order (a consolidated buffer's, {@link #sortedOffset}), as a run of
     * their own: a flush hands each child a sorted slice of its parent's buffer, and adding it
     * message by message sorted it again, tail by tail, then merged the tails up (a third of a
     * flusher's time in a 16-writer time-series load). Only the merges with earlier runs compare.
     */
    void appendRun(MessageBuffer other, int from, int to) {
        if (to <= from) {
            return;
        }
        int bytes = 0;
        for (int k = from; k < to; k++) {
            bytes += other.messageLength(other.offsetAt(k));
        }
        if (count > sorted) {
            sealTail();
        }
        reserve(to - from, bytes);
        int dataAt = data.writerIndex();
        int indexAt = index.writerIndex();
        for (int k = from; k < to; k++) {
            int src = other.offsetAt(k);
            int length = other.messageLength(src);
            dataView.put(dataAt, other.dataView, src, length);
            putEntry(indexView, indexAt, dataAt, other.prefixAt(k), other.prefix2At(k));
            dataAt += length;
            indexAt += ENTRY;
        }
        data.writerIndex(dataAt);
        index.writerIndex(indexAt);
        count += to - from;
        if (runs == runEnds.length) {
            runEnds = Arrays.copyOf(runEnds, runs * 2);
        }
        runEnds[runs++] = count;
        sorted = count;
        mergeSmallRuns();
    }

    /** Merges the last two runs while the earlier is less than twice the later (see the class comment). */
    private void mergeSmallRuns() {
        while (runs >= 2 && runLength(runs - 2) < 2 * runLength(runs - 1)) {
            mergeLastRuns();
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
        SortedRuns.sortPositions(this, indexView, sorted, count);
        if (runs == runEnds.length) {
            runEnds = Arrays.copyOf(runEnds, runs * 2);
        }
        runEnds[runs++] = count;
        sorted = count;
    }

    /** Number of sorted runs. */
    int runCount() {
        return runs;
    }

    /** Where run {@code r} starts: a position of the index. */
    int runStart(int r) {
        return r == 0 ? 0 : runEnds[r - 1];
    }

    /** Where run {@code r} ends (exclusive): a position of the index. */
    int runEnd(int r) {
        return runEnds[r];
    }

    private int runLength(int r) {
        return runEnds[r] - runStart(r);
    }

    /**
     * Merges the last two runs into one in place ({@link SortedRuns#mergeInPlace}), from the
     * earlier run's first message that sorts after the later run's first
     * ({@link SortedRuns#firstAfter}), with the earlier run's messages from there held in
     * {@code scratch}.
     */
    private void mergeLastRuns() {
        int b = runEnds[runs - 2];
        int c = runEnds[runs - 1];
        int a = SortedRuns.firstAfter(this, runStart(runs - 2), b);
        runs--;
        runEnds[runs - 1] = c;
        if (a == b) {
            return;
        }
        int earlier = (b - a) * ENTRY;
        if (scratch == null || scratch.capacity() < earlier) {
            memory.release(scratch);
            scratch = memory.allocate(Math.max(earlier, index.capacity()));
            scratchView = NodeMemory.view(scratch);
        }
        SortedRuns.mergeInPlace(this, indexView, scratchView, a, b, c);
    }

    /**
     * Whether the messages at index positions {@code a} and {@code b} have the same key: their
     * prefixes first, so that neighbours with different keys are told apart without reading
     * {@code data}.
     */
    boolean sameKeyAt(int a, int b) {
        return prefixAt(a) == prefixAt(b) && prefix2At(a) == prefix2At(b) && compareKeys(offsetAt(a), offsetAt(b)) == 0;
    }

    /** Compares two messages of this buffer by (key, msn). */
    int compareMessages(int a, int b) {
        int c = Keys.compare(dataView, a + HEADER, keyLength(a), dataView, b + HEADER, keyLength(b));
        return c != 0 ? c : Long.compare(msn(a), msn(b));
    }

    /**
     * Writes an index entry at byte {@code at} of {@code view}: the message's offset and its key's
     * first 16 bytes as two longs ({@link #ENTRY} bytes in all).
     */
    static void putEntry(ByteBuffer view, int at, int offset, long prefix, long prefix2) {
        view.putInt(at, offset).putLong(at + 4, prefix).putLong(at + 12, prefix2);
    }

    /** Offset of the message at position {@code i} of the index. */
    int offsetAt(int i) {
        return indexView.getInt(i * ENTRY);
    }

    /** Key prefix of the message at position {@code i} of the index. */
    long prefixAt(int i) {
        return indexView.getLong(i * ENTRY + 4);
    }

    /** Bytes 8 to 15 of the key of the message at position {@code i} of the index. */
    long prefix2At(int i) {
        return indexView.getLong(i * ENTRY + 12);
    }

    /** Compares the messages at index positions {@code a} and {@code b} by (key, msn), prefixes first. */
    private int compareEntries(int a, int b) {
        return compareEntries(prefixAt(a), prefix2At(a), offsetAt(a), prefixAt(b), prefix2At(b), offsetAt(b));
    }

    /** Compares two messages by (key, msn), given their key prefixes: the keys are read only if those tie. */
    int compareEntries(long prefixA, long prefix2A, int offA, long prefixB, long prefix2B, int offB) {
        int c = Long.compareUnsigned(prefixA, prefixB);
        if (c == 0) {
            c = Long.compareUnsigned(prefix2A, prefix2B);
        }
        return c != 0 ? c : compareMessages(offA, offB);
    }

    /**
     * Bytes {@code from} to {@code from + 7} of the message's key as an unsigned big-endian number,
     * zero-padded: two keys whose prefixes differ compare as their prefixes do (bytes 0-7 first,
     * then 8-15), so most probes of a search and most comparisons of a sort read only the index.
     */
    private long keyPrefix(int off, int from) {
        int length = keyLength(off);
        if (length >= from + 8) {
            return dataView.getLong(off + HEADER + from);
        }
        long p = 0;
        for (int i = from; i < from + 8; i++) {
            p = (p << 8) | (i < length ? dataView.get(off + HEADER + i) & 0xff : 0);
        }
        return p;
    }

    /** As {@link #keyPrefix(int, int)}, for {@code key}. */
    static long keyPrefix(byte[] key, int from) {
        long p = 0;
        for (int i = from; i < from + 8; i++) {
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
        return BufferReads.lowerBound(this, key, strict, 0, sorted);
    }

    /**
     * Offset of the newest message for {@code key} with msn at most {@code snapshotTs}, or -1 when
     * there is none.
     */
    public int findNewest(byte[] key, long snapshotTs) {
        return BufferReads.findNewest(this, key, snapshotTs);
    }

    /**
     * Offsets of the messages with keys in {@code [from, upper)} ({@code upper} null: no bound)
     * that a snapshot at {@code snapshotTs} sees: for each key, the newest message with msn at
     * most {@code snapshotTs}. In key order; tombstones included. Nothing is copied.
     */
    int[] visibleInRange(byte[] from, byte[] upper, long snapshotTs) {
        return BufferReads.visibleInRange(this, from, upper, snapshotTs);
    }

    /**
     * Offsets of every message, in (key, msn) order, the runs and the tail merged on the fly; the
     * buffer is not changed.
     */
    int[] orderedOffsets() {
        return BufferReads.orderedOffsets(this);
    }

    /** The largest key of any keyed message, or {@code null} when there is none. */
    public byte[] maxKey() {
        return count == 0 ? null : BufferReads.maxKey(this);
    }

    /** Type of the message at {@code off}. */
    public byte type(int off) {
        return dataView.get(off);
    }

    /** Message sequence number of the message at {@code off}. */
    public long msn(int off) {
        return dataView.getLong(off + 1);
    }

    /** Transaction id of the message at {@code off}. */
    public long txnId(int off) {
        return dataView.getLong(off + 9);
    }

    int keyLength(int off) {
        return dataView.getShort(off + 17) & 0xffff;
    }

    int valueLength(int off) {
        return dataView.getInt(off + 19);
    }

    int messageLength(int off) {
        return HEADER + keyLength(off) + valueLength(off);
    }

    /** The {@link KeyFilter#hash} of the key of the message at sorted position {@code i}. */
    long keyHashAt(int i) {
        int off = sortedOffset(i);
        return KeyFilter.hash(dataView, off + HEADER, keyLength(off));
    }

    /** The message's key, copied. */
    public byte[] key(int off) {
        return Keys.copy(dataView, off + HEADER, keyLength(off));
    }

    /** The message's value, copied. */
    public byte[] value(int off) {
        return Keys.copy(dataView, off + HEADER + keyLength(off), valueLength(off));
    }

    /** Compares the keys of two messages of this buffer. */
    int compareKeys(int a, int b) {
        return Keys.compare(dataView, a + HEADER, keyLength(a), dataView, b + HEADER, keyLength(b));
    }

    /** Compares the key of message {@code off} with that of message {@code otherOff} of {@code other}. */
    int compareKey(int off, MessageBuffer other, int otherOff) {
        return Keys.compare(dataView, off + HEADER, keyLength(off), other.dataView, otherOff + HEADER, other.keyLength(otherOff));
    }

    /** Compares the message's key with {@code key}. */
    int compareKey(int off, byte[] key) {
        return Keys.compare(dataView, off + HEADER, keyLength(off), key);
    }

    /** A view of the data buffer ({@link NodeMemory#view}), for comparing and copying messages out in bulk. */
    ByteBuffer dataView() {
        return dataView;
    }

    /**
     * Writes the messages in (key, msn) order, so that loading needs no sort, and changes nothing
     * in the buffer ({@link BufferReads#serialize}).
     */
    public void serialize(ByteBuf out) {
        BufferReads.serialize(this, data, out);
        serializeRanges(out);
    }

    /** Writes the range messages after the keyed ones (see {@link #read}). */
    private void serializeRanges(ByteBuf out) {
        if (ranges != null) {
            ranges.serialize(out);
        }
    }

    /**
     * Writes the messages as {@link #serialize} does, in the order they were appended rather than
     * sorted: one copy of the data. {@link #read} sorts such a buffer when it is loaded.
     */
    public void serializeInArrivalOrder(ByteBuf out) {
        out.writeBytes(data, 0, data.writerIndex());
        serializeRanges(out);
    }

    /** Returns the memory; the buffer is unusable afterwards. */
    public void release() {
        memory.release(data);
        memory.release(index);
        memory.release(scratch);
        data = null;
        index = null;
        scratch = null;
        ranges = null;
        dataView = null;
        indexView = null;
        scratchView = null;
    }
}
