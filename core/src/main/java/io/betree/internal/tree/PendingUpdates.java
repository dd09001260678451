package io.betree.internal.tree;

import java.util.ArrayList;
import java.util.List;

/**
 * The updates of one key a read met above the value they change, newest first, until the read finds
 * that value (a put, a delete, a row, or nothing) and applies them to it, oldest first. A read that
 * meets no update allocates no list. Not thread-safe: one read's.
 */
final class PendingUpdates {
    private final UpdateFunctions functions;
    private final byte[] key;
    /** The update lists met, newest first; null while none. */
    private List<byte[]> lists;

    PendingUpdates(UpdateFunctions functions, byte[] key) {
        this.functions = functions;
        this.key = key;
    }

    /** Records an update older than every one recorded before. */
    void add(byte[] updateList) {
        if (lists == null) {
            lists = new ArrayList<>(2);
        }
        lists.add(updateList);
    }

    /** Whether an update was recorded. */
    boolean any() {
        return lists != null;
    }

    /** The value after the recorded updates change {@code base} (null: absent); null when absent. */
    byte[] over(byte[] base) {
        if (lists == null) {
            return base;
        }
        byte[] value = base;
        for (int i = lists.size() - 1; i >= 0; i--) {
            value = UpdateList.apply(functions, key, value, lists.get(i));
        }
        return value;
    }
}
