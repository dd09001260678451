package io.betree.internal.tree;

import java.util.ArrayList;
import java.util.List;

/**
 * What one read of one key gathers on its way down: the updates it met above the value they change
 * (keyed updates, and broadcasts, which change only a present value), newest first, until it finds
 * that value (a put, a delete, a range delete, a row, or nothing; an expired value is nothing) and
 * applies them to it, oldest
 * first. A read that meets no update allocates no list. Not thread-safe: one read's.
 */
final class PendingUpdates {
    /** What {@link #readBuffer} returns when the buffer says nothing final of the key; compared by identity. */
    static final byte[] NOT_FOUND = new byte[0];

    private final UpdateFunctions functions;
    private final byte[] key;
    /** The environment's clock when the read began: expiring values read against it. */
    private final long now;
    /** The update lists met, newest first; null while none. */
    private List<byte[]> lists;
    /** For each list, whether it is a broadcast's, which leaves an absent key absent. */
    private List<Boolean> onlyIfPresent;

    PendingUpdates(UpdateFunctions functions, byte[] key) {
        this(functions, key, functions.nowMillis());
    }

    /** For a read that reads expiring values against {@code nowMillis}, as the others of its batch. */
    PendingUpdates(UpdateFunctions functions, byte[] key, long nowMillis) {
        this.functions = functions;
        this.key = key;
        this.now = nowMillis;
    }

    /** The clock the read reads expiring values against ({@link Expiry}). */
    long now() {
        return now;
    }

    private void add(byte[] updateList, boolean broadcast) {
        if (lists == null) {
            lists = new ArrayList<>(2);
            onlyIfPresent = new ArrayList<>(2);
        }
        lists.add(updateList);
        onlyIfPresent.add(broadcast);
    }

    /** Whether an update was recorded. */
    boolean any() {
        return lists != null;
    }

    /**
     * Reads the key's messages in {@code buffer} that a snapshot at {@code snapshotTs} sees, newest
     * first: records the updates and broadcasts met, and returns the value of the first put, null
     * for the first delete or range delete, or {@link #NOT_FOUND} when there is neither. Of one
     * msn, a keyed message is newer than a range message ({@link RangeMessage}).
     */
    byte[] readBuffer(MessageBuffer buffer, long snapshotTs) {
        long keyedMax = snapshotTs;
        long rangeMax = snapshotTs;
        while (true) {
            int off = buffer.findNewest(key, keyedMax);
            RangeMessage r = buffer.newestRangeCovering(key, rangeMax);
            if (r != null && (off < 0 || r.msn() > buffer.msn(off))) {
                if (r.isDelete()) {
                    return null;
                }
                add(r.updates(), true);
                keyedMax = r.msn() - 1;
                rangeMax = r.msn() - 1;
                continue;
            }
            if (off < 0) {
                return NOT_FOUND;
            }
            byte type = buffer.type(off);
            if (type != MessageType.UPDATE) {
                return MessageType.isPut(type) ? Expiry.ofPut(type, buffer.value(off), now) : null;
            }
            add(buffer.value(off), false);
            keyedMax = buffer.msn(off) - 1;
            rangeMax = buffer.msn(off); // a range message of the same commit comes before it
        }
    }

    /** The value after the recorded updates change {@code base} (null: absent); null when absent. */
    byte[] over(byte[] base) {
        if (lists == null) {
            return base;
        }
        byte[] value = base;
        for (int i = lists.size() - 1; i >= 0; i--) {
            value = onlyIfPresent.get(i) ? UpdateList.applyWhilePresent(functions, key, value, lists.get(i))
                    : UpdateList.apply(functions, key, value, lists.get(i));
        }
        return value;
    }
}
