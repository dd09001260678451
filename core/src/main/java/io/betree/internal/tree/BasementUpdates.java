package io.betree.internal.tree;

/**
 * What the update messages of a batch make of their keys' values in a basement, worked out before
 * {@link Basement#apply} rebuilds it, so that its one pass writes each update as the put (or the
 * delete) it comes to. An update keeps the expiry of the value it changes ({@link Expiry}): it
 * changes the value, not how long it lives. Stateless.
 */
final class BasementUpdates {
    private BasementUpdates() {
    }

    /**
     * The values update messages come to, by message position: null where a message is not an
     * update or its functions deleted the key; the {@link Expiry} stored form where
     * {@code expiring}.
     */
    record Updated(byte[][] values, boolean[] expiring) {
    }

    /**
     * The values the update messages among {@code [from, to)} of {@code messages}' sorted order give
     * their keys in {@code basement}, by position from {@code from}. Each key's messages are applied
     * oldest first to its newest row: every message is newer than every row.
     */
    static Updated updatedValues(Basement basement, MessageBuffer messages, int from, int to,
            UpdateFunctions functions) {
        long now = functions.nowMillis();
        Updated updated = new Updated(new byte[to - from][], new boolean[to - from]);
        int m = from;
        int rows = 0; // where the next key's rows start at the earliest: messages come in key order
        while (m < to) {
            int mEnd = m + 1;
            boolean updates = messages.type(messages.sortedOffset(m)) == MessageType.UPDATE;
            while (mEnd < to && messages.sameKeyAt(m, mEnd)) {
                updates |= messages.type(messages.sortedOffset(mEnd)) == MessageType.UPDATE;
                mEnd++;
            }
            if (updates) {
                int moff = messages.sortedOffset(m);
                byte[] key = messages.key(moff);
                rows = basement.rowAtOrAfter(rows, messages, moff);
                int row = rows < basement.count() && basement.rowHasKeyOf(rows, messages, moff) ? rows : -1;
                byte[] value = row < 0 ? null : basement.newestValueAt(row, now);
                long expiry = value == null ? Long.MAX_VALUE : basement.expiryAt(row);
                for (int k = m; k < mEnd; k++) {
                    int koff = messages.sortedOffset(k);
                    byte type = messages.type(koff);
                    if (MessageType.isPut(type)) {
                        byte[] stored = messages.value(koff);
                        value = Expiry.ofPut(type, stored, now);
                        expiry = value != null && type == MessageType.PUT_EXPIRING ? Expiry.of(stored) : Long.MAX_VALUE;
                    } else if (type == MessageType.DELETE) {
                        value = null;
                        expiry = Long.MAX_VALUE;
                    } else {
                        value = UpdateList.apply(functions, key, value, messages.value(koff));
                        if (value == null) {
                            expiry = Long.MAX_VALUE;
                        }
                        boolean expiring = expiry != Long.MAX_VALUE;
                        updated.values()[k - from] = value == null || !expiring ? value : Expiry.wrap(expiry, value);
                        updated.expiring()[k - from] = expiring;
                    }
                }
            }
            m = mEnd;
        }
        return updated;
    }
}
