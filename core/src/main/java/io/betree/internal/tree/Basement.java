package io.betree.internal.tree;

import io.betree.compression.BlockCompressor;
import io.betree.compression.Compressors;
import io.betree.compression.NoneCompressor;
import io.betree.internal.cache.CacheEntry;
import io.betree.internal.memory.NodeMemory;
import io.netty.buffer.ByteBuf;
import java.nio.ByteBuffer;
import java.util.concurrent.ThreadLocalRandom;

/**
 * A basement node: a sorted run of rows that is one block of its own, so a query reads and caches
 * only the basement it needs rather than the whole leaf.
 *
 * <p>A row is one version of a key. Rows are sorted by key, then newest first. Layout of
 * {@code data} (also the on-disk form): a 5-byte header (tag {@code 'B'}, row count) followed by
 * rows of key length (2 bytes), flags (1: bit 0 tombstone, bit 1 has a timestamp, bit 2 expires),
 * value length (4), the commit timestamp (8, only when flagged), key, value; an expiring row's value
 * is its {@link Expiry} stored form, which the value length counts. A row without a timestamp is
 * visible to every snapshot; older versions exist only while a snapshot may still need them. An
 * expiring row reads as absent from its expiry on, and a rewrite drops it then.
 * {@code index} holds each row's offset for binary search. Basements are stored in chunks
 * ({@link BasementChunks}); this layout is what the chunks hold, and was the stored form of format
 * versions before 8.
 */
public final class Basement extends CacheEntry {
    static final byte TAG = 'B';
    static final int HEADER = 5;
    static final int ROW_HEADER = 7;
    static final int TOMBSTONE = 1;
    static final int HAS_TS = 2;
    static final int EXPIRES = 4;

    /** The block is stored as it is: its chunks are compressed. */
    private static final BlockCompressor STORED_RAW = Compressors.forId(NoneCompressor.ID);

    private final NodeMemory memory;
    private final BasementChunks chunks;
    /** Mixed with the modification count into the stamp of each version this object writes. */
    private final long salt = ThreadLocalRandom.current().nextLong();
    private ByteBuf data;
    private ByteBuf index;
    /** Views of {@code data} and {@code index} for reads ({@link NodeMemory#view}); replaced with them. */
    private ByteBuffer dataView;
    private ByteBuffer indexView;
    private int count;
    /**
     * Whether no row is a tombstone or expires ({@link #nothingToDrop}): 0 not known yet, 1 yes,
     * 2 no. Every change of the rows but an overwrite of values in place forgets it.
     */
    private byte plainRows;

    /** A basement over {@code data} and its row index {@code index}, both its own from now on. */
    Basement(long blockNumber, NodeMemory memory, BasementChunks chunks, ByteBuf data, ByteBuf index, int count) {
        super(blockNumber);
        this.memory = memory;
        this.chunks = chunks;
        setData(data);
        setIndex(index);
        this.count = count;
    }

    private void setData(ByteBuf buf) {
        plainRows = 0;
        data = buf;
        dataView = NodeMemory.view(buf);
    }

    private void setIndex(ByteBuf buf) {
        index = buf;
        indexView = NodeMemory.view(buf);
    }

    /** A basement with no rows. */
    static Basement empty(long blockNumber, NodeMemory memory, BasementChunks chunks) {
        ByteBuf data = memory.allocate(256);
        data.writeByte(TAG).writeInt(0);
        return new Basement(blockNumber, memory, chunks, data, memory.allocate(64), 0);
    }

    // ---- row layout ----

    static int tsBytes(int flags) {
        return (flags & HAS_TS) != 0 ? 8 : 0;
    }

    static int flags(ByteBuffer buf, int off) {
        return buf.get(off + 2) & 0xff;
    }

    static int keyLength(ByteBuffer buf, int off) {
        return buf.getShort(off) & 0xffff;
    }

    static int keyOffset(ByteBuffer buf, int off) {
        return off + ROW_HEADER + tsBytes(flags(buf, off));
    }

    static int rowLength(ByteBuffer buf, int off) {
        return ROW_HEADER + tsBytes(flags(buf, off)) + keyLength(buf, off) + buf.getInt(off + 3);
    }

    private static long rowTs(ByteBuffer buf, int off) {
        return (flags(buf, off) & HAS_TS) != 0 ? buf.getLong(off + ROW_HEADER) : 0L;
    }

    private static int compareRowKeys(ByteBuffer buf, int a, int b) {
        return Keys.compare(buf, keyOffset(buf, a), keyLength(buf, a), buf, keyOffset(buf, b), keyLength(buf, b));
    }

    /** Number of rows (versions). */
    public int count() {
        return count;
    }

    /** Serialized size in bytes. */
    public int bytes() {
        return data.writerIndex();
    }

    private int offset(int pos) {
        return indexView.getInt(pos * 4);
    }

    /** The {@link KeyFilter#hash} of row {@code pos}'s key. */
    long keyHash(int pos) {
        int off = offset(pos);
        return KeyFilter.hash(dataView, keyOffset(dataView, off), keyLength(dataView, off));
    }

    /** Key of row {@code pos}, copied. */
    public byte[] key(int pos) {
        int off = offset(pos);
        return Keys.copy(dataView, keyOffset(dataView, off), keyLength(dataView, off));
    }

    int compareKey(int pos, byte[] key) {
        int off = offset(pos);
        return Keys.compare(dataView, keyOffset(dataView, off), keyLength(dataView, off), key);
    }

    private boolean sameKey(int a, int b) {
        return compareRowKeys(dataView, offset(a), offset(b)) == 0;
    }

    /** First row whose key is {@code >= key}. */
    public int lowerBound(byte[] key) {
        int lo = 0;
        int hi = count;
        while (lo < hi) {
            int mid = (lo + hi) >>> 1;
            if (compareKey(mid, key) < 0) {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        return lo;
    }

    /** The end of the run of rows that share row {@code pos}'s key. */
    int keyEnd(int pos) {
        int end = pos + 1;
        while (end < count && sameKey(pos, end)) {
            end++;
        }
        return end;
    }

    /**
     * The row of the rows {@code [pos, end)} (versions of one key, newest first) that a snapshot at
     * {@code snapshotTs} sees, or -1 when it sees none, a tombstone, or a row expired at
     * {@code nowMillis}.
     */
    int visibleRow(int pos, int end, long snapshotTs, long nowMillis) {
        for (int p = pos; p < end; p++) {
            int off = offset(p);
            if (rowTs(dataView, off) <= snapshotTs) {
                return (flags(dataView, off) & TOMBSTONE) != 0 || expired(off, nowMillis) ? -1 : p;
            }
        }
        return -1;
    }

    /** Whether the row at {@code off} expires and has at {@code nowMillis}. */
    private boolean expired(int off, long nowMillis) {
        return (flags(dataView, off) & EXPIRES) != 0 && expiryAtOffset(off) <= nowMillis;
    }

    private long expiryAtOffset(int off) {
        return dataView.getLong(keyOffset(dataView, off) + keyLength(dataView, off));
    }

    /**
     * The value of {@code key} a snapshot at {@code snapshotTs} sees at {@code nowMillis} (the
     * environment's clock, {@link UpdateFunctions#nowMillis}), or {@code null}.
     */
    public byte[] get(byte[] key, long snapshotTs, long nowMillis) {
        int pos = lowerBound(key);
        if (pos == count || compareKey(pos, key) != 0) {
            return null;
        }
        int row = visibleRow(pos, keyEnd(pos), snapshotTs, nowMillis);
        return row < 0 ? null : value(row);
    }

    /** Value of row {@code pos}, copied (without an expiring row's expiry). */
    public byte[] value(int pos) {
        int off = offset(pos);
        int skip = (flags(dataView, off) & EXPIRES) != 0 ? Expiry.BYTES : 0;
        return Keys.copy(dataView, keyOffset(dataView, off) + keyLength(dataView, off) + skip,
                dataView.getInt(off + 3) - skip);
    }

    /** The expiry of row {@code pos}, or {@link Long#MAX_VALUE} when it does not expire. */
    long expiryAt(int pos) {
        int off = offset(pos);
        return (flags(dataView, off) & EXPIRES) != 0 ? expiryAtOffset(off) : Long.MAX_VALUE;
    }

    private void growData(int bytes) {
        ByteBuf grown = memory.ensureWritable(data, bytes);
        if (grown != data) {
            setData(grown);
        }
    }

    private void growIndex(int bytes) {
        ByteBuf grown = memory.ensureWritable(index, bytes);
        if (grown != index) {
            setIndex(grown);
        }
    }

    /**
     * Appends a row for a key that sorts after every present key (the sequential-insert path); an
     * {@code expiring} row's {@code value} is its {@link Expiry} stored form.
     */
    void appendLast(byte[] key, byte[] value, long ts, boolean expiring) {
        plainRows = 0;
        growData(ROW_HEADER + 8 + key.length + value.length);
        growIndex(4);
        index.writeInt(data.writerIndex());
        data.writeShort(key.length).writeByte(HAS_TS | (expiring ? EXPIRES : 0)).writeInt(value.length).writeLong(ts);
        data.writeBytes(key).writeBytes(value);
        count++;
        data.setInt(1, count);
    }

    /**
     * Applies messages {@code [from, to)} of {@code messages}' sorted order and rebuilds the rows in
     * one pass. Versions that no snapshot at or after {@code horizon} can see are dropped; the
     * version such snapshots see loses its timestamp (it is visible to all).
     *
     * <p>A flush usually brings a basement a few messages for its thousand-odd rows, so the rows
     * between two messages' keys are found by a galloping search and copied in bulk
     * ({@link #copyRows}). Rebuilding it row by row, each row compared with the next message and
     * with the row after it, was half of a flusher's time in an iiBench load (the comparisons a
     * quarter).
     *
     * <p>An {@link MessageType#UPDATE} message becomes the row its functions make of the key's value
     * before it, worked out first ({@link BasementUpdates#updatedValues}), so that the pass below
     * writes it as a put (or a delete, when the functions return null). A batch whose messages all
     * replace plain values with values as long may overwrite them in place instead
     * ({@link BasementUpdates#patchInPlace}).
     *
     * @return true when the basement was rebuilt (its keys and size may have changed), false when
     *     values were overwritten in place (same keys, same size)
     * @throws io.betree.internal.fault.BetreeException if an update names no registered function
     *     (the basement is then unchanged)
     */
    boolean apply(MessageBuffer messages, int from, int to, long horizon, UpdateFunctions functions) {
        long extra = 0;
        boolean updates = false;
        for (int m = from; m < to; m++) {
            int moff = messages.sortedOffset(m);
            extra += ROW_HEADER + 8 + messages.keyLength(moff) + messages.valueLength(moff);
            updates |= messages.type(moff) == MessageType.UPDATE;
        }
        long now = functions.nowMillis(); // one reading for the batch: its updates and its pruning agree
        BasementUpdates.Updated updated = null;
        if (updates) {
            updated = BasementUpdates.updatedValues(this, messages, from, to, functions, now);
            if (BasementUpdates.patchInPlace(this, messages, from, to, horizon, updated)) {
                return false;
            }
            for (byte[] v : updated.values()) {
                extra += v == null ? 0 : v.length;
            }
        }
        ByteBuf out = memory.allocate((int) Math.min(Integer.MAX_VALUE - 8, data.writerIndex() + extra));
        ByteBuf outIndex = memory.allocate(Math.max(4, (count + (to - from)) * 4));
        try {
            // Written through views, then the writer indexes set once: both buffers were sized for
            // every row and message above.
            BasementRows rows = new BasementRows(NodeMemory.view(out), NodeMemory.view(outIndex), horizon, now, updated,
                    from);
            rows.view.put(0, TAG);
            rows.at = HEADER;
            ByteBuffer md = messages.dataView();
            int e = 0;
            int m = from;
            while (m < to) {
                int moff = messages.sortedOffset(m);
                int keyOff = moff + MessageBuffer.HEADER;
                int keyLength = messages.keyLength(moff);
                int lb = lowerBoundFrom(e, md, keyOff, keyLength);
                copyRows(rows, e, lb);
                e = lb;
                int mEnd = m + 1;
                while (mEnd < to && messages.sameKeyAt(m, mEnd)) {
                    mEnd++;
                }
                int eEnd = e < count && compareRowKey(e, md, keyOff, keyLength) == 0 ? keyEnd(e) : e;
                // Newest first: the messages (no older than any row), newest message first, then the
                // rows. The newest message is written before the loop over older ones: as the loop's
                // first pass, C2's loop-limit check on it threw the compiled method away, twice a run
                // (docs/benchmarks.md).
                boolean kept = writeMessage(rows, messages, mEnd - 1);
                for (int k = mEnd - 2; !kept && k >= m; k--) {
                    kept = writeMessage(rows, messages, k);
                }
                // A row as new as the key's oldest message is its own commit's range message's,
                // applied just before (RangeMessage: range messages come first in a commit): the
                // keyed message replaces it, as two versions of one timestamp cannot be ordered.
                long oldestMsn = messages.msn(messages.sortedOffset(m));
                for (int p = e; p < eEnd && !kept; p++) {
                    if (rowTs(dataView, offset(p)) != oldestMsn) {
                        kept = writeRow(rows, p);
                    }
                }
                m = mEnd;
                e = eEnd;
            }
            copyRows(rows, e, count);
            out.writerIndex(rows.at);
            outIndex.writerIndex(rows.rows * 4);
            count = rows.rows;
            out.setInt(1, count);
        } catch (RuntimeException ex) {
            memory.release(out);
            memory.release(outIndex);
            throw ex;
        }
        memory.release(data);
        memory.release(index);
        setData(out);
        setIndex(outIndex);
        return true;
    }

    /**
     * Whether no row is a tombstone or expires: none that a rebuild could come to drop, as deletes
     * and TTLs promise. Worked out once per state of the rows (a pass over their flags), for
     * {@link BasementUpdates#patchInPlace}: a basement that holds one is rebuilt instead. (Older
     * versions kept for snapshots go at the next rebuild, whatever brings it.)
     */
    boolean nothingToDrop() {
        if (plainRows == 0) {
            boolean clean = true;
            for (int p = 0; p < count && clean; p++) {
                clean = (flags(dataView, offset(p)) & (TOMBSTONE | EXPIRES)) == 0;
            }
            plainRows = clean ? (byte) 1 : 2;
        }
        return plainRows == 1;
    }

    /** Whether row {@code pos} is a plain value: visible to every snapshot, no tombstone, no expiry. */
    boolean plainRow(int pos) {
        return flags(dataView, offset(pos)) == 0;
    }

    /** The length of row {@code pos}'s stored value. */
    int valueLengthAt(int pos) {
        return dataView.getInt(offset(pos) + 3);
    }

    /** Overwrites row {@code pos}'s value with {@code value}, of the same length (see {@link BasementUpdates#patchInPlace}). */
    void overwriteValue(int pos, byte[] value) {
        int off = offset(pos);
        dataView.put(keyOffset(dataView, off) + keyLength(dataView, off), value);
    }

    /** Compares row {@code pos}'s key with the key of {@code keyLength} bytes at {@code keyOff} of {@code buf}. */
    private int compareRowKey(int pos, ByteBuffer buf, int keyOff, int keyLength) {
        int off = offset(pos);
        return Keys.compare(dataView, keyOffset(dataView, off), keyLength(dataView, off), buf, keyOff, keyLength);
    }

    /**
     * The first row at or after {@code from} whose key is {@code >=} the given key: gallops from
     * {@code from} (1, 2, 4... rows on), then searches the last step, so that a message close to
     * the previous one costs a comparison or two and a far one about twice a binary search.
     */
    private int lowerBoundFrom(int from, ByteBuffer buf, int keyOff, int keyLength) {
        int lo = from;
        int step = 1;
        int hi = from;
        while (hi < count && compareRowKey(hi, buf, keyOff, keyLength) < 0) {
            lo = hi + 1;
            hi = from + step;
            step <<= 1;
        }
        hi = Math.min(hi, count);
        while (lo < hi) {
            int mid = (lo + hi) >>> 1;
            if (compareRowKey(mid, buf, keyOff, keyLength) < 0) {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        return lo;
    }

    /**
     * Copies rows {@code [from, to)}, whole keys with no message, into {@code rows}: runs of rows
     * that stay as they are (visible to all already, or too new for every snapshot at the horizon)
     * in one piece, with their index entries shifted; a row that has just become visible to all
     * through {@link BasementRows#write}, which drops the older versions of its key.
     */
    private void copyRows(BasementRows rows, int from, int to) {
        int p = from;
        while (p < to) {
            int start = offset(p);
            int end = start;
            int q = p;
            while (q < to && offset(q) == end && unchangedByApply(end, rows.horizon, rows.now)) {
                end += rowLength(dataView, end);
                q++;
            }
            if (q > p) {
                int shift = rows.at - start;
                for (int k = p; k < q; k++) {
                    rows.indexView.putInt((rows.rows + k - p) * 4, offset(k) + shift);
                }
                rows.view.put(rows.at, dataView, start, end - start);
                rows.at += end - start;
                rows.rows += q - p;
                p = q;
            } else {
                int keyEnd = keyEnd(p);
                for (boolean kept = false; p < keyEnd && !kept; p++) {
                    kept = writeRow(rows, p);
                }
                p = keyEnd;
            }
        }
    }

    /**
     * Whether {@link BasementRows#write} would copy the row at {@code off} byte for byte: it has no
     * timestamp (visible to all; never followed by older versions of its key), or one newer than
     * the horizon, and has not expired at {@code now}.
     */
    private boolean unchangedByApply(int off, long horizon, long now) {
        int flags = flags(dataView, off);
        return ((flags & HAS_TS) == 0 || dataView.getLong(off + ROW_HEADER) > horizon)
                && ((flags & EXPIRES) == 0 || expiryAtOffset(off) > now);
    }

    /** Writes message {@code k} of {@code messages}' sorted order through {@link BasementRows#write}; returns its answer. */
    private static boolean writeMessage(BasementRows rows, MessageBuffer messages, int k) {
        int koff = messages.sortedOffset(k);
        byte type = messages.type(koff);
        if (type == MessageType.UPDATE) {
            return rows.writeUpdated(messages.dataView(), koff + MessageBuffer.HEADER, messages.keyLength(koff),
                    rows.updated.values()[k - rows.updatedFrom], rows.updated.expiring()[k - rows.updatedFrom],
                    messages.msn(koff));
        }
        return rows.write(messages.dataView(), koff + MessageBuffer.HEADER, messages.keyLength(koff),
                messages.valueLength(koff), type == MessageType.DELETE, type == MessageType.PUT_EXPIRING,
                messages.msn(koff));
    }

    /**
     * The first row at or after {@code from} whose key is at or after that of message {@code moff}
     * of {@code messages}, found by galloping from {@code from}: a caller that walks sorted messages
     * passes the previous answer, so a batch costs a pass, not a binary search per message.
     */
    int rowAtOrAfter(int from, MessageBuffer messages, int moff) {
        return lowerBoundFrom(from, messages.dataView(), moff + MessageBuffer.HEADER, messages.keyLength(moff));
    }

    /** Whether row {@code pos} (below {@link #count}) has the key of message {@code moff} of {@code messages}. */
    boolean rowHasKeyOf(int pos, MessageBuffer messages, int moff) {
        return compareRowKey(pos, messages.dataView(), moff + MessageBuffer.HEADER, messages.keyLength(moff)) == 0;
    }

    /**
     * The value of row {@code pos}, the newest of its key, or null when it is a tombstone or expired
     * at {@code nowMillis}.
     */
    byte[] newestValueAt(int pos, long nowMillis) {
        int off = offset(pos);
        return (flags(dataView, off) & TOMBSTONE) != 0 || expired(off, nowMillis) ? null : value(pos);
    }

    /** Writes row {@code p} through {@link BasementRows#write}; returns its answer. */
    private boolean writeRow(BasementRows rows, int p) {
        int off = offset(p);
        int flags = flags(dataView, off);
        return rows.write(dataView, keyOffset(dataView, off), keyLength(dataView, off), dataView.getInt(off + 3),
                (flags & TOMBSTONE) != 0, (flags & EXPIRES) != 0, rowTs(dataView, off));
    }

    /**
     * Moves the rows from position {@code from} on into a new basement with block number
     * {@code blockNumber}, which it returns. {@code from} must start a key's run of versions.
     * {@code reserveBytes} is room to leave for rows still to come: a basement that sequential
     * inserts will fill gets its full size at once, instead of growing by half again some twenty
     * times (each growth of a writer's buffer is a round trip to the allocation thread; they cost
     * a 1,000-row sequential batch up to 80 ms on a busy machine).
     */
    Basement splitAt(int from, long blockNumber, int reserveBytes) {
        plainRows = 0;
        int start = offset(from);
        int len = data.writerIndex() - start;
        ByteBuf rightData = memory.allocate(Math.max(HEADER + len, reserveBytes));
        rightData.writeByte(TAG).writeInt(count - from);
        rightData.writeBytes(data, start, len);
        // As many index slots as rows of this basement's average size fit in the reserve.
        int expectedRows = count == 0 ? 0 : (int) ((long) reserveBytes * count / Math.max(1, data.writerIndex()));
        ByteBuf rightIndex = memory.allocate(Math.max(4, Math.max(count - from, expectedRows) * 4));
        for (int p = from; p < count; p++) {
            rightIndex.writeInt(offset(p) - start + HEADER);
        }
        Basement right = new Basement(blockNumber, memory, chunks, rightData, rightIndex, count - from);
        data.writerIndex(start);
        index.writerIndex(from * 4);
        count = from;
        data.setInt(1, count);
        return right;
    }

    /**
     * A row position that starts a key and leaves about half of the bytes on each side, or -1 when
     * every row belongs to one key.
     */
    int splitPosition() {
        int half = data.writerIndex() / 2;
        int lo = 1;
        int hi = count - 1;
        while (lo < hi) {
            int mid = (lo + hi) >>> 1;
            if (offset(mid) < half) {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        for (int p = Math.max(1, lo); p < count; p++) {
            if (!sameKey(p - 1, p)) {
                return p;
            }
        }
        for (int p = Math.max(1, lo) - 1; p >= 1; p--) {
            if (!sameKey(p - 1, p)) {
                return p;
            }
        }
        return -1;
    }

    /** Appends all rows of {@code right}, whose keys all sort after this basement's. */
    void absorb(Basement right) {
        plainRows = 0;
        int len = right.data.writerIndex() - HEADER;
        growData(len);
        growIndex(right.count * 4);
        int base = data.writerIndex() - HEADER;
        for (int p = 0; p < right.count; p++) {
            index.writeInt(right.offset(p) + base);
        }
        data.writeBytes(right.data, HEADER, len);
        count += right.count;
        data.setInt(1, count);
    }

    // ---- the stored form, for BasementChunks ----

    /** The rows' bytes: a view for absolute reads, valid until the basement next changes. */
    ByteBuffer rows() {
        return dataView;
    }

    /** Where row {@code pos} starts in {@link #rows}; rows lie in order, one after another. */
    int rowOffset(int pos) {
        return offset(pos);
    }

    /** Where the last row ends in {@link #rows}. */
    int rowsEnd() {
        return data.writerIndex();
    }

    /** Whether row {@code pos} (above 0) is a version of the key of row {@code pos - 1}. */
    boolean sameKeyAsPrevious(int pos) {
        return sameKey(pos - 1, pos);
    }

    /**
     * The shortest key above row {@code pos - 1}'s key and at most row {@code pos}'s, which differ:
     * the latter cut just past their common prefix.
     */
    byte[] separatorBefore(int pos) {
        int a = offset(pos - 1);
        int b = offset(pos);
        int aKey = keyOffset(dataView, a);
        int bKey = keyOffset(dataView, b);
        int aLength = keyLength(dataView, a);
        int bLength = keyLength(dataView, b);
        int common = 0;
        while (common < aLength && common < bLength && dataView.get(aKey + common) == dataView.get(bKey + common)) {
            common++;
        }
        return Keys.copy(dataView, bKey, Math.min(bLength, common + 1));
    }

    /** Writes the rows in this class's layout (tag, count, rows) to {@code out}: what the chunks hold. */
    void writeRowsTo(ByteBuf out) {
        out.writeBytes(data, 0, data.writerIndex());
    }

    /** The stamp of the version this object holds: random for each object and modification count, never 0. */
    private long stamp() {
        long z = salt + modifications() * 0x9E3779B97F4A7C15L;
        z = (z ^ (z >>> 30)) * 0xBF58476D1CE4E5B9L;
        z = (z ^ (z >>> 27)) * 0x94D049BB133111EBL;
        z ^= z >>> 31;
        return z == 0 ? 1 : z;
    }

    @Override
    public BlockCompressor compressor() {
        return STORED_RAW;
    }

    /** Before leaves: a leaf written after its basements records their new chunk maps. */
    @Override
    protected boolean checkpointFirst() {
        return true;
    }

    @Override
    public long memoryBytes() {
        return (long) data.capacity() + index.capacity();
    }

    @Override
    public int serializedSizeBound() {
        return chunks.sizeBound(this);
    }

    @Override
    public void serialize(ByteBuf out) {
        chunks.write(this, out, stamp());
    }

    @Override
    protected void releaseMemory() {
        memory.release(data);
        memory.release(index);
        data = null;
        index = null;
        dataView = null;
        indexView = null;
    }
}
