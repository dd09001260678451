package io.betree.internal.tree;

import java.util.function.BiConsumer;

/**
 * Writes a scan lays over what the tree holds: a transaction's own, not yet committed. The tree asks
 * for one basement's key range at a time.
 */
@FunctionalInterface
public interface ScanOverlay {
    /**
     * Calls {@code action} with each write whose key lies in {@code [from, limit)} ({@code limit}
     * null: no upper end), as key and value, the value being the scan's tombstone marker for a
     * delete. A key written more than once may come more than once, its latest write last.
     */
    void forEachInRange(byte[] from, byte[] limit, BiConsumer<byte[], byte[]> action);
}
