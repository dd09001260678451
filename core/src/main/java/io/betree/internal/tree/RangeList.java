package io.betree.internal.tree;

import io.netty.buffer.ByteBuf;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;

/**
 * The range messages of one {@link MessageBuffer}, in msn order, on the heap: a buffer holds few
 * (a range delete or a broadcast is one message, clipped once per child it reaches). The buffer
 * keeps none of these until its first range message arrives. Not thread-safe: as its buffer.
 */
final class RangeList {
    private final List<RangeMessage> messages = new ArrayList<>(2);
    /** Their stored size. */
    private int bytes;

    /** Adds a message as new as or newer than every one held. */
    void add(RangeMessage r) {
        messages.add(r);
        bytes += r.serializedBytes();
    }

    /** Adds the messages of {@code other}, which covers other keys (a neighbour being merged in), keeping msn order. */
    void addAll(RangeList other) {
        for (RangeMessage r : other.messages) {
            add(r);
        }
        messages.sort((a, b) -> Long.compare(a.msn(), b.msn())); // stable: a commit's order kept
    }

    /** The messages in msn order; not to be changed. */
    List<RangeMessage> messages() {
        return messages;
    }

    /** Their stored size in bytes. */
    int bytes() {
        return bytes;
    }

    /**
     * The newest message covering {@code key} with msn at most {@code maxMsn}, a range delete
     * before a range update of the same msn (they commute, and the delete ends a read); null when
     * none.
     */
    RangeMessage newestCovering(byte[] key, long maxMsn) {
        RangeMessage best = null;
        for (int i = messages.size() - 1; i >= 0; i--) {
            RangeMessage r = messages.get(i);
            if (r.msn() > maxMsn || !r.covers(key)) {
                continue;
            }
            if (best != null && r.msn() < best.msn()) {
                break;
            }
            if (best == null || r.isDelete()) {
                best = r;
            }
        }
        return best;
    }

    /** Whether a message a snapshot at {@code snapshotTs} sees meets {@code [from, limit)} ({@code limit} null: no end). */
    boolean anyIn(byte[] from, byte[] limit, long snapshotTs) {
        for (RangeMessage r : messages) {
            if (r.msn() <= snapshotTs && r.overlaps(from, limit)) {
                return true;
            }
        }
        return false;
    }

    /** Writes the stored form of every message, in msn order. */
    void serialize(ByteBuf out) {
        ByteBuffer b = ByteBuffer.allocate(bytes);
        for (RangeMessage r : messages) {
            r.serialize(b);
        }
        out.writeBytes(b.array());
    }
}
