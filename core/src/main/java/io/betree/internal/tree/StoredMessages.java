package io.betree.internal.tree;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;

/**
 * What a stored message buffer holds, checked in one pass before {@link MessageBuffer#read} copies
 * it: the keyed messages, which come first, and the range messages after them, parsed.
 *
 * @param keyed how many keyed messages there are
 * @param keyedEnd where they end (an offset of the input)
 * @param ranges the range messages, in stored (msn) order; empty when none
 */
record StoredMessages(int keyed, int keyedEnd, List<RangeMessage> ranges) {

    /**
     * Checks the messages in {@code [start, end)} of {@code in}: every length inside the bounds,
     * every type known, update lists and range messages well formed, expiring puts with their
     * expiry, no keyed message after a range message.
     *
     * @throws IllegalArgumentException naming the offset of the first malformed message
     */
    static StoredMessages check(ByteBuffer in, int start, int end) {
        int keyed = 0;
        int keyedEnd = end;
        List<RangeMessage> ranges = null;
        for (int off = start; off < end;) {
            if (off + MessageBuffer.HEADER > end) {
                throw malformed(off, "");
            }
            byte type = in.get(off);
            int keyLength = in.getShort(off + 17) & 0xffff;
            int valueLength = in.getInt(off + 19);
            long longLength = (long) MessageBuffer.HEADER + keyLength + valueLength;
            if (!MessageType.isKnown(type) || valueLength < 0 || off + longLength > end
                    || type == MessageType.UPDATE
                            && !UpdateList.wellFormed(in, off + MessageBuffer.HEADER + keyLength, valueLength)
                    || type == MessageType.PUT_EXPIRING && valueLength < Expiry.BYTES) {
                throw malformed(off, "");
            }
            int length = (int) longLength; // within the buffer, which an int indexes
            if (MessageType.isRange(type)) {
                if (ranges == null) {
                    ranges = new ArrayList<>(2);
                    keyedEnd = off;
                }
                ranges.add(RangeMessage.parse(in, off, length));
            } else if (ranges != null) {
                throw malformed(off, ": a keyed message after range messages");
            } else {
                keyed++;
            }
            off += length;
        }
        return new StoredMessages(keyed, keyedEnd, ranges == null ? List.of() : ranges);
    }

    private static IllegalArgumentException malformed(int off, String why) {
        return new IllegalArgumentException("malformed message at node offset " + off + why);
    }
}
