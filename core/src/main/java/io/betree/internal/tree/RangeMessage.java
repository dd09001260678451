package io.betree.internal.tree;

import java.nio.ByteBuffer;
import java.util.Arrays;

/**
 * A message that covers a range of keys rather than one: a {@link MessageType#RANGE_DELETE}, or a
 * {@link MessageType#RANGE_UPDATE} (a broadcast: its {@link UpdateList} changes every row present
 * in the range). A buffer holds its few range messages beside its keyed ones
 * ({@link MessageBuffer#ranges}); a flush hands each child the part of a range that lies in the
 * child's key range ({@link #clip}), so that no key is covered by two copies of one message.
 *
 * <p>Within one commit (one msn) range messages come before the keyed messages: a transaction's
 * keyed writes are recorded after the effect of its own range operations. A range delete and a
 * range update of one commit commute (a broadcast never creates a row).
 *
 * <p>Stored as a message of the buffer format (docs/format.md): the key is the lower bound
 * (inclusive; the empty key, the smallest, for none), the value a flag byte (1: an upper bound
 * follows), the upper bound's length (2) and bytes when present (exclusive), then for a range update
 * its update list. Immutable; the arrays are not copied and must not be changed.
 */
public final class RangeMessage {
    private static final byte HAS_UPPER = 1;
    private final byte type;
    private final long msn;
    private final long txnId;
    private final byte[] lower;
    private final byte[] upper;
    private final byte[] updates;

    /**
     * @param lower the smallest key covered; empty for no bound
     * @param upper the first key above the range, or null for none
     * @param updates the update list of a range update, null for a range delete
     */
    RangeMessage(byte type, long msn, long txnId, byte[] lower, byte[] upper, byte[] updates) {
        this.type = type;
        this.msn = msn;
        this.txnId = txnId;
        this.lower = lower;
        this.upper = upper;
        this.updates = updates;
    }

    byte type() {
        return type;
    }

    long msn() {
        return msn;
    }

    long txnId() {
        return txnId;
    }

    /** The smallest key covered (the empty key when unbounded). */
    public byte[] lower() {
        return lower;
    }

    /** The first key above the range, or null when unbounded. */
    public byte[] upper() {
        return upper;
    }

    /** The update list of a range update; null for a range delete. */
    public byte[] updates() {
        return updates;
    }

    boolean isDelete() {
        return type == MessageType.RANGE_DELETE;
    }

    /** Whether {@code key} lies in the range. */
    public boolean covers(byte[] key) {
        return Keys.compare(key, lower) >= 0 && (upper == null || Keys.compare(key, upper) < 0);
    }

    /** Whether the range meets {@code [from, limit)} ({@code limit} null: no upper end). */
    boolean overlaps(byte[] from, byte[] limit) {
        return (upper == null || Keys.compare(from, upper) < 0) && (limit == null || Keys.compare(lower, limit) < 0);
    }

    /**
     * The part of this range inside {@code [from, to)} (either null: no bound on that side), or
     * null when they do not meet; this message itself when it lies inside.
     */
    RangeMessage clip(byte[] from, byte[] to) {
        byte[] lo = from != null && Keys.compare(from, lower) > 0 ? from : lower;
        byte[] hi = to != null && (upper == null || Keys.compare(to, upper) < 0) ? to : upper;
        if (hi != null && Keys.compare(lo, hi) >= 0) {
            return null;
        }
        return lo == lower && hi == upper ? this : new RangeMessage(type, msn, txnId, lo, hi, updates);
    }

    /**
     * The part of this range in child {@code child} of a node with {@code pivots} (child {@code i}
     * holds keys from pivot {@code i - 1} up to pivot {@code i}), or null when they do not meet.
     */
    RangeMessage clipToChild(java.util.List<byte[]> pivots, int child) {
        return clip(child == 0 ? null : pivots.get(child - 1), child < pivots.size() ? pivots.get(child) : null);
    }

    /** Bytes of the stored form. */
    int serializedBytes() {
        return MessageBuffer.HEADER + lower.length + valueBytes();
    }

    private int valueBytes() {
        return 1 + (upper == null ? 0 : 2 + upper.length) + (updates == null ? 0 : updates.length);
    }

    /** Writes the stored form at {@code out}'s position, advancing it. */
    void serialize(ByteBuffer out) {
        byte[] value = encodeValue(upper, updates);
        out.put(type).putLong(msn).putLong(txnId).putShort((short) lower.length).putInt(value.length).put(lower).put(value);
    }

    /**
     * Parses the stored message at {@code off} of {@code in}, whose header says it is a range message
     * of {@code length} bytes in all inside the buffer.
     *
     * @throws IllegalArgumentException if it is malformed ({@link #of})
     */
    static RangeMessage parse(ByteBuffer in, int off, int length) {
        int keyLength = in.getShort(off + 17) & 0xffff;
        byte[] lower = Keys.copy(in, off + MessageBuffer.HEADER, keyLength);
        byte[] value = Keys.copy(in, off + MessageBuffer.HEADER + keyLength, length - MessageBuffer.HEADER - keyLength);
        try {
            return of(in.get(off), in.getLong(off + 1), in.getLong(off + 9), lower, value);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("malformed range message at node offset " + off + ": " + e.getMessage());
        }
    }

    /**
     * The value of a range message's stored form ({@link #encodeValue}) and of its write
     * ({@link TreeWrite}) and logged op: the upper bound (null: none) and, for a range update, its
     * update list (null for a range delete).
     */
    public static byte[] encodeValue(byte[] upper, byte[] updates) {
        ByteBuffer b = ByteBuffer.allocate(1 + (upper == null ? 0 : 2 + upper.length)
                + (updates == null ? 0 : updates.length));
        b.put(upper == null ? 0 : HAS_UPPER);
        if (upper != null) {
            b.putShort((short) upper.length).put(upper);
        }
        if (updates != null) {
            b.put(updates);
        }
        return b.array();
    }

    /**
     * The range message of {@code type} over {@code lower} (the empty key: unbounded) and the upper
     * bound and update list {@code value} encodes ({@link #encodeValue}). The arrays are kept.
     *
     * @throws IllegalArgumentException if {@code value} is malformed: a bad flag, an upper bound
     *     cut short or not above the lower one, a range update without a well-formed update list, or
     *     a range delete with bytes after its bounds
     */
    public static RangeMessage of(byte type, long msn, long txnId, byte[] lower, byte[] value) {
        if (!MessageType.isRange(type)) {
            throw new IllegalArgumentException("type " + type + " is not a range message");
        }
        ByteBuffer in = ByteBuffer.wrap(value);
        if (value.length == 0 || (in.get(0) & ~HAS_UPPER) != 0) {
            throw new IllegalArgumentException("bad bound flag");
        }
        int at = 1;
        byte[] upper = null;
        if (in.get(0) == HAS_UPPER) {
            int upperLength = value.length < 3 ? -1 : in.getShort(1) & 0xffff;
            if (upperLength < 0 || 3 + upperLength > value.length) {
                throw new IllegalArgumentException("upper bound cut short");
            }
            upper = Arrays.copyOfRange(value, 3, 3 + upperLength);
            at = 3 + upperLength;
            if (Keys.compare(lower, upper) >= 0) {
                throw new IllegalArgumentException("an empty range");
            }
        }
        byte[] updates = null;
        if (type == MessageType.RANGE_UPDATE) {
            if (!UpdateList.wellFormed(in, at, value.length - at)) {
                throw new IllegalArgumentException("no well-formed update list");
            }
            updates = Arrays.copyOfRange(value, at, value.length);
        } else if (at != value.length) {
            throw new IllegalArgumentException("bytes after the bounds of a range delete");
        }
        return new RangeMessage(type, msn, txnId, lower, upper, updates);
    }

    @Override
    public String toString() {
        return (isDelete() ? "range delete" : "range update") + " @" + msn + " [" + Arrays.toString(lower) + ", "
                + (upper == null ? "end" : Arrays.toString(upper)) + ")";
    }
}
