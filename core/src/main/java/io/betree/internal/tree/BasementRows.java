package io.betree.internal.tree;

import static io.betree.internal.tree.Basement.EXPIRES;
import static io.betree.internal.tree.Basement.HAS_TS;
import static io.betree.internal.tree.Basement.ROW_HEADER;
import static io.betree.internal.tree.Basement.TOMBSTONE;

import java.nio.ByteBuffer;

/**
 * The rows a basement is rebuilt into by {@link Basement#apply}, in its row layout: where the next
 * one goes, how many there are, and which versions are kept (those a snapshot at or after the
 * horizon can see, no expired value). Not thread-safe: one rebuild's.
 */
final class BasementRows {
    final ByteBuffer view;
    final ByteBuffer indexView;
    final long horizon;
    /** The environment's clock: expiring rows are dropped from it on. */
    final long now;
    /** The values of the update messages applied ({@link BasementUpdates#updatedValues}); null when none. */
    final BasementUpdates.Updated updated;
    /** The sorted position of the message {@code updated[0]} belongs to. */
    final int updatedFrom;
    int at;
    int rows;

    BasementRows(ByteBuffer view, ByteBuffer indexView, long horizon, long now, BasementUpdates.Updated updated,
            int updatedFrom) {
        this.view = view;
        this.indexView = indexView;
        this.horizon = horizon;
        this.now = now;
        this.updated = updated;
        this.updatedFrom = updatedFrom;
    }

    /**
     * As {@link #write}, for the version an update made: {@code value} null for a tombstone, an
     * {@link Expiry} stored form when {@code expiring}.
     */
    boolean writeUpdated(ByteBuffer keySrc, int keyOff, int keyLength, byte[] value, boolean expiring, long ts) {
        if (value != null && expiring && Expiry.of(value) <= now) {
            value = null;
        }
        int before = at;
        boolean kept = write(keySrc, keyOff, keyLength, 0, value == null, value != null && expiring, ts);
        if (value != null && at != before) {
            // Written with an empty value: the value goes after the key, and the row's length field is set.
            view.putInt(before + 3, value.length);
            view.put(at, value);
            at += value.length;
        }
        return kept;
    }

    /**
     * Writes one version unless pruned; returns true when it was the last version any snapshot
     * can need (the first at or below the horizon), so older ones are dropped. An
     * {@code expiring} version (its value an {@link Expiry} stored form, or empty while
     * {@link #writeUpdated} fills it in) that expired by {@link #now} becomes a tombstone.
     */
    boolean write(ByteBuffer src, int keyOff, int keyLength, int valueLength, boolean tombstone, boolean expiring,
            long ts) {
        if (expiring && valueLength >= Expiry.BYTES && src.getLong(keyOff + keyLength) <= now) {
            tombstone = true;
            expiring = false;
        }
        boolean visibleToAll = ts <= horizon;
        if (visibleToAll && tombstone) {
            return true;
        }
        int flags = (tombstone ? TOMBSTONE : 0) | (visibleToAll ? 0 : HAS_TS) | (expiring && !tombstone ? EXPIRES : 0);
        int vl = tombstone ? 0 : valueLength;
        indexView.putInt(rows * 4, at);
        rows++;
        view.putShort(at, (short) keyLength).put(at + 2, (byte) flags).putInt(at + 3, vl);
        at += ROW_HEADER;
        if (!visibleToAll) {
            view.putLong(at, ts);
            at += 8;
        }
        view.put(at, src, keyOff, keyLength + vl);
        at += keyLength + vl;
        return visibleToAll;
    }
}
