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
     * {@code expiring}. {@code rows} gives, at the position of each key's first message, the
     * position of the key's newest row, or -1 when it has none; its other entries mean nothing.
     */
    record Updated(byte[][] values, boolean[] expiring, int[] rows) {
    }

    /**
     * The values the update messages among {@code [from, to)} of {@code messages}' sorted order give
     * their keys in {@code basement}, by position from {@code from}. Each key's messages are applied
     * oldest first to its newest row: no message is older than a row.
     */
    static Updated updatedValues(Basement basement, MessageBuffer messages, int from, int to,
            UpdateFunctions functions, long now) {
        Updated updated = new Updated(new byte[to - from][], new boolean[to - from], new int[to - from]);
        int m = from;
        int rows = 0; // where the next key's rows start at the earliest: messages come in key order
        while (m < to) {
            int mEnd = m + 1;
            boolean updates = messages.type(messages.sortedOffset(m)) == MessageType.UPDATE;
            while (mEnd < to && messages.sameKeyAt(m, mEnd)) {
                updates |= messages.type(messages.sortedOffset(mEnd)) == MessageType.UPDATE;
                mEnd++;
            }
            int moff = messages.sortedOffset(m);
            rows = basement.rowAtOrAfter(rows, messages, moff);
            int row = rows < basement.count() && basement.rowHasKeyOf(rows, messages, moff) ? rows : -1;
            updated.rows()[m - from] = row;
            if (updates) {
                byte[] key = messages.key(moff);
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

    /**
     * Applies a batch with updates ({@link Basement#apply}) by overwriting values where they lie, when it
     * can: no row of the basement is a tombstone or expires ({@link Basement#nothingToDrop}), every
     * key the batch names has a plain row (one version, visible to every snapshot), every message
     * is a put or an update that every snapshot sees (at or below the {@code horizon}, so no
     * version before it is needed), and each key's new value, worked out in {@code updated}, is as
     * long as its row's. Counters and fixed-width fields take this path:
     * rewriting the basement for them (a per-row pass over a few thousand rows for the few dozen a
     * flush brings) was most of a counter-incrementing load's flusher time. Returns false, having
     * changed nothing, otherwise.
     */
    static boolean patchInPlace(Basement basement, MessageBuffer messages, int from, int to, long horizon,
            Updated updated) {
        if (!basement.nothingToDrop()) {
            return false;
        }
        int groups = 0;
        int[] targets = new int[to - from];
        byte[][] values = new byte[to - from][];
        int m = from;
        while (m < to) {
            int row = updated.rows()[m - from];
            if (row < 0 || !basement.plainRow(row)) {
                return false;
            }
            int mEnd = m;
            do {
                int moff = messages.sortedOffset(mEnd);
                byte type = messages.type(moff);
                if (type != MessageType.UPDATE && type != MessageType.PUT || messages.msn(moff) > horizon) {
                    return false;
                }
                mEnd++;
            } while (mEnd < to && messages.sameKeyAt(m, mEnd));
            int last = messages.sortedOffset(mEnd - 1);
            byte[] value = messages.type(last) == MessageType.PUT ? messages.value(last)
                    : updated.expiring()[mEnd - 1 - from] ? null : updated.values()[mEnd - 1 - from];
            if (value == null || value.length != basement.valueLengthAt(row)) {
                return false;
            }
            targets[groups] = row;
            values[groups++] = value;
            m = mEnd;
        }
        for (int g = 0; g < groups; g++) {
            basement.overwriteValue(targets[g], values[g]);
        }
        return true;
    }
}
