package io.betree.internal.tree;

import java.util.Iterator;
import java.util.Map;

/**
 * Writes a scan lays over what the tree holds: a transaction's own, not yet committed. The tree asks
 * for one basement's key range at a time and reads only as many as one batch takes, so the writes
 * need not fit the heap.
 */
@FunctionalInterface
public interface ScanOverlay {
    /**
     * The writes whose keys lie in {@code [from, limit)} ({@code limit} null: no upper end), in key
     * order, the latest one per key, as key and value, the value being the scan's tombstone marker
     * for a delete.
     */
    Iterator<Map.Entry<byte[], byte[]>> range(byte[] from, byte[] limit);

    /**
     * Whether {@code value}, as {@link #range} returned it, is not a value but an {@link UpdateList}
     * to apply to what the tree holds for its key (a transaction's updates of a key it did not write
     * otherwise). Compared by identity; false unless overridden.
     */
    default boolean isUpdateList(byte[] value) {
        return false;
    }

    /**
     * Whether the transaction has range operations of its own (range deletes, broadcasts): the scan
     * then works out each key through {@link #overRanges}. False unless overridden.
     */
    default boolean hasRanges() {
        return false;
    }

    /**
     * The value of {@code key} after the transaction's own range operations change
     * {@code committed}, what its snapshot sees (null: absent); null when absent. They apply before
     * its writes of the key that {@link #range} returns. The identity unless overridden.
     */
    default byte[] overRanges(byte[] key, byte[] committed) {
        return committed;
    }
}
