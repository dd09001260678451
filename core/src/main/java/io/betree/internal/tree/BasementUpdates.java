package io.betree.internal.tree;

/**
 * What the update messages of a batch make of their keys' values in a basement, worked out before
 * {@link Basement#apply} rebuilds it, so that its one pass writes each update as the put (or the
 * delete) it comes to. Stateless.
 */
final class BasementUpdates {
    private BasementUpdates() {
    }

    /**
     * The values the update messages among {@code [from, to)} of {@code messages}' sorted order give
     * their keys in {@code basement}, by position from {@code from} (null where a message is not an
     * update, or where its functions deleted the key). Each key's messages are applied oldest first
     * to its newest row: every message is newer than every row.
     */
    static byte[][] updatedValues(Basement basement, MessageBuffer messages, int from, int to,
            UpdateFunctions functions) {
        byte[][] updated = new byte[to - from][];
        int m = from;
        while (m < to) {
            int mEnd = m + 1;
            boolean updates = messages.type(messages.sortedOffset(m)) == MessageType.UPDATE;
            while (mEnd < to && messages.sameKeyAt(m, mEnd)) {
                updates |= messages.type(messages.sortedOffset(mEnd)) == MessageType.UPDATE;
                mEnd++;
            }
            if (updates) {
                byte[] key = messages.key(messages.sortedOffset(m));
                byte[] value = basement.newestValue(key);
                for (int k = m; k < mEnd; k++) {
                    int koff = messages.sortedOffset(k);
                    byte type = messages.type(koff);
                    if (type == MessageType.PUT) {
                        value = messages.value(koff);
                    } else if (type == MessageType.DELETE) {
                        value = null;
                    } else {
                        value = UpdateList.apply(functions, key, value, messages.value(koff));
                        updated[k - from] = value;
                    }
                }
            }
            m = mEnd;
        }
        return updated;
    }
}
