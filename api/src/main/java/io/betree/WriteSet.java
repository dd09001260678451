package io.betree;

import io.betree.internal.tree.Keys;
import java.util.Arrays;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.NavigableMap;
import java.util.TreeMap;
import java.util.function.BiConsumer;

/**
 * One transaction's pending writes to one index: the latest value per key ({@link Transaction#DELETED}
 * for a delete). Writes and point lookups go through a hash map; the sorted view that scans need is
 * built on the first scan and kept up to date from then on. A sorted map on every write was 15% of
 * the committing thread's time in an insert-heavy load, and most transactions never scan.
 *
 * <p>Not thread-safe, as the transaction that owns it. Keys and values are owned by the set (the
 * caller passes copies).
 */
final class WriteSet {
    private final LinkedHashMap<KeyBytes, byte[]> byKey = new LinkedHashMap<>();
    /** The same writes in key order, once a scan asked for them; null until then. */
    private TreeMap<byte[], byte[]> sorted;

    /** Records {@code value} (or {@link Transaction#DELETED}) as the latest write of {@code key}. */
    void put(byte[] key, byte[] value) {
        byKey.put(new KeyBytes(key), value);
        if (sorted != null) {
            sorted.put(key, value);
        }
    }

    /** The latest write of {@code key}, {@link Transaction#DELETED}, or null if none. */
    byte[] get(byte[] key) {
        return byKey.get(new KeyBytes(key));
    }

    /** The writes in key order, read-only; kept up to date by later writes. */
    NavigableMap<byte[], byte[]> sorted() {
        if (sorted == null) {
            sorted = new TreeMap<>(Keys::compare);
            for (Map.Entry<KeyBytes, byte[]> e : byKey.entrySet()) {
                sorted.put(e.getKey().bytes, e.getValue());
            }
        }
        return Collections.unmodifiableNavigableMap(sorted);
    }

    /**
     * Calls {@code action} with each key and its latest write, in the order the keys were first
     * written: an ascending load thus reaches the tree in ascending order, which keeps it on the
     * tree's sequential-insert path.
     */
    void forEach(BiConsumer<byte[], byte[]> action) {
        byKey.forEach((k, v) -> action.accept(k.bytes, v));
    }

    /** A byte array compared by content, with its hash computed once. */
    private static final class KeyBytes {
        final byte[] bytes;
        private final int hash;

        KeyBytes(byte[] bytes) {
            this.bytes = bytes;
            this.hash = Arrays.hashCode(bytes);
        }

        @Override
        public boolean equals(Object o) {
            return o instanceof KeyBytes && Arrays.equals(bytes, ((KeyBytes) o).bytes);
        }

        @Override
        public int hashCode() {
            return hash;
        }
    }
}
